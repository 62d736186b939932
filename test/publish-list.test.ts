/**
 * `list`: reads only the catalog (ls-tree of the root and of .indexes/, one cat-file --batch), newest first,
 * with filters, and tells runs that are only local (not pushed) from runs only on the remote.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepo, resolveRef, updateRef, writeCommit, readBlobs } from '../src/git/index.js';
import { listRuns } from '../src/branch-read/list.js';
import { publish } from '../src/publish/publish.js';
import { resolveRunNames, status, summarizeRun, sync } from '../src/index.js';
import { cleanupTempDirs, git, makeTempDir, subcommand, traceGitProcesses, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { RESULTS_REF, cli, expectUntouched, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // Three runs over two days and two experiments, published (and pushed) through the library.
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 2 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 1, minute: 5, rows: 4, seed: 3 }));
  runs.push(await makeRunWorkspace({ experiment: 'smoke', day: 1, minute: 9, rows: 2, seed: 5 }));
  for (const r of runs) await publish({ run: r.dir, cwd: user.work, push: true });
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

interface Listed {
  runs: { run_id: string; experiment: string; day: string; where: string; total: number; passed: number; pass_rate: number; targets: string[] }[];
  matched: number;
  unreadable: number;
}

async function listJson(args: string[], cwd = user.work): Promise<Listed> {
  const r = await cli(['list', '--json', ...args], cwd);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
}

describe('list', () => {
  it('lists every run newest first, from the catalog, without touching the checkout', async () => {
    const out = await expectUntouched(user.work, () => listJson([]));
    expect(out.runs.map((r) => r.run_id)).toEqual([runs[2]!.runId, runs[1]!.runId, runs[0]!.runId]);
    expect(out.runs.map((r) => r.day)).toEqual(['2026-03-15', '2026-03-15', '2026-03-14']);
    expect(out.runs.every((r) => r.where === 'both')).toBe(true);
    const second = out.runs[1]!;
    expect(second.total).toBe(4);
    expect(second.targets).toEqual(['model-a', 'model-b']);
    expect(second.pass_rate).toBeCloseTo(second.passed / second.total, 4);
  });

  it('prints a table with run_id, experiment, day, targets, passed/total and pass rate', async () => {
    const r = await cli(['list'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^run_id\s+experiment\s+day\s+targets\s+passed\s+pass rate\s+where$/);
    expect(lines[2]).toMatch(new RegExp(`^${runs[2]!.runId}\\s+smoke\\s+2026-03-15\\s`));
    expect(lines[3]).toMatch(new RegExp(`^${runs[1]!.runId}\\s+nightly\\s+2026-03-15\\s`));
    expect(r.stdout).toMatch(/model-a, model-b\s+\d+\/2\s+\d+\.\d%\s+both/);
    expect(r.stdout).toMatch(/3 runs on agentv\/results\/v1/);
  });

  it('filters by experiment, day and count', async () => {
    expect((await listJson(['--experiment', 'nightly'])).runs.map((r) => r.run_id)).toEqual([runs[1]!.runId, runs[0]!.runId]);
    expect((await listJson(['--since', '2026-03-15'])).runs.map((r) => r.run_id)).toEqual([runs[2]!.runId, runs[1]!.runId]);
    const limited = await listJson(['--limit', '1']);
    expect(limited.runs.map((r) => r.run_id)).toEqual([runs[2]!.runId]);
    expect(limited.matched).toBe(3);
    const human = await cli(['list', '--limit', '1'], user.work);
    expect(human.stdout).toMatch(/3 runs on agentv\/results\/v1 \(showing the newest 1\)/);
  });

  it('rejects bad filters with exit 2', async () => {
    for (const args of [
      ['--since', 'yesterday'],
      ['--since', '2026-13-45'],
      ['--limit', '0'],
      ['--limit', 'many'],
    ]) {
      const r = await cli(['list', ...args], user.work);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/--(since|limit)/);
    }
  });

  it('uses one ls-tree of the root, one of .indexes/ and one cat-file --batch, never a walk of the run trees', async () => {
    const { result, argvs } = await traceGitProcesses(() => listRuns({ cwd: user.work }));
    expect(result.runs).toHaveLength(3);
    const subs = argvs.map(subcommand);
    expect(subs.filter((s) => s === 'ls-tree')).toHaveLength(2);
    expect(subs.filter((s) => s === 'cat-file')).toHaveLength(1);
    const lsTrees = argvs.filter((a) => subcommand(a) === 'ls-tree');
    for (const a of lsTrees) expect(a).not.toContain('-r');
    expect(lsTrees.map((a) => a[a.length - 1])).toContain('.indexes/');
    // --since skips whole days: their blobs are not even read.
    const since = await traceGitProcesses(() => listRuns({ cwd: user.work, since: '2026-03-15' }));
    expect(since.result.runs).toHaveLength(2);
  });

  it('takes the environment as a caller passes it (process.env itself is no plain object) and refuses an unknown option at the door', async () => {
    expect((await listRuns({ cwd: user.work, env: process.env })).runs).toHaveLength(3);
    await expect(listRuns({ cwd: user.work, limt: 1 } as never)).rejects.toThrow(/listRuns: invalid options: limt: not an option of this verb/);
  });

  it("shows local-only runs (not pushed) and remote-only runs (a teammate's, after --fetch)", async () => {
    const local = await makeRunWorkspace({ experiment: 'nightly', day: 2, rows: 2, seed: 11 });
    await publish({ run: local.dir, cwd: user.work, push: false });
    // A teammate publishes from their own clone and pushes.
    const mate = join(await makeTempDir('agentv-mate'), 'clone');
    await git(user.root, ['clone', '-q', user.remote, mate]);
    const theirs = await makeRunWorkspace({ experiment: 'smoke', day: 3, rows: 2, seed: 13 });
    const pushed = await publish({ run: theirs.dir, cwd: mate, push: true });
    expect(pushed.push?.landed).toBe(true);

    const before = await listJson([]);
    expect(before.runs.find((r) => r.run_id === local.runId)?.where).toBe('local');
    expect(before.runs.find((r) => r.run_id === theirs.runId)).toBeUndefined();

    const after = await expectUntouched(user.work, () => listJson(['--fetch']));
    expect(after.runs[0]).toMatchObject({ run_id: theirs.runId, where: 'remote' });
    expect(after.runs.find((r) => r.run_id === local.runId)?.where).toBe('local');
    expect(after.runs.find((r) => r.run_id === runs[0]!.runId)?.where).toBe('both');

    const remoteOnly = await listJson(['--remote-only']);
    expect(remoteOnly.runs.map((r) => r.run_id)).not.toContain(local.runId);
    expect(remoteOnly.runs.map((r) => r.run_id)).toContain(theirs.runId);

    // Two different tips: one listing each, still a single cat-file for all catalog blobs.
    const { argvs } = await traceGitProcesses(() => listRuns({ cwd: user.work }));
    expect(argvs.map(subcommand).filter((s) => s === 'ls-tree')).toHaveLength(4);
    expect(argvs.map(subcommand).filter((s) => s === 'cat-file')).toHaveLength(1);
  });

  it('skips (and counts) catalog lines it cannot read', async () => {
    const repo = await openRepo(user.work);
    const old = (await resolveRef(repo, RESULTS_REF))!;
    const spec = `${old}:.indexes/agentv-results.2026-03-14.jsonl`;
    const text = (await readBlobs(repo, [spec])).get(spec)!.toString('utf8');
    const { commit } = await writeCommit(repo, {
      parent: old,
      files: [{ path: '.indexes/agentv-results.2026-03-14.jsonl', data: `${text}not json\n{"run_id":"x"}\n` }],
      message: 'garbage',
      author: { name: 't', email: 't@example.invalid', date: '2026-03-20T00:00:00Z' },
    });
    await updateRef(repo, RESULTS_REF, commit, old);
    try {
      const r = await cli(['list', '--json'], user.work);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).unreadable).toBe(2);
      expect(r.stderr).toMatch(/2 catalog line\(s\) .* could not be read/);
    } finally {
      await updateRef(repo, RESULTS_REF, old, commit);
    }
  });

  it('lists undated runs after every dated one, in the table and with --limit', async () => {
    const mine = await makeUserRepo('no-remote');
    const dated = await makeRunWorkspace({ experiment: 'nightly', day: 0, rows: 2 });
    const undated = join(await makeTempDir('agentv-undated'), 'results.jsonl');
    await writeFile(undated, ['t1', 't2'].map((test_id) => JSON.stringify({ test_id, target: 'model-a', score: 1 })).join('\n') + '\n');
    expect((await cli(['publish', dated.dir], mine.work)).code).toBe(0);
    const p = await cli(['publish', undated, '--experiment', 'adhoc', '--json'], mine.work);
    expect(p.code, p.stderr).toBe(0);
    const out = await listJson([], mine.work);
    expect(out.runs.map((r) => [r.experiment, r.day])).toEqual([
      ['nightly', '2026-03-14'],
      ['adhoc', 'undated'],
    ]);
    expect((await listJson(['--limit', '1'], mine.work)).runs.map((r) => r.run_id)).toEqual([dated.runId]);
    const table = (await cli(['list'], mine.work)).stdout.split('\n');
    expect(table[2]).toMatch(/^\S+\s+nightly\s+2026-03-14\s/);
    expect(table[3]).toMatch(/^\S+\s+adhoc\s+undated\s/);
  });

  it('says plainly when nothing is published, and refuses a directory that is not a repository', async () => {
    const empty = await makeUserRepo('no-remote');
    const r = await cli(['list'], empty.work);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/nothing published yet/);
    const plain = await makeTempDir('agentv-plain');
    const n = await cli(['list'], plain);
    expect(n.code).toBe(2);
    expect(n.stderr).toMatch(/not a git repository: .* — run agentv-results inside a git checkout/);
  });
});

describe('git processes per command (BENCHMARKS.md "Git processes per command")', () => {
  // Upper bounds through the library verbs, so a module that asks again what the command already read
  // shows here. In-process, `git version` is asked once per process, so it is not counted.
  it('list, status, summary, publish --no-push and sync with nothing to do stay under their budgets', async () => {
    await sync({ cwd: user.work });
    const count = async (fn: () => Promise<unknown>) => (await traceGitProcesses(fn)).argvs.map(subcommand).filter((s) => s !== 'version');
    const syncIdle = await count(() => sync({ cwd: user.work }));
    const list = await count(() => listRuns({ cwd: user.work }));
    const report = await count(() => status({ cwd: user.work }));
    const summary = await count(async () => {
      const named = await resolveRunNames([runs[0]!.runId], { cwd: user.work });
      try {
        return await summarizeRun({ run: named.runs[0]!.path, cwd: user.work });
      } finally {
        await named.dispose();
      }
    });
    const fresh = await makeRunWorkspace({ experiment: 'budget', day: 4, rows: 2, seed: 17 });
    const published = await count(() => publish({ run: fresh.dir, cwd: user.work, push: false }));
    const seen = { list, status: report, summary, publish: published, sync: syncIdle };
    // One rev-parse opens the repository, once per command; one for-each-ref reads the refs a read needs.
    for (const [verb, subs] of Object.entries(seen)) {
      expect(subs.filter((s) => s === 'rev-parse').length, `${verb}: ${subs.join(' ')}`).toBeLessThanOrEqual(1);
      expect(subs.filter((s) => s === 'remote').length, `${verb}: ${subs.join(' ')}`).toBe(1);
      expect(subs.filter((s) => s === 'worktree').length, `${verb}: ${subs.join(' ')}`).toBe(1);
    }
    for (const verb of ['list', 'status', 'summary'] as const)
      expect(seen[verb].filter((s) => s === 'for-each-ref').length, `${verb}: ${seen[verb].join(' ')}`).toBe(1);
    // Measured at 7, 6, 6, 12 and 12 (before: list 10, status 14, summary 11 with two rev-parse; publish and sync unchanged).
    const budget = { list: 7, status: 6, summary: 6, publish: 12, sync: 12 };
    for (const [verb, max] of Object.entries(budget))
      expect(seen[verb as keyof typeof seen].length, `${verb}: ${seen[verb as keyof typeof seen].join(' ')}`).toBeLessThanOrEqual(max);
  });
});
