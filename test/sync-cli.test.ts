/** The commands as a user runs them: tag, feedback, publish/sync exit codes, drivers, merge-driver. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGit } from '../src/git/index.js';
import { computeTagRevision } from '../src/merge/index.js';
import { runCli } from './helpers/cli.js';
import { git, makeTempDir, testGlobalConfigPath, isolateGitForSuite } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, makeRun, publishRun, refOf, RESULTS_REF, showFile } from './sync-helpers.js';

isolateGitForSuite();

/** Exit code check that shows stderr when it fails. */
async function expectExit(run: Promise<{ code: number; stderr: string }>, code: number): Promise<void> {
  const r = await run;
  expect(r.code, r.stderr).toBe(code);
}

/** Set by published(): the run id export wrote (AgentV's bare form) and its directory on the branch. */
let RUN = '';
let RUN_PATH = '';

async function published(): Promise<{ remote: string; a: string; testId: string }> {
  const remote = await makeRemote();
  const a = await makeClone(remote);
  const res = await publishRun(a, { experiment: 'shared', rows: 4 });
  RUN = res.runId;
  RUN_PATH = res.location.path;
  expect(RUN).toBe('2026-03-14T10-00-00-000Z');
  expect(RUN_PATH).toBe(RUN);
  const index = (await showFile(remote, RESULTS_REF, `${RUN_PATH}/index.jsonl`))!;
  return { remote, a, testId: (JSON.parse(index.split('\n')[0]!) as { test_id: string }).test_id };
}

describe('tag', () => {
  it('adds and removes tags, pushes, keeps tag_revision in step; shows them with no edits', async () => {
    const { remote, a } = await published();
    const add = await runCli(['tag', RUN, '+baseline', '+release-2.1', '+candidate'], { cwd: a });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('pushed to origin');
    const rm = await runCli(['tag', RUN, '-candidate', '--json'], { cwd: a });
    expect(rm.code, rm.stderr).toBe(0);
    const doc = JSON.parse((await showFile(remote, RESULTS_REF, `${RUN_PATH}/tags.json`))!);
    expect(doc.tags).toEqual(['baseline', 'release-2.1']);
    const { tag_revision, ...rest } = doc;
    expect(tag_revision).toBe(computeTagRevision(rest));
    expect(JSON.parse(rm.stdout).document.tag_revision).toBe(tag_revision);

    const show = await runCli(['tag', RUN], { cwd: a });
    expect(show.stdout).toContain('baseline release-2.1');
    expect(show.stdout).toContain(tag_revision);

    // Optimistic concurrency: a stale revision is refused (exit 1), the current one accepted.
    await expectExit(runCli(['tag', RUN, '+x', '--expect-revision', '0000000000000000'], { cwd: a }), 1);
    await expectExit(runCli(['tag', RUN, '+x', '--expect-revision', tag_revision], { cwd: a }), 0);
    // No change: no commit.
    const before = await refOf(a, RESULTS_REF);
    expect((await runCli(['tag', RUN, '+x'], { cwd: a })).stdout).toContain('(unchanged)');
    expect(await refOf(a, RESULTS_REF)).toBe(before);
  });

  it('enforces the limits: at most 20 tags of at most 60 characters (exit 2)', async () => {
    const { a } = await published();
    const many = Array.from({ length: 21 }, (_, i) => `+t${i}`);
    const tooMany = await runCli(['tag', RUN, ...many], { cwd: a });
    expect(tooMany.code, tooMany.stderr).toBe(2);
    expect(tooMany.stderr).toMatch(/at most 20/);
    const long = await runCli(['tag', RUN, `+${'x'.repeat(61)}`], { cwd: a });
    expect(long.code, long.stderr).toBe(2);
    expect(long.stderr).toMatch(/61 characters long; at most 60/);
    const ok = await runCli(['tag', RUN, `+${'y'.repeat(60)}`, '--no-push'], { cwd: a });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('an unknown run is an input error', async () => {
    const { a } = await published();
    const r = await runCli(['tag', 'nope/2026-01-01T00-00-00-000Z', '+x'], { cwd: a });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/is not on agentv\/results\/v1/);
  });
});

describe('feedback', () => {
  it('records feedback per test with the reviewer; unknown tests are refused', async () => {
    const { remote, a, testId } = await published();
    const r = await runCli(['feedback', RUN, testId, 'grader too lenient', '--reviewer', 'ana'], { cwd: a });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse((await showFile(remote, RESULTS_REF, `${RUN_PATH}/feedback.json`))!);
    expect(doc.entries[testId].ana).toMatchObject({ feedback: 'grader too lenient', reviewer: 'ana' });
    expect(doc.updated_at).toBe(doc.entries[testId].ana.updated_at);
    // Option values stay as typed (a digit-only reviewer is not turned into a number).
    await expectExit(runCli(['feedback', RUN, testId, 'second look', '--reviewer', '0012'], { cwd: a }), 0);
    expect(JSON.parse((await showFile(remote, RESULTS_REF, `${RUN_PATH}/feedback.json`))!).entries[testId]['0012'].reviewer).toBe('0012');
    const bad = await runCli(['feedback', RUN, 'no-such-test', 'x'], { cwd: a });
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/has no test "no-such-test"/);
  });

  it('--no-push commits locally and leaves it pending for sync', async () => {
    const { remote, a, testId } = await published();
    await expectExit(runCli(['feedback', RUN, testId, 'later', '--no-push'], { cwd: a }), 0);
    expect(await refOf(a, RESULTS_REF)).not.toBe(await refOf(remote, RESULTS_REF));
    const s = await runCli(['sync', '--json'], { cwd: a });
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).push).toMatchObject({ landed: true, attempts: 1 });
    expect(await refOf(a, RESULTS_REF)).toBe(await refOf(remote, RESULTS_REF));
  });
});

describe('publish and sync exit codes', () => {
  it('publish exits 1 when the same run was published differently elsewhere (set aside), sync exits 3 without a remote', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote);
    const b = await makeClone(remote);
    // B has heard from the remote (empty then), so its publish is concurrent with A's: it does not
    // fetch A's run first (a clone that never heard from it takes the team's tip, and republishing a
    // run it can see is an update: fresh-clone.test.ts).
    expect((await runCli(['sync'], { cwd: b })).code).toBe(0);
    await publishRun(a, { experiment: 'twice', seed: 1 });
    const other = await makeRun({ experiment: 'twice', seed: 2 });
    const r = await runCli(['publish', other, '--push'], { cwd: b });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/conflict: set aside on origin\/agentv\/results-sync\//);
    expect(r.stdout).toMatch(/(?:^|\s)2026-03-14T10-00-00-000Z\/\S+: /m);
    expect(r.stdout).toMatch(/review: git fetch origin agentv\/results-sync\/.* && git diff origin\/agentv\/results\/v1\.\.\.origin\/agentv\/results-sync\//);

    const lonely = await makeTempDir('agentv-lonely');
    await git(lonely, ['init', '-q']);
    await expectExit(runCli(['sync'], { cwd: lonely }), 3);
  });

  it('sync --resolve with a name that is no sync branch name is bad input: exit 2, nothing fetched or written', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote);
    const refsBefore = await git(a, ['for-each-ref']);
    for (const name of ['bad name!', '../../heads/main', 'agentv/results-sync/-x']) {
      const r = await runCli(['sync', '--resolve', name], { cwd: a });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/is not a sync branch name/);
    }
    expect(await git(a, ['for-each-ref'])).toBe(refsBefore);
  });
});

describe('drivers', () => {
  it('install writes only the local config, pointing at this package; uninstall restores it byte for byte', async () => {
    const repo = await makeClone(await makeRemote());
    const config = join(repo, '.git', 'config');
    const before = await readFile(config, 'utf8');
    const globalBefore = await readFile(testGlobalConfigPath(), 'utf8');
    const inst = await runCli(['drivers', 'install', '--json'], { cwd: repo });
    expect(inst.code, inst.stderr).toBe(0);
    const entry = JSON.parse(inst.stdout).entry as string;
    expect(entry).toMatch(/\/dist\/cli\/main\.js$/);
    expect(await git(repo, ['config', '--local', 'merge.agentv-jsonl.driver'])).toBe(`node ${entry} merge-driver jsonl %O %A %B %P`);
    expect(await git(repo, ['config', '--local', 'merge.agentv-json.driver'])).toBe(`node ${entry} merge-driver json %O %A %B %P`);
    expect(await readFile(testGlobalConfigPath(), 'utf8')).toBe(globalBefore);
    await expectExit(runCli(['drivers', 'install'], { cwd: repo }), 0); // idempotent
    // A key of the user's in the same section survives uninstall (and keeps the section).
    await git(repo, ['config', 'merge.agentv-json.recursive', 'binary']);
    await expectExit(runCli(['drivers', 'uninstall'], { cwd: repo }), 0);
    expect(await git(repo, ['config', '--local', 'merge.agentv-json.recursive'])).toBe('binary');
    await git(repo, ['config', '--unset', 'merge.agentv-json.recursive']);
    // (git drops the header itself once its last key is gone, or leaves it; either way it goes.)
    await runGit(['config', '--remove-section', 'merge.agentv-json'], { cwd: repo, okCodes: [0, 128] });
    expect(await readFile(config, 'utf8')).toBe(before);
    await expectExit(runCli(['drivers', 'install'], { cwd: repo }), 0);
    await expectExit(runCli(['drivers', 'uninstall'], { cwd: repo }), 0);
    expect(await readFile(config, 'utf8')).toBe(before);
  });

  it('merge-driver merges the files git hands over: exit 0 clean, 1 conflicted', async () => {
    const dir = await makeTempDir('agentv-driver');
    const f = (name: string, text: string) => writeFile(join(dir, name), text).then(() => join(dir, name));
    const row = (id: string, v = 0) => JSON.stringify({ projection_identity: { id }, test_id: id, v });
    const O = await f('O', `${row('a')}\n`);
    const A = await f('A', `${row('a')}\n${row('b')}\n`);
    const B = await f('B', `${row('a')}\n${row('c')}\n`);
    await expectExit(runCli(['merge-driver', 'jsonl', O, A, B, 'runs/x/2026-01-01/t/index.jsonl']), 0);
    expect(await readFile(A, 'utf8')).toBe(`${row('a')}\n${row('b')}\n${row('c')}\n`);
    const A2 = await f('A2', `${row('a', 1)}\n`);
    const B2 = await f('B2', `${row('a', 2)}\n`);
    await expectExit(runCli(['merge-driver', 'jsonl', O, A2, B2, 'index.jsonl']), 1);
    expect(await readFile(A2, 'utf8')).toContain('<<<<<<< ours');
  });
});
