/**
 * Issue 37, judged by the real AgentV 4.42.4 client: a 4.42 team (its AgentV's auto_push writes
 * `runs/<experiment>/<timestamp>/`) runs CI on a depth-1 clone (actions/checkout: no results
 * branch) and publishes there with `publish --push`. The run goes where the team's Dashboard
 * lists it: `agentv-stable serve` on a fresh clone lists it beside the auto_push run.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import {
  AGENTV_STABLE_BIN,
  agentvStableEval,
  describeWithAgentVStable,
  makeStableSampleProject,
  startAgentVServe,
  type AgentVServer,
} from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { git, isolateGitForSuite } from '../helpers/git-fixtures.js';

const BRANCH = 'agentv/results/v1';

describeWithAgentVStable("a 4.42 team's CI publish from a depth-1 clone", () => {
  isolateGitForSuite();
  let server: AgentVServer | null = null;
  afterAll(async () => {
    await server?.stop();
  });

  it("lands in 4.42's layout, and agentv-stable serve lists it", async () => {
    const base = await mkdtemp(join(tmpdir(), 'agentv-fresh-stable-'));
    const origin = join(base, 'origin.git');
    await git(base, ['init', '-q', '--bare', origin]);
    const team = await makeStableSampleProject(join(base, 'team'));
    await git(team, ['remote', 'add', 'origin', origin]);
    await git(team, ['push', '-q', 'origin', 'main']);
    // The team's AgentV publishes on its own (its configuration is not committed: CI has none).
    await writeFile(join(team, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n  auto_push: true\n`);
    const autoRun = await agentvStableEval(team, { experiment: 'nightly' });

    // CI: a depth-1 clone of main, no results branch; a results file exported and published.
    const ci = join(base, 'ci');
    await git(base, ['clone', '-q', '--depth', '1', `file://${origin}`, ci]);
    const run = join(base, 'ci-run');
    const exported = await runCli(['export', fixture('basic--suite.baseline.jsonl'), '--out', run, '--experiment', 'basic'], { cwd: ci });
    expect(exported.code, exported.stderr).toBe(0);
    const r = await runCli(['publish', run, '--push', '--json'], { cwd: ci });
    expect(r.code, r.stderr).toBe(0);
    const published = JSON.parse(r.stdout) as { run_id: string; location: { path: string }; layout: { layout: string }; push: { landed: boolean } };
    expect(published.layout.layout).toBe('stable');
    expect(published.location.path).toMatch(/^runs\/basic\//);
    expect(published.push.landed).toBe(true);

    const viewer = join(base, 'viewer');
    await git(base, ['clone', '-q', origin, viewer]);
    await git(viewer, ['branch', '-q', BRANCH, `origin/${BRANCH}`]);
    await mkdir(join(viewer, '.agentv'), { recursive: true });
    await writeFile(join(viewer, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n`);
    server = await startAgentVServe(viewer, [], { bin: AGENTV_STABLE_BIN });
    const body = (await (await fetch(`${server.url}/api/runs`)).json()) as { runs: { filename: string }[] };
    expect(body.runs.map((x) => x.filename).sort()).toEqual([`remote::nightly::${autoRun.split('/').pop()}`, `remote::${published.run_id}`].sort());
  }, 300_000);
});
