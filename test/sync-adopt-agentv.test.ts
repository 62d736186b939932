/**
 * `sync` adopts the runs AgentV parked on `agentv/results-sync/*` (what 5.x pushes when its merge
 * fails, named `<utc>-<branch slug>-<rand6>`): their rows join the results branch through our
 * merge, the branch is deleted on the remote with a lease on the tip we saw, and here; one that
 * moved since is left where it is; one whose content does not merge stays, named by `status` and
 * `list`. The parked branches are made as AgentV makes them: a commit of the results branch that
 * diverged from the remote, pushed under its own name with a plain push.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, git, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { catalogRows, makeClone, makeRemote, publishRun, RESULTS_REF, refOf } from './sync-helpers.js';
import { finishAdoption, mergeSyncBranches } from '../src/sync/adopt-agentv.js';
import { pushBranches } from '../src/sync/push-branches.js';
import { resolveTarget } from '../src/repo/target.js';

const parkedName = (rand: string) => `agentv/results-sync/20261127T120000Z-agentv-results-v1-${rand}`;

/** A run committed in `clone` that the remote does not have, parked as AgentV 5.x parks it; the clone's branch goes back to the remote's tip. */
async function park(clone: string, experiment: string, rand: string, minute: number): Promise<{ branch: string; tip: string; runId: string }> {
  await git(clone, ['fetch', '-q', 'origin']);
  const pub = await publishRun(clone, { experiment, rows: 2, minute }, { push: false });
  const tip = (await refOf(clone, RESULTS_REF))!;
  const branch = parkedName(rand);
  await git(clone, ['push', '-q', 'origin', `${tip}:refs/heads/${branch}`]);
  const remoteTip = (await git(clone, ['rev-parse', 'origin/agentv/results/v1'])).trim();
  await git(clone, ['update-ref', RESULTS_REF, remoteTip, tip]);
  return { branch, tip, runId: pub.runId };
}

async function remoteSyncBranches(remote: string): Promise<string[]> {
  const out = await git(remote, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/agentv/results-sync/']);
  return out.split('\n').filter(Boolean);
}

describe("sync adopts AgentV's parked runs", () => {
  let restoreEnv: () => void = () => {};
  beforeAll(() => {
    restoreEnv = useIsolatedGitEnv();
  });
  afterAll(async () => {
    restoreEnv();
    await cleanupTempDirs();
  });

  it('lands a parked run through the row merge and deletes the branch on the remote; one that does not merge stays, named by status and list', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote, 'a');
    expect((await publishRun(a, { experiment: 'first' })).push).toMatchObject({ landed: true });
    const parked = await park(a, 'parked', 'a1b2c3', 1);
    // The remote moves on after the run was parked (another machine's publish).
    const b = await makeClone(remote, 'b');
    await git(b, ['fetch', '-q', 'origin']);
    const later = (await publishRun(b, { experiment: 'later', minute: 2 })).push;
    expect(later, JSON.stringify(later)).toMatchObject({ landed: true });
    // A parked commit whose content cannot merge: a file both sides hold with different bytes.
    const c = await makeClone(remote, 'c');
    await git(c, ['fetch', '-q', 'origin']);
    await git(c, ['checkout', '-q', '-b', 'x', 'origin/agentv/results/v1']);
    await writeFile(join(c, 'NOTES.md'), 'theirs\n');
    await git(c, ['add', 'NOTES.md']);
    await git(c, ['commit', '-q', '--no-gpg-sign', '-m', 'notes']);
    const stuck = parkedName('zzzzzz');
    await git(c, ['push', '-q', 'origin', `HEAD:refs/heads/${stuck}`]);
    await git(c, ['reset', '-q', '--hard', 'origin/agentv/results/v1']);
    await writeFile(join(c, 'NOTES.md'), 'ours\n');
    await git(c, ['add', 'NOTES.md']);
    await git(c, ['commit', '-q', '--no-gpg-sign', '-m', 'notes, another version']);
    await git(c, ['push', '-q', 'origin', 'HEAD:agentv/results/v1']);
    // Another machine's set-aside results with their artifacts twin: landing the rows alone would
    // leave pointers to payloads the artifacts branch lacks, so sync leaves the pair to --resolve.
    const twin = parkedName('t0t0t0');
    await git(c, ['push', '-q', 'origin', `${parked.tip}:refs/heads/${twin}`, `${parked.tip}:refs/heads/agentv/artifacts-sync/${twin.split('/').pop()}`]);

    const d = await makeClone(remote, 'd');
    const r = await runCli(['sync', '--json'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      sync_branches: { adopted: { branch: string; deleted_remote: boolean }[]; kept: { branch: string; reason: string }[] };
    };
    expect(out.sync_branches.adopted).toEqual([expect.objectContaining({ branch: parked.branch, deleted_remote: true })]);
    // NOTES.md is no run: the branch is refused whatever the results branch holds there.
    expect(out.sync_branches.kept).toEqual([expect.objectContaining({ branch: stuck, reason: expect.stringContaining('NOTES.md is outside the run layout') })]);

    // Every run is on the remote's results branch, the adopted branch is gone, the stuck one stays.
    const ids = (await catalogRows(remote, RESULTS_REF)).map((x) => x.run_id);
    expect(ids).toContain(parked.runId);
    // Runs, not the branch: the parked commit is not in the results branch's history, its run is.
    expect(
      await git(remote, ['merge-base', '--is-ancestor', parked.tip, RESULTS_REF]).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    expect((await git(remote, ['rev-list', '--max-parents=0', RESULTS_REF])).trim().split('\n')).toHaveLength(1);
    expect(await remoteSyncBranches(remote)).toEqual([twin, stuck]);
    expect(await git(d, ['for-each-ref', '--format=%(refname)', 'refs/remotes/origin/agentv/results-sync/'])).toBe(
      `refs/remotes/origin/${twin}\nrefs/remotes/origin/${stuck}`,
    );

    // What stays is named: status (with its resolve command) and list.
    const status = JSON.parse((await runCli(['status', '--json'], { cwd: d })).stdout);
    expect(status.extra['sync-branches'].open).toEqual([
      expect.objectContaining({ branch: twin, seen_from: 'remote' }),
      expect.objectContaining({ branch: stuck, seen_from: 'remote', first_conflict: expect.stringContaining('NOTES.md') }),
    ]);
    const list = await runCli(['list', '--json'], { cwd: d });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).sync_branches).toEqual([expect.objectContaining({ branch: twin }), expect.objectContaining({ branch: stuck })]);
    const text = await runCli(['list'], { cwd: d });
    expect(text.stderr).toContain(stuck);
    // `git fsck` on the remote: nothing dangling was referenced, nothing broken.
    await git(remote, ['fsck', '--no-progress']);
  });

  it('deletes only the tip it saw: a parked branch that moved after the merge stays on the remote at its new tip', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote, 'a');
    expect((await publishRun(a, { experiment: 'first' })).push).toMatchObject({ landed: true });
    const parked = await park(a, 'parked', 'q1w2e3', 1);
    const d = await makeClone(remote, 'd');
    const target = await resolveTarget({ cwd: d });
    await git(d, ['fetch', '-q', 'origin', `+${RESULTS_REF}:refs/remotes/origin/agentv/results/v1`]);
    await git(d, ['update-ref', RESULTS_REF, 'refs/remotes/origin/agentv/results/v1']);
    const plan = await mergeSyncBranches(target);
    expect(plan.merged.map((m) => m.branch)).toEqual([parked.branch]);
    // AgentV adds another run to its parked branch meanwhile (a fast-forward of it).
    await git(a, ['update-ref', RESULTS_REF, parked.tip]);
    const more = await publishRun(a, { experiment: 'more', rows: 2, minute: 3 }, { push: false });
    const moved = (await refOf(a, RESULTS_REF))!;
    await git(a, ['push', '-q', 'origin', `${moved}:refs/heads/${parked.branch}`]);
    const push = await pushBranches(target, {});
    expect(push.landed).toBe(true);
    const done = await finishAdoption(target, plan, push);
    expect(done.adopted).toEqual([expect.objectContaining({ branch: parked.branch, deletedRemote: false })]);
    expect((await git(remote, ['rev-parse', `refs/heads/${parked.branch}`])).trim()).toBe(moved);
    // The daemon's next sync takes in what was added and only then deletes it.
    const again = await runCli(['daemon', '--once', '--log-format', 'json'], { cwd: d });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(parked.branch);
    expect(await remoteSyncBranches(remote)).toEqual([]);
    expect((await catalogRows(remote, RESULTS_REF)).map((x) => x.run_id)).toContain(more.runId);
  });
});
