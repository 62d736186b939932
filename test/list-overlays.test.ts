/**
 * `list` shows each run's tags and how many reviewer notes it has, and `list --tag baseline`
 * finds the baseline run (issue 12): read in one batch from the results branch, through the CLI.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { isolateGitForSuite } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, publishRun, showFile, RESULTS_REF } from './sync-helpers.js';

isolateGitForSuite();

describe('list with tags and feedback', () => {
  it('shows tags and note counts, and --tag filters (every given tag must be present)', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote);
    const first = await publishRun(a, { experiment: 'nightly', rows: 2 });
    const second = await publishRun(a, { experiment: 'nightly', rows: 2, minute: 30 });
    const ids = [first.runId, second.runId];
    expect(new Set(ids).size).toBe(2);
    expect((await runCli(['tag', ids[0]!, '+baseline', '+release'], { cwd: a })).code).toBe(0);
    expect((await runCli(['tag', ids[1]!, '+release'], { cwd: a })).code).toBe(0);
    const index = (await showFile(remote, RESULTS_REF, `${first.location.path}/index.jsonl`))!;
    const testId = (JSON.parse(index.split('\n')[0]!) as { test_id: string }).test_id;
    expect((await runCli(['feedback', ids[0]!, testId, 'looks right', '--reviewer', 'ana'], { cwd: a })).code).toBe(0);

    const all = JSON.parse((await runCli(['list', '--json'], { cwd: a })).stdout) as { runs: { run_id: string; tags: string[]; feedback_notes: number }[] };
    const byId = new Map(all.runs.map((r) => [r.run_id, r]));
    expect(byId.get(ids[0]!)).toMatchObject({ tags: ['baseline', 'release'], feedback_notes: 1 });
    expect(byId.get(ids[1]!)).toMatchObject({ tags: ['release'], feedback_notes: 0 });

    const baseline = JSON.parse((await runCli(['list', '--tag', 'baseline', '--json'], { cwd: a })).stdout) as { runs: { run_id: string }[] };
    expect(baseline.runs.map((r) => r.run_id)).toEqual([ids[0]]);
    const both = JSON.parse((await runCli(['list', '--tag', 'release', '--tag', 'baseline', '--json'], { cwd: a })).stdout) as { runs: { run_id: string }[] };
    expect(both.runs.map((r) => r.run_id)).toEqual([ids[0]]);
    const none = await runCli(['list', '--tag', 'nope'], { cwd: a });
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('no runs match');

    const text = await runCli(['list'], { cwd: a });
    expect(text.stdout).toContain('tags, feedback');
    expect(text.stdout).toMatch(/baseline release, 1 note/);
  });
});
