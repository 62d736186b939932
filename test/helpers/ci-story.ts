/**
 * The story both CI-recipe suites tell (test/ci-recipes-github.test.ts, test/ci-recipes-gitlab.test.ts):
 * each recipe's shell steps run as written, in order, in a simulated runner (test/helpers/ci-runner.ts:
 * a fresh shallow clone per job, no git identity, the platform's CI variables, a file for
 * $GITHUB_STEP_SUMMARY), against a remote on 127.0.0.1 that refuses non-fast-forward pushes. Only the
 * eval command is a stand-in (it writes the run workspace of the AgentV line the recipe pins — 4.42's
 * `runs/<experiment>/<ts>/` as written, AgentV 5's with its index under `.internal/` in the later
 * scenarios, which pin `agentv@next` — with the scores each scenario chooses for two targets,
 * steady-agent and flaky-agent), three shards per pipeline, run side by side as the platforms run them.
 *
 * Per platform: a first pull request before any baseline passes with a non-empty summary; the first
 * push to main publishes and becomes the baseline; a pull request that improves a test passes and
 * says so in one comment; one where one target regresses fails, the comment (the same one, updated)
 * names the tests with their target; a wobble within the tolerance across the pass threshold passes;
 * a crash of the tool exits 70 and says the gate could not decide; a second push to main moves the
 * baseline and the summary shows the trend. The gate's own comment or note is found by its marker:
 * another comment of the same user (GitHub) or 120 newer notes (GitLab, newest first) are left alone,
 * and a failing comments API is a warning that leaves the gate's result as it was. The two platforms are two files, so they run side by side.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './fixtures.js';
import { makeShims, runBash, type JobResult } from './ci-runner.js';
import { git, makeTempDir } from './git-fixtures.js';

export const GITHUB_RECIPE = join(REPO_ROOT, 'examples/ci/github-actions.yml');
export const GITLAB_RECIPE = join(REPO_ROOT, 'examples/ci/gitlab-ci.yml');
export const ACTION = join(REPO_ROOT, 'action.yml');
export const RESULTS = 'refs/heads/agentv/results/v1';
/** The GitLab recipe calls GitLab's API with curl, as GitLab's own images do. A machine without it
 * skips that recipe and says so; CI, which has it, never skips. */
export const HAS_CURL = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAS_CURL && process.env.CI) throw new Error('curl is missing: CI must run the GitLab recipe');

export type Scores = Record<string, Record<string, number | Record<string, number>>>;
const both = (steady: number, flaky: number) => ({ 'steady-agent': steady, 'flaky-agent': flaky });
/** Three shards of two tests each, run against two targets (flaky-agent's rows come last). */
export const BASELINE: Scores = {
  '1': { 'says-42': both(1, 1), greets: both(1, 0) },
  '2': { counts: both(0, 1), edge: both(0.8, 0.8) },
  '3': { t5: both(0.85, 0.85), t6: both(0.6, 0.6) },
};
export const IMPROVED: Scores = { ...BASELINE, '3': { t5: both(0.85, 0.85), t6: both(0.95, 0.6) } };
/** steady-agent falls from 2/3 to 0/3 on shard 1; flaky-agent does not move. */
export const REGRESSED: Scores = { ...BASELINE, '1': { 'says-42': both(0, 1), greets: both(0, 0) } };
/** edge: 0.80 (pass) -> 0.79 (fail, derived at 0.8) on both targets; t5 0.85 -> 0.80: all within the 0.1 tolerance. */
export const WOBBLE: Scores = {
  ...BASELINE,
  '2': { counts: both(0, 1), edge: both(0.79, 0.79) },
  '3': { t5: both(0.8, 0.8), t6: both(0.6, 0.6) },
};

export const failedStep = (jobs: JobResult[]) =>
  jobs
    .flatMap((j) => j.steps)
    .filter((s) => s.code !== 0)
    .map((s) => `${s.job} / ${s.step}: exit ${s.code}\n${s.stdout}\n${s.stderr}`)
    .join('\n');

/** One platform's story: its scratch root, the shims on PATH, and each pipeline's own scenario number. */
export interface Story {
  root: string;
  bin: string;
  /** The number of the next pipeline (its folder, its runs' minute). */
  scenario: number;
  /** The scores file and clock of the next pipeline; moves to the next scenario. */
  scoresFile(scores: Scores): Promise<Record<string, string>>;
  /** A bare remote holding the project (main with one commit), refusing non-fast-forward pushes. */
  makeProjectRemote(path: string): Promise<void>;
  /** The run ids tagged baseline, as a fresh clone of `remote` lists them. */
  taggedBaseline(remote: string): Promise<string[]>;
  /** The runs at the root of the remote's results branch. */
  runIds(remote: string): Promise<string[]>;
}

export async function newStory(name: string): Promise<Story> {
  const root = await makeTempDir(`agentv-ci-${name}`);
  const bin = await makeShims(root);
  const story: Story = {
    root,
    bin,
    scenario: 0,
    async scoresFile(scores) {
      const f = join(root, `scores-${story.scenario}.json`);
      await writeFile(f, JSON.stringify(scores));
      // Each pipeline's runs start a minute after the last one's: distinct, ordered run ids.
      return { FAKE_EVAL_SCORES: f, FAKE_EVAL_TIME: new Date(Date.UTC(2026, 10, 20, 9, story.scenario++)).toISOString() };
    },
    async makeProjectRemote(path) {
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
    },
    async taggedBaseline(remote) {
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
    },
    async runIds(remote) {
      const out = await git(remote, ['ls-tree', '--name-only', RESULTS]);
      return out
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('.'))
        .sort();
    },
  };
  return story;
}
