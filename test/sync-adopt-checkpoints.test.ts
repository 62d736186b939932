/**
 * No AgentV run left on a side branch (issue 50 item 3): `sync` adopts the finished run in an
 * AgentV checkpoint branch (`agentv/wip/<host>/<run dir>`) and deletes the branch on the remote;
 * an unfinished one stays, reported with why. The runs are real: one `eval` of the sample suite per
 * AgentV line. The checkpoint branches are built exactly as both lines' `pushWipCheckpoint` writes
 * them (the client only checkpoints every 30 s, so a short eval never leaves one by itself): a
 * worktree of the results branch, the run workspace copied to where its publish puts it (5.x:
 * `<run_id>/`; 4.42: `runs/<experiment>/<timestamp>/`), AgentV's own `.gitattributes` written,
 * `git add --all`, `git commit --amend` of the results tip, `git push --force`.
 */
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachClient, type AgentVClientCase } from './helpers/agentv-client.js';
import { runCli } from './helpers/cli.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, makeRun, publishRun, RESULTS_REF } from './sync-helpers.js';
import { appendRows } from './helpers/wip-fixtures.js';
import { AGENTV_GITATTRIBUTES } from '../src/layout/branch-layout.js';

isolateGitForSuite();

/** A checkpoint of `runDir` at `dest` on `agentv/wip/<host>/<name>`, as AgentV's checkpoint loop pushes it. */
async function checkpoint(
  remote: string,
  runDir: string,
  dest: string,
  name: string,
  edit?: (dir: string) => Promise<void>,
  host = 'ci-host-7',
): Promise<string> {
  const clone = await makeClone(remote, 'agentv-machine');
  await git(clone, ['fetch', '-q', 'origin']);
  const branch = `agentv/wip/${host}/${name}`;
  const wt = join(await makeTempDir('agentv-wip'), 'repo');
  await git(clone, ['worktree', 'add', '-q', '-B', branch, wt, 'origin/agentv/results/v1']);
  await rm(join(wt, dest), { recursive: true, force: true });
  await cp(runDir, join(wt, dest), { recursive: true });
  if (edit) await edit(join(wt, dest));
  await writeFile(join(wt, '.gitattributes'), AGENTV_GITATTRIBUTES);
  await git(wt, ['add', '--all']);
  await git(wt, ['commit', '-q', '--no-gpg-sign', '--amend', '-m', `wip(results): checkpoint ${branch} 2026-03-14T10:00:00.000Z`]);
  await git(wt, ['push', '-q', '--force', 'origin', branch]);
  return branch;
}

async function remoteWip(remote: string): Promise<string[]> {
  return (await git(remote, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/agentv/wip/'])).split('\n').filter(Boolean).sort();
}

describeEachClient('sync adopts the finished run of an AgentV checkpoint branch', (client: AgentVClientCase) => {
  let remote: string;
  let runDir: string;
  let dest: string;
  let name: string;
  let published: string;

  beforeAll(async () => {
    const project = await client.makeProject();
    runDir = await client.evalRun(project, { experiment: 'demo' });
    name = basename(runDir);
    dest = client.name === 'agentv' ? name : `runs/demo/${name}`;
    remote = await makeRemote();
    const a = await makeClone(remote, 'a');
    const r = await publishRun(a, { experiment: 'first', rows: 2 });
    expect(r.push).toMatchObject({ landed: true });
    published = r.runId;
  }, 240_000);

  it('takes the finished run in, deletes its checkpoint branch, and leaves an unfinished one with the reason', async () => {
    const done = await checkpoint(remote, runDir, dest, name);
    const partialName = `${name}-partial`;
    const partialDest = client.name === 'agentv' ? partialName : `runs/demo/${partialName}`;
    const partial = await checkpoint(remote, runDir, partialDest, partialName, async (dir) => {
      if (client.name === 'agentv-stable') return rm(join(dir, 'timing.json'));
      // The stub 5.x writes before the first test: no test counted yet.
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as { counts: { total_tests: number } };
      summary.counts.total_tests = 0;
      await writeFile(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
    });
    expect(await remoteWip(remote)).toEqual([done, partial].sort());

    const d = await makeClone(remote, 'd');
    const r = await runCli(['sync', '--json'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      checkpoints: { adopted: { branch: string; deleted_remote: boolean }[]; kept: { branch: string; reason: string }[] };
    };
    expect(out.checkpoints.adopted).toEqual([expect.objectContaining({ branch: done, deleted_remote: true })]);
    expect(out.checkpoints.kept).toEqual([expect.objectContaining({ branch: partial, reason: expect.stringContaining('not finished') })]);
    expect(await remoteWip(remote)).toEqual([partial]);

    // The run is on the remote's results branch where its writer's Dashboard looks, byte for byte;
    // the unfinished one, and the checkpoint's .gitattributes, are not; nothing was lost.
    const files = (await git(remote, ['ls-tree', '-r', '--name-only', RESULTS_REF])).split('\n');
    expect(files.some((f) => f.startsWith(`${dest}/`))).toBe(true);
    expect(files.some((f) => f.startsWith(`${partialDest}/`))).toBe(false);
    const main = client.name === 'agentv' ? 'summary.json' : 'benchmark.json';
    expect(await git(remote, ['show', `${RESULTS_REF}:${dest}/${main}`])).toBe((await readFile(join(runDir, main), 'utf8')).replace(/\n$/, ''));
    expect(await git(remote, ['show', `${RESULTS_REF}:.gitattributes`])).not.toBe(AGENTV_GITATTRIBUTES.replace(/\n$/, ''));
    const list = JSON.parse((await runCli(['list', '--json'], { cwd: d })).stdout) as { runs: { run_id: string }[] };
    expect(list.runs.map((x) => x.run_id)).toContain(published);
    expect(list.runs.length).toBe(2);
    expect((await git(remote, ['rev-list', '--max-parents=0', RESULTS_REF])).split('\n')).toHaveLength(1);

    // A second sync: the landed run is not taken twice; the unfinished one is still left.
    const before = await git(remote, ['rev-parse', RESULTS_REF]);
    const again = JSON.parse((await runCli(['sync', '--json'], { cwd: d })).stdout) as typeof out;
    expect(again.checkpoints.adopted).toEqual([]);
    expect(again.checkpoints.kept.map((k) => k.branch)).toEqual([partial]);
    expect(await git(remote, ['rev-parse', RESULTS_REF])).toBe(before);
  }, 120_000);

  it('never counts a checkpoint as landed because another run of the same name did (its branch is the only copy)', async () => {
    // Two runs whose directories share a last segment: the first taken in lands at its path;
    // the other, at another path, has not landed, so its branch is not deleted as if it had.
    const twin = `${name}-twin`;
    const first = client.name === 'agentv' ? twin : `runs/demo/${twin}`;
    const other = client.name === 'agentv' ? `runs/demo/${twin}` : `runs/other/${twin}`;
    const a = await checkpoint(remote, runDir, first, twin, undefined, 'host-a');
    const b = await checkpoint(remote, runDir, other, twin, undefined, 'host-b');
    const d = await makeClone(remote, 'twin');
    const r = await runCli(['sync', '--json'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    const files = (await git(remote, ['ls-tree', '-r', '--name-only', RESULTS_REF])).split('\n');
    expect(files.some((f) => f.startsWith(`${first}/`))).toBe(true);
    expect((await remoteWip(remote)).includes(a)).toBe(false);
    // b's run is on the results branch at its own path, or b is still on the remote.
    const landed = files.some((f) => f.startsWith(`${other}/`));
    expect(landed || (await remoteWip(remote)).includes(b)).toBe(true);
    if (client.name === 'agentv-stable') expect(landed).toBe(true);
  }, 120_000);
});

describe('the daemon publishes the finished run of our own checkpoint branch a lost machine left', () => {
  it('publishes it from the branch, which the publish then ends; an unfinished one is left and logged', async () => {
    const remote = await makeRemote();
    const lost = await makeClone(remote, 'lost');
    expect((await publishRun(lost, { experiment: 'first', rows: 2 })).push).toMatchObject({ landed: true });
    // The lost machine checkpointed a finished run (a bundle with its summary) and an unfinished one, then went away.
    const finished = await makeRun({ experiment: 'nightly', rows: 3, minute: 5 });
    const r1 = await runCli(['wip', 'checkpoint', finished, '--push'], { cwd: lost, env: { AGENTV_RESULTS_HOST: 'lost' } });
    expect(r1.code, r1.stderr).toBe(0);
    const unfinished = join(await makeTempDir('agentv-inprogress'), 'nightly', 'run-9');
    appendRows(unfinished, 0, 2);
    const r2 = await runCli(['wip', 'checkpoint', unfinished, '--push'], { cwd: lost, env: { AGENTV_RESULTS_HOST: 'lost' } });
    expect(r2.code, r2.stderr).toBe(0);
    const before = await remoteWip(remote);
    expect(before).toHaveLength(2);

    const d = await makeClone(remote, 'd');
    const run = await runCli(['daemon', '--once', '--log-format', 'json'], { cwd: d });
    expect(run.code, run.stderr).toBe(0);
    const left = await remoteWip(remote);
    expect(left, `${run.stderr}\n${run.stdout}`).toHaveLength(1);
    expect(run.stderr).toContain('own checkpoint branches');
    expect(run.stderr).toContain('not finished');
    // The finished run is on the results branch (listed beside the first), its branch gone.
    const list = JSON.parse((await runCli(['list', '--json'], { cwd: d })).stdout) as { runs: { run_id: string; experiment?: string }[] };
    expect(list.runs).toHaveLength(2);
    expect(list.runs.some((x) => x.experiment === 'nightly')).toBe(true);
  }, 120_000);
});
