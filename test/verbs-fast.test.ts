/**
 * The fast tier's cover of the verbs people change most (issue 51): publish, list, pull, compare,
 * gate, serve and site, each once over one small repository, in-process, and the read and review
 * verbs (summary, failures, show, validate, report, status, trend, tag, feedback, sync, schema)
 * answering over it. Under `npm run
 * test:fast` (AGENTV_TEST_CLI=source) the commands are src/'s, so an edit is tested without a
 * build; under `npm test` the same checks run the build. The deep checks of each verb live in their
 * own files (publish-*.test.ts, results-compare, ci-gate, serve-*, site-*); this one keeps the
 * everyday loop honest that every verb still works end to end.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../src/serve/index.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
let base: RunWorkspace;
let cand: RunWorkspace;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // The same tests (one seed), two runs: the candidate is the baseline published again a minute later.
  base = await makeRunWorkspace({ experiment: 'nightly', minute: 0, rows: 3, seed: 11 });
  cand = await makeRunWorkspace({ experiment: 'nightly', minute: 1, rows: 3, seed: 11 });
}, 120_000);

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

const json = <T>(r: { code: number; stdout: string; stderr: string }): T => {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
};

describe('every verb, in-process', () => {
  it('publish commits and pushes both runs', async () => {
    for (const run of [base, cand]) {
      const r = json<{ status: string; run_id: string }>(await cli(['publish', run.dir, '--json'], user.work));
      expect(r.status).toBe('published');
      expect(r.run_id).toBe(run.runId);
    }
    const again = json<{ status: string }>(await cli(['publish', base.dir, '--json'], user.work));
    expect(again.status).toBe('already-published');
  });

  it('list shows them, newest first', async () => {
    const r = json<{ runs: { run_id: string; total: number }[] }>(await cli(['list', '--json'], user.work));
    expect(r.runs.map((x) => x.run_id)).toEqual([cand.runId, base.runId]);
    expect(r.runs.every((x) => x.total === 3)).toBe(true);
  });

  it('pull brings a run back as a run workspace with its rows', async () => {
    const out = join(await makeTempDir('verbs-pull'), 'run');
    const r = await cli(['pull', base.runId, '--out', out], user.work);
    expect(r.code, r.stderr).toBe(0);
    const rows = readFileSync(join(out, 'index.jsonl'), 'utf8').trim().split('\n');
    expect(rows).toHaveLength(3);
  });

  it('compare matches every row of the two runs, per (test id, target), with no delta', async () => {
    const r = json<{
      unmatched: { baseline_only: unknown[]; candidate_only: unknown[] };
      summary: { matched: number; wins: number; losses: number; mean_delta: number };
    }>(await cli(['compare', base.runId, cand.runId, '--all-targets', '--json'], user.work));
    expect(r.unmatched).toMatchObject({ baseline_only: [], candidate_only: [] });
    expect(r.summary).toMatchObject({ matched: 3, wins: 0, losses: 0, mean_delta: 0 });
  });

  it('gate passes the same tests and fails a missing baseline run', async () => {
    const pass = json<{ passed: boolean; regressions: unknown[] }>(await cli(['gate', base.runId, cand.runId, '--json'], user.work));
    expect(pass).toMatchObject({ passed: true, regressions: [] });
    const missing = await cli(['gate', 'no-such-run', cand.runId], user.work);
    expect(missing.code).toBe(2);
  });

  it('serve answers the API with both runs on 127.0.0.1', async () => {
    const server = await startServer({ cwd: user.work, port: 0 });
    try {
      expect(server.host).toBe('127.0.0.1');
      const res = await fetch(`${server.url}/api/runs`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { runs: { run_id: string }[] };
      expect(body.runs.map((x) => x.run_id).sort()).toEqual([base.runId, cand.runId].sort());
    } finally {
      await server.close();
    }
  });

  it('tag moves a tag onto a run, and gate reads it back as @<tag>', async () => {
    const r = await cli(['tag', base.runId, '+baseline'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const g = json<{ passed: boolean }>(await cli(['gate', '@baseline', cand.runId, '--json'], user.work));
    expect(g.passed).toBe(true);
  });

  it('the read and review verbs answer over the published run: each exits 0', async () => {
    const out = await makeTempDir('verbs-read');
    const pulled = join(out, 'run');
    expect((await cli(['pull', cand.runId, '--out', pulled], user.work)).code).toBe(0);
    const testId = (JSON.parse(readFileSync(join(pulled, 'index.jsonl'), 'utf8').split('\n')[0]!) as { test_id: string }).test_id;
    const verbs: string[][] = [
      ['summary', pulled],
      ['failures', pulled],
      ['show', pulled],
      ['validate', pulled],
      ['report', pulled, '--out', join(out, 'report.html')],
      ['status'],
      ['trend', base.runId, cand.runId],
      ['feedback', cand.runId, testId, 'looks right'],
      ['sync'],
      ['schema'],
    ];
    const failed: string[] = [];
    for (const argv of verbs) {
      const r = await cli(argv, user.work);
      if (r.code !== 0) failed.push(`${argv[0]} exited ${r.code}: ${r.stderr.trim().split('\n')[0]}`);
    }
    expect(failed).toEqual([]);
    expect(existsSync(join(out, 'report.html'))).toBe(true);
  });

  it('site writes the static views of both runs', async () => {
    const out = join(await makeTempDir('verbs-site'), 'public');
    const r = json<{ runs: number; files_written: number }>(await cli(['site', '--out', out, '--json'], user.work));
    expect(r.runs).toBe(2);
    expect(r.files_written).toBeGreaterThan(0);
    expect(existsSync(join(out, 'index.html'))).toBe(true);
  });
});
