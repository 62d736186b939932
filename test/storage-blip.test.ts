/**
 * Hybrid storage rides out a blip (issue 40, item 6): an upload that meets a bucket that is away
 * retries with backoff for `results.object_store.retry_seconds` (default 60 s) before the publish
 * gives up. A few seconds of outage in the middle of a publish no longer fail it; with a short
 * budget and the server down, the publish fails cleanly with nothing committed. `pull` says where
 * the payloads came from. Against s3rver behind a SigV4-verifying front (test/helpers/s3.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { objectStoreYaml, startS3, type S3Server } from './helpers/s3.js';
import { waitFor } from './helpers/wip-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, cliProcess, makeRunWorkspace, makeUserRepo, tip } from './publish-helpers.js';
import type { UserRepoFixture } from './helpers/git-fixtures.js';

let restore: () => void;
let s3: S3Server;
let user: UserRepoFixture;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  s3 = await startS3();
  user = await makeUserRepo();
  mkdirSync(join(user.work, '.agentv'), { recursive: true });
  writeFileSync(join(user.work, '.agentv', 'config.yaml'), `results:\n${objectStoreYaml(s3)}\n`);
}, 60_000);

afterAll(async () => {
  await s3?.close();
  restore();
  await cleanupTempDirs();
});

describe('hybrid: a bucket away for a few seconds', () => {
  it('the publish waits it out: it succeeds, every payload in the bucket, and pull says they came from there', async () => {
    const run = await makeRunWorkspace({ rows: 3, experiment: 'blip', minute: 31 });
    let cut = false;
    // The server goes away under the first upload (that request is cut mid-way) ...
    s3.goAway(
      (req) => {
        if (req.method !== 'PUT') return false;
        cut = true;
        return true;
      },
      { countAttempts: true },
    );
    const publishing = cliProcess(['publish', run.dir, '--json'], user.work, { env: s3.env, timeoutMs: 150_000 });
    await waitFor('the bucket went away under an upload', () => cut, 60_000);
    // ... and stays away until the publish has been seen retrying into the outage three times
    // (it waits it out rather than giving up), whatever the machine's speed.
    await waitFor('the publish retrying while the bucket is away', () => s3.attemptsWhileAway >= 3, 60_000);
    const seenBefore = s3.requests.length;
    await s3.comeBack();
    const r = await publishing;
    expect(r.code, r.stderr).toBe(0);
    // The upload was retried after the server came back (not sent before it went away).
    expect(s3.requests.slice(seenBefore).some((q) => q.method === 'PUT')).toBe(true);
    const result = JSON.parse(r.stdout) as { stored: { objects: number; uploaded: number } | null };
    expect(result.stored?.objects).toBeGreaterThan(0);

    const out = join(await makeTempDir('agentv-blip'), 'run');
    const p = await cli(['pull', run.runId, '--with-artifacts', '--out', out], user.work, { env: s3.env });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/payloads? from the object store/);
    expect(p.stdout).not.toMatch(/from the artifacts branch/);
    const json = await cli(['pull', run.runId, '--with-artifacts', '--out', `${out}-json`, '--json'], user.work, { env: s3.env });
    const payloads = (JSON.parse(json.stdout) as { payloads: { written: number; from_bucket: number; in_bucket: number } }).payloads;
    expect(payloads.from_bucket).toBe(payloads.written);
    expect(payloads.in_bucket).toBe(result.stored!.objects);
    const bare = await cli(['pull', run.runId, '--out', `${out}-bare`], user.work, { env: s3.env });
    expect(bare.stdout).toMatch(/left in the object store/);
  }, 180_000);

  it('with a short budget (AGENTV_RESULTS_S3_RETRY_SECONDS) and the server down: exit 3 naming the budget, nothing committed', async () => {
    const run = await makeRunWorkspace({ rows: 2, experiment: 'blip', minute: 32 });
    const before = { results: await tip(user.work, RESULTS_REF), artifacts: await tip(user.work, ARTIFACTS_REF) };
    s3.goAway();
    try {
      const r = await cli(['publish', run.dir], user.work, { env: { ...s3.env, AGENTV_RESULTS_S3_RETRY_SECONDS: '2' } });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain('could not be reached');
      expect(r.stderr).toMatch(/retried for \d+ s; results\.object_store\.retry_seconds/);
      expect(await tip(user.work, RESULTS_REF)).toBe(before.results);
      expect(await tip(user.work, ARTIFACTS_REF)).toBe(before.artifacts);
    } finally {
      await s3.comeBack();
    }
  }, 60_000);

  it('the budget is a setting: results.object_store.retry_seconds, checked where it is read', async () => {
    const dir = await makeTempDir('agentv-blip-config');
    mkdirSync(join(dir, '.agentv'), { recursive: true });
    writeFileSync(join(dir, '.agentv', 'config.yaml'), `results:\n${objectStoreYaml(s3)}\n    retry_seconds: -1\n`);
    const st = await cli(['status'], dir, { env: s3.env });
    expect(st.code, st.stderr).toBe(2);
    expect(st.stderr).toMatch(/object_store\.retry_seconds/);
    const env = await cli(['status'], user.work, { env: { ...s3.env, AGENTV_RESULTS_S3_RETRY_SECONDS: 'soon' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/AGENTV_RESULTS_S3_RETRY_SECONDS=soon: expected a number of seconds/);
  });
});
