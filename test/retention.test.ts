/**
 * Retention (issue 16) through the library, with a fixed clock: which runs a policy keeps (any
 * rule keeps: age, count, tag), what a run removal writes (one commit per branch, the catalog and
 * the retention log), and archived runs this machine has no copy of (left alone, not orphaned).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expireRuns } from '../src/archive/retention.js';
import { rollover } from '../src/archive/rollover.js';
import { RETENTION_LOG_PATH, parseRetentionLog } from '../src/layout/retention-log.js';
import { listRuns } from '../src/branch-read/list.js';
import { editTags } from '../src/overlay-write/write.js';
import { publish } from '../src/publish/publish.js';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, expectFsckClean, makeRunWorkspace, makeUserRepo, tip, type RunWorkspace } from './publish-helpers.js';

const NOW = new Date('2026-03-20T12:00:00Z');
const MONTH = 'refs/heads/agentv/results-archive/v1/2026-03';
let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];
const ids = (xs: { run_id: string }[]) => xs.map((x) => x.run_id);
const id = (i: number) => runs[i]!.runId;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // 03-14 … 03-18, one run a day; 03-17 is tagged `release`.
  for (let day = 0; day < 5; day++) runs.push(await makeRunWorkspace({ day, minute: day, rows: 2, seed: 21 + day }));
  for (const r of runs) await publish({ run: r.dir, cwd: user.work, push: false });
  await editTags({ cwd: user.work, runId: id(3), add: ['release'], push: false });
}, 120_000);

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('retention policy', () => {
  it('keepDays: runs whose day is older than the window go, newest first', async () => {
    const r = await expireRuns({ cwd: user.work, keepDays: 3, now: NOW, dryRun: true });
    expect(ids(r.expired)).toEqual([id(2), id(1), id(0)]);
    expect(r.kept).toBe(2);
  });

  it('a run is kept when ANY rule keeps it: keepRuns 4 saves what keepDays 3 alone would drop', async () => {
    const r = await expireRuns({ cwd: user.work, keepDays: 3, keepRuns: 4, now: NOW, dryRun: true });
    expect(ids(r.expired)).toEqual([id(0)]);
    const count = await expireRuns({ cwd: user.work, keepRuns: 2, now: NOW, dryRun: true });
    expect(ids(count.expired)).toEqual([id(2), id(1), id(0)]);
  });

  it('a keep tag saves a run past every other rule; the default keep tag is baseline, so `release` needs asking for', async () => {
    const byDefault = await expireRuns({ cwd: user.work, keepDays: 0, now: NOW, dryRun: true });
    expect(byDefault.policy.keep_tags).toEqual(['baseline']);
    expect(ids(byDefault.expired)).toContain(id(3));
    const tagged = await expireRuns({ cwd: user.work, keepDays: 0, keepTags: ['release'], now: NOW, dryRun: true });
    expect(ids(tagged.expired)).toEqual([id(4), id(2), id(1), id(0)]);
    expect(tagged.keptByTag).toEqual([{ run_id: id(3), tags: ['release'] }]);
  });

  it('.agentv/config.yaml sets both windows (results.archive for rollover, results.retention here); options override key by key', async () => {
    const cfg = join(user.root, 'windows.yaml');
    await writeFile(cfg, 'results:\n  archive:\n    keep_days: 100000\n    keep_runs: 2\n  retention:\n    keep_days: 3\n    keep_tags: [release]\n');
    const rolled = await rollover({ cwd: user.work, configFile: cfg, dryRun: true, now: NOW });
    expect(ids(rolled.archived).sort()).toEqual([id(0), id(1), id(2)].sort());
    const r = await expireRuns({ cwd: user.work, configFile: cfg, keepRuns: 4, now: NOW, dryRun: true });
    expect(r.policy).toEqual({ keep_days: 3, keep_runs: 4, keep_tags: ['release'] });
    expect(ids(r.expired)).toEqual([id(0)]);
    await writeFile(cfg, 'results:\n  retention:\n    keep_days: 3\n    keep_weeks: 2\n');
    await expect(expireRuns({ cwd: user.work, configFile: cfg, dryRun: true })).rejects.toThrow(/unknown key\(s\) results\.retention\.keep_weeks/);
  });

  it('refuses a policy with neither an age nor a count, and bad numbers', async () => {
    await expect(expireRuns({ cwd: user.work, dryRun: true })).rejects.toThrow(/no retention policy/);
    await expect(expireRuns({ cwd: user.work, keepDays: 1.5, dryRun: true })).rejects.toThrow(/keepDays/);
    await expect(expireRuns({ cwd: user.work, keepRuns: 2, keepTags: [''], dryRun: true })).rejects.toThrow(/keepTags/);
  });
});

describe('retention writes', () => {
  it('an archived run whose month branch this machine lacks is left alone (its catalog row too); live ones go', async () => {
    await rollover({ cwd: user.work, keepDays: 100_000, keepRuns: 3, now: NOW }); // 03-14, 03-15 -> 2026-03
    const archived = (await tip(user.work, MONTH))!;
    // As if another machine had archived them and this one never fetched the month: no local ref, no tracking ref.
    await git(user.work, ['update-ref', '-d', MONTH, archived]);
    try {
      const r = await expireRuns({ cwd: user.work, keepDays: 3, now: NOW });
      expect(ids(r.expired)).toEqual([id(2)]);
      expect(r.skipped.map((s) => s.run_id).sort()).toEqual([id(0), id(1)].sort());
      expect(r.skipped[0]!.reason).toMatch(/agentv\/results-archive\/v1\/2026-03, which this machine has no copy of/);
      const listed = ids((await listRuns({ cwd: user.work })).runs);
      expect(listed).toEqual(expect.arrayContaining([id(0), id(1)]));
      expect(listed).not.toContain(id(2));
    } finally {
      await git(user.work, ['update-ref', MONTH, archived, '']);
    }
  });

  it('with the month back, a second retention removes the archived runs in one commit on the archive branch, logged with the tips before', async () => {
    const before = { results: (await tip(user.work, RESULTS_REF))!, artifacts: (await tip(user.work, ARTIFACTS_REF))!, month: (await tip(user.work, MONTH))! };
    const r = await expireRuns({ cwd: user.work, keepDays: 3, now: NOW });
    expect(ids(r.expired).sort()).toEqual([id(0), id(1)].sort());
    expect(r.expired.every((e) => e.archived === '2026-03')).toBe(true);
    // The live artifacts branch had nothing of theirs: it does not move. The live results branch
    // moves for the catalog rows and the log line; the month archives lose the two directories.
    const moved = new Map(r.refs.map((x) => [x.ref, x]));
    expect(moved.has(ARTIFACTS_REF)).toBe(false);
    expect(moved.get(MONTH)!.before).toBe(before.month);
    expect(await git(user.work, ['ls-tree', '--name-only', MONTH])).toBe('');
    for (const x of r.refs) expect(await git(user.work, ['rev-parse', `${x.after}^1`])).toBe(x.before);
    const log = parseRetentionLog(await git(user.work, ['cat-file', 'blob', `${RESULTS_REF}:${RETENTION_LOG_PATH}`]));
    expect(log.map((l) => l.id)).toHaveLength(2);
    const last = log[log.length - 1]!;
    expect(last.id).toBe(r.id);
    expect(last.policy).toEqual({ keep_days: 3, keep_runs: null, keep_tags: ['baseline'] });
    expect(last.from).toEqual([
      { results: { branch: 'agentv/results/v1', tip: before.results }, artifacts: null },
      {
        results: { branch: 'agentv/results-archive/v1/2026-03', tip: before.month },
        artifacts: { branch: 'agentv/artifacts-archive/v1/2026-03', tip: expect.stringMatching(/^[0-9a-f]{40}$/) },
      },
    ]);
    // The emptied days' catalog files are gone; the runs are still in history.
    const indexes = await git(user.work, ['ls-tree', '--name-only', `${RESULTS_REF}:.indexes`]);
    expect(indexes).not.toContain('2026-03-14');
    expect(await git(user.work, ['cat-file', '-t', `${before.month}:2026-03-14/${id(0)}`])).toBe('tree');
    await expectFsckClean(user.work);
  });
});
