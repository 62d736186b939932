/**
 * The CI recipes (examples/ci/) work when pasted: each recipe's shell steps run as written, in
 * order, in a simulated runner (test/helpers/ci-runner.ts: a fresh shallow clone per job, no git
 * identity, the platform's CI variables, a file for $GITHUB_STEP_SUMMARY), against a remote on
 * 127.0.0.1 that refuses non-fast-forward pushes — a `git daemon` for GitHub, a stand-in GitLab
 * (the real `git http-backend` plus the notes API) for GitLab. Only the eval command is a stand-in
 * (it writes an AgentV 5 run workspace, its index under `.internal/`, with the scores each
 * scenario chooses for two targets, steady-agent and flaky-agent), three shards per pipeline. The
 * GitHub recipe's gate is this project's action (action.yml), run as a composite action.
 *
 * The story, per platform: a first pull request before any baseline passes with a non-empty
 * summary; the first push to main publishes and becomes the baseline; a pull request that improves
 * a test passes and says so in one comment; one where one target regresses fails, the comment (the
 * same one, updated) names the tests with their target; a wobble within the tolerance across the
 * pass threshold passes; a crash of the tool exits 70 and says the gate could not decide; a second
 * push to main moves the baseline and the summary shows the trend. Shards uploaded without their
 * dot entries (upload-artifact's default) are refused by combine, naming include-hidden-files.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { makeShims, runBash, runGithubWorkflow, runGitlabPipeline, type JobResult } from './helpers/ci-runner.js';
import { startFakeGitlab, type FakeGitlab } from './helpers/fake-gitlab.js';
import { cleanupTempDirs, git, makeTempDir, startGitDaemon, type GitDaemon } from './helpers/git-fixtures.js';

const GITHUB_RECIPE = join(REPO_ROOT, 'examples/ci/github-actions.yml');
const GITLAB_RECIPE = join(REPO_ROOT, 'examples/ci/gitlab-ci.yml');
const ACTION = join(REPO_ROOT, 'action.yml');
const RESULTS = 'refs/heads/agentv/results/v1';
/** The GitLab recipe calls GitLab's API with curl, as GitLab's own images do. A machine without it
 * skips that recipe and says so; CI, which has it, never skips. */
const HAS_CURL = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAS_CURL && process.env.CI) throw new Error('curl is missing: CI must run the GitLab recipe');

type Scores = Record<string, Record<string, number | Record<string, number>>>;
const both = (steady: number, flaky: number) => ({ 'steady-agent': steady, 'flaky-agent': flaky });
/** Three shards of two tests each, run against two targets (flaky-agent's rows come last). */
const BASELINE: Scores = {
  '1': { 'says-42': both(1, 1), greets: both(1, 0) },
  '2': { counts: both(0, 1), edge: both(0.8, 0.8) },
  '3': { t5: both(0.85, 0.85), t6: both(0.6, 0.6) },
};
const IMPROVED: Scores = { ...BASELINE, '3': { t5: both(0.85, 0.85), t6: both(0.95, 0.6) } };
/** steady-agent falls from 2/3 to 0/3 on shard 1; flaky-agent does not move. */
const REGRESSED: Scores = { ...BASELINE, '1': { 'says-42': both(0, 1), greets: both(0, 0) } };
/** edge: 0.80 (pass) -> 0.79 (fail, derived at 0.8) on both targets; t5 0.85 -> 0.80: all within the 0.1 tolerance. */
const WOBBLE: Scores = { ...BASELINE, '2': { counts: both(0, 1), edge: both(0.79, 0.79) }, '3': { t5: both(0.8, 0.8), t6: both(0.6, 0.6) } };

let root: string;
let bin: string;
beforeAll(async () => {
  root = await makeTempDir('agentv-ci');
  bin = await makeShims(root);
});
afterAll(() => cleanupTempDirs());

/** A bare remote holding the project (main with one commit), refusing non-fast-forward pushes. */
async function makeProjectRemote(path: string): Promise<void> {
  const seed = join(root, `seed-${Math.random().toString(36).slice(2)}`);
  await git(root, ['init', '-q', '--bare', '--initial-branch=main', path]);
  await git(path, ['config', 'receive.denyNonFastForwards', 'true']);
  await git(path, ['config', 'receive.denyDeletes', 'true']);
  await git(path, ['config', 'http.receivepack', 'true']);
  await git(root, ['init', '-q', '--initial-branch=main', seed]);
  await writeFile(join(seed, 'README.md'), '# project\n');
  await git(seed, ['add', 'README.md']);
  await git(seed, ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.invalid', 'commit', '-q', '-m', 'project']);
  await git(seed, ['push', '-q', path, 'main']);
}

let scenario = 0;
async function scoresFile(scores: Scores): Promise<Record<string, string>> {
  const f = join(root, `scores-${scenario}.json`);
  await writeFile(f, JSON.stringify(scores));
  // Each pipeline's runs start a minute after the last one's: distinct, ordered run ids.
  return { FAKE_EVAL_SCORES: f, FAKE_EVAL_TIME: new Date(Date.UTC(2026, 10, 20, 9, scenario++)).toISOString() };
}

const failedStep = (jobs: JobResult[]) =>
  jobs
    .flatMap((j) => j.steps)
    .filter((s) => s.code !== 0)
    .map((s) => `${s.job} / ${s.step}: exit ${s.code}\n${s.stdout}\n${s.stderr}`)
    .join('\n');

async function taggedBaseline(remote: string): Promise<string[]> {
  const clone = join(root, `check-${Math.random().toString(36).slice(2)}`);
  const r = await runBash(`git init -q "$C" && cd "$C" && git remote add origin "$R" && agentv-results list --fetch --tag baseline --json`, root, {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: root,
    C: clone,
    R: remote,
    GIT_CONFIG_NOSYSTEM: '1',
  });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runs: { run_id: string }[] }).runs.map((x) => x.run_id);
}

async function runIds(remote: string): Promise<string[]> {
  const out = await git(remote, ['ls-tree', '--name-only', RESULTS]);
  return out
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('.'))
    .sort();
}

describe('examples/ci/github-actions.yml (with action.yml)', () => {
  let daemon: GitDaemon;
  let remote: string;
  let ghState: string;

  beforeAll(async () => {
    const served = join(root, 'github');
    await git(root, ['init', '-q', '--bare', join(root, 'unused.git')]); // keeps git quiet about an empty root
    remote = join(served, 'project.git');
    await makeProjectRemote(remote);
    daemon = await startGitDaemon(served);
    ghState = join(root, 'gh-comments.json');
  });
  afterAll(() => daemon?.stop());

  const run = async (event: 'push' | 'pull_request', scores: Scores, pr?: number, env: Record<string, string> = {}, recipe = GITHUB_RECIPE) =>
    runGithubWorkflow(recipe, { name: event, pr, cloneUrl: daemon.url('project.git') }, join(root, `gh-${scenario}`), bin, {
      ...(await scoresFile(scores)),
      FAKE_GH_STATE: ghState,
      ...env,
    });
  const summaryOf = async (jobs: JobResult[]) => {
    const gate = jobs.find((j) => j.job === 'gate')!;
    return readFile(join(root, `gh-${scenario - 1}`, 'gate-0', 'runner', 'step-summary.md'), 'utf8').then((s) => ({ gate, summary: s }));
  };
  const comments = async () => JSON.parse(await readFile(ghState, 'utf8').catch(() => '{"comments":[]}')) as { comments: { pr: number; body: string }[] };
  /** The gate's part of the job summary (the trend follows it): what the comment holds. */
  const gateMd = (s: string) => {
    const at = s.search(/\n### [^\n]*Trend: /);
    return at < 0 ? s : s.slice(0, at);
  };

  it('never forces, pins what it installs, keeps hidden files, and the recipe is a few lines around the action', async () => {
    const text = await readFile(GITHUB_RECIPE, 'utf8');
    const action = await readFile(ACTION, 'utf8');
    expect(text + action).not.toMatch(/--force|\bpush\b[^\n]*\+refs|-f\b/);
    const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(text).toContain(`agentv-results@${version} combine`);
    expect(text).toContain(`/agentv-results@v${version}`);
    expect(action).toContain(`default: '${version}'`);
    expect(action).toMatch(/npm install --global "agentv-results@\$VERSION"/);
    expect(text).toMatch(/include-hidden-files: true/);
    const gate = text.slice(text.indexOf('\n  gate:'));
    expect(gate.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).length).toBeLessThan(25);
  });

  it('first PR, main, a PR that improves, one where one target regresses, a wobble, a crash, then main again', async () => {
    // 0. A pull request before any baseline: passes, with a non-empty summary and comment.
    const first = await run('pull_request', BASELINE, 7);
    expect(failedStep(first)).toBe('');
    const s0 = await summaryOf(first);
    expect(s0.summary).toMatch(/Eval gate passed: no baseline yet/);
    expect(s0.summary).toMatch(/This run becomes the baseline when it lands on main/);
    expect((await comments()).comments).toEqual([{ pr: 7, body: gateMd(s0.summary) }]);
    expect((await git(remote, ['for-each-ref', RESULTS])).trim()).toBe(''); // nothing published

    // 1. The first push to main: three shards, combined, published, and (no baseline yet) tagged baseline.
    const main1 = await run('push', BASELINE);
    expect(failedStep(main1)).toBe('');
    expect(main1.map((j) => j.job)).toEqual(['eval-0', 'eval-1', 'eval-2', 'gate']);
    const published = await runIds(remote);
    expect(published).toHaveLength(1);
    expect(await taggedBaseline(daemon.url('project.git'))).toHaveLength(1);
    expect((await summaryOf(main1)).summary).toMatch(/Eval gate passed: no baseline yet/);
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);

    // 2. A pull request improving t6 for steady-agent: passes, says so in the job summary and the one comment.
    const better = await run('pull_request', IMPROVED, 7);
    expect(failedStep(better)).toBe('');
    const s2 = await summaryOf(better);
    expect(s2.summary).toMatch(/✅ Eval gate passed: 1 test improved, no regressions/);
    expect(s2.summary).toMatch(/\| t6 \(steady\\-agent\) \| 0\.600 \| 0\.950 \| \+0\.350 \| score \|/);
    expect((await comments()).comments).toEqual([{ pr: 7, body: gateMd(s2.summary) }]);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // 3. steady-agent regresses on two tests, flaky-agent does not: the check fails, both named with their target.
    const worse = await run('pull_request', REGRESSED, 7);
    const gate = worse.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    expect(gate.steps.at(-1)!.code).toBe(1);
    const s3 = await summaryOf(worse);
    expect(s3.summary).toMatch(/❌ Eval gate failed: 2 regressions/);
    expect(gate.steps.at(-1)!.outputs).toEqual({ result: 'failed', regressions: '2' });
    expect(s3.summary).toMatch(/\| greets \(steady\\-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);
    expect(s3.summary).toMatch(/\| says\\-42 \(steady\\-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);
    const c3 = (await comments()).comments;
    expect(c3).toEqual([{ pr: 7, body: gateMd(s3.summary) }]);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // 4. A wobble within the tolerance across the pass threshold (0.80 pass -> 0.79 fail): passes.
    const wobble = await run('pull_request', WOBBLE, 7);
    expect(failedStep(wobble)).toBe('');
    expect((await summaryOf(wobble)).summary).toMatch(/✅ Eval gate passed: no regressions/);
    expect(wobble.find((j) => j.job === 'gate')!.steps.at(-1)!.outputs).toEqual({ result: 'passed', regressions: '0' });

    // 5. The tool crashes: its own exit code (70, not 1), and the summary and comment say the gate could not decide.
    const crash = await run('pull_request', IMPROVED, 7, { FAKE_CRASH_GATE: '1' });
    const crashed = crash.find((j) => j.job === 'gate')!;
    expect(crashed.ok).toBe(false);
    expect(crashed.steps.at(-1)!.code).toBe(70);
    expect(crashed.steps.at(-1)!.outputs).toEqual({ result: 'error', regressions: '' });
    expect(crashed.steps.at(-1)!.stderr).toMatch(/internal error: .*uv_cwd[\s\S]*this is a bug in agentv-results/);
    const s5 = await summaryOf(crash);
    expect(s5.summary).toMatch(/^<!-- agentv-results:gate -->\n### ⚠️ Eval gate could not decide \(exit 70\)/);
    expect(s5.summary).toMatch(/a bug in the tool, not a regression of the agent/);
    expect((await comments()).comments).toEqual([{ pr: 7, body: gateMd(s5.summary) }]);

    // 6. main again (the improvement merged): published next to the first run, the baseline moves, the summary shows the trend.
    const main2 = await run('push', IMPROVED);
    expect(failedStep(main2)).toBe('');
    const now = await runIds(remote);
    expect(now).toHaveLength(2);
    const newest = now.find((id) => !published.includes(id))!;
    const tagged = await taggedBaseline(daemon.url('project.git'));
    expect(tagged.map((id) => id.replace('/', '--'))).toEqual([newest]);
    const s6 = (await summaryOf(main2)).summary;
    expect(s6).toMatch(/✅ Eval gate passed: 1 test improved/);
    expect(s6).toMatch(/steady\\-agent/);
    expect(s6).toMatch(/[Tt]rend/);
    // The results branch only ever moved forward.
    await git(remote, ['merge-base', '--is-ancestor', tipAfterMain.trim(), (await git(remote, ['rev-parse', RESULTS])).trim()]);
  }, 900_000);

  it('shards uploaded without their dot entries (upload-artifact without include-hidden-files) are refused by combine, naming the fix', async () => {
    const text = await readFile(GITHUB_RECIPE, 'utf8');
    const without = join(root, 'github-no-hidden.yml');
    await writeFile(without, text.replace(/\n\s*include-hidden-files: true/, ''));
    const jobs = await run('pull_request', BASELINE, 8, {}, without);
    const gate = jobs.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    const step = gate.steps.at(-1)!;
    expect(step.step).toBe('Combine the shards into one run');
    expect(step.code).toBe(2);
    expect(step.stderr).toMatch(/not a run workspace .*no \.internal\/ folder.*include-hidden-files: true/);
    // What was uploaded is exactly what the runner kept: no dot entry.
    const shard = join(root, `gh-${scenario - 1}`, 'artifacts', 'shard-1');
    const runs = await readdir(shard);
    expect(runs).toHaveLength(1);
    expect((await readdir(join(shard, runs[0]!))).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 240_000);
});

describe.skipIf(!HAS_CURL)(`examples/ci/gitlab-ci.yml${HAS_CURL ? '' : ' (skipped: curl, which the recipe calls, is not installed)'}`, () => {
  let gitlab: FakeGitlab;
  let remote: string;
  const tokens = { projectId: 7, jobToken: 'job-token-1', accessToken: 'glpat-secret-2' };

  beforeAll(async () => {
    const served = join(root, 'gitlab');
    remote = join(served, 'group', 'project.git');
    await makeProjectRemote(remote);
    gitlab = await startFakeGitlab(served, tokens);
  });
  afterAll(() => gitlab?.stop());

  const ci = (event: 'push' | 'merge_request_event', mr?: number): Record<string, string> => ({
    CI_PIPELINE_SOURCE: event,
    CI_DEFAULT_BRANCH: 'main',
    ...(event === 'push' ? { CI_COMMIT_BRANCH: 'main' } : { CI_MERGE_REQUEST_IID: String(mr) }),
    CI_SERVER_PROTOCOL: 'http',
    CI_SERVER_HOST: '127.0.0.1',
    CI_SERVER_PORT: String(gitlab.port),
    CI_PROJECT_PATH: 'group/project',
    CI_PROJECT_ID: String(tokens.projectId),
    CI_API_V4_URL: `http://127.0.0.1:${gitlab.port}/api/v4`,
    CI_JOB_TOKEN: tokens.jobToken,
    RESULTS_TOKEN: tokens.accessToken,
  });
  const run = async (event: 'push' | 'merge_request_event', scores: Scores, mr?: number, env: Record<string, string> = {}) =>
    runGitlabPipeline(
      GITLAB_RECIPE,
      join(root, `gl-${scenario}`),
      bin,
      { ...ci(event, mr), ...(await scoresFile(scores)), ...env },
      `http://gitlab-ci-token:${tokens.jobToken}@127.0.0.1:${gitlab.port}/group/project.git`,
    );
  const gateOutput = (jobs: JobResult[]) => jobs.find((j) => j.job === 'gate')!.steps[0]!;

  it('never forces; the stand-in GitLab, like GitLab, lets the job token clone but not push', async () => {
    const text = await readFile(GITLAB_RECIPE, 'utf8');
    expect(text).not.toMatch(/--force|\+refs/);
    const probe = join(root, 'probe');
    const url = `http://gitlab-ci-token:${tokens.jobToken}@127.0.0.1:${gitlab.port}/group/project.git`;
    const r = await runBash(`git clone -q "$U" "$P" && cd "$P" && git push -q origin main:refs/heads/probe`, root, {
      PATH: '/usr/bin:/bin',
      HOME: root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      U: url,
      P: probe,
    });
    expect(r.code).not.toBe(0);
    expect(gitlab.refusedPushes).toBe(1);
  });

  it('first MR, default branch, an MR that improves, one where one target regresses, a wobble, a crash, then the default branch again', async () => {
    const text = await readFile(GITLAB_RECIPE, 'utf8');
    const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(text).toContain(`npm install --global agentv-results@${version}`);
    const noteOf = (mr: number) => gitlab.notes.get(mr)!;

    // 0. A merge request before any baseline: passes, one non-empty note.
    const first = await run('merge_request_event', BASELINE, 3);
    expect(failedStep(first)).toBe('');
    expect(noteOf(3)).toHaveLength(1);
    expect(noteOf(3)[0]!.body).toMatch(
      /^<!-- agentv-results:gate -->\n### ✅ Eval gate passed: no baseline yet[\s\S]*becomes the baseline when it lands on main/,
    );

    const main1 = await run('push', BASELINE);
    expect(failedStep(main1)).toBe('');
    expect(main1.map((j) => j.job)).toEqual(['eval 1/3', 'eval 2/3', 'eval 3/3', 'gate']);
    const published = await runIds(remote);
    expect(published).toHaveLength(1);
    expect(gitlab.refusedPushes).toBe(1); // only the probe above: the recipe pushed with the access token
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);
    // The job log never shows the access token (it is in the results remote's URL).
    expect(gateOutput(main1).stdout + gateOutput(main1).stderr).not.toContain(tokens.accessToken);

    const better = await run('merge_request_event', IMPROVED, 3);
    expect(failedStep(better)).toBe('');
    expect(gateOutput(better).stdout).toMatch(/✅ Eval gate passed: 1 test improved/);
    expect(noteOf(3)).toHaveLength(1);
    expect(noteOf(3)[0]!.body).toMatch(/^<!-- agentv-results:gate -->\n### ✅ Eval gate passed/);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    const worse = await run('merge_request_event', REGRESSED, 3);
    const gate = worse.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    expect(gate.steps[0]!.code).toBe(1);
    expect(noteOf(3)).toHaveLength(1); // updated, not a second note
    expect(noteOf(3)[0]!.body).toMatch(/❌ Eval gate failed: 2 regressions/);
    expect(noteOf(3)[0]!.body).toMatch(/\| greets \(steady\\-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);

    const wobble = await run('merge_request_event', WOBBLE, 3);
    expect(failedStep(wobble)).toBe('');
    expect(noteOf(3)[0]!.body).toMatch(/✅ Eval gate passed: no regressions/);

    const crash = await run('merge_request_event', IMPROVED, 3, { FAKE_CRASH_GATE: '1' });
    expect(gateOutput(crash).code).toBe(70);
    expect(gateOutput(crash).stderr).toMatch(/this is a bug in agentv-results/);
    expect(noteOf(3)).toHaveLength(1);
    expect(noteOf(3)[0]!.body).toMatch(/### ⚠️ Eval gate could not decide \(exit 70\)/);

    const main2 = await run('push', IMPROVED);
    expect(failedStep(main2)).toBe('');
    const now = await runIds(remote);
    expect(now).toHaveLength(2);
    const newest = now.find((id) => !published.includes(id))!;
    expect(gateOutput(main2).stderr).toMatch(/baseline -> .* \(was /);
    expect(gateOutput(main2).stdout).toMatch(/[Tt]rend/);
    const tagged = await taggedBaseline(`http://oauth2:${tokens.accessToken}@127.0.0.1:${gitlab.port}/group/project.git`);
    expect(tagged.map((id) => id.replace('/', '--'))).toEqual([newest]);
  }, 900_000);
});
