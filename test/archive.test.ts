/**
 * Archive rollover (issue 16), through the library on real repositories: expired runs leave the
 * live branches for per-month archive branches, by grafting their existing trees (no blob
 * rewritten), in one ref transaction; `list` still sees them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, rollover } from '../src/archive/rollover.js';
import { listRuns } from '../src/branch-read/list.js';
import { pull } from '../src/branch-read/pull.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { publish } from '../src/publish/publish.js';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, expectFsckClean, makeRunWorkspace, makeUserRepo, tip, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];
const NOW = new Date('2026-03-20T12:00:00Z');

async function lsRoot(ref: string): Promise<Map<string, string>> {
  const out = await git(user.work, ['ls-tree', ref]);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [meta, path] = l.split('\t') as [string, string];
        return [path, meta.split(' ')[2]!];
      }),
  );
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // 2026-03-14, 03-15, 03-16: the first is older than a 5-day window on 03-20.
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 2 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 1, minute: 5, rows: 3, seed: 3 }));
  runs.push(await makeRunWorkspace({ experiment: 'smoke', day: 2, minute: 9, rows: 2, seed: 5 }));
  for (const r of runs) await publish({ run: r.dir, cwd: user.work, push: false });
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('archive rollover', () => {
  it('a dry run lists what would move and moves nothing', async () => {
    const before = [await tip(user.work, RESULTS_REF), await tip(user.work, ARTIFACTS_REF)];
    const r = await rollover({ cwd: user.work, keepDays: 5, dryRun: true, now: NOW });
    expect(r.dryRun).toBe(true);
    expect(r.archived.map((a) => a.run_id)).toEqual([runs[0]!.runId]);
    expect(r.archived[0]!.ref).toBe(`${ARCHIVE_RESULTS_PREFIX}2026-03`);
    expect(r.live).toBe(2);
    expect(r.refs).toEqual([]);
    expect([await tip(user.work, RESULTS_REF), await tip(user.work, ARTIFACTS_REF)]).toEqual(before);
    expect(await tip(user.work, `${ARCHIVE_RESULTS_PREFIX}2026-03`)).toBeNull();
  });

  it('moves expired runs by age and by count, reusing their trees, in fast-forward commits', async () => {
    const liveBefore = await lsRoot(RESULTS_REF);
    const artifactsBefore = await lsRoot(ARTIFACTS_REF);
    const resultsTipBefore = (await tip(user.work, RESULTS_REF))!;
    // keepRuns 1 also expires the 03-15 run, which the 5-day window alone keeps.
    const r = await rollover({ cwd: user.work, keepDays: 5, keepRuns: 1, now: NOW });
    expect(r.archived.map((a) => a.run_id).sort()).toEqual([runs[0]!.runId, runs[1]!.runId].sort());
    const archivedDirs = r.archived.map((a) => a.path);

    const liveAfter = await lsRoot(RESULTS_REF);
    for (const d of archivedDirs) expect(liveAfter.has(d)).toBe(false);
    expect(liveAfter.size).toBe(liveBefore.size - 2);
    // The archive root holds day folders only (one per catalog day); each run sits in its day's.
    expect([...(await lsRoot(`${ARCHIVE_RESULTS_PREFIX}2026-03`)).keys()].sort()).toEqual([...new Set(r.archived.map((a) => a.day))].sort());
    // The same tree objects: nothing under them was rewritten.
    for (const a of r.archived) {
      expect(await git(user.work, ['rev-parse', `${ARCHIVE_RESULTS_PREFIX}2026-03:${a.day}/${a.path}`])).toBe(liveBefore.get(a.path));
      expect(await git(user.work, ['rev-parse', `${ARCHIVE_ARTIFACTS_PREFIX}2026-03:${a.day}/${a.path}`])).toBe(artifactsBefore.get(a.path));
      expect((await lsRoot(ARTIFACTS_REF)).has(a.path)).toBe(false);
    }
    // Fast-forward: the new live tip descends from the old one.
    await git(user.work, ['merge-base', '--is-ancestor', resultsTipBefore, RESULTS_REF]);
    // AgentV's listing of the live branch no longer holds the archived runs' files.
    const listing = await git(user.work, ['ls-tree', '-r', '--name-only', RESULTS_REF]);
    for (const d of archivedDirs) expect(listing.split('\n').some((p) => p.startsWith(`${d}/`))).toBe(false);
    await expectFsckClean(user.work);
  });

  it('list still sees archived runs, marked with their archive month', async () => {
    const out = await listRuns({ cwd: user.work });
    expect(out.runs.map((r) => r.run_id).sort()).toEqual(runs.map((r) => r.runId).sort());
    const byId = new Map(out.runs.map((r) => [r.run_id, r]));
    expect(byId.get(runs[0]!.runId)!.archived).toBe('2026-03');
    expect(byId.get(runs[1]!.runId)!.archived).toBe('2026-03');
    expect(byId.get(runs[2]!.runId)!.archived).toBeUndefined();
  });

  it('pull finds an archived run on its archive branch', async () => {
    const out = join(user.root, 'pulled-archived');
    const r = await pull({ cwd: user.work, runId: runs[0]!.runId, out });
    expect(r.source).toBe('archive');
    expect(r.files).toBeGreaterThan(0);
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')) as { run_id?: string };
    expect(summary.run_id).toBe(runs[0]!.runId);
  });

  it('a second rollover with the same policy changes nothing', async () => {
    const before = await tip(user.work, RESULTS_REF);
    const r = await rollover({ cwd: user.work, keepDays: 5, keepRuns: 1, now: NOW });
    expect(r.archived).toEqual([]);
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
  });

  it('refuses a negative window', async () => {
    await expect(rollover({ cwd: user.work, keepDays: -1 })).rejects.toThrow(/keepDays/);
  });
});
