/**
 * Shards of one run published from two machines: the rows merge by identity, and what is derived
 * from them (summary.json, benchmark.json, timing.json, the catalog row) is recomputed from the
 * merged rows in the merge commit, never merged as text — so the run on the branch validates and
 * `list` counts every row. Driven through the CLI over a bare remote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { cli, makeUserRepo } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
let scratch: string;
let clone: string;

const row = (i: number, hour = 9, score = i % 3 === 0 ? 0 : 1) =>
  JSON.stringify({
    timestamp: new Date(Date.UTC(2026, 3, 2, hour, 0, i)).toISOString(),
    test_id: `t${i}`,
    suite: 's',
    target: i % 2 ? 'gpt' : 'claude',
    score,
    execution_status: 'ok',
    duration_ms: 100 * (i + 1),
  });

/** Exports these rows as a run workspace (the same earliest row: the same run id) and returns its directory. */
async function shard(name: string, rows: (number | string)[]): Promise<string> {
  const src = join(scratch, `${name}.jsonl`);
  await writeFile(src, rows.map((r) => (typeof r === 'number' ? row(r) : r)).join('\n') + '\n');
  const out = join(scratch, name);
  const r = await cli(['export', src, '--out', out, '--experiment', 'shards'], scratch);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  scratch = await mkdtemp(join(tmpdir(), 'agentv-shards-'));
  clone = join(user.root, 'b');
  await git(user.root, ['init', '-q', clone]);
  await git(clone, ['remote', 'add', 'origin', user.remote]);
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('shards of one run from two machines', () => {
  it('both publish rows 0-4, then A adds 5-6 and B adds 7-8: B merges cleanly, the run has 9 rows and validates', async () => {
    const base = [0, 1, 2, 3, 4];
    for (const [who, dir] of [
      ['a', user.work],
      ['b', clone],
    ] as const) {
      const p = await cli(['publish', await shard(`${who}0`, base), '--push'], dir);
      expect(p.code, `${who}: ${p.stdout}${p.stderr}`).toBe(0);
      if (who === 'a') continue;
    }
    const a = await cli(['publish', await shard('a1', [...base, 5, 6]), '--push'], user.work);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const b = await cli(['publish', await shard('b1', [...base, 7, 8]), '--push'], clone);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    expect(b.stdout).not.toContain('conflict');
    expect(await git(user.remote, ['for-each-ref', 'refs/heads/agentv/results-sync'])).toBe('');

    // A third machine reads the run back: 9 rows, and summary/benchmark/timing agree with them.
    const c = join(user.root, 'c');
    await git(user.root, ['init', '-q', c]);
    await git(c, ['remote', 'add', 'origin', user.remote]);
    const list = await cli(['list', '--fetch', '--json'], c);
    const runs = (JSON.parse(list.stdout) as { runs: { run_id: string; total: number; passed: number }[] }).runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]!.total).toBe(9);
    const pulled = join(c, 'run');
    expect((await cli(['pull', runs[0]!.run_id, '--out', pulled], c)).code).toBe(0);
    const v = await cli(['validate', pulled, '--json'], c);
    expect(v.code, v.stdout).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, problems: [] });
    const s = JSON.parse(await readFile(join(pulled, 'summary.json'), 'utf8')) as { total: number; passed: number; targets: string[] };
    expect(s.total).toBe(9);
    expect(s.passed).toBe([0, 1, 2, 3, 4, 5, 6, 7, 8].filter((i) => i % 3 !== 0).length);
  });

  it('a genuine conflict in a shard goes to a sync branch; sync --resolve leaves a run that validates, every row counted', async () => {
    const base = [0, 1, 2, 3, 4].map((i) => row(i, 10));
    expect((await cli(['publish', await shard('ra0', base), '--push'], user.work)).code).toBe(0);
    expect((await cli(['publish', await shard('rb0', base), '--push'], clone)).code).toBe(0);
    // Both re-graded test t2, differently (same identity, other scores): A also adds 5-6, B 7-8.
    const aRows = [...base.slice(0, 2), row(2, 10, 0.5), ...base.slice(3), row(5, 10), row(6, 10)];
    expect((await cli(['publish', await shard('ra1', aRows), '--push'], user.work)).code).toBe(0);
    const bRows = [...base.slice(0, 2), row(2, 10, 0.25), ...base.slice(3), row(7, 10), row(8, 10)];
    const b = await cli(['publish', await shard('rb1', bRows), '--push'], clone);
    expect(b.code, b.stdout + b.stderr).toBe(1);
    const branch = /agentv\/results-sync\/\S+/.exec(b.stdout)?.[0];
    expect(branch, b.stdout).toBeDefined();
    const resolved = await cli(['sync', '--resolve', branch!, '--json'], clone);
    expect(resolved.code, resolved.stdout + resolved.stderr).toBe(0);

    const c = join(user.root, 'c2');
    await git(user.root, ['init', '-q', c]);
    await git(c, ['remote', 'add', 'origin', user.remote]);
    const runId = '2026-04-02T10-00-00-000Z';
    const list = (JSON.parse((await cli(['list', '--fetch', '--json'], c)).stdout) as { runs: { run_id: string; total: number }[] }).runs;
    expect(list.find((r) => r.run_id === runId)?.total).toBe(9);
    const pulled = join(c, 'run');
    expect((await cli(['pull', runId, '--out', pulled], c)).code).toBe(0);
    const v = await cli(['validate', pulled, '--json'], c);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, problems: [] });
    const summary = JSON.parse(await readFile(join(pulled, 'summary.json'), 'utf8')) as { total: number };
    expect(summary.total).toBe(9);
    // The contradicting row took the results branch's version (the human's decision).
    const index = (await readFile(join(pulled, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { test_id: string; score: number });
    expect(index.find((r) => r.test_id === 't2')?.score).toBe(0.5);
  });

  it("a shard republished after its machine merged the other shard's rows keeps them (index.jsonl is append-only)", async () => {
    const base = [0, 1, 2, 3, 4].map((i) => row(i, 11));
    expect((await cli(['publish', await shard('ka0', base), '--push'], user.work)).code).toBe(0);
    expect((await cli(['publish', await shard('kb0', base), '--push'], clone)).code).toBe(0);
    expect((await cli(['publish', await shard('ka1', [...base, row(5, 11), row(6, 11)]), '--push'], user.work)).code).toBe(0);
    // B publishes something else first: its push merges A's rows 5-6 into B's results branch.
    expect((await cli(['publish', await shard('kx', [row(0, 12)]), '--push'], clone)).code).toBe(0);
    const runId = '2026-04-02T11-00-00-000Z';
    const onB = async () => (await git(clone, ['show', `refs/heads/agentv/results/v1:${runId}/index.jsonl`])).split('\n').filter(Boolean).length;
    expect(await onB()).toBe(7);
    // B's workspace has never seen rows 5-6; publishing it must not take them off the run.
    const b = await cli(['publish', await shard('kb1', [...base, row(7, 11), row(8, 11)]), '--push', '--json'], clone);
    expect(b.code, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout)).toMatchObject({ kept_rows: 2, counts: { total: 9 } });
    expect(await onB()).toBe(9);
    const remoteIndex = await git(user.remote, ['show', `refs/heads/agentv/results/v1:${runId}/index.jsonl`]);
    expect(
      remoteIndex
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { test_id: string }).test_id)
        .sort(),
    ).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7', 't8']);
    // The kept rows' files stay, and the run still validates.
    const c = join(user.root, 'c3');
    await git(user.root, ['init', '-q', c]);
    await git(c, ['remote', 'add', 'origin', user.remote]);
    const pulled = join(c, 'run');
    expect((await cli(['pull', runId, '--fetch', '--out', pulled], c)).code).toBe(0);
    expect(JSON.parse((await cli(['validate', pulled, '--json'], c)).stdout)).toMatchObject({ valid: true, problems: [] });
  });
});
