/**
 * The batched pull (branch-read/pull-batch.ts), which the static site and the Dashboard's
 * run cache use to read runs by the hundred: each run it writes is byte for byte what `pull
 * --with-artifacts` writes, and a run `pull` would refuse (a payload that does not match its
 * pointer) is left out for the caller's own pull, never written.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepo, resolveRef, updateRef, writeCommit } from '../src/git/index.js';
import { runLocation } from '../src/layout/branch-layout.js';
import { listRuns } from '../src/branch-read/list.js';
import { pullRunsBatch } from '../src/branch-read/pull-batch.js';
import { pull } from '../src/branch-read/pull.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, cli, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';
import type { UserRepoFixture } from './helpers/git-fixtures.js';

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  for (const [i, experiment] of ['nightly', 'nightly', 'smoke'].entries()) {
    const run = await makeRunWorkspace({ rows: 3, experiment, seed: 11 + i, minute: i });
    runs.push(run);
    const r = await cli(['publish', run.dir], user.work);
    expect(r.code, r.stderr).toBe(0);
  }
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

/** Every file under `dir` with its bytes, by path relative to it. */
async function files(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(relative(dir, p), (await readFile(p)).toString('base64'));
  }
  return out;
}

describe('pullRunsBatch', () => {
  it('writes each run as pull --with-artifacts does, with the overlays read from the same tip', async () => {
    const tagged0 = await cli(['tag', runs[0]!.runId, '+golden', '--no-push'], user.work);
    expect(tagged0.code, tagged0.stderr).toBe(0);
    const listed = await listRuns({ cwd: user.work });
    expect(listed.runs.map((r) => r.run_id).sort()).toEqual(runs.map((r) => r.runId).sort());
    const into = await makeTempDir('agentv-batch');
    const got = await pullRunsBatch({ cwd: user.work, runs: listed.runs, listed, destOf: (id) => join(into, id.replace(/\//g, '_')), withArtifacts: true });
    expect([...got.keys()].sort()).toEqual(runs.map((r) => r.runId).sort());
    for (const run of runs) {
      const one = join(await makeTempDir('agentv-one'), 'run');
      await pull({ cwd: user.work, runId: run.runId, out: one, withArtifacts: true });
      const batch = await files(got.get(run.runId)!.dir);
      expect([...batch.keys()].some((p) => p.endsWith('transcript.json'))).toBe(true);
      expect(batch).toEqual(await files(one));
    }
    const tagged = got.get(runs[0]!.runId)!.overlays!;
    expect(JSON.parse(tagged.tags!).tags).toEqual(['golden']);
    expect(got.get(runs[1]!.runId)!.overlays).toEqual({ tags: null, feedback: null });
  });

  it('leaves out a run whose payload does not match its pointer, and writes the others', async () => {
    const repo = await openRepo(user.work);
    const victim = runs[1]!;
    const loc = runLocation(victim.runId);
    const old = await resolveRef(repo, ARTIFACTS_REF);
    const payloads = (await files(victim.dir)).keys();
    const transcript = [...payloads].find((p) => p.endsWith('transcript.json'))!;
    const author = { name: 'Mallory', email: 'mallory@example.invalid', date: '2026-03-20T00:00:00Z' };
    const { commit } = await writeCommit(repo, {
      parent: old,
      files: [{ path: `${loc.path}/${transcript}`, data: '{"tampered":true}\n' }],
      message: 'tamper',
      author,
    });
    await updateRef(repo, ARTIFACTS_REF, commit, old);
    try {
      const listed = await listRuns({ cwd: user.work });
      const into = await makeTempDir('agentv-batch');
      const got = await pullRunsBatch({ cwd: user.work, runs: listed.runs, listed, destOf: (id) => join(into, id.replace(/\//g, '_')), withArtifacts: true });
      expect(got.has(victim.runId)).toBe(false);
      expect((await readdir(into)).sort()).toEqual(
        runs
          .filter((r) => r !== victim)
          .map((r) => r.runId.replace(/\//g, '_'))
          .sort(),
      );
      await expect(pull({ cwd: user.work, runId: victim.runId, out: join(into, 'alone'), withArtifacts: true })).rejects.toThrow(/does not match its pointer/);
    } finally {
      await updateRef(repo, ARTIFACTS_REF, old!, commit);
    }
  });
});

describe('listRuns keeps its catalog read per tip', () => {
  it('answers from the same read while the tips do not move, and reads again after a publish moves them', async () => {
    const a = await listRuns({ cwd: user.work, limit: 2 });
    const b = await listRuns({ cwd: user.work, limit: 2, offset: 1 });
    // One read of the catalog served both pages: the very same row objects.
    expect(b.runs[0]).toBe(a.runs[1]);
    const extra = await makeRunWorkspace({ rows: 2, experiment: 'smoke', seed: 41, day: 3 });
    const r = await cli(['publish', extra.dir], user.work);
    expect(r.code, r.stderr).toBe(0);
    const c = await listRuns({ cwd: user.work, limit: 2 });
    expect(c.total).toBe(a.total + 1);
    expect(c.runs[0]!.run_id).toBe(extra.runId);
  });
});
