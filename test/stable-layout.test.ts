/**
 * AgentV 4.42's branch layout in layout/branch-layout.ts, without the client: a tip holding runs of all
 * three layouts (5.x at the root, 4.42's `runs/<exp>/<ts>/`, our older `runs/<exp>/<day>/<ts>/`)
 * is enumerated once and each run found by its id; the layout choice follows the branch and the
 * configuration; 4.42's config spellings are read; its counts are its own (score 1 passes).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openRepo, writeCommit, type FileChange } from '../src/git/index.js';
import {
  catalogPathFor,
  listRunDirs,
  locateRun,
  overlayDirOf,
  parseStableRunId,
  presumedRunLocation,
  runLocationCandidates,
  stableRunId,
} from '../src/layout/branch-layout.js';
import { chooseLayout } from '../src/layout/layout-choice.js';
import { exitCodeFor } from '../src/errors/errors.js';
import { startServer } from '../src/serve/server.js';
import { loadResultsConfig } from '../src/repo/config.js';
import { readRunFiles, runDirsOn, stableCounts } from '../src/layout/run-index.js';
import { ARCHIVE_RESULTS_PREFIX, rollover } from '../src/archive/rollover.js';
import { runsOnTip } from '../src/archive/tip-runs.js';
import { expireRuns } from '../src/archive/retention.js';
import { listingSize } from '../src/layout/listing-budget.js';
import { listRuns } from '../src/branch-read/list.js';
import { editTags, readTags } from '../src/overlay-write/write.js';
import { pull } from '../src/branch-read/pull.js';
import { publish } from '../src/publish/publish.js';
import { stableRunFiles } from '../src/publish/stable-shape.js';
import { exportRun } from '../src/runs/export/export.js';
import { resolveConflictedPath } from '../src/merge/index.js';
import { ownedMergeKind } from '../src/merge/owned-paths.js';
import { git, isolateGitForSuite, makeTempDir, type UserRepoFixture } from './helpers/git-fixtures.js';
import { RESULTS_REF, expectFsckClean, makeRunWorkspace, makeUserRepo, tip, type RunWorkspace } from './publish-helpers.js';

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
    // `<experiment>/<timestamp>`, as our other run ids spell it, names the same 4.42 run.
    expect(await locateRun(repo, tip, 'nightly/2026-11-26T07-44-45-269Z')).toMatchObject({
      path: 'runs/nightly/2026-11-26T07-44-45-269Z',
      runId: 'nightly::2026-11-26T07-44-45-269Z',
    });
    expect(await locateRun(repo, tip, 'nightly/2026-01-01T00-00-00-000Z')).toBeNull();
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
    expect(runLocationCandidates('nightly/t1').map((l) => l.path)).toContain('runs/nightly/t1');
    expect(runLocationCandidates('nightly/2026-01-02').map((l) => l.path)).not.toContain('runs/nightly/2026-01-02');
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
  it('reads a 4.42 run without a catalog line through the one run index: its id, path and its own counts; archive and expire see it', async () => {
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
    // archive and expire see every layout: the 4.42 run is among their candidates, with its own counts.
    const onTip = await runsOnTip(repo, tip, []);
    expect(onTip.map((r) => r.path).sort()).toEqual(['2026-11-24T07-27-55-252Z', 'runs/nightly/2026-11-26T07-44-45-269Z']);
    expect(onTip.find((r) => r.path.startsWith('runs/'))).toMatchObject({ run_id: 'nightly::2026-11-26T07-44-45-269Z', day: '2026-11-26' });
  });
});

/** AgentV 4.42's runs (auto_push: `runs/<exp>/<ts>/`, tags under `metadata/runs/<exp>/<ts>/`) next to one we published. */
describe('archive and expire take AgentV 4.42 runs like any other', () => {
  let user: UserRepoFixture;
  let published: RunWorkspace;
  const NOW = new Date('2026-03-20T12:00:00Z');
  const ARCHIVE = `${ARCHIVE_RESULTS_PREFIX}2026-03`;
  // Oldest first. S2 is tagged baseline; S1 and S4 carry another tag; S3 is 4.42's default experiment (a bare timestamp id).
  const S = [
    { exp: 'nightly', ts: '2026-03-10T10-00-00-000Z', tags: ['wip'] },
    { exp: 'nightly', ts: '2026-03-12T10-00-00-000Z', tags: ['baseline'] },
    { exp: 'default', ts: '2026-03-17T10-00-00-000Z', tags: ['x'] },
    { exp: 'nightly', ts: '2026-03-18T10-00-00-000Z', tags: ['y'] },
    { exp: 'nightly', ts: '2026-03-19T10-00-00-000Z', tags: null },
  ];
  const idOf = (i: number) => stableRunId(S[i]!.exp, S[i]!.ts);
  const pathOf = (i: number) => `runs/${S[i]!.exp}/${S[i]!.ts}`;
  /** Where a live path of run i sits on the archive branch: in the folder of its day. */
  const archivedOf = (i: number, p: string) => `${S[i]!.ts.slice(0, 10)}/${p}`;
  const listing = async (ref: string) => (await git(user.work, ['ls-tree', '-r', '--name-only', ref])).split('\n').filter(Boolean);
  const holds = (paths: string[], dir: string) => paths.some((p) => p.startsWith(`${dir}/`));

  beforeAll(async () => {
    user = await makeUserRepo();
    published = await makeRunWorkspace({ experiment: 'smoke', day: 2, minute: 9, rows: 2, seed: 5 }); // 2026-03-16
    await publish({ run: published.dir, cwd: user.work, push: false });
    const repo = await openRepo(user.work);
    const files: FileChange[] = S.flatMap((s, i) => {
      const rows = [
        { test_id: 'greets', target: 'x', score: 1, timestamp: s.ts },
        { test_id: 'counts', target: 'x', score: i % 2 },
      ];
      const run = `runs/${s.exp}/${s.ts}`;
      return [
        { path: `${run}/index.jsonl`, data: `${rows.map((r) => JSON.stringify(r)).join('\n')}\n` },
        { path: `${run}/benchmark.json`, data: '{}\n' },
        { path: `${run}/demo/greets/grading.json`, data: '{"score":1}\n' },
        ...(s.tags ? [{ path: `metadata/${run}/tags.json`, data: `${JSON.stringify({ tags: s.tags })}\n` }] : []),
      ];
    });
    const parent = (await tip(user.work, RESULTS_REF))!;
    const { commit } = await writeCommit(repo, { parent, files, message: 'auto_push of AgentV 4.42', author: AUTHOR });
    await git(user.work, ['update-ref', RESULTS_REF, commit, parent]);
  });

  it('archive by count grafts the oldest 4.42 runs with their overlays onto the month branch, as they were', async () => {
    const before = await tip(user.work, RESULTS_REF);
    const trees = await Promise.all([0, 1].flatMap((i) => [pathOf(i), `metadata/${pathOf(i)}`]).map((p) => git(user.work, ['rev-parse', `${before}:${p}`])));
    const r = await rollover({ cwd: user.work, keepDays: 365, keepRuns: 4, maxListingBytes: 0, now: NOW });
    expect(r.archived.map((a) => a.run_id).sort()).toEqual([idOf(0), idOf(1)].sort());
    expect(r.archived.every((a) => a.month === '2026-03')).toBe(true);
    expect(r.live).toBe(4);
    const live = await listing(RESULTS_REF);
    for (const i of [0, 1]) {
      expect(holds(live, pathOf(i))).toBe(false);
      expect(holds(live, `metadata/${pathOf(i)}`)).toBe(false);
    }
    for (const i of [2, 3, 4]) expect(holds(live, pathOf(i))).toBe(true);
    // The archive branch keeps the layout readers expect under each day folder: <day>/runs/<exp>/<ts> and <day>/metadata/runs/<exp>/<ts>, the same trees.
    const after = await Promise.all(
      [0, 1].flatMap((i) => [pathOf(i), `metadata/${pathOf(i)}`].map((p) => git(user.work, ['rev-parse', `${ARCHIVE}:${archivedOf(i, p)}`]))),
    );
    expect(after).toEqual(trees);
    await expectFsckClean(user.work);
  });

  it('list still shows the archived 4.42 runs, marked archived, with their own counts; pull finds one on its archive branch', async () => {
    const out = await listRuns({ cwd: user.work });
    const byId = new Map(out.runs.map((r) => [r.run_id, r]));
    expect([...byId.keys()].sort()).toEqual([published.runId, ...S.map((_, i) => idOf(i))].sort());
    expect(byId.get(idOf(0))).toMatchObject({ archived: '2026-03', total: 2, passed: 1, experiment: 'nightly' });
    expect(byId.get(idOf(1))!.archived).toBe('2026-03');
    expect(byId.get(idOf(2))!.archived).toBeUndefined();
    const dest = join(user.root, 'pulled-stable');
    const pulled = await pull({ cwd: user.work, runId: idOf(0), out: dest });
    expect(pulled.source).toBe('archive');
    expect((await readFile(join(dest, 'index.jsonl'), 'utf8')).split('\n').filter(Boolean)).toHaveLength(2);
    await expect(readFile(join(dest, 'demo/greets/grading.json'), 'utf8')).resolves.toContain('score');
  });

  it('the listing budget counts a 4.42 run with its overlays, per run, and archives the oldest live runs until it fits', async () => {
    const repo = await openRepo(user.work);
    const size = await listingSize(repo, (await tip(user.work, RESULTS_REF))!);
    const own = (await listing(RESULTS_REF)).filter((p) => p.startsWith(`${pathOf(2)}/`) || p.startsWith(`metadata/${pathOf(2)}/`));
    expect(size.byDir.get(pathOf(2))).toBe(own.reduce((n, p) => n + Buffer.byteLength(p) + 1, 0));
    expect(size.byDir.has('runs')).toBe(false);
    // One byte short of dropping only the published run (the oldest live): the 4.42 run after it goes too.
    const max = size.total - size.byDir.get(published.runId)! - 1;
    const r = await rollover({ cwd: user.work, keepDays: 365, keepRuns: 100, maxListingBytes: max, now: NOW });
    expect(r.archived.map((a) => a.run_id)).toEqual([published.runId, idOf(2)]);
    expect(r.listing.after).toBeLessThanOrEqual(max);
    const live = await listing(RESULTS_REF);
    // Measured on the new tip, the catalog files the rollover added included (the archived line of
    // the 4.42 run's day, the foreign-catalog lines of the runs that stay).
    expect(live).toContain(catalogPathFor('2026-03-17'));
    expect(live.reduce((n, p) => n + Buffer.byteLength(p) + 1, 0)).toBe(r.listing.after);
    expect(holds(live, pathOf(2)) || holds(live, `metadata/${pathOf(2)}`)).toBe(false);
    expect(holds(await listing(ARCHIVE), archivedOf(2, `metadata/${pathOf(2)}`))).toBe(true);
  });

  it('expire removes 4.42 runs, live and archived, with their overlays; a baseline tag in metadata/runs/ keeps one', async () => {
    const r = await expireRuns({ cwd: user.work, keepDays: 0, keepRuns: 1, now: NOW });
    expect(r.keptByTag).toEqual([{ run_id: idOf(1), tags: ['baseline'] }]);
    expect(r.expired.map((e) => e.run_id).sort()).toEqual([idOf(0), idOf(2), idOf(3), published.runId].sort());
    const live = await listing(RESULTS_REF);
    expect(holds(live, pathOf(4))).toBe(true);
    expect(holds(live, pathOf(3)) || holds(live, `metadata/${pathOf(3)}`)).toBe(false);
    const archive = await listing(ARCHIVE);
    for (const i of [0, 2]) expect(holds(archive, archivedOf(i, pathOf(i))) || holds(archive, archivedOf(i, `metadata/${pathOf(i)}`))).toBe(false);
    expect(holds(archive, archivedOf(1, pathOf(1))) && holds(archive, archivedOf(1, `metadata/${pathOf(1)}`))).toBe(true);
    const ids = (await listRuns({ cwd: user.work })).runs.map((x) => x.run_id).sort();
    expect(ids).toEqual([idOf(1), idOf(4)].sort());
    await expectFsckClean(user.work);
  });

  it('tag names a 4.42 run as <experiment>/<timestamp> as well as <experiment>::<timestamp>: one tags.json under metadata/runs/', async () => {
    const slash = `${S[4]!.exp}/${S[4]!.ts}`;
    const r = await editTags({ cwd: user.work, runId: slash, add: ['slash'], push: false });
    expect(r.document.tags).toEqual(['slash']);
    await editTags({ cwd: user.work, runId: idOf(4), add: ['colons'], push: false });
    const doc = JSON.parse(await git(user.work, ['cat-file', 'blob', `${RESULTS_REF}:metadata/${pathOf(4)}/tags.json`])) as { tags: string[] };
    expect(doc.tags).toEqual(['slash', 'colons']);
    expect((await readTags({ cwd: user.work, runId: slash })).tags).toEqual(['slash', 'colons']);
    expect(holds(await listing(RESULTS_REF), `${S[4]!.exp}--${S[4]!.ts}`)).toBe(false);
  });
});

describe('a publish in AgentV 4.42 layout goes through the validate gate', () => {
  /** A 4.42 run as its `agentv eval` leaves it: `.agentv/results/runs/<exp>/<ts>/`, a root index naming each test's folder. */
  async function stableRun(ts: string, opts: { dropGrading?: boolean } = {}): Promise<string> {
    const root = await makeTempDir('stable-gate-run');
    const dir = join(root, '.agentv', 'results', 'runs', 'nightly', ts);
    const rows = ['greets', 'counts'].map((t, i) => ({
      timestamp: '2026-03-20T10:00:00.000Z',
      test_id: t,
      suite: 'demo',
      score: i === 0 ? 1 : 0,
      target: 'steady-agent',
      execution_status: 'ok',
      artifact_dir: `demo/${t}`,
      grading_path: `demo/${t}/grading.json`,
    }));
    for (const t of ['greets', 'counts']) {
      await mkdir(join(dir, 'demo', t), { recursive: true });
      if (!(opts.dropGrading && t === 'counts')) await writeFile(join(dir, 'demo', t, 'grading.json'), '{"assertions":[]}\n');
    }
    await writeFile(join(dir, 'index.jsonl'), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    return dir;
  }

  it('refuses a 4.42 run whose row names a missing sidecar, committing nothing; --allow-invalid publishes it where 4.42 would', async () => {
    const user = await makeUserRepo();
    const ts = '2026-03-20T10-00-00-000Z';
    const bad = await stableRun(ts, { dropGrading: true });
    const before = await tip(user.work, RESULTS_REF);
    const refused = await publish({ run: bad, cwd: user.work, push: false }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Error);
    expect(String((refused as Error).message)).toMatch(
      /refusing to publish a run `validate` rejects: .*grading_path demo\/counts\/grading\.json does not exist/,
    );
    expect(exitCodeFor(refused)).toBe(2);
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
    const forced = await publish({ run: bad, cwd: user.work, push: false, allowInvalid: true });
    expect(forced.layout?.layout).toBe('stable');
    expect(forced.location.path).toBe(`runs/nightly/${ts}`);
    // A valid 4.42 run is not refused.
    const good = await publish({ run: await stableRun('2026-03-21T10-00-00-000Z'), cwd: user.work, push: false });
    expect(good.location.path).toBe('runs/nightly/2026-03-21T10-00-00-000Z');
  });

  it('a bundle of ours published onto a branch of 4.42 runs is reshaped there, and leaves no unreachable object', async () => {
    const user = await makeUserRepo();
    await publish({ run: await stableRun('2026-03-22T10-00-00-000Z'), cwd: user.work, push: false });
    const ours = await makeRunWorkspace({ rows: 3, day: 9 });
    const published = await publish({ run: ours.dir, cwd: user.work, push: false });
    expect(published.layout?.layout).toBe('stable');
    // Whatever git was handed early (publish/prefeed.ts) is written where it goes with the publish
    // unless a commit names it: the reshaped commit leaves nothing unreachable behind.
    const unreachable = await git(user.work, ['fsck', '--unreachable', '--no-reflogs', '--no-progress']);
    expect(unreachable.split('\n').filter((l) => l.startsWith('unreachable'))).toEqual([]);
  });

  it("our Dashboard's run detail of a 4.42 run shows its listed id, not the name of the server's private copy", async () => {
    const user = await makeUserRepo();
    await publish({ run: await stableRun('2026-03-22T10-00-00-000Z'), cwd: user.work, push: false });
    const id = stableRunId('nightly', '2026-03-22T10-00-00-000Z');
    const server = await startServer({ cwd: user.work, port: 0 });
    try {
      const res = await fetch(`${server.url}/api/runs/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${server.token}` } });
      expect(res.status).toBe(200);
      const detail = (await res.json()) as { run: { run_id: string }; summary: { run_id: string; total: number; passed: number }; tests: unknown[] };
      expect(detail.run.run_id).toBe(id);
      expect(detail.summary.run_id).toBe(id);
      expect([detail.summary.total, detail.summary.passed, detail.tests.length]).toEqual([2, 1, 2]);
    } finally {
      await server.close();
    }
  });
});

describe("an assert-set in 4.42's shape (issue 50 item 5)", () => {
  interface Score {
    name: string;
    type: string;
    score: number;
    verdict?: string;
    assertions?: { text: string; passed: boolean }[];
    scores?: Score[];
  }
  const leaf = (name: string, score: number): Score => ({
    name,
    type: 'contains',
    score,
    verdict: score === 1 ? 'pass' : 'fail',
    assertions: [{ text: `${name} checked`, passed: score === 1 }],
  });
  const tree = (s: Score[] | undefined, depth = 0): [number, string, number][] =>
    (s ?? []).flatMap((g) => [[depth, g.name, g.score] as [number, string, number], ...tree(g.scores, depth + 1)]);
  const depthOf = (s: Score[] | undefined): number => Math.max(0, ...(s ?? []).map((g) => 1 + depthOf(g.scores)));

  async function stableFilesOf(rows: Record<string, unknown>[]) {
    const dir = await makeTempDir('stable-assert-set');
    const src = join(dir, 'results.jsonl');
    await writeFile(src, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const out = join(dir, 'bundle');
    await exportRun({ source: src, out, experiment: 'sets', cwd: dir });
    const files = stableRunFiles(out);
    const text = (rel: string) => files.find((f) => f.rel === rel)!.data.toString('utf8');
    return {
      lines: text('index.jsonl')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { test_id: string; scores: Score[]; artifact_dir: string }),
      text,
    };
  }

  it("keeps the members' scores in the index line at every depth, grading.json's graders the top level with the members' assertions", async () => {
    const inner: Score = { name: 'inner', type: 'assert-set', score: 0.5, verdict: 'fail', scores: [leaf('has-42', 1), leaf('has-nope', 0)] };
    const outer: Score = { name: 'outer', type: 'assert-set', score: 0.75, verdict: 'fail', scores: [inner, leaf('has-hello', 1)] };
    const row = { timestamp: '2026-03-20T10:00:00.000Z', test_id: 'nested', suite: 'sets', target: 't', score: 0.875, scores: [outer, leaf('plain', 1)] };
    const { lines, text } = await stableFilesOf([row]);
    expect(tree(lines[0]!.scores)).toEqual(tree(row.scores));
    // A member keeps its own assertions; an assert-set written without its own gets its members', `[member]` first, as 4.42 writes a composite's.
    expect(lines[0]!.scores[0]!.scores![0]!.scores![1]!.assertions!.map((a) => a.text)).toEqual(['has-nope checked']);
    const grading = JSON.parse(text(`${lines[0]!.artifact_dir}/grading.json`)) as { graders: Score[] };
    expect(tree(grading.graders)).toEqual([
      [0, 'outer', 0.75],
      [0, 'plain', 1],
    ]);
    expect(grading.graders[0]!.assertions!.map((a) => a.text)).toEqual([
      '[inner] [has-42] has-42 checked',
      '[inner] [has-nope] has-nope checked',
      '[has-hello] has-hello checked',
    ]);
  });

  it('carries a hostile nesting to a bounded depth', async () => {
    let deep: Score = leaf('bottom', 1);
    for (let i = 0; i < 200; i++) deep = { name: `set-${i}`, type: 'assert-set', score: 1, scores: [deep] };
    const { lines } = await stableFilesOf([{ timestamp: '2026-03-20T10:00:00.000Z', test_id: 'deep', suite: 'sets', target: 't', score: 1, scores: [deep] }]);
    expect(depthOf(lines[0]!.scores)).toBe(17);
  });
});
