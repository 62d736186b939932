/**
 * Issue 24, every run on the branch is first-class whoever wrote it: runs in AgentV's own layout
 * (what its `auto_push` writes: `<run_id>/summary.json` with AgentV's `counts` and `metadata`,
 * `<run_id>/.internal/index.jsonl`, no catalog line of ours) next to runs we published. `archive`
 * counts them against the listing budget and moves them, `list` and `pull` still find them,
 * `expire` removes them, `publish` and `status` warn when the live listing passes the budget, and
 * what `list` read from their files is cached by tree id. (The real client's auto_push is in
 * test/conformance/branch-two-writers.test.ts.)
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lsTree, openRepo, readRefs, updateRefs, writeCommit } from '../src/git/index.js';
import { readRunFiles, runDirsOn } from '../src/layout/run-index.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, RESULTS_REF } from './publish-helpers.js';

isolateGitForSuite();

const AUTHOR = { name: 'AgentV', email: 'agentv@results-repo', date: '2026-03-01T10:00:00Z' };

/** One AgentV-written run (6 tests, `passed` of them passing) as its auto_push lays it out. */
function agentvRunFiles(runId: string, iso: string, passed: number, tests = 6) {
  const targets = ['flaky-agent', 'steady-agent'];
  const summary = {
    index_path: '.internal/index.jsonl',
    run_id: runId,
    counts: { total_tests: tests, passed_tests: passed, failed_tests: tests - passed, total_samples: tests, errored_samples: 0 },
    metadata: { eval_file: 'evals/demo.eval.yaml', timestamp: iso, targets, experiment: 'theirs' },
  };
  const rows = Array.from({ length: tests }, (_, i) => ({ timestamp: iso, test_id: `t-${i}`, target: targets[i % 2], score: i < passed ? 1 : 0 }));
  const files = [
    { path: `${runId}/summary.json`, data: `${JSON.stringify(summary, null, 2)}\n` },
    { path: `${runId}/.internal/index.jsonl`, data: rows.map((r) => JSON.stringify(r)).join('\n') + '\n' },
  ];
  for (let i = 0; i < tests; i++) files.push({ path: `${runId}/t-${i}--0123abcd/sample-1/result.json`, data: `{"test_id":"t-${i}"}\n` });
  return files;
}

/** Commits AgentV-written runs onto the local results branch (as a pull of AgentV's push would bring them). */
async function addAgentvRuns(work: string, runs: { id: string; iso: string; passed: number }[]): Promise<void> {
  const repo = await openRepo(work);
  const old = (await readRefs(repo, [RESULTS_REF])).get(RESULTS_REF) ?? null;
  const files = runs.flatMap((r) => agentvRunFiles(r.id, r.iso, r.passed));
  const { commit } = await writeCommit(repo, { parent: old, files, message: 'feat(results): theirs - auto_push', author: AUTHOR });
  await updateRefs(repo, [{ ref: RESULTS_REF, new: commit, old }]);
}

const THEIRS = [
  { id: '2026-03-01T09-00-00-000Z', iso: '2026-03-01T09:00:00.000Z', passed: 3 },
  { id: '2026-03-02T09-00-00-000Z', iso: '2026-03-02T09:00:00.000Z', passed: 4 },
  { id: '2026-03-03T09-00-00-000Z', iso: '2026-03-03T09:00:00.000Z', passed: 6 },
];

async function mixedBranch() {
  const user = await makeUserRepo();
  const ours = await makeRunWorkspace({ experiment: 'ours', rows: 3, day: 10 });
  const p = await cli(['publish', ours.dir, '--no-push', '--json'], user.work);
  expect(p.code, p.stderr).toBe(0);
  await addAgentvRuns(user.work, THEIRS);
  return { user, ours: (JSON.parse(p.stdout) as { location: { path: string } }).location.path };
}

interface ListedRun {
  run_id: string;
  writer: string;
  total: number;
  passed: number;
  targets: string[];
  archived?: string;
}

async function listed(work: string): Promise<ListedRun[]> {
  const r = await cli(['list', '--json'], work);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runs: ListedRun[] }).runs;
}

describe('runs AgentV wrote are first-class', () => {
  it('list reads their counts from their own summary.json; what it read is cached by tree id', async () => {
    const { user, ours } = await mixedBranch();
    const runs = await listed(user.work);
    expect(runs.map((r) => r.run_id).sort()).toEqual([...THEIRS.map((t) => t.id), ours].sort());
    expect(runs.find((r) => r.run_id === THEIRS[1]!.id)).toMatchObject({ writer: 'agentv', total: 6, passed: 4, targets: ['flaky-agent', 'steady-agent'] });

    const repo = await openRepo(user.work);
    const tip = (await readRefs(repo, [RESULTS_REF])).get(RESULTS_REF)!;
    const trees = new Map((await runDirsOn(repo, tip)).filter((d) => d.path !== ours).map((d) => [d.sha, d]));
    const cached = await readRunFiles(repo, trees);
    expect(cached.read).toBe(0); // list already read them: nothing read again
    expect([...cached.rows.values()].map((r) => r.passed).sort()).toEqual([3, 4, 6]);
    const uncached = await readRunFiles(repo, trees, { cache: false });
    expect(uncached.read).toBe(3);
    expect([...uncached.rows.values()]).toEqual([...cached.rows.values()]);
  });

  it("archive counts their listing against the budget and moves the oldest; list and pull still find them; AgentV's layout survives byte for byte", async () => {
    const { user, ours } = await mixedBranch();
    const repo = await openRepo(user.work);
    const before = (await readRefs(repo, [RESULTS_REF])).get(RESULTS_REF)!;
    const dry = await cli(['archive', '--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', '1', '--dry-run', '--json'], user.work);
    expect(dry.code, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as { archived: { run_id: string }[]; live: number };
    // Everything but the newest run goes (the budget of 1 byte cannot be met), AgentV's runs included.
    expect(plan.archived.map((a) => a.run_id).sort()).toEqual(THEIRS.map((t) => t.id).sort());
    expect(plan.live).toBe(1);

    const real = await cli(['archive', '--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', '1', '--no-push', '--json'], user.work);
    expect(real.code, real.stderr).toBe(0);
    const after = (await readRefs(repo, [RESULTS_REF])).get(RESULTS_REF)!;
    const root = (await lsTree(repo, after)).map((e) => e.path);
    for (const t of THEIRS) expect(root).not.toContain(t.id);
    expect(root).toContain(ours);
    const runs = await listed(user.work);
    for (const t of THEIRS) expect(runs.find((r) => r.run_id === t.id)).toMatchObject({ archived: '2026-03', total: 6, passed: t.passed });

    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const pulled = await cli(['pull', THEIRS[0]!.id, '--out', out, '--json'], user.work);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout)).toMatchObject({ source: 'archive' });
    const original = await git(user.work, ['show', `${before}:${THEIRS[0]!.id}/.internal/index.jsonl`]);
    expect(await readFile(join(out, '.internal', 'index.jsonl'), 'utf8')).toBe(`${original}\n`);
    expect(existsSync(join(out, 't-0--0123abcd', 'sample-1', 'result.json'))).toBe(true);
    // A second rollover has nothing left to move.
    const again = await cli(['archive', '--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', '1', '--no-push', '--json'], user.work);
    expect((JSON.parse(again.stdout) as { archived: unknown[] }).archived).toEqual([]);
  });

  it('archive writes what it read of the live runs AgentV wrote onto the branch: another machine lists them without reading their files, until AgentV changes one', async () => {
    const { user } = await mixedBranch();
    const fresh = await listed(user.work); // read from their files
    const keep = ['--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', '0', '--no-push'];
    const dry = await cli(['archive', ...keep, '--dry-run', '--json'], user.work);
    expect(JSON.parse(dry.stdout)).toMatchObject({ archived: [], catalogued: 3, refs: [] });
    const first = await cli(['archive', ...keep], user.work);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Catalogued 3 live runs another tool published');
    const repo = await openRepo(user.work);
    const tip = (await readRefs(repo, [RESULTS_REF])).get(RESULTS_REF)!;
    const files = (await lsTree(repo, tip, { path: '.indexes/' })).map((e) => e.path).filter((p) => p.includes('foreign'));
    expect(files).toEqual([
      '.indexes/agentv-results-foreign.2026-03-01.jsonl',
      '.indexes/agentv-results-foreign.2026-03-02.jsonl',
      '.indexes/agentv-results-foreign.2026-03-03.jsonl',
    ]);
    // Nothing new to catalog: a second archive commits nothing.
    const again = await cli(['archive', ...keep, '--json'], user.work);
    expect(JSON.parse(again.stdout)).toMatchObject({ catalogued: 0, refs: [] });

    // Another machine: no cache of its own. Its list is the same, and reads no run file (no cache written).
    const cache = join(user.work, '.git', 'agentv-results', 'run-rows.v1.json');
    await rm(cache, { force: true });
    expect(await listed(user.work)).toEqual(fresh);
    expect(existsSync(cache)).toBe(false);

    // AgentV adds a row to one of its runs: that run's line no longer matches its tree, so it is read again.
    const changed = agentvRunFiles(THEIRS[1]!.id, THEIRS[1]!.iso, 5, 7);
    const old = (await readRefs(repo, [RESULTS_REF])).get(RESULTS_REF)!;
    const { commit } = await writeCommit(repo, { parent: old, files: changed, message: 'feat(results): theirs - auto_push', author: AUTHOR });
    await updateRefs(repo, [{ ref: RESULTS_REF, new: commit, old }]);
    const now = await listed(user.work);
    expect(now.find((r) => r.run_id === THEIRS[1]!.id)).toMatchObject({ total: 7, passed: 5 });
    expect(existsSync(cache)).toBe(true);
    // The next archive replaces the stale line, and lists agree with the files again.
    const third = await cli(['archive', ...keep, '--json'], user.work);
    expect(JSON.parse(third.stdout)).toMatchObject({ catalogued: 1 });
    const day = await git(user.work, ['show', `${RESULTS_REF}:.indexes/agentv-results-foreign.2026-03-02.jsonl`]);
    expect(day.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(day)).toMatchObject({ run_id: THEIRS[1]!.id, total: 7, passed: 5 });
  });

  it('two machines cataloguing at once lose no line: the foreign-catalog day files union-merge on push, and a third machine reads every run from them', async () => {
    const user = await makeUserRepo();
    const a = user.work;
    await addAgentvRuns(a, THEIRS);
    const pushed = await cli(['sync', '--json'], a);
    expect(pushed.code, pushed.stderr).toBe(0);
    const b = join(await makeTempDir('machine-b'), 'work');
    await git(user.root, ['clone', '--quiet', user.remote, b]);
    await git(b, ['fetch', '--quiet', 'origin', 'refs/heads/agentv/*:refs/heads/agentv/*']);
    // Each machine's AgentV adds a run of the same day (the same day file on both sides), then each archives.
    await addAgentvRuns(a, [{ id: '2026-03-03T10-00-00-000Z', iso: '2026-03-03T10:00:00.000Z', passed: 1 }]);
    await addAgentvRuns(b, [{ id: '2026-03-03T11-00-00-000Z', iso: '2026-03-03T11:00:00.000Z', passed: 2 }]);
    // Both commit before either pushes: the second push has to merge the two day files.
    const keep = ['--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', '0', '--no-push', '--json'];
    for (const m of [a, b]) {
      const r = await cli(['archive', ...keep], m);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ catalogued: 4 });
    }
    for (const m of [a, b]) {
      const r = await cli(['sync', '--json'], m);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
    expect(await git(user.remote, ['ls-remote', '--heads', '.', 'agentv/results-sync/*'])).toBe(''); // merged, not set aside
    // B's push merged (the tip has two parents): the day file changed on both sides.
    expect((await git(user.remote, ['rev-list', '--parents', '-n', '1', RESULTS_REF])).split(' ')).toHaveLength(3);

    // The remote's day file holds both machines' lines, each run once.
    const day = await git(user.remote, ['show', `${RESULTS_REF}:.indexes/agentv-results-foreign.2026-03-03.jsonl`]);
    const ids = day.split('\n').map((l) => (JSON.parse(l) as { run_id: string }).run_id);
    expect(ids.sort()).toEqual([THEIRS[2]!.id, '2026-03-03T10-00-00-000Z', '2026-03-03T11-00-00-000Z'].sort());

    // A third machine lists all five from the lines alone: it reads no run file (writes no cache).
    const c = join(await makeTempDir('machine-c'), 'work');
    await git(user.root, ['clone', '--quiet', user.remote, c]);
    await git(c, ['fetch', '--quiet', 'origin', 'refs/heads/agentv/*:refs/heads/agentv/*']);
    const runs = await listed(c);
    expect(runs.map((r) => r.run_id).sort()).toEqual([...THEIRS.map((t) => t.id), '2026-03-03T10-00-00-000Z', '2026-03-03T11-00-00-000Z'].sort());
    expect(runs.find((r) => r.run_id === '2026-03-03T11-00-00-000Z')).toMatchObject({ writer: 'agentv', passed: 2, total: 6 });
    expect(existsSync(join(c, '.git', 'agentv-results', 'run-rows.v1.json'))).toBe(false);
  });

  it("archive's budget leaves room for the catalog files it adds: the listing after is what git lists, and within the budget", async () => {
    const { user } = await mixedBranch();
    const listingBytes = async () =>
      (await git(user.work, ['ls-tree', '-r', '--name-only', RESULTS_REF])).split('\n').reduce((n, p) => n + Buffer.byteLength(p) + 1, 0);
    const budget = (await listingBytes()) - 1;
    const args = ['archive', '--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', String(budget), '--no-push', '--json'];
    const dry = JSON.parse((await cli([...args, '--dry-run'], user.work)).stdout) as { listing: { after: number }; archived: unknown[] };
    const real = await cli(args, user.work);
    expect(real.code, real.stderr).toBe(0);
    const res = JSON.parse(real.stdout) as { listing: { after: number }; archived: unknown[]; catalogued: number };
    expect(res.archived).toEqual(dry.archived);
    expect(res.catalogued).toBeGreaterThan(0); // the AgentV runs left live gained foreign-catalog lines
    const measured = await listingBytes();
    expect(res.listing.after).toBe(measured);
    expect(dry.listing.after).toBe(measured);
    expect(measured).toBeLessThanOrEqual(budget);
  });

  it('expire removes the runs AgentV wrote that no rule keeps, like ours', async () => {
    const { user, ours } = await mixedBranch();
    const r = await cli(['expire', '--keep-runs', '2', '--no-push', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { expired: { run_id: string }[]; kept: number };
    expect(res.expired.map((e) => e.run_id).sort()).toEqual([THEIRS[0]!.id, THEIRS[1]!.id]);
    expect(res.kept).toBe(2);
    const left = (await listed(user.work)).map((x) => x.run_id).sort();
    expect(left).toEqual([THEIRS[2]!.id, ours].sort());
  });

  it('publish and status warn when the live listing passes the budget, and say what to run', async () => {
    const { user } = await mixedBranch();
    await mkdir(join(user.work, '.agentv'), { recursive: true });
    await writeFile(join(user.work, '.agentv', 'config.yaml'), 'results:\n  archive:\n    max_listing_bytes: 600\n');
    const status = await cli(['status', '--json'], user.work);
    expect(status.code, status.stderr).toBe(0);
    const listing = (JSON.parse(status.stdout) as { listing: { over: boolean; max: number; warning: string } }).listing;
    expect(listing).toMatchObject({ over: true, max: 600 });
    expect(listing.warning).toContain('agentv-results archive');
    expect((await cli(['status'], user.work)).stdout).toMatch(/warning: the listing of agentv\/results\/v1 is over \d+ KiB, past the listing budget of 1 KiB/);

    const run = await makeRunWorkspace({ experiment: 'ours', rows: 2, day: 11 });
    const p = await cli(['publish', run.dir, '--no-push'], user.work);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).toMatch(/warning: the listing of agentv\/results\/v1 .*run `agentv-results archive`/);

    // Under the budget: no warning.
    await writeFile(join(user.work, '.agentv', 'config.yaml'), 'results:\n  archive:\n    max_listing_bytes: 10000000\n');
    const quiet = await cli(['status', '--json'], user.work);
    expect((JSON.parse(quiet.stdout) as { listing: { over: boolean; warning: string | null; complete: boolean } }).listing).toMatchObject({
      over: false,
      warning: null,
      complete: true,
    });
  });
});
