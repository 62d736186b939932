/**
 * Recovery, listing and cleanup of WIP branches across two clones of one remote (receive.
 * denyNonFastForwards=true, so every push we make must be a fast-forward or a leased delete).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRepo, resolveRef, type Repo } from '../src/git/index.js';
import { publish } from '../src/publish/publish.js';
import { pushBranches } from '../src/sync/push-branches.js';
import { resolveTarget } from '../src/repo/target.js';
import { holdsWipRun } from '../src/wip/clean.js';
import { Checkpointer, cleanWip, finalizeWip, listWip, pushWipBranches, recoverWip, RECOVERY_MARKER, unionRows } from '../src/wip/index.js';
import { runCli } from './helpers/cli.js';
import { git, makeTempDir, makeUserRepoWithRemote, isolateGitForSuite } from './helpers/git-fixtures.js';
import { appendRows, row, testIds } from './helpers/wip-fixtures.js';

isolateGitForSuite();

const AUTHOR = { name: 'WIP Test', email: 'wip@example.invalid' };
const RUN_ID = 'exp/2026-03-01T10-00-00-000Z';

interface TwoMachines {
  a: { work: string; repo: Repo; runDir: string };
  b: { work: string; repo: Repo };
  remote: string;
}

/** Machine A checkpoints a run (3 rows) and pushes its WIP branch; machine B is a fresh clone. */
async function twoMachines(rows = 3): Promise<TwoMachines> {
  const fx = await makeUserRepoWithRemote();
  const repo = await openRepo(fx.work);
  const runDir = join(fx.work, '.agentv/results', RUN_ID);
  appendRows(runDir, 0, rows, { sidecars: true });
  writeFileSync(join(runDir, 'timing.json'), '{"t":1}\n');
  const cp = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'hosta' });
  const r = await cp.checkpoint();
  const pushed = await pushWipBranches(repo, 'origin', [{ ref: r.ref, sha: r.commit }]);
  expect(pushed.classification).toBe('ok');
  const bDir = join(await makeTempDir('machine-b'), 'clone');
  await git(fx.root, ['clone', '-q', fx.remote, bDir]);
  return { a: { work: fx.work, repo, runDir }, b: { work: bDir, repo: await openRepo(bDir) }, remote: fx.remote };
}

describe('wip recover', () => {
  it('materializes a remote checkpoint on another machine, which then continues the same branch', async () => {
    const { a, b, remote } = await twoMachines();
    const listing = await listWip({ repo: b.repo, remote: 'origin' });
    expect(listing.entries).toHaveLength(1);
    expect(listing.entries[0]).toMatchObject({
      branch: 'agentv/wip/hosta/exp--2026-03-01T10-00-00-000Z',
      host: 'hosta',
      runId: RUN_ID,
      rows: 3,
      where: 'remote-only',
      local: null,
    });

    const r = await recoverWip({ repo: b.repo, remote: 'origin', source: RUN_ID, cwd: b.work });
    expect(r).toMatchObject({ runId: RUN_ID, from: 'remote', rows: 3, files: 4, merged: false, duplicatesDropped: 0 });
    expect(r.out).toBe(join(b.work, '.agentv/results', RUN_ID));
    expect(readFileSync(join(r.out, 'index.jsonl'), 'utf8')).toBe(readFileSync(join(a.runDir, 'index.jsonl'), 'utf8'));
    expect(readFileSync(join(r.out, 'raw/t-0001/log.txt'), 'utf8')).toBe('log 1\n');
    expect(readFileSync(join(r.out, 'timing.json'), 'utf8')).toBe('{"t":1}\n');
    expect(JSON.parse(readFileSync(join(r.out, RECOVERY_MARKER), 'utf8'))).toMatchObject({ branch: r.branch, run_id: RUN_ID });
    // The local branch was created at the remote tip.
    expect(await resolveRef(b.repo, `refs/heads/${r.branch}`)).toBe(r.commit);

    // Machine B resumes the eval: its checkpoints continue host A's branch (a fast-forward push).
    appendRows(r.out, 3, 6);
    const cpB = await Checkpointer.open({ repo: b.repo, runDir: r.out, author: AUTHOR, host: 'hostb' });
    expect(cpB.branch).toBe(r.branch);
    const c = await cpB.checkpoint();
    expect(c).toMatchObject({ checkpoint: 2, rows: 6, addedRows: 3, previous: r.commit });
    expect((await pushWipBranches(b.repo, 'origin', [{ ref: c.ref, sha: c.commit }])).classification).toBe('ok');
    expect(await git(remote, ['rev-parse', c.ref])).toBe(c.commit);
  });

  it('refuses to overwrite a different run; merges into the same run without duplicating rows', async () => {
    const { a, b } = await twoMachines(4);
    const other = join(b.work, 'elsewhere');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'index.jsonl'), `${JSON.stringify({ ...row(0), run_id: 'other/run' })}\n`);
    await expect(recoverWip({ repo: b.repo, remote: 'origin', source: RUN_ID, out: other, cwd: b.work })).rejects.toThrow(
      /holds run other\/run, not exp\/2026-03-01T10-00-00-000Z; refusing/,
    );
    expect(readFileSync(join(other, 'index.jsonl'), 'utf8')).toContain('other/run');

    // The same run, further along on disk here (rows 0-5, one of them torn), with its own copy of a sidecar.
    const same = join(b.work, 'same', 'exp', '2026-03-01T10-00-00-000Z');
    appendRows(same, 0, 6, { sidecars: true });
    writeFileSync(join(same, 'index.jsonl'), readFileSync(join(same, 'index.jsonl'), 'utf8') + '{"torn":');
    mkdirSync(join(same, 'raw/t-0000'), { recursive: true });
    writeFileSync(join(same, 'raw/t-0000/log.txt'), 'newer local copy\n');
    const r = await recoverWip({
      repo: b.repo,
      remote: 'origin',
      source: 'refs/remotes/origin/agentv/wip/hosta/exp--2026-03-01T10-00-00-000Z',
      out: same,
      cwd: b.work,
    });
    expect(r.merged).toBe(true);
    expect(testIds(readFileSync(join(same, 'index.jsonl'), 'utf8'))).toEqual(['t-0000', 't-0001', 't-0002', 't-0003', 't-0004', 't-0005']);
    expect(r.duplicatesDropped).toBe(4);
    expect(readFileSync(join(same, 'raw/t-0000/log.txt'), 'utf8')).toBe('newer local copy\n');
    expect(readFileSync(join(same, 'raw/t-0003/log.txt'), 'utf8')).toBe('log 3\n');
    // Nothing but the workspace itself in the parent (the staging folder is gone).
    expect(existsSync(a.runDir)).toBe(true);
  });

  it('unionRows keeps each identity once, in order, and drops a torn last line', () => {
    const withId = (id: string, v: number) => JSON.stringify({ projection_identity: { id }, v });
    const r = unionRows([`${withId('pi_1', 1)}\n${withId('pi_2', 1)}\n`, `${withId('pi_2', 2)}\n${withId('pi_3', 1)}\n{"x"`]);
    expect(r.rows).toBe(3);
    expect(r.dropped).toBe(1);
    expect(
      r.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).projection_identity.id),
    ).toEqual(['pi_1', 'pi_2', 'pi_3']);
  });

  it('reports unknown sources and unknown actions as input errors (exit 2)', async () => {
    const { b } = await twoMachines();
    const missing = await runCli(['wip', 'recover', 'nope/nothing', '--dir', b.work]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no WIP branch holds run "nope\/nothing"/);
    const bad = await runCli(['wip', 'frobnicate', '--dir', b.work]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown command .frobnicate./);
  });
});

describe('wip list / clean and deletion after the final publish', () => {
  it('lists local and remote branches (CLI, --json)', async () => {
    const { a } = await twoMachines();
    const res = await runCli(['wip', 'list', '--json', '--dir', a.work]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { branches: { branch: string; where: string; rows: number; run_id: string; age_seconds: number }[] };
    expect(out.branches).toHaveLength(1);
    expect(out.branches[0]).toMatchObject({ where: 'in-sync', rows: 3, run_id: RUN_ID });
    expect(out.branches[0]!.age_seconds).toBeGreaterThanOrEqual(0);
    const human = await runCli(['wip', 'list', '--dir', a.work]);
    expect(human.stdout).toMatch(/agentv\/wip\/hosta\/exp--2026-03-01T10-00-00-000Z\s+hosta\s+exp\/2026-03-01T10-00-00-000Z\s+3/);
  });

  it('finalize deletes the WIP branch only once the publish is on the remote', async () => {
    const { a, remote } = await twoMachines();
    const target = await resolveTarget({ cwd: a.work });
    const ref = 'refs/heads/agentv/wip/hosta/exp--2026-03-01T10-00-00-000Z';
    writeFileSync(join(a.runDir, 'summary.json'), '{}\n');
    const pub = await publish({ cwd: a.work, run: a.runDir, push: false });
    const early = await finalizeWip({
      repo: a.repo,
      remote: 'origin',
      ref,
      resultsRef: target.resultsRef,
      runPath: pub.location.path,
      resultsCommit: pub.commits.results,
    });
    expect(early.status).toBe('waiting');
    expect(await resolveRef(a.repo, ref)).not.toBeNull();
    expect(await git(remote, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/wip'])).toBe(ref);

    expect((await pushBranches(target)).landed).toBe(true);
    const done = await finalizeWip({
      repo: a.repo,
      remote: 'origin',
      ref,
      resultsRef: target.resultsRef,
      runPath: pub.location.path,
      resultsCommit: pub.commits.results,
    });
    expect(done).toMatchObject({ status: 'deleted', deletedLocal: true, deletedRemote: true });
    expect(await resolveRef(a.repo, ref)).toBeNull();
    expect(await git(remote, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
  });

  it('does not delete a remote WIP branch that another machine moved on', async () => {
    const { a, b, remote } = await twoMachines();
    const r = await recoverWip({ repo: b.repo, remote: 'origin', source: RUN_ID, cwd: b.work });
    appendRows(r.out, 3, 5);
    const c = await (await Checkpointer.open({ repo: b.repo, runDir: r.out, author: AUTHOR })).checkpoint();
    await pushWipBranches(b.repo, 'origin', [{ ref: c.ref, sha: c.commit }]);
    // Machine A publishes its (older) copy and tries to finalize.
    writeFileSync(join(a.runDir, 'summary.json'), '{}\n');
    const pub = await publish({ cwd: a.work, run: a.runDir, push: true });
    expect(pub.push?.landed).toBe(true);
    const target = await resolveTarget({ cwd: a.work });
    const f = await finalizeWip({
      repo: a.repo,
      remote: 'origin',
      ref: c.ref,
      resultsRef: target.resultsRef,
      runPath: pub.location.path,
      resultsCommit: pub.commits.results,
    });
    expect(f.status).toBe('kept');
    expect(f.note).toMatch(/moved on origin/);
    expect(await git(remote, ['rev-parse', c.ref])).toBe(c.commit);
  });

  it('a run of another experiment published under the same bare run id does not count as this WIP run published', async () => {
    const { a } = await twoMachines();
    // Experiment "other" publishes a run whose folder (hence bare run id) equals exp's WIP run's.
    const otherDir = join(a.work, '.agentv/results/other/2026-03-01T10-00-00-000Z');
    appendRows(otherDir, 0, 2);
    writeFileSync(join(otherDir, 'summary.json'), '{}\n');
    const pub = await publish({ cwd: a.work, run: otherDir, push: false });
    expect(pub.location.path).toBe('2026-03-01T10-00-00-000Z');
    const target = await resolveTarget({ cwd: a.work });
    const tip = await resolveRef(a.repo, target.resultsRef);
    expect(await holdsWipRun(a.repo, tip, 'other/2026-03-01T10-00-00-000Z')).toBe(true);
    expect(await holdsWipRun(a.repo, tip, RUN_ID)).toBe(false);
    const dry = await runCli(['wip', 'clean', '--older-than', '0s', '--dry-run', '--dir', a.work]);
    expect(dry.stdout).toMatch(/kept agentv\/wip\/hosta\/exp--2026-03-01T10-00-00-000Z .*: not published/);
  });

  it('clean removes stale published branches, keeps unpublished ones unless forced, and says what it deletes', async () => {
    const { a, remote } = await twoMachines();
    // A second, unpublished run.
    const other = join(a.work, '.agentv/results/exp/2026-03-02T10-00-00-000Z');
    appendRows(other, 0, 2);
    await (await Checkpointer.open({ repo: a.repo, runDir: other, author: AUTHOR, host: 'hosta' })).checkpoint();
    writeFileSync(join(a.runDir, 'summary.json'), '{}\n');
    // Published without the publish's own push (which would end its WIP by row identity at once):
    // pushed later, the run's WIP is what `clean` finds stale and published.
    expect((await publish({ cwd: a.work, run: a.runDir, push: false })).wip).toEqual([]);
    const target = await resolveTarget({ cwd: a.work });
    expect((await pushBranches(target)).landed).toBe(true);

    const recent = await cleanWip({ repo: a.repo, remote: 'origin', resultsRef: target.resultsRef, olderThanMs: 3600_000 });
    expect(recent.decisions.every((d) => d.action === 'kept' && d.reason === 'recent')).toBe(true);

    const dry = await runCli(['wip', 'clean', '--older-than', '0s', '--dry-run', '--dir', a.work]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/would delete agentv\/wip\/hosta\/exp--2026-03-01T10-00-00-000Z .*: published/);
    expect(dry.stdout).toMatch(/kept agentv\/wip\/hosta\/exp--2026-03-02T10-00-00-000Z .*: not published/);

    const res = await runCli(['wip', 'clean', '--older-than', '0s', '--dir', a.work]);
    expect(res.stdout).toMatch(/deleted agentv\/wip\/hosta\/exp--2026-03-01T10-00-00-000Z/);
    expect(await git(remote, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
    expect(await git(a.work, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/wip'])).toBe(
      'refs/heads/agentv/wip/hosta/exp--2026-03-02T10-00-00-000Z',
    );

    const forced = await runCli(['wip', 'clean', '--older-than', '0s', '--force-unpublished', '--dir', a.work]);
    expect(forced.stdout).toMatch(
      /deleted agentv\/wip\/hosta\/exp--2026-03-02T10-00-00-000Z \(run exp\/2026-03-02T10-00-00-000Z, 2 rows, .*\): NOT published \(--force-unpublished\)/,
    );
    expect(await git(a.work, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
  });
});
