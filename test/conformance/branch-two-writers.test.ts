/**
 * One results branch, two writers, judged by the real AgentV client: what our `publish --push`
 * puts on `agentv/results/v1` is listed by AgentV's Dashboard API (`/api/runs`,
 * `/api/remote/status`) with our counts; runs AgentV's own `auto_push` published are listed and
 * pulled by us; the two tools interleaved on one bare remote both list every run.
 *
 * The last three tests share one remote (`agentv eval` is the costly part: two evals, not five):
 * AgentV's auto_push, our publish, AgentV's auto_push again. The listing test reads the first of
 * those runs; the archive test, which moves runs, comes last.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, projectWithRemote, startAgentVServe, type AgentVServer } from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli, makeRunWorkspace } from '../publish-helpers.js';

const BRANCH = 'agentv/results/v1';

interface ApiRun {
  run_id?: string;
  filename?: string;
  test_count?: number;
  pass_rate?: number;
  experiment?: string;
  source?: string;
  [k: string]: unknown;
}

async function apiRuns(server: AgentVServer): Promise<ApiRun[]> {
  const res = await fetch(`${server.url}/api/runs`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { runs?: ApiRun[] } | ApiRun[];
  return Array.isArray(body) ? body : (body.runs ?? []);
}

async function ourList(project: string): Promise<{ run_id: string; total: number; passed: number; writer?: string; path: string }[]> {
  const r = await cli(['list', '--fetch', '--json'], project);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runs: { run_id: string; total: number; passed: number; writer?: string; path: string }[] }).runs;
}

describeWithAgentV('one results branch, two writers (the real AgentV client)', () => {
  isolateGitForSuite();
  let server: AgentVServer | null = null;
  afterEach(async () => {
    await server?.stop();
    server = null;
  });

  it("our publish --push starts the branch at AgentV's genesis and AgentV's Dashboard lists the run with our counts", async () => {
    const { project } = await projectWithRemote(false);
    const run = await makeRunWorkspace({ experiment: 'ours', rows: 5, seed: 3 });
    const pub = await cli(['publish', run.dir, '--push', '--json'], project);
    expect(pub.code, pub.stderr).toBe(0);
    const published = JSON.parse(pub.stdout) as { location: { path: string }; counts: { total: number; passed: number } };
    const rows = (await readFile(join(run.dir, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { test_id: string; score: number });
    expect(await git(project, ['rev-list', '--max-parents=0', `refs/heads/${BRANCH}`])).toBe('ad59c1e92bfd55877f9b51251d51cde0bb97dfa9');
    expect((await git(project, ['log', '-1', '--format=%s%n%(trailers:key=AgentV-Run,valueonly)', `refs/heads/${BRANCH}`])).trim()).toMatch(
      new RegExp(`^feat\\(results\\): ours - ${published.counts.passed}/${published.counts.total} PASS \\(\\d\\.\\d{3}\\)\\n${published.location.path}$`),
    );
    await git(project, ['fetch', '-q', 'origin']);
    server = await startAgentVServe(project);
    const runs = await apiRuns(server);
    const mine = runs.find((r) => JSON.stringify(r).includes(published.location.path));
    expect(mine, JSON.stringify(runs)).toBeTruthy();
    // AgentV counts tests (distinct test ids; our total counts test x target rows) and, without a
    // run_summary pass rate in summary.json, shows the mean score as the pass rate.
    expect(mine!.test_count).toBe(new Set(rows.map((r) => r.test_id)).size);
    expect(mine!.avg_score as number).toBeCloseTo(rows.reduce((a, r) => a + r.score, 0) / rows.length, 6);
    const status = await fetch(`${server.url}/api/remote/status`);
    expect(status.status).toBe(200);
    const statusBody = (await status.json()) as { configured?: boolean; available?: boolean; run_count?: number; sync_status?: string };
    expect(statusBody).toMatchObject({ configured: true, available: true, run_count: 1 });
  }, 240_000);

  /** One remote, written in turn: AgentV's auto_push (`first`), our publish (`ourPath`), AgentV's auto_push (`second`). */
  let project = '';
  let first = '';
  let second = '';
  let ourPath = '';
  beforeAll(async () => {
    ({ project } = await projectWithRemote(true));
    first = await agentvEval(project, { experiment: 'theirs' });
    const ours = await makeRunWorkspace({ experiment: 'ours', rows: 3, seed: 5 });
    const pub = await cli(['publish', ours.dir, '--push', '--json'], project);
    expect(pub.code, pub.stderr).toBe(0);
    ourPath = (JSON.parse(pub.stdout) as { location: { path: string } }).location.path;
    second = await agentvEval(project, { experiment: 'theirs' });
  }, 240_000);

  it("AgentV auto_push and our publish interleaved on one bare remote: both tools list every run, and we pull AgentV's", async () => {
    const agentvIds = [first, second].map((d) => d.split('/').pop()!);

    // Our list: AgentV's two runs (read from their summary.json) and ours (from our catalog).
    const listed = await ourList(project);
    for (const dir of [first, second]) {
      const id = dir.split('/').pop()!;
      const counts = (JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { counts: { total_tests: number; passed_tests: number } }).counts;
      const r = listed.find((x) => x.run_id === id);
      expect(r, `${id} in ${JSON.stringify(listed)}`).toMatchObject({ writer: 'agentv', total: counts.total_tests, passed: counts.passed_tests });
    }
    expect(listed.find((x) => x.path === ourPath)).toMatchObject({ writer: 'agentv-results', total: 3 });

    // AgentV's Dashboard: all three.
    await git(project, ['fetch', '-q', 'origin']);
    server = await startAgentVServe(project);
    const runs = JSON.stringify(await apiRuns(server));
    for (const id of [...agentvIds, ourPath]) expect(runs).toContain(id);

    // Our pull of a run AgentV published: its files as AgentV wrote them.
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const pulled = await cli(['pull', agentvIds[0]!, '--fetch', '--out', out], project);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(existsSync(join(out, '.internal', 'index.jsonl'))).toBe(true);
    expect(JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')).run_id).toBe(agentvIds[0]);
    // Both writers' history is one line from the shared genesis.
    expect(await git(project, ['rev-list', '--max-parents=0', `origin/${BRANCH}`])).toBe('ad59c1e92bfd55877f9b51251d51cde0bb97dfa9');
  }, 360_000);

  it("a real AgentV run costs exactly the listing bytes AgentV's own auto_push costs: the same paths, and one catalog line beside them", async () => {
    const dir = first;
    const runId = dir.split('/').pop()!;
    await git(project, ['fetch', '-q', 'origin']);
    // What AgentV's Dashboard reads per run: `git ls-tree -r --name-only` lines of the run.
    const listing = (ref: string, repo = project) => git(repo, ['ls-tree', '-r', '--name-only', ref, '--', `${runId}/`]);
    const theirs = await listing(`origin/${BRANCH}`);
    // The same workspace published by us into another repository.
    const { project: other } = await projectWithRemote(false);
    const pub = await cli(['publish', dir, '--json'], other);
    expect(pub.code, pub.stderr).toBe(0);
    const ours = await listing(BRANCH, other);
    const tests = (JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { counts: { total_tests: number } }).counts.total_tests;
    process.stderr.write(
      `listing bytes per test: AgentV auto_push ${(Buffer.byteLength(theirs) / tests).toFixed(0)}, ours ${(Buffer.byteLength(ours) / tests).toFixed(0)} (${tests} tests)\n`,
    );
    expect(ours).toBe(theirs);
    // Outside the run: the day's catalog file (one path for all runs of a day) and .gitattributes.
    const all = (await git(other, ['ls-tree', '-r', '--name-only', BRANCH])).split('\n');
    expect(all.filter((p) => !p.startsWith(`${runId}/`))).toEqual([
      '.gitattributes',
      expect.stringMatching(/^\.indexes\/agentv-results\.\d{4}-\d{2}-\d{2}\.jsonl$/),
    ]);
  }, 240_000);

  it("our archive moves runs AgentV's auto_push wrote until the listing fits; AgentV's Dashboard then lists what stayed, and we still list and pull every run (issue 24)", async () => {
    const [firstId, secondId] = [first, second].map((d) => d.split('/').pop()!) as [string, string];

    // A budget no listing meets: everything but the newest run goes, whoever wrote it.
    const r = await cli(['archive', '--keep-days', '100000', '--keep-runs', '1000', '--max-listing-bytes', '1', '--json'], project);
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { archived: { run_id: string }[]; live: number; listing: { before: number; after: number } };
    expect(res.archived.map((a) => a.run_id).sort()).toEqual([firstId, ourPath].sort());
    expect(res.live).toBe(1);
    expect(res.listing.after).toBeLessThan(res.listing.before);

    await git(project, ['fetch', '-q', 'origin']);
    server = await startAgentVServe(project);
    // AgentV lists its local runs too; on the branch (on_remote) only the one that stayed live.
    const api = await apiRuns(server);
    const onBranch = (id: string) => api.find((x) => x.filename === id || x.run_id === id)?.on_remote === true;
    expect(onBranch(secondId)).toBe(true);
    expect(onBranch(firstId)).toBe(false);
    expect(JSON.stringify(api)).not.toContain(ourPath);

    const listed = await ourList(project);
    expect(listed.map((x) => x.run_id).sort()).toEqual([firstId, secondId, ourPath].sort());
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const pulled = await cli(['pull', firstId, '--out', out, '--json'], project);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout)).toMatchObject({ source: 'archive' });
    expect(JSON.parse(await readFile(join(out, 'summary.json'), 'utf8')).run_id).toBe(firstId);
  }, 360_000);
});
