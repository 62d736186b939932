/**
 * The GitHub recipe (examples/ci/github-actions.yml) works when pasted: its steps run as written in a
 * simulated runner against a `git daemon` on 127.0.0.1 that refuses non-fast-forward pushes; its gate
 * is this project's action (action.yml), run as a composite action. The story it tells, and the
 * scenarios' scores, are in test/helpers/ci-story.ts (shared with the GitLab recipe's suite). AgentV 5
 * shards uploaded without their dot entries (upload-artifact's default) are refused by combine, naming
 * include-hidden-files. On main, `run:` a published run id is gated as it is, never published again.
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
  type Comment = { id: number; pr: number; user: string; body: string };
  const state = async () => JSON.parse(await readFile(ghState, 'utf8').catch(() => '{"comments":[]}')) as { comments: Comment[] };
  /** The pull request's comments, as { pr, body } (who wrote them and their ids aside). */
  const comments = async () => ({ comments: (await state()).comments.map(({ pr, body }) => ({ pr, body })) });
  /** The recipe with the other AgentV line pinned (5.x), written beside the scratch data. */
  const fiveRecipe = async (edit = (t: string) => t) => {
    const file = join(s.root, `github-5x-${Math.random().toString(36).slice(2)}.yml`);
    await writeFile(file, edit((await readFile(GITHUB_RECIPE, 'utf8')).replace('npx --yes agentv@4.42.4 eval', 'npx --yes agentv@next eval')));
    return file;
  };
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
    expect(text).toContain(`/agentv-results@v${version}`);
    // The action installs from its own checkout unless a published version is named; AgentV is pinned, either line said.
    expect(action).toMatch(/version:\n {4}description: [^\n]*\n {4}default: ''/);
    expect(action).toMatch(/npm install --global [^\n]*"agentv-results@\$VERSION"/);
    expect(action).toMatch(/cd "\$GITHUB_ACTION_PATH" && npm ci/);
    expect(text).toMatch(/npx --yes agentv@4\.42\.4 eval/);
    expect(text).toMatch(/agentv@next/);
    // Positionals after `--` (a run or baseline named like an option is never one); the comment found by its marker.
    for (const verb of ['combine', 'publish', 'gate']) expect(action).toMatch(new RegExp(`agentv-results ${verb} [^\\n]*(?:\\\\\\n[^\\n]*)?-- "\\$`));
    expect(action).not.toMatch(/--edit-last/);
    expect(action).toContain('startswith("<!-- agentv-results:gate -->")');
    expect(text).toMatch(/include-hidden-files: true/);
    const gate = text.slice(text.indexOf('\n  gate:'));
    expect(gate.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).length).toBeLessThan(25);
  });

  it('first PR, main, a PR that improves (AgentV 4.42), one where one target regresses, a wobble, a crash (5.x), then main again', async () => {
    // 0-2 run the recipe as written (AgentV 4.42.4: runs/<experiment>/<ts>/ in each shard), 3-6 with the 5.x line pinned.
    const five = await fiveRecipe();
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
    // The baseline moved to this run: the summary says so, not "no baseline yet".
    const s1 = (await summaryOf(main1)).summary;
    expect(s1).toMatch(/Eval gate passed: this run is the first baseline/);
    expect(s1).not.toMatch(/no baseline yet|becomes the baseline when/);
    expect(s1).not.toMatch(/Trend: 0 series/);
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);

    // 2. A pull request improving t6 for steady-agent: passes, says so in the job summary and the one comment.
    const better = await run('pull_request', IMPROVED, 7);
    expect(failedStep(better)).toBe('');
    const s2 = await summaryOf(better);
    expect(s2.summary).toMatch(/✅ Eval gate passed: 1 test improved, no regressions/);
    expect(s2.summary).toMatch(/\| t6 \(steady-agent\) \| 0\.600 \| 0\.950 \| \+0\.350 \| score \|/);
    expect((await comments()).comments).toEqual([{ pr: 7, body: gateMd(s2.summary) }]);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // Another bot comment (coverage, by the same token user) lands between two pushes: the gate leaves it alone.
    const before = await state();
    const coverage = { id: 5000, pr: 7, user: 'github-actions[bot]', body: 'Coverage: 91%' };
    await writeFile(ghState, JSON.stringify({ comments: [...before.comments, coverage] }));

    // 3. steady-agent regresses on two tests, flaky-agent does not: the check fails, both named with their target.
    const worse = await run('pull_request', REGRESSED, 7, {}, five);
    const gate = worse.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    expect(gate.steps.at(-1)!.code).toBe(1);
    const s3 = await summaryOf(worse);
    expect(s3.summary).toMatch(/❌ Eval gate failed: 2 regressions/);
    expect(gate.steps.at(-1)!.outputs).toEqual({ result: 'failed', regressions: '2' });
    expect(s3.summary).toMatch(/\| greets \(steady-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);
    expect(s3.summary).toMatch(/\| says-42 \(steady-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);
    const c3 = (await comments()).comments;
    expect(c3).toEqual([
      { pr: 7, body: gateMd(s3.summary) },
      { pr: 7, body: 'Coverage: 91%' },
    ]);
    expect((await state()).comments[0]!.id).toBe(before.comments[0]!.id); // the same comment, edited
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // 4. A wobble within the tolerance across the pass threshold (0.80 pass -> 0.79 fail): passes,
    // while the comments API fails: a warning, the gate's result stays its own.
    const wobble = await run('pull_request', WOBBLE, 7, { FAKE_GH_FAIL: '1' }, five);
    expect(failedStep(wobble)).toBe('');
    expect((await summaryOf(wobble)).summary).toMatch(/✅ Eval gate passed: no regressions/);
    const wobbleGate = wobble.find((j) => j.job === 'gate')!.steps.at(-1)!;
    expect(wobbleGate.outputs).toEqual({ result: 'passed', regressions: '0' });
    expect(wobbleGate.stdout).toMatch(/::warning::the pull-request comments could not be read: gh: HTTP 502/);
    expect((await comments()).comments).toEqual(c3);

    // 5. The tool crashes: its own exit code (70, not 1), and the summary and comment say the gate could not decide.
    const crash = await run('pull_request', IMPROVED, 7, { FAKE_CRASH_GATE: '1' }, five);
    const crashed = crash.find((j) => j.job === 'gate')!;
    expect(crashed.ok).toBe(false);
    expect(crashed.steps.at(-1)!.code).toBe(70);
    expect(crashed.steps.at(-1)!.outputs).toEqual({ result: 'error', regressions: '' });
    expect(crashed.steps.at(-1)!.stderr).toMatch(/internal error: .*uv_cwd[\s\S]*this is a bug in agentv-results/);
    const s5 = await summaryOf(crash);
    expect(s5.summary).toMatch(/^<!-- agentv-results:gate -->\n### ⚠️ Eval gate could not decide \(exit 70\)/);
    expect(s5.summary).toMatch(/a bug in the tool, not a regression of the agent/);
    expect((await comments()).comments).toEqual([
      { pr: 7, body: gateMd(s5.summary) },
      { pr: 7, body: 'Coverage: 91%' },
    ]);

    // 6. main again (the improvement merged): published next to the first run, the baseline moves, the summary shows the trend.
    const main2 = await run('push', IMPROVED, undefined, {}, five);
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

    // 7. On main, `run:` a published run id: gated as it is (on the baseline, itself now), never published again.
    const byId = join(s.root, 'github-run-id.yml');
    await writeFile(
      byId,
      `on: push\njobs:\n  gate:\n    steps:\n      - uses: actions/checkout@v4\n      - uses: OWNER/agentv-results@v0.1.0\n        with:\n          run: '${newest.replace('--', '/')}'\n`,
    );
    const tipBefore = await git(remote, ['rev-parse', RESULTS]);
    const again = await run('push', IMPROVED, undefined, {}, byId);
    expect(failedStep(again)).toBe('');
    expect(again.find((j) => j.job === 'gate')!.steps.at(-1)!.outputs).toEqual({ result: 'passed', regressions: '0' });
    expect((await summaryOf(again)).summary).toMatch(/✅ Eval gate passed: no regressions/);
    expect(await s.runIds(remote)).toEqual(now);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipBefore);
  }, 900_000);

  it('AgentV 5 shards uploaded without their dot entries (upload-artifact without include-hidden-files) are refused by combine, naming the fix', async () => {
    const without = await fiveRecipe((text) => text.replace(/\n\s*include-hidden-files: true/, ''));
    const jobs = await run('pull_request', BASELINE, 8, {}, without);
    const gate = jobs.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    const step = gate.steps.at(-1)!;
    expect(step.code).toBe(2);
    expect(step.outputs).toEqual({ result: 'error', regressions: '' });
    expect(step.stderr).toMatch(/not a run workspace .*no \.internal\/ folder.*include-hidden-files: true/);
    const summary = (await summaryOf(jobs)).summary;
    expect(summary).toMatch(/^<!-- agentv-results:gate -->\n### ⚠️ Eval gate could not decide \(exit 2\)[\s\S]*include-hidden-files: true/);
    expect(summary.endsWith('\n')).toBe(true);
    // What was uploaded is exactly what the runner kept: no dot entry.
    const shard = join(s.root, `gh-${s.scenario - 1}`, 'artifacts', 'shard-1');
    const runs = await readdir(shard);
    expect(runs).toHaveLength(1);
    expect((await readdir(join(shard, runs[0]!))).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 240_000);
});
