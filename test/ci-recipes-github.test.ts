/**
 * The GitHub recipe (examples/ci/github-actions.yml) works when pasted: its steps run as written in a
 * simulated runner against a `git daemon` on 127.0.0.1 that refuses non-fast-forward pushes; its gate
 * is this project's action (action.yml), run as a composite action. The story it tells, and the
 * scenarios' scores, are in test/helpers/ci-story.ts (shared with the GitLab recipe's suite). Shards
 * uploaded without their dot entries (upload-artifact's default) are refused by combine, naming
 * include-hidden-files.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { runGithubWorkflow, type JobResult } from './helpers/ci-runner.js';
import { ACTION, BASELINE, failedStep, GITHUB_RECIPE, IMPROVED, newStory, REGRESSED, RESULTS, WOBBLE, type Scores, type Story } from './helpers/ci-story.js';
import { cleanupTempDirs, git, startGitDaemon, type GitDaemon } from './helpers/git-fixtures.js';

let s: Story;
afterAll(() => cleanupTempDirs());

describe('examples/ci/github-actions.yml (with action.yml)', () => {
  let daemon: GitDaemon;
  let remote: string;
  let ghState: string;

  beforeAll(async () => {
    s = await newStory('github');
    const served = join(s.root, 'github');
    await git(s.root, ['init', '-q', '--bare', join(s.root, 'unused.git')]); // keeps git quiet about an empty root
    remote = join(served, 'project.git');
    await s.makeProjectRemote(remote);
    daemon = await startGitDaemon(served);
    ghState = join(s.root, 'gh-comments.json');
  });
  afterAll(() => daemon?.stop());

  const run = async (event: 'push' | 'pull_request', scores: Scores, pr?: number, env: Record<string, string> = {}, recipe = GITHUB_RECIPE) =>
    runGithubWorkflow(recipe, { name: event, pr, cloneUrl: daemon.url('project.git') }, join(s.root, `gh-${s.scenario}`), s.bin, {
      ...(await s.scoresFile(scores)),
      FAKE_GH_STATE: ghState,
      ...env,
    });
  const summaryOf = async (jobs: JobResult[]) => {
    const gate = jobs.find((j) => j.job === 'gate')!;
    return readFile(join(s.root, `gh-${s.scenario - 1}`, 'gate-0', 'runner', 'step-summary.md'), 'utf8').then((text) => ({ gate, summary: text }));
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
    const published = await s.runIds(remote);
    expect(published).toHaveLength(1);
    expect(await s.taggedBaseline(daemon.url('project.git'))).toHaveLength(1);
    expect((await summaryOf(main1)).summary).toMatch(/Eval gate passed: no baseline yet/);
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);

    // 2. A pull request improving t6 for steady-agent: passes, says so in the job summary and the one comment.
    const better = await run('pull_request', IMPROVED, 7);
    expect(failedStep(better)).toBe('');
    const s2 = await summaryOf(better);
    expect(s2.summary).toMatch(/✅ Eval gate passed: 1 test improved, no regressions/);
    expect(s2.summary).toMatch(/\| t6 \(steady-agent\) \| 0\.600 \| 0\.950 \| \+0\.350 \| score \|/);
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
    expect(s3.summary).toMatch(/\| greets \(steady-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);
    expect(s3.summary).toMatch(/\| says-42 \(steady-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);
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
    const now = await s.runIds(remote);
    expect(now).toHaveLength(2);
    const newest = now.find((id) => !published.includes(id))!;
    const tagged = await s.taggedBaseline(daemon.url('project.git'));
    expect(tagged.map((id) => id.replace('/', '--'))).toEqual([newest]);
    const s6 = (await summaryOf(main2)).summary;
    expect(s6).toMatch(/✅ Eval gate passed: 1 test improved/);
    expect(s6).toMatch(/steady-agent/);
    expect(s6).toMatch(/[Tt]rend/);
    // The results branch only ever moved forward.
    await git(remote, ['merge-base', '--is-ancestor', tipAfterMain.trim(), (await git(remote, ['rev-parse', RESULTS])).trim()]);
  }, 900_000);

  it('shards uploaded without their dot entries (upload-artifact without include-hidden-files) are refused by combine, naming the fix', async () => {
    const text = await readFile(GITHUB_RECIPE, 'utf8');
    const without = join(s.root, 'github-no-hidden.yml');
    await writeFile(without, text.replace(/\n\s*include-hidden-files: true/, ''));
    const jobs = await run('pull_request', BASELINE, 8, {}, without);
    const gate = jobs.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    const step = gate.steps.at(-1)!;
    expect(step.step).toBe('Combine the shards into one run');
    expect(step.code).toBe(2);
    expect(step.stderr).toMatch(/not a run workspace .*no \.internal\/ folder.*include-hidden-files: true/);
    // What was uploaded is exactly what the runner kept: no dot entry.
    const shard = join(s.root, `gh-${s.scenario - 1}`, 'artifacts', 'shard-1');
    const runs = await readdir(shard);
    expect(runs).toHaveLength(1);
    expect((await readdir(join(shard, runs[0]!))).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 240_000);
});
