/**
 * The GitLab recipe (examples/ci/gitlab-ci.yml) works when pasted: its script lines run as written in
 * a simulated runner against a stand-in GitLab on 127.0.0.1 (the real `git http-backend` plus the
 * notes API) that refuses non-fast-forward pushes and the job token's pushes. The story it tells, and
 * the scenarios' scores, are in test/helpers/ci-story.ts (shared with the GitHub recipe's suite).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { runBash, runGitlabPipeline, type JobResult } from './helpers/ci-runner.js';
import { BASELINE, failedStep, GITLAB_RECIPE, HAS_CURL, IMPROVED, newStory, REGRESSED, RESULTS, WOBBLE, type Scores, type Story } from './helpers/ci-story.js';
import { startFakeGitlab, type FakeGitlab } from './helpers/fake-gitlab.js';
import { cleanupTempDirs, git } from './helpers/git-fixtures.js';

let s: Story;
afterAll(() => cleanupTempDirs());

describe.skipIf(!HAS_CURL)(`examples/ci/gitlab-ci.yml${HAS_CURL ? '' : ' (skipped: curl, which the recipe calls, is not installed)'}`, () => {
  let gitlab: FakeGitlab;
  let remote: string;
  const tokens = { projectId: 7, jobToken: 'job-token-1', accessToken: 'glpat-secret-2' };

  beforeAll(async () => {
    s = await newStory('gitlab');
    const served = join(s.root, 'gitlab');
    remote = join(served, 'group', 'project.git');
    await s.makeProjectRemote(remote);
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
  const run = async (event: 'push' | 'merge_request_event', scores: Scores, mr?: number, env: Record<string, string> = {}, recipe = GITLAB_RECIPE) =>
    runGitlabPipeline(
      recipe,
      join(s.root, `gl-${s.scenario}`),
      s.bin,
      { ...ci(event, mr), ...(await s.scoresFile(scores)), ...env },
      `http://gitlab-ci-token:${tokens.jobToken}@127.0.0.1:${gitlab.port}/group/project.git`,
    );
  const gateOutput = (jobs: JobResult[]) => jobs.find((j) => j.job === 'gate')!.steps[0]!;

  it('never forces; the stand-in GitLab, like GitLab, lets the job token clone but not push', async () => {
    const text = await readFile(GITLAB_RECIPE, 'utf8');
    expect(text).not.toMatch(/--force|\+refs/);
    const probe = join(s.root, 'probe');
    const url = `http://gitlab-ci-token:${tokens.jobToken}@127.0.0.1:${gitlab.port}/group/project.git`;
    const r = await runBash(`git clone -q "$U" "$P" && cd "$P" && git push -q origin main:refs/heads/probe`, s.root, {
      PATH: '/usr/bin:/bin',
      HOME: s.root,
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
    // Installed from the repository at a release tag (not on the registry); AgentV pinned, the other line said.
    expect(text).toContain(`npm install --global "git+https://github.com/OWNER/agentv-results.git#v${version}"`);
    expect(text).toMatch(/npx --yes agentv@4\.42\.4 eval/);
    expect(text).toMatch(/agentv@next/);
    // 0-2 run the recipe as written (AgentV 4.42.4), 3-6 with the 5.x line pinned.
    const five = join(s.root, 'gitlab-5x.yml');
    await writeFile(five, text.replace('npx --yes agentv@4.42.4 eval', 'npx --yes agentv@next eval'));
    /** The gate's notes on the merge request (other people's notes aside). */
    const noteOf = (mr: number) => gitlab.notes.get(mr)!.filter((n) => n.body.startsWith('<!-- agentv-results:gate -->'));

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
    const published = await s.runIds(remote);
    expect(published).toHaveLength(1);
    expect(gitlab.refusedPushes).toBe(1); // only the probe above: the recipe pushed with the access token
    const tipAfterMain = await git(remote, ['rev-parse', RESULTS]);
    // The baseline moved to this run: the job says so, not "no baseline yet".
    expect(gateOutput(main1).stdout).toMatch(/Eval gate passed: this run is the first baseline/);
    expect(gateOutput(main1).stdout).not.toMatch(/no baseline yet|becomes the baseline when|Trend: 0 series/);
    // The job log never shows the access token (it is in the results remote's URL).
    expect(gateOutput(main1).stdout + gateOutput(main1).stderr).not.toContain(tokens.accessToken);

    const better = await run('merge_request_event', IMPROVED, 3);
    expect(failedStep(better)).toBe('');
    expect(gateOutput(better).stdout).toMatch(/✅ Eval gate passed: 1 test improved/);
    expect(noteOf(3)).toHaveLength(1);
    expect(noteOf(3)[0]!.body).toMatch(/^<!-- agentv-results:gate -->\n### ✅ Eval gate passed/);
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(tipAfterMain);

    // 120 notes by reviewers after the gate's: GitLab lists the newest first, so the gate's note is on page 2.
    const others = Array.from({ length: 120 }, (_, i) => ({ id: 50_000 + i, body: `review note ${i}` }));
    gitlab.notes.get(3)!.push(...others);
    const gateNoteId = noteOf(3)[0]!.id;

    const worse = await run('merge_request_event', REGRESSED, 3, {}, five);
    const gate = worse.find((j) => j.job === 'gate')!;
    expect(gate.ok).toBe(false);
    expect(gate.steps[0]!.code).toBe(1);
    expect(noteOf(3)).toHaveLength(1); // updated, not a second note
    expect(noteOf(3)[0]!.id).toBe(gateNoteId);
    expect(gitlab.notes.get(3)!.filter((n) => n.id >= 50_000)).toEqual(others);
    expect(noteOf(3)[0]!.body).toMatch(/❌ Eval gate failed: 2 regressions/);
    expect(noteOf(3)[0]!.body).toMatch(/\| greets \(steady-agent\) \| 1\.000 \| 0\.000 \| −1\.000 \| score \|/);

    // A wobble within the tolerance passes, while the notes API fails: a warning, the job's result stays the gate's.
    const before = noteOf(3)[0]!.body;
    gitlab.failNotes = true;
    const wobble = await run('merge_request_event', WOBBLE, 3, {}, five).finally(() => {
      gitlab.failNotes = false;
    });
    expect(failedStep(wobble)).toBe('');
    expect(gateOutput(wobble).stdout).toMatch(/✅ Eval gate passed: no regressions/);
    expect(gateOutput(wobble).stdout).toMatch(/warning: the merge-request notes could not be read/);
    expect(noteOf(3)[0]!.body).toBe(before);

    const crash = await run('merge_request_event', IMPROVED, 3, { FAKE_CRASH_GATE: '1' }, five);
    expect(gateOutput(crash).code).toBe(70);
    expect(gateOutput(crash).stderr).toMatch(/this is a bug in agentv-results/);
    expect(noteOf(3)).toHaveLength(1);
    expect(noteOf(3)[0]!.body).toMatch(/### ⚠️ Eval gate could not decide \(exit 70\)/);

    const main2 = await run('push', IMPROVED, undefined, {}, five);
    expect(failedStep(main2)).toBe('');
    const now = await s.runIds(remote);
    expect(now).toHaveLength(2);
    const newest = now.find((id) => !published.includes(id))!;
    expect(gateOutput(main2).stderr).toMatch(/baseline -> .* \(was /);
    expect(gateOutput(main2).stdout).toMatch(/[Tt]rend/);
    const tagged = await s.taggedBaseline(`http://oauth2:${tokens.accessToken}@127.0.0.1:${gitlab.port}/group/project.git`);
    expect(tagged.map((id) => id.replace('/', '--'))).toEqual([newest]);
  }, 900_000);
});
