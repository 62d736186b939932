/**
 * AgentV 4.42's branch layout in branch/layout.ts, without the client: a tip holding runs of all
 * three layouts (5.x at the root, 4.42's `runs/<exp>/<ts>/`, our older `runs/<exp>/<day>/<ts>/`)
 * is enumerated once and each run found by its id; the layout choice follows the branch and the
 * configuration; 4.42's config spellings are read; its counts are its own (score 1 passes).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRepo, writeCommit, type FileChange } from '../src/git/index.js';
import { listRunDirs, locateRun, overlayDirOf, parseStableRunId, presumedRunLocation, runLocationCandidates, stableRunId } from '../src/branch/layout.js';
import { chooseLayout } from '../src/branch/layout-choice.js';
import { loadResultsConfig } from '../src/branch/config.js';
import { readRunFiles, runDirsOn, stableCounts } from '../src/branch/run-index.js';
import { runsOnTip } from '../src/archive/rollover.js';
import { resolveConflictedPath } from '../src/merge/index.js';
import { ownedMergeKind } from '../src/merge/paths.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';

isolateGitForSuite();

const AUTHOR = { name: 't', email: 't@example.invalid', date: '1700000000 +0000' };

async function branchWith(paths: string[]) {
  const dir = await makeTempDir('stable-layout');
  await git(dir, ['init', '-q']);
  const repo = await openRepo(dir);
  const files: FileChange[] = paths.map((p) => ({ path: p, data: '{}\n' }));
  const { commit } = await writeCommit(repo, { parent: null, files, message: 'runs', author: AUTHOR });
  return { repo, tip: commit };
}

describe("AgentV 4.42's branch layout", () => {
  it('enumerates runs of every layout on a tip, telling 4.42 runs from the older day folders', async () => {
    const { repo, tip } = await branchWith([
      '2026-11-24T07-27-55-252Z/summary.json',
      'runs/nightly/2026-11-26T07-44-45-269Z/index.jsonl',
      'runs/nightly/2026-11-26T07-44-45-269Z/demo/greets/grading.json',
      'runs/default/2026-11-25T01-00-00-000Z/benchmark.json',
      'runs/old/2026-01-02/20260102T000000Z/index.jsonl',
      'metadata/runs/nightly/2026-11-26T07-44-45-269Z/tags.json',
      '.indexes/agentv-results.2026-11-24.jsonl',
    ]);
    const listed = await listRunDirs(repo, tip);
    expect(listed.dirs.map((d) => `${d.layout} ${d.path}`).sort()).toEqual([
      'root 2026-11-24T07-27-55-252Z',
      'stable runs/default/2026-11-25T01-00-00-000Z',
      'stable runs/nightly/2026-11-26T07-44-45-269Z',
    ]);
    expect(listed.legacyRuns).toBe(true);
    expect((await locateRun(repo, tip, 'nightly::2026-11-26T07-44-45-269Z'))?.path).toBe('runs/nightly/2026-11-26T07-44-45-269Z');
    // A bare timestamp: the root first, else 4.42's default experiment.
    expect((await locateRun(repo, tip, '2026-11-24T07-27-55-252Z'))?.path).toBe('2026-11-24T07-27-55-252Z');
    expect((await locateRun(repo, tip, '2026-11-25T01-00-00-000Z'))?.path).toBe('runs/default/2026-11-25T01-00-00-000Z');
    expect(await locateRun(repo, tip, 'nightly::2026-01-01T00-00-00-000Z')).toBeNull();
  });

  it('names runs as 4.42 does, keeps their overlays under metadata/runs/, refuses unsafe ids', () => {
    expect(stableRunId('nightly', '2026-11-26T07-44-45-269Z')).toBe('nightly::2026-11-26T07-44-45-269Z');
    expect(stableRunId('default', '2026-11-26T07-44-45-269Z')).toBe('2026-11-26T07-44-45-269Z');
    expect(parseStableRunId('a::b::c')).toBeNull();
    expect(parseStableRunId('../x::y')).toBeNull();
    expect(() => presumedRunLocation('..::x')).toThrow();
    expect(presumedRunLocation('nightly::t1').path).toBe('runs/nightly/t1');
    expect(overlayDirOf('runs/nightly/t1')).toBe('metadata/runs/nightly/t1');
    expect(overlayDirOf('runs/old/2026-01-02/t')).toBe('runs/old/2026-01-02/t');
    expect(overlayDirOf('2026-11-24T07-27-55-252Z')).toBe('2026-11-24T07-27-55-252Z');
    expect(runLocationCandidates('t1').map((l) => l.path)).toEqual(['t1', 'runs/default/t1']);
  });

  it('chooses the layout from the configuration, else from the runs the branch holds', async () => {
    const stable = await branchWith(['runs/nightly/t1/index.jsonl']);
    const next = await branchWith(['2026-11-24T07-27-55-252Z/summary.json']);
    const mixed = await branchWith(['runs/nightly/t1/index.jsonl', '2026-11-24T07-27-55-252Z/summary.json']);
    expect((await chooseLayout(stable.repo, [stable.tip], 'auto')).layout).toBe('stable');
    expect((await chooseLayout(next.repo, [next.tip], 'auto', 'stable')).layout).toBe('next');
    const both = await chooseLayout(mixed.repo, [mixed.tip], 'auto');
    expect(both.layout).toBe('next');
    expect(both.runs).toEqual({ next: 1, stable: 1 });
    expect((await chooseLayout(stable.repo, [null], 'auto', 'stable')).layout).toBe('stable');
    expect((await chooseLayout(stable.repo, [null], 'auto')).layout).toBe('next');
    const configured = await chooseLayout(stable.repo, [stable.tip], 'next');
    expect(configured).toEqual({ layout: 'next', reason: 'results.layout is next', runs: null });
  });

  it("reads 4.42's config spellings (repo_path, repo_url) and refuses two that disagree", async () => {
    const dir = await makeTempDir('stable-config');
    await mkdir(join(dir, '.agentv'));
    await writeFile(
      join(dir, '.agentv', 'config.yaml'),
      'results:\n  repo_path: ../results\n  branch: agentv/results/v1\n  auto_push: true\n  layout: stable\n',
    );
    const loaded = await loadResultsConfig({ cwd: dir, env: {} });
    expect(loaded.config.path).toBe('../results');
    expect(loaded.config.layout).toBe('stable');
    await writeFile(join(dir, '.agentv', 'config.yaml'), 'results:\n  repo_url: a\n  repo: b\n');
    await expect(loadResultsConfig({ cwd: dir, env: {} })).rejects.toThrow(/repo_url and results.repo/);
  });

  it("merges two machines' tags of a 4.42 run under metadata/runs/ as every overlay, and nothing else there", () => {
    expect(ownedMergeKind('metadata/runs/nightly/t1/tags.json')).toBe('json');
    expect(ownedMergeKind('metadata/runs/nightly/t1/feedback.json')).toBe('json');
    expect(ownedMergeKind('metadata/runs/nightly/t1/other.json')).toBeNull();
    expect(ownedMergeKind('metadata/tags.json')).toBeNull();
    const doc = (tags: string[], at: string) => Buffer.from(`${JSON.stringify({ tags, updated_at: at }, null, 2)}\n`);
    const merged = resolveConflictedPath({
      path: 'metadata/runs/nightly/t1/tags.json',
      base: doc(['baseline'], '2026-11-26T00:00:00.000Z'),
      ours: doc(['baseline', 'release'], '2026-11-26T01:00:00.000Z'),
      theirs: doc(['baseline', 'nightly-best'], '2026-11-26T02:00:00.000Z'),
    });
    expect(merged.action).toBe('write');
    const tags = (JSON.parse((merged as { data: Buffer }).data.toString('utf8')) as { tags: string[] }).tags;
    expect([...tags].sort()).toEqual(['baseline', 'nightly-best', 'release']);
  });

  it('counts a run as 4.42 does: one row per test and target, passed at score 1, the mean score', () => {
    const rows = [
      { test_id: 'a', target: 'x', score: 1 },
      { test_id: 'a', target: 'y', score: 0.5 },
      { test_id: 'b', target: 'x', score: 0 },
      { test_id: 'b', target: 'x', score: 1 }, // a rerun of the same pair: the last line wins
    ];
    const counts = stableCounts(`${rows.map((r) => JSON.stringify(r)).join('\n')}\nnot json\n`);
    expect(counts).toEqual({ total: 3, passed: 2, failed: 1, meanScore: 2.5 / 3, targets: ['x', 'y'] });
  });
  it('reads a 4.42 run without a catalog line through the one run index: its id, path and its own counts; archive leaves it in place', async () => {
    const rows = [
      { test_id: 'a', target: 'x', score: 1 },
      { test_id: 'b', target: 'x', score: 0 },
      { test_id: 'b', target: 'x', score: 1 }, // a rerun: 4.42 keeps the last line
    ];
    const index = `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
    const dir = await makeTempDir('stable-index');
    await git(dir, ['init', '-q']);
    const repo = await openRepo(dir);
    const files: FileChange[] = [
      { path: 'runs/nightly/2026-11-26T07-44-45-269Z/index.jsonl', data: index },
      { path: '2026-11-24T07-27-55-252Z/summary.json', data: '{}\n' },
      { path: '2026-11-24T07-27-55-252Z/index.jsonl', data: `${JSON.stringify({ test_id: 'a', target: 'x', score: 1 })}\n` },
    ];
    const { commit: tip } = await writeCommit(repo, { parent: null, files, message: 'runs', author: AUTHOR });
    const dirs = await runDirsOn(repo, tip);
    const read = await readRunFiles(repo, new Map(dirs.map((d) => [d.sha, d])), { cache: false });
    const stable = [...read.rows.values()].find((r) => r.path === 'runs/nightly/2026-11-26T07-44-45-269Z');
    const counts = stableCounts(index);
    expect(stable).toMatchObject({ run_id: 'nightly::2026-11-26T07-44-45-269Z', experiment: 'nightly', total: counts.total, passed: counts.passed });
    expect(counts).toMatchObject({ total: 2, passed: 2 });
    // archive and expire move root directories only: a 4.42 run is not among their candidates.
    expect((await runsOnTip(repo, tip, [])).map((r) => r.path)).toEqual(['2026-11-24T07-27-55-252Z']);
  });
});
