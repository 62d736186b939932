/**
 * AgentV 4.42 on the shared results branch, judged by the real stable client:
 * - what its `auto_push` publishes (`runs/<experiment>/<timestamp>/`) our list, pull and tag read;
 * - a 4.42 run we publish lands where and as its own `auto_push` would put it (chosen from the
 *   branch), and its Dashboard lists it with the numbers its own `results summary` gives;
 * - a 5.x client publishing to the same branch (mixed team): our list shows both halves.
 */
import { appendFile, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  AGENTV_STABLE_BIN,
  agentvEval,
  agentvStableEval,
  describeWithAgentVStable,
  itWithAgentV,
  makeSampleProject,
  makeStableSampleProject,
  runAgentVStable,
  startAgentVServe,
  type AgentVServer,
} from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { startServer } from '../../src/serve/server.js';
import { git, isolateGitForSuite } from '../helpers/git-fixtures.js';

const BRANCH = 'agentv/results/v1';

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const rel of (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())) {
    const abs = join(rel.parentPath, rel.name);
    out.set(relative(dir, abs), (await readFile(abs)).toString('base64'));
  }
  return out;
}

describeWithAgentVStable('AgentV 4.42 on the results branch', () => {
  isolateGitForSuite();
  let base = '';
  let origin = '';
  let team = ''; // a 4.42 project whose AgentV auto_pushes
  let autoRun = ''; // the run its auto_push published
  let ours = ''; // a 4.42 run we publish
  let server: AgentVServer | null = null;
  const cli = async (args: string[], cwd: string) => {
    const r = await runCli(args, { cwd });
    expect(r.code, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r;
  };

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'agentv-stable-branch-'));
    origin = join(base, 'origin.git');
    await git(base, ['init', '-q', '--bare', origin]);
    team = await makeStableSampleProject(join(base, 'team'));
    await git(team, ['remote', 'add', 'origin', origin]);
    await git(team, ['push', '-q', 'origin', 'main']);
    await writeFile(join(team, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n  auto_push: true\n`);
    autoRun = await agentvStableEval(team, { experiment: 'nightly' });
    const solo = await makeStableSampleProject(join(base, 'solo'));
    ours = await agentvStableEval(solo, { experiment: 'nightly' });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('lists, pulls and tags the run its auto_push published', async () => {
    const ts = autoRun.split('/').pop()!;
    const listed = JSON.parse((await cli(['list', '--fetch', '--json'], team)).stdout) as {
      runs: { run_id: string; path: string; total: number; passed: number }[];
    };
    const run = listed.runs.find((r) => r.run_id === `nightly::${ts}`);
    expect(run?.path).toBe(`runs/nightly/${ts}`);
    const summary = JSON.parse((await runAgentVStable(['results', 'summary', autoRun], { cwd: team })).stdout) as { total: number; passed: number };
    expect(run?.total).toBe(summary.total);
    expect(run?.passed).toBe(summary.passed);

    const out = join(base, 'pulled');
    await cli(['pull', `nightly::${ts}`, '--out', out], team);
    expect(await filesUnder(out)).toEqual(await filesUnder(autoRun));

    await cli(['tag', `nightly::${ts}`, '+baseline', '--no-push'], team);
    const tags = JSON.parse(await git(team, ['show', `${BRANCH}:metadata/runs/nightly/${ts}/tags.json`])) as { tags: string[] };
    expect(tags.tags).toEqual(['baseline']);
    // The run's own directory stays as 4.42 wrote it.
    expect(await git(team, ['ls-tree', '--name-only', `${BRANCH}:runs/nightly/${ts}`])).not.toContain('tags.json');
    const tagged = JSON.parse((await cli(['list', '--tag', 'baseline', '--json'], team)).stdout) as { runs: { run_id: string }[] };
    expect(tagged.runs.map((r) => r.run_id)).toEqual([`nightly::${ts}`]);
  });

  it('publishes a 4.42 run where its auto_push would, byte for byte, and says why', async () => {
    const ts = ours.split('/').pop()!;
    const status = JSON.parse((await cli(['status', '--json'], team)).stdout) as { layout?: { layout: string; reason: string } };
    expect(status.layout?.layout).toBe('stable');
    const r = JSON.parse((await cli(['publish', ours, '--push', '--json'], team)).stdout) as {
      run_id: string;
      layout: { layout: string; reason: string };
      counts: { total: number; passed: number };
    };
    expect(r.layout.layout).toBe('stable');
    expect(r.layout.reason).toMatch(/4\.42/);
    expect(r.run_id).toBe(`nightly::${ts}`);
    const tree = join(base, 'tree');
    await git(team, ['worktree', 'add', '-q', '--detach', tree, BRANCH]);
    expect(await filesUnder(join(tree, 'runs', 'nightly', ts))).toEqual(await filesUnder(ours));
    // Its commit reads like 4.42's own: title with 4.42's counts, the AgentV-Run trailer.
    const summary = JSON.parse((await runAgentVStable(['results', 'summary', ours], { cwd: team })).stdout) as {
      total: number;
      passed: number;
      pass_rate: { mean: number };
    };
    const message = await git(team, ['log', '-1', '--format=%B', BRANCH]);
    expect(message).toBe(
      `feat(results): nightly - ${summary.passed}/${summary.total} PASS (${summary.pass_rate.mean.toFixed(3)})\n\nAgentV-Run: nightly::${ts}\n`,
    );
    const autoMessage = await git(team, ['log', '-1', '--format=%B', `${BRANCH}~2`]);
    expect(autoMessage).toMatch(/^feat\(results\): nightly - \d+\/\d+ PASS \(\d\.\d{3}\)\n\nAgentV-Run: nightly::/);
    // Publishing it again changes nothing.
    const again = JSON.parse((await cli(['publish', ours, '--no-push', '--json'], team)).stdout) as { status: string };
    expect(again.status).toBe('already-published');
  });

  it("4.42's Dashboard lists every run, ours with the numbers of its own summary, a run of another layout by its benchmark", async () => {
    // A plain results file, published on this 4.42 branch: written as our bundle under runs/.
    const other = join(base, 'other-run');
    await cli(['export', fixture('basic--suite.baseline.jsonl'), '--out', other, '--experiment', 'basic'], team);
    const published = JSON.parse((await cli(['publish', other, '--push', '--json'], team)).stdout) as { run_id: string; location: { path: string } };
    expect(published.location.path).toMatch(/^runs\/basic\//);
    const viewer = join(base, 'viewer');
    await git(base, ['clone', '-q', origin, viewer]);
    await git(viewer, ['branch', '-q', BRANCH, `origin/${BRANCH}`]);
    await mkdir(join(viewer, '.agentv'), { recursive: true });
    await writeFile(join(viewer, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n`);
    server = await startAgentVServe(viewer, [], { bin: AGENTV_STABLE_BIN });
    const body = (await (await fetch(`${server.url}/api/runs`)).json()) as { runs: { filename: string; test_count: number; avg_score: number }[] };
    const oursTs = ours.split('/').pop()!;
    const autoTs = autoRun.split('/').pop()!;
    expect(body.runs.map((r) => r.filename).sort()).toEqual([`remote::nightly::${autoTs}`, `remote::nightly::${oursTs}`, `remote::${published.run_id}`].sort());
    const listed = body.runs.find((r) => r.filename === `remote::nightly::${oursTs}`)!;
    const summary = JSON.parse((await runAgentVStable(['results', 'summary', ours], { cwd: team })).stdout) as { total: number; pass_rate: { mean: number } };
    expect(listed.test_count).toBe(summary.total);
    expect(listed.avg_score).toBeCloseTo(summary.pass_rate.mean, 2);
  });

  itWithAgentV('a mixed branch: a 5.x client publishing beside 4.42, our list shows every run', async () => {
    const next = await makeSampleProject(join(base, 'next'));
    await git(next, ['remote', 'add', 'origin', origin]);
    await git(next, ['fetch', '-q', 'origin', `${BRANCH}:${BRANCH}`]);
    await appendFile(join(next, '.agentv', 'config.yaml'), `\nresults:\n  path: .\n  branch: ${BRANCH}\n  auto_push: true\n`);
    const nextRun = await agentvEval(next, { experiment: 'nightly' });
    const listed = JSON.parse((await cli(['list', '--fetch', '--json'], team)).stdout) as { runs: { run_id: string; path: string }[] };
    const paths = listed.runs.map((r) => r.path);
    expect(paths).toContain(nextRun.split('/').pop());
    expect(paths.filter((p) => p.startsWith('runs/nightly/')).length).toBe(2);
    // Our Dashboard lists both halves too, and opens a 4.42 run.
    const ourServer = await startServer({ cwd: team, port: 0 });
    try {
      const runs = (await (await fetch(`${ourServer.url}/api/runs`)).json()) as { runs: { run_id: string; path: string }[] };
      expect(runs.runs.map((r) => r.path).sort()).toEqual([...paths].sort());
      const stableId = runs.runs.find((r) => r.path.startsWith('runs/nightly/'))!.run_id;
      const detail = (await (await fetch(`${ourServer.url}/api/runs/${encodeURIComponent(stableId)}`)).json()) as { tests: unknown[] };
      expect(detail.tests.length).toBe(6);
      // Tags of a 4.42 run (kept under metadata/runs/) are the ones list shows: one listing for both.
      const apiTagged = (await (await fetch(`${ourServer.url}/api/runs?tag=baseline`)).json()) as { runs: { run_id: string; tags: string[] }[] };
      const cliTagged = JSON.parse((await cli(['list', '--tag', 'baseline', '--json'], team)).stdout) as { runs: { run_id: string; tags: string[] }[] };
      expect(apiTagged.runs.map((r) => [r.run_id, r.tags])).toEqual(cliTagged.runs.map((r) => [r.run_id, r.tags]));
      expect(apiTagged.runs.length).toBe(1);
    } finally {
      await ourServer.close();
    }
    // With both layouts on the branch, auto keeps 5.x and says so.
    const status = JSON.parse((await cli(['status', '--fetch', '--json'], team)).stdout) as { layout?: { layout: string; reason: string } };
    expect(status.layout?.reason).toMatch(/both layouts/);
  });
  it("after archive moves the oldest runs (4.42's with their overlays), 4.42's Dashboard still lists exactly the runs left live", async () => {
    const out = JSON.parse((await cli(['archive', '--keep-days', '365', '--keep-runs', '2', '--max-listing-bytes', '0', '--json'], team)).stdout) as {
      archived: { run_id: string; path: string }[];
    };
    expect(out.archived).toHaveLength(2);
    expect(out.archived.some((a) => a.path.startsWith('runs/'))).toBe(true);
    const listed = JSON.parse((await cli(['list', '--json'], team)).stdout) as { runs: { run_id: string; path: string; archived?: string }[] };
    const liveStable = listed.runs.filter((r) => r.archived === undefined && r.path.startsWith('runs/'));
    expect(liveStable.length).toBeGreaterThan(0);
    for (const a of out.archived) expect(listed.runs.find((r) => r.run_id === a.run_id)?.archived).toBeDefined();
    const viewer = join(base, 'viewer-archived');
    await git(base, ['clone', '-q', origin, viewer]);
    await git(viewer, ['branch', '-q', BRANCH, `origin/${BRANCH}`]);
    await mkdir(join(viewer, '.agentv'), { recursive: true });
    await writeFile(join(viewer, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n`);
    await server?.stop();
    server = await startAgentVServe(viewer, [], { bin: AGENTV_STABLE_BIN });
    const body = (await (await fetch(`${server.url}/api/runs`)).json()) as { runs: { filename: string }[] };
    const name = (path: string) => {
      const [, exp, ts] = path.split('/') as [string, string, string];
      return exp === 'default' ? `remote::${ts}` : `remote::${exp}::${ts}`;
    };
    expect(body.runs.map((r) => r.filename).sort()).toEqual(liveStable.map((r) => name(r.path)).sort());
  });
});
