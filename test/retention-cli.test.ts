/**
 * `agentv-results expire` (retention, issue 16) as a user runs it, over a bare remote that refuses
 * non-fast-forward pushes. Five runs (03-14 … 03-18); the 03-15 one is tagged `baseline`; the two
 * oldest were rolled over to the 2026-03 archive. `--keep-runs 2` then keeps 03-17 and 03-18 by
 * count and 03-15 by its tag, and removes 03-14 (from the archive) and 03-16 (from the live branch).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import {
  ARTIFACTS_REF,
  RESULTS_REF,
  cli,
  expectFsckClean,
  expectUntouched,
  makeRunWorkspace,
  makeUserRepo,
  tip,
  type RunWorkspace,
} from './publish-helpers.js';

const MONTH = 'refs/heads/agentv/results-archive/v1/2026-03';
const MONTH_ART = 'refs/heads/agentv/artifacts-archive/v1/2026-03';
const LOG = '.indexes/agentv-results-retention.jsonl';

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];

/** Every ref and every object of a repository: what "writes nothing" must leave as it was. */
async function state(dir: string): Promise<{ refs: string; objects: string }> {
  const refs = await git(dir, ['for-each-ref', '--format=%(refname) %(objectname)']);
  const objects = await git(dir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)', '--unordered']);
  return { refs, objects: objects.split('\n').sort().join('\n') };
}

const names = async (dir: string, ref: string) => (await git(dir, ['ls-tree', '--name-only', ref])).split('\n').filter(Boolean);
/** The run directories of an archive branch, one level under its day folders. */
const archived = async (dir: string, ref: string) =>
  (await git(dir, ['ls-tree', '-r', '-d', '--name-only', ref]))
    .split('\n')
    .filter((p) => p.split('/').length === 2)
    .map((p) => p.split('/')[1]!);
/** Where a run sits on its archive branch: in the folder of its catalog day (the day of its id here). */
const inArchive = (r: { runId: string }) => `${r.runId.slice(0, 10)}/${r.runId}`;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  for (let day = 0; day < 5; day++) runs.push(await makeRunWorkspace({ day, minute: day, rows: 2, seed: 11 + day }));
  for (const r of runs) expect((await cli(['publish', r.dir, '--push'], user.work)).code).toBe(0);
  expect((await cli(['tag', runs[1]!.runId, '+baseline'], user.work)).code).toBe(0);
  const a = await cli(['archive', '--keep-days', '100000', '--keep-runs', '3'], user.work);
  expect(a.code, a.stderr).toBe(0);
  expect((await archived(user.remote, MONTH)).sort()).toEqual([runs[0]!.runId, runs[1]!.runId].sort());
}, 120_000);

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

interface ExpireJson {
  dry_run: boolean;
  policy: { keep_days: number | null; keep_runs: number | null; keep_tags: string[] };
  expired: { run_id: string; path: string; day: string; archived: string | null; branch: string }[];
  kept_by_tag: { run_id: string; tags: string[] }[];
  skipped: unknown[];
  kept: number;
  id: string | null;
  refs: { ref: string; before: string | null; after: string }[];
  push?: { archive_landed: boolean; live: { landed: boolean } | null };
}

describe('expire (CLI)', () => {
  it('--dry-run lists what would go and why the rest stays, and writes nothing (no ref, no object, here or on the remote)', async () => {
    const [here, there] = [await state(user.work), await state(user.remote)];
    const r = await cli(['expire', '--keep-runs', '2', '--dry-run', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as ExpireJson;
    expect(Object.keys(j).sort()).toEqual(['dry_run', 'expired', 'id', 'kept', 'kept_by_tag', 'policy', 'refs', 'skipped'].sort());
    expect(j.dry_run).toBe(true);
    expect(j.policy).toEqual({ keep_days: null, keep_runs: 2, keep_tags: ['baseline'] });
    expect(j.expired.map((e) => e.run_id)).toEqual([runs[2]!.runId, runs[0]!.runId]);
    expect(j.expired[0]).toEqual({ run_id: runs[2]!.runId, path: runs[2]!.runId, day: '2026-03-16', archived: null, branch: 'agentv/results/v1' });
    expect(j.expired[1]).toMatchObject({ archived: '2026-03', branch: 'agentv/results-archive/v1/2026-03' });
    expect(j.kept_by_tag).toEqual([{ run_id: runs[1]!.runId, tags: ['baseline'] }]);
    expect(j.kept).toBe(3);
    expect([j.id, j.refs]).toEqual([null, []]);
    expect(await state(user.work)).toEqual(here);
    expect(await state(user.remote)).toEqual(there);

    const human = await cli(['expire', '--keep-runs', '2', '--dry-run'], user.work);
    expect(human.stdout).toContain(`Would remove ${runs[2]!.runId} (2026-03-16) from agentv/results/v1`);
    expect(human.stdout).toContain(`Kept ${runs[1]!.runId}: tagged baseline`);
    expect(human.stdout).toContain('Would remove 2 runs; 3 kept (keep the 2 newest runs, keep tag baseline).');
    expect(await state(user.work)).toEqual(here);
  });

  it('removes expired runs and their payloads in one ordinary commit per branch, pushed without force; tagged and newest runs stay', async () => {
    const before = new Map<string, string | null>();
    for (const ref of [RESULTS_REF, ARTIFACTS_REF, MONTH, MONTH_ART]) before.set(ref, await tip(user.remote, ref));
    const r = await expectUntouched(user.work, () => cli(['expire', '--keep-runs', '2', '--json'], user.work));
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as ExpireJson;
    expect(j.push?.archive_landed).toBe(true);
    expect(j.push?.live?.landed).toBe(true);
    expect(j.id).toMatch(/^[0-9a-f]{16}$/);
    expect(j.refs.map((x) => x.ref).sort()).toEqual([RESULTS_REF, ARTIFACTS_REF, MONTH, MONTH_ART].sort());
    for (const { ref, before: old, after } of j.refs) {
      // One ordinary commit on top of the tip the remote had: parent = old tip, and the remote took it as is.
      expect(old).toBe(before.get(ref));
      expect(await git(user.remote, ['rev-parse', `${after}^1`])).toBe(old);
      expect(await git(user.remote, ['rev-list', '--count', `${old}..${ref}`])).toBe('1');
      expect(await tip(user.remote, ref)).toBe(after);
      expect(await git(user.remote, ['log', '-1', '--format=%B', ref])).toContain(`AgentV-Retention: ${j.id}`);
    }
    // Live: 03-16 gone from both branches; 03-17 and 03-18 stay. Archive: 03-14 gone, the baseline stays.
    const live = await names(user.remote, RESULTS_REF);
    expect(live).not.toContain(runs[2]!.runId);
    expect(live).toEqual(expect.arrayContaining([runs[3]!.runId, runs[4]!.runId]));
    expect(await names(user.remote, ARTIFACTS_REF)).not.toContain(runs[2]!.runId);
    expect(await archived(user.remote, MONTH)).toEqual([runs[1]!.runId]);
    expect(await archived(user.remote, MONTH_ART)).toEqual([runs[1]!.runId]);
    // No blob of a kept run changed: their trees are the ones the remote had.
    for (const [ref, dir] of [
      [RESULTS_REF, runs[3]!.runId],
      [MONTH, inArchive(runs[1]!)],
    ] as const)
      expect(await git(user.remote, ['rev-parse', `${ref}:${dir}`])).toBe(await git(user.remote, ['rev-parse', `${before.get(ref)}:${dir}`]));
    // The catalog forgets them; the retention log has one line naming the tips before.
    const list = JSON.parse((await cli(['list', '--json'], user.work)).stdout) as { runs: { run_id: string }[] };
    expect(list.runs.map((x) => x.run_id).sort()).toEqual([runs[1]!.runId, runs[3]!.runId, runs[4]!.runId].sort());
    const log = (await git(user.remote, ['cat-file', 'blob', `${RESULTS_REF}:${LOG}`])).split('\n');
    expect(log).toHaveLength(1);
    const rec = JSON.parse(log[0]!) as { id: string; removed: number; from: { results: { branch: string; tip: string } | null }[] };
    expect([rec.id, rec.removed]).toEqual([j.id, 2]);
    expect(rec.from.map((a) => a.results?.tip)).toEqual([before.get(RESULTS_REF), before.get(MONTH)]);
    await expectFsckClean(user.remote);
  });

  it('pull of a removed run says it was removed by retention, by which commit, and how to get it back (exit 2); --at brings it back', async () => {
    const resultsCommit = await tip(user.work, RESULTS_REF);
    const beforeLive = await git(user.work, ['rev-parse', `${resultsCommit}^1`]);
    const r = await cli(['pull', runs[2]!.runId, '--out', join(user.root, 'gone')], user.work);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`run ${runs[2]!.runId} was removed by retention on `);
    expect(r.stderr).toContain(`commit ${resultsCommit!.slice(0, 12)} deleted ${runs[2]!.runId}/ from agentv/results/v1`);
    expect(r.stderr).toContain(`agentv-results pull ${runs[2]!.runId} --at ${beforeLive} --with-artifacts`);
    expect(r.stderr).toContain(`git show ${beforeLive}:${runs[2]!.runId}/summary.json`);
    expect(r.stderr).not.toMatch(/is not on /);
    expect(existsSync(join(user.root, 'gone'))).toBe(false);

    const out = join(user.root, 'back');
    const back = await cli(['pull', runs[2]!.runId, '--at', beforeLive, '--with-artifacts', '--out', out, '--json'], user.work);
    expect(back.code, back.stderr).toBe(0);
    const j = JSON.parse(back.stdout) as { source: string; payloads: { pointed: number; written: number } };
    expect(j.source).toBe('history');
    expect(j.payloads.written).toBe(j.payloads.pointed);
    expect(j.payloads.written).toBeGreaterThan(0);
    expect((await readdir(out)).length).toBeGreaterThan(3);
  });

  it("a teammate's fresh clone gets the same answer for a run removed from the archive (commit on the archive branch)", async () => {
    const mate = join(user.root, 'mate');
    await git(user.root, ['init', '-q', mate]);
    await git(mate, ['remote', 'add', 'origin', user.remote]);
    const archiveCommit = await tip(user.remote, MONTH);
    const r = await cli(['pull', runs[0]!.runId, '--fetch'], mate);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`commit ${archiveCommit!.slice(0, 12)} deleted ${inArchive(runs[0]!)}/ from agentv/results-archive/v1/2026-03`);
    const at = /--at ([0-9a-f]{40})/.exec(r.stderr)![1]!;
    const back = await cli(['pull', runs[0]!.runId, '--at', at, '--with-artifacts', '--out', join(user.root, 'mate-back')], mate);
    expect(back.code, back.stderr).toBe(0);
  });

  it('running it again removes nothing and commits nothing', async () => {
    const before = await state(user.work);
    const r = await cli(['expire', '--keep-runs', '2', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as ExpireJson).expired).toEqual([]);
    expect((await state(user.work)).refs).toEqual(before.refs);
  });

  it('with no policy (no flag, no results.retention) it refuses (exit 2) and writes nothing; results.retention in the config applies', async () => {
    const before = await state(user.work);
    const none = await cli(['expire'], user.work);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no retention policy');
    const bad = await cli(['expire', '--keep-days', '-3'], user.work);
    expect(bad.code).toBe(2);
    expect((await state(user.work)).refs).toEqual(before.refs);

    const cfg = join(user.root, 'retention.yaml');
    await writeFile(cfg, 'results:\n  retention:\n    keep_runs: 1\n    keep_tags: [release]\n');
    const r = await cli(['expire', '--config', cfg, '--dry-run', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as ExpireJson;
    expect(j.policy).toEqual({ keep_days: null, keep_runs: 1, keep_tags: ['release'] });
    // The baseline is no longer protected under this policy: only the newest run stays.
    expect(j.expired.map((e) => e.run_id).sort()).toEqual([runs[1]!.runId, runs[3]!.runId].sort());
    const wrong = join(user.root, 'wrong.yaml');
    await writeFile(wrong, 'results:\n  retention:\n    keep_tags: [baseline]\n');
    const w = await cli(['expire', '--config', wrong, '--dry-run'], user.work);
    expect(w.code).toBe(2);
    expect(w.stderr).toContain('results.retention: set keep_days or keep_runs');
  });

  it('the daemon applies results.retention on its archive schedule (--once) and pushes it', async () => {
    const cfg = join(user.root, 'daemon.yaml');
    await writeFile(cfg, 'results:\n  retention:\n    keep_runs: 1\n');
    // A window wide enough that the rollover moves nothing: only the retention acts.
    const d = await cli(
      ['daemon', '--once', '--archive-every', '1d', '--keep-days', '100000', '--keep-runs', '100', '--config', cfg, '--log-format', 'json'],
      user.work,
    );
    expect(d.code, d.stderr).toBe(0);
    const lines = d.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; expired?: number; pushed?: boolean });
    expect(lines.find((l) => l.msg === 'retention')).toMatchObject({ expired: 1, pushed: true });
    // 03-17 went (past the one newest run); 03-18 stays; the baseline stays on its archive.
    expect(await names(user.remote, RESULTS_REF)).not.toContain(runs[3]!.runId);
    expect(await names(user.remote, RESULTS_REF)).toContain(runs[4]!.runId);
    expect(await archived(user.remote, MONTH)).toEqual([runs[1]!.runId]);
  });
});
