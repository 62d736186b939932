/**
 * Feedback per reviewer (issue 12): entries are keyed by (test, reviewer), so notes of several
 * reviewers on one test survive however they interleave; one reviewer's concurrent divergent
 * edits are a genuine conflict; a sequential edit names the revision it replaces and an edit made
 * against a stale revision is refused. All through the CLI, over a real bare remote.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, publishRun, refOf, RESULTS_REF, showFile } from './sync-helpers.js';

isolateGitForSuite();

/** Set by twoClones(): the run id export wrote (AgentV's bare form) and its directory on the branch. */
let RUN = '';
let RUN_PATH = '';

async function twoClones(): Promise<{ remote: string; a: string; b: string; testId: string }> {
  const remote = await makeRemote();
  const a = await makeClone(remote, 'a');
  const b = await makeClone(remote, 'b');
  const res = await publishRun(a, { experiment: 'shared', rows: 3 });
  RUN = res.runId;
  RUN_PATH = res.location.path;
  expect(RUN_PATH).toBe('2026-03-14T10-00-00-000Z');
  const index = (await showFile(remote, RESULTS_REF, `${RUN_PATH}/index.jsonl`))!;
  return { remote, a, b, testId: (JSON.parse(index.split('\n')[0]!) as { test_id: string }).test_id };
}

async function feedbackDoc(remote: string): Promise<{ entries: Record<string, Record<string, { feedback: string; revision: string; replaces?: string }>> }> {
  return JSON.parse((await showFile(remote, RESULTS_REF, `${RUN_PATH}/feedback.json`))!);
}

describe('feedback per reviewer', () => {
  it('two reviewers on one test from two clones both survive, one after the other and offline-then-synced', async () => {
    const { remote, a, b, testId } = await twoClones();
    const first = await runCli(['feedback', RUN, testId, 'grader too lenient', '--reviewer', 'ana'], { cwd: a });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['feedback', RUN, testId, 'expected output is stale', '--reviewer', 'bo'], { cwd: b });
    expect(second.code, second.stderr).toBe(0);
    let doc = await feedbackDoc(remote);
    expect(doc.entries[testId]!.ana!.feedback).toBe('grader too lenient');
    expect(doc.entries[testId]!.bo!.feedback).toBe('expected output is stale');

    // Both write offline at once (no push), then both sync: the notes merge, no sync branch.
    await runCli(['feedback', RUN, testId, 'ana again', '--reviewer', 'cy', '--no-push'], { cwd: a });
    await runCli(['feedback', RUN, testId, 'bo again', '--reviewer', 'di', '--no-push'], { cwd: b });
    expect((await runCli(['sync'], { cwd: a })).code).toBe(0);
    const s = await runCli(['sync'], { cwd: b });
    expect(s.code, s.stdout + s.stderr).toBe(0);
    doc = await feedbackDoc(remote);
    expect(Object.keys(doc.entries[testId]!).sort()).toEqual(['ana', 'bo', 'cy', 'di']);
    expect(await git(remote, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/results-sync/'])).toBe('');
  });

  it("one reviewer's concurrent divergent edits go to a sync branch holding both versions", async () => {
    const { remote, a, b, testId } = await twoClones();
    await runCli(['feedback', RUN, testId, 'first take', '--reviewer', 'ana'], { cwd: a });
    // b catches up by writing a note of its own (a pushing edit fetches and integrates first).
    expect((await runCli(['feedback', RUN, testId, 'seen', '--reviewer', 'bo'], { cwd: b })).code).toBe(0);
    await runCli(['feedback', RUN, testId, 'version from a', '--reviewer', 'ana', '--no-push'], { cwd: a });
    await runCli(['feedback', RUN, testId, 'version from b', '--reviewer', 'ana', '--no-push'], { cwd: b });
    expect((await runCli(['sync'], { cwd: a })).code).toBe(0);
    const s = await runCli(['sync'], { cwd: b });
    expect(s.code, s.stdout + s.stderr).toBe(1);
    expect(s.stdout).toMatch(/entries\.[^ ]+\.ana\.feedback/);
    const branches = (await git(remote, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/results-sync/'])).trim().split('\n').filter(Boolean);
    expect(branches).toHaveLength(1);
    const onSync = JSON.parse((await showFile(remote, branches[0]!, `${RUN_PATH}/feedback.json`))!);
    expect(onSync.entries[testId].ana.feedback).toBe('version from b');
    expect((await feedbackDoc(remote)).entries[testId]!.ana!.feedback).toBe('version from a');
  });

  it('a sequential edit carries the revision it replaces; a stale expected revision is refused (exit 1)', async () => {
    const { remote, a, b, testId } = await twoClones();
    const one = await runCli(['feedback', RUN, testId, 'v1', '--reviewer', 'ana', '--json'], { cwd: a });
    expect(one.code, one.stderr).toBe(0);
    const r1 = JSON.parse(one.stdout).entry.revision as string;
    expect(r1).toMatch(/^[0-9a-f]{16}$/);
    const two = await runCli(['feedback', RUN, testId, 'v2', '--reviewer', 'ana', '--expect-revision', r1, '--json'], { cwd: b });
    expect(two.code, two.stderr).toBe(0);
    const entry = (await feedbackDoc(remote)).entries[testId]!.ana!;
    expect(entry.feedback).toBe('v2');
    expect(entry.replaces).toBe(r1);
    const before = await refOf(remote, RESULTS_REF);
    const stale = await runCli(['feedback', RUN, testId, 'v3 from a stale read', '--reviewer', 'ana', '--expect-revision', r1], { cwd: a });
    expect(stale.code, stale.stderr).toBe(1);
    expect(stale.stderr).toMatch(/changed since revision/);
    expect(await refOf(remote, RESULTS_REF)).toBe(before);
  });

  it('reads notes back: all of a run, one test, --json; an unknown test filter prints none', async () => {
    const { a, testId } = await twoClones();
    await runCli(['feedback', RUN, testId, 'line one\nline two', '--reviewer', 'ana'], { cwd: a });
    await runCli(['feedback', RUN, testId, 'short', '--reviewer', 'bo'], { cwd: a });
    const all = await runCli(['feedback', RUN], { cwd: a });
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain(`${testId}  ana`);
    expect(all.stdout).toContain('    line two');
    expect(all.stdout).toContain(`${testId}  bo`);
    const json = await runCli(['feedback', RUN, testId, '--json'], { cwd: a });
    const notes = JSON.parse(json.stdout).notes as { reviewer: string; test_id: string }[];
    expect(notes.map((n) => n.reviewer).sort()).toEqual(['ana', 'bo']);
    expect(notes.every((n) => n.test_id === testId)).toBe(true);
    expect((await runCli(['feedback', RUN, 'nope'], { cwd: a })).stdout.trim()).toBe('(no feedback)');
  });
});
