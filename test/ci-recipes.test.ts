/**
 * The CI recipes (examples/ci/) work when pasted: each recipe's shell steps run as written, in
 * order, in a simulated runner (test/helpers/ci-runner.ts: a fresh shallow clone per job, no git
 * identity, the platform's CI variables, a file for $GITHUB_STEP_SUMMARY), against a remote on
 * 127.0.0.1 that refuses non-fast-forward pushes — a `git daemon` for GitHub, a stand-in GitLab
 * (the real `git http-backend` plus the notes API) for GitLab. Only the eval command is a stand-in
 * (it writes a run workspace with the scores each scenario chooses), three shards per pipeline.
 *
 * The story, per platform: the first push to main publishes and becomes the baseline; a pull request
 * that improves a test passes and says so in one comment; one that regresses a test fails, the
 * comment (the same one, updated) names the test and nothing is published; a second push to main
 * moves the baseline.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { makeShims, runBash, runGithubWorkflow, runGitlabPipeline, type JobResult } from './helpers/ci-runner.js';
import { startFakeGitlab, type FakeGitlab } from './helpers/fake-gitlab.js';
import { cleanupTempDirs, git, makeTempDir, startGitDaemon, type GitDaemon } from './helpers/git-fixtures.js';

const GITHUB_RECIPE = join(REPO_ROOT, 'examples/ci/github-actions.yml');
const GITLAB_RECIPE = join(REPO_ROOT, 'examples/ci/gitlab-ci.yml');
const RESULTS = 'refs/heads/agentv/results/v1';
/** The GitLab recipe calls GitLab's API with curl, as GitLab's own images do. A machine without it
 * skips that recipe and says so; CI, which has it, never skips. */
const HAS_CURL = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAS_CURL && process.env.CI) throw new Error('curl is missing: CI must run the GitLab recipe');

/** Three shards of two tests each. */
const BASELINE = { '1': { t1: 0.9, t2: 0.8 }, '2': { t3: 0.7, t4: 0.9 }, '3': { t5: 0.85, t6: 0.6 } };
const IMPROVED = { ...BASELINE, '3': { t5: 0.85, t6: 0.95 } };
const REGRESSED = { ...BASELINE, '2': { t3: 0.2, t4: 0.9 } };

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
async function scoresFile(scores: Record<string, Record<string, number>>): Promise<Record<string, string>> {
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

describe('examples/ci/github-actions.yml', () => {
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

  const run = async (event: 'push' | 'pull_request', scores: Record<string, Record<string, number>>, pr?: number) =>
    runGithubWorkflow(GITHUB_RECIPE, { name: event, pr, cloneUrl: daemon.url('project.git') }, join(root, `gh-${scenario}`), bin, {
      ...(await scoresFile(scores)),
      FAKE_GH_STATE: ghState,
    });
  const summaryOf = async (jobs: JobResult[]) => {
    const gate = jobs.find((j) => j.job === 'gate')!;
    return readFile(join(root, `gh-${scenario - 1}`, 'gate-0', 'runner', 'step-summary.md'), 'utf8').then((s) => ({ gate, summary: s }));
  };
  const comments = async () => JSON.parse(await readFile(ghState, 'utf8').catch(() => '{"comments":[]}')) as { comments: { pr: number; body: string }[] };

  it('never forces, and the recipe has nothing the simulator would have to guess', async () => {
    const text = await readFile(GITHUB_RECIPE, 'utf8');
    expect(text).not.toMatch(/--force|\bpush\b[^\n]*\+refs|-f\b/);
  });

  it('push to main, then a pull request that improves, one that regresses, then main again', async () => {
    // 1. The first push to main: three shards, combined, published, and (no baseline yet) tagged baseline.
    const first = await run('push', BASELINE);
    expect(failedStep(first)).toBe('');
    expect(first.map((j) => j.job)).toEqual(['eval-0', 'eval-1', 'eval-2', 'gate']);
    const published = await runIds(remote);
    expect(published).toHaveLength(1);
    expect(await taggedBaseline(daemon.url('project.git'))).toHaveLength(1);
    expect((await summaryOf(first)).summary).toMatch(/Eval gate passed: no baseline yet/);
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);

    // 2. A pull request improving t6: passes, says so in the job summary and one comment; publishes nothing.
    const better = await run('pull_request', IMPROVED, 7);
    expect(failedStep(better)).toBe('');
    const s2 = await summaryOf(better);
    expect(s2.summary).toMatch(/✅ Eval gate passed: 1 test improved, no regressions/);
    expect(s2.summary).toMatch(/\| t6 \| 0\.600 \| 0\.950 \| \+0\.350 \| score \|/);
    expect((await comments()).comments).toEqual([{ pr: 7, body: s2.summary }]);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // 3. A push to the same pull request regressing t3: the check fails, the same comment now names t3.
    const worse = await run('pull_request', REGRESSED, 7);
    const gate = worse.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    expect(gate.steps.at(-1)!.step).toBe('Fail the check on a regression');
    expect(gate.steps.at(-1)!.code).toBe(1);
    const s3 = await summaryOf(worse);
    expect(s3.summary).toMatch(/❌ Eval gate failed: 1 regression/);
    expect(s3.summary).toMatch(/\| t3 \| 0\.700 \| 0\.200 \| −0\.500 \| score \|/);
    const c3 = (await comments()).comments;
    expect(c3).toHaveLength(1);
    expect(c3[0]!.body).toBe(s3.summary);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // 4. main again (the improvement merged): published next to the first run, and the baseline moves to it.
    const second = await run('push', IMPROVED);
    expect(failedStep(second)).toBe('');
    const now = await runIds(remote);
    expect(now).toHaveLength(2);
    const newest = now.find((id) => !published.includes(id))!;
    const tagged = await taggedBaseline(daemon.url('project.git'));
    expect(tagged.map((id) => id.replace('/', '--'))).toEqual([newest]);
    // The results branch only ever moved forward.
    await git(remote, ['merge-base', '--is-ancestor', tipAfterMain.trim(), (await git(remote, ['rev-parse', RESULTS])).trim()]);
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
  const run = async (event: 'push' | 'merge_request_event', scores: Record<string, Record<string, number>>, mr?: number) =>
    runGitlabPipeline(
      GITLAB_RECIPE,
      join(root, `gl-${scenario}`),
      bin,
      { ...ci(event, mr), ...(await scoresFile(scores)) },
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

  it('default branch, then a merge request that improves, one that regresses, then the default branch again', async () => {
    const first = await run('push', BASELINE);
    expect(failedStep(first)).toBe('');
    expect(first.map((j) => j.job)).toEqual(['eval 1/3', 'eval 2/3', 'eval 3/3', 'gate']);
    const published = await runIds(remote);
    expect(published).toHaveLength(1);
    expect(gitlab.refusedPushes).toBe(1); // only the probe above: the recipe pushed with the access token
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);
    // The job log never shows the access token (it is in the results remote's URL).
    expect(gateOutput(first).stdout + gateOutput(first).stderr).not.toContain(tokens.accessToken);

    const better = await run('merge_request_event', IMPROVED, 3);
    expect(failedStep(better)).toBe('');
    expect(gateOutput(better).stdout).toMatch(/✅ Eval gate passed: 1 test improved/);
    expect(gitlab.notes.get(3)).toHaveLength(1);
    expect(gitlab.notes.get(3)![0]!.body).toMatch(/^<!-- agentv-results:gate -->\n### ✅ Eval gate passed/);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    const worse = await run('merge_request_event', REGRESSED, 3);
    const gate = worse.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    expect(gate.steps[0]!.code).toBe(1);
    const notes = gitlab.notes.get(3)!;
    expect(notes).toHaveLength(1); // updated, not a second note
    expect(notes[0]!.body).toMatch(/❌ Eval gate failed: 1 regression/);
    expect(notes[0]!.body).toMatch(/\| t3 \| 0\.700 \| 0\.200 \| −0\.500 \| score \|/);

    const second = await run('push', IMPROVED);
    expect(failedStep(second)).toBe('');
    const now = await runIds(remote);
    expect(now).toHaveLength(2);
    const newest = now.find((id) => !published.includes(id))!;
    expect(gateOutput(second).stderr).toMatch(/baseline -> .* \(was /);
    const tagged = await taggedBaseline(`http://oauth2:${tokens.accessToken}@127.0.0.1:${gitlab.port}/group/project.git`);
    expect(tagged.map((id) => id.replace('/', '--'))).toEqual([newest]);
  }, 240_000);
});
