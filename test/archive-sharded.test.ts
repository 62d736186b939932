/**
 * Day-sharded archives (issue 29 item 3), on real repositories: a rollover puts each run in the
 * folder of its catalog day on the month branch (`<YYYY-MM-DD>/<run>`), so a second rollover into
 * the same month leaves the other days' trees as they were; archives written before the sharding
 * (runs at the month root) stay readable by every reader — pull (payloads included), the
 * Dashboard's run detail, list, a later rollover into the same month, and expire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, rollover } from '../src/archive/rollover.js';
import { expireRuns } from '../src/archive/retention.js';
import { openRepo, writeCommit, type FileChange } from '../src/git/index.js';
import { listRuns } from '../src/branch-read/list.js';
import { pull } from '../src/branch-read/pull.js';
import { publish } from '../src/publish/publish.js';
import { startServer } from '../src/serve/index.js';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { expectFsckClean, makeRunWorkspace, makeUserRepo, tip, type RunWorkspace } from './publish-helpers.js';

const MONTH = `${ARCHIVE_RESULTS_PREFIX}2026-03`;
const MONTH_ART = `${ARCHIVE_ARTIFACTS_PREFIX}2026-03`;
const NOW = new Date('2026-03-20T12:00:00Z');
const AUTHOR = { name: 'Test', email: 'test@example.invalid', date: NOW };

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];
const day = (r: RunWorkspace) => r.runId.slice(0, 10);

/** The names of a tree's entries (`ref:path`), empty when there is no such tree. */
async function names(spec: string): Promise<string[]> {
  const out = await git(user.work, ['ls-tree', '--name-only', spec]).catch(() => '');
  return out.split('\n').filter(Boolean);
}
const treeOf = (spec: string) => git(user.work, ['rev-parse', spec]);

/** Rewrites an archive branch into the layout archives had before the sharding: each `<day>/<run>` moved to `<run>` (same trees). */
async function unshard(ref: string): Promise<void> {
  const repo = await openRepo(user.work);
  const before = (await tip(user.work, ref))!;
  const trees: { path: string; tree: string }[] = [];
  const files: FileChange[] = [];
  for (const d of await names(before)) {
    files.push({ path: d, delete: true });
    for (const run of await names(`${before}:${d}`)) trees.push({ path: run, tree: await treeOf(`${before}:${d}/${run}`) });
  }
  const { commit } = await writeCommit(repo, { parent: before, files, trees, message: 'archive in the layout before day shards', author: AUTHOR });
  await git(user.work, ['update-ref', ref, commit, before]);
}

async function pullWithPayloads(r: RunWorkspace, name: string) {
  const out = join(user.root, name);
  const p = await pull({ cwd: user.work, runId: r.runId, out, withArtifacts: true });
  expect(p.source).toBe('archive');
  expect(p.payloads.pointed).toBeGreaterThan(0);
  expect(p.payloads.written).toBe(p.payloads.pointed);
  expect(existsSync(join(out, 'index.jsonl'))).toBe(true);
  return p;
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // 2026-03-14 … 03-18, one run a day.
  for (let d = 0; d < 5; d++) runs.push(await makeRunWorkspace({ experiment: 'nightly', day: d, minute: d, rows: 2, seed: 21 + d }));
  for (const r of runs) await publish({ run: r.dir, cwd: user.work, push: false });
}, 120_000);

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('day-sharded archive branches', () => {
  it('a rollover files each run under its catalog day; a second rollover into the month leaves the other days as they were', async () => {
    const first = await rollover({ cwd: user.work, keepDays: 100_000, keepRuns: 4, now: NOW, author: AUTHOR });
    expect(first.archived.map((a) => a.run_id)).toEqual([runs[0]!.runId]);
    expect(await names(MONTH)).toEqual([day(runs[0]!)]);
    expect(await names(`${MONTH}:${day(runs[0]!)}`)).toEqual([runs[0]!.runId]);
    expect(await names(`${MONTH_ART}:${day(runs[0]!)}`)).toEqual([runs[0]!.runId]);
    const day0 = await treeOf(`${MONTH}:${day(runs[0]!)}`);
    const day0Art = await treeOf(`${MONTH_ART}:${day(runs[0]!)}`);

    const second = await rollover({ cwd: user.work, keepDays: 100_000, keepRuns: 3, now: NOW, author: AUTHOR });
    expect(second.archived.map((a) => a.run_id)).toEqual([runs[1]!.runId]);
    expect(await names(MONTH)).toEqual([day(runs[0]!), day(runs[1]!)]);
    // The first day's folder is the very tree it was: the second rollover did not rewrite it.
    expect(await treeOf(`${MONTH}:${day(runs[0]!)}`)).toBe(day0);
    expect(await treeOf(`${MONTH_ART}:${day(runs[0]!)}`)).toBe(day0Art);
    await pullWithPayloads(runs[1]!, 'sharded-pulled');
    await expectFsckClean(user.work);
  });

  it('an archive in the layout before day shards (runs at the month root) stays readable: pull with payloads, list, the Dashboard', async () => {
    await unshard(MONTH);
    await unshard(MONTH_ART);
    expect((await names(MONTH)).sort()).toEqual([runs[0]!.runId, runs[1]!.runId].sort());
    await pullWithPayloads(runs[0]!, 'old-layout-pulled');
    const listed = new Map((await listRuns({ cwd: user.work })).runs.map((r) => [r.run_id, r]));
    expect(listed.get(runs[0]!.runId)!.archived).toBe('2026-03');
    const server = await startServer({ cwd: user.work });
    try {
      const res = await fetch(`${server.url}/api/runs/${encodeURIComponent(runs[1]!.runId)}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { run: { run_id: string }; tests: unknown[] };
      expect(body.run.run_id).toBe(runs[1]!.runId);
      expect(body.tests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('a rollover into an old-layout month adds a day folder beside the old runs; pull finds both kinds', async () => {
    const r = await rollover({ cwd: user.work, keepDays: 100_000, keepRuns: 2, now: NOW, author: AUTHOR });
    expect(r.archived.map((a) => a.run_id)).toEqual([runs[2]!.runId]);
    expect((await names(MONTH)).sort()).toEqual([day(runs[2]!), runs[0]!.runId, runs[1]!.runId].sort());
    await pullWithPayloads(runs[2]!, 'mixed-new');
    await pullWithPayloads(runs[1]!, 'mixed-old');
  });

  it('a run filed under another day than the day of its id is still found (pull looks in every day folder of its month)', async () => {
    // As if its catalog day were the 19th: move its folders in both archives.
    const repo = await openRepo(user.work);
    for (const ref of [MONTH, MONTH_ART]) {
      const before = (await tip(user.work, ref))!;
      const tree = await treeOf(`${before}:${day(runs[2]!)}/${runs[2]!.runId}`);
      const { commit } = await writeCommit(repo, {
        parent: before,
        files: [{ path: day(runs[2]!), delete: true }],
        trees: [{ path: `2026-03-19/${runs[2]!.runId}`, tree }],
        message: 'filed under another day',
        author: AUTHOR,
      });
      await git(user.work, ['update-ref', ref, commit, before]);
    }
    await pullWithPayloads(runs[2]!, 'other-day');
  });

  it('expire removes archived runs from either layout (and the one filed under another day), and nothing of them stays on the month branches', async () => {
    const r = await expireRuns({ cwd: user.work, keepRuns: 2, keepTags: [], now: NOW, author: AUTHOR });
    expect(r.expired.map((e) => e.run_id).sort()).toEqual([runs[0]!.runId, runs[1]!.runId, runs[2]!.runId].sort());
    expect(r.skipped).toEqual([]);
    expect(await names(MONTH)).toEqual([]);
    expect(await names(MONTH_ART)).toEqual([]);
    expect((await listRuns({ cwd: user.work })).runs.map((x) => x.run_id).sort()).toEqual([runs[3]!.runId, runs[4]!.runId].sort());
    await expectFsckClean(user.work);
  });
});
