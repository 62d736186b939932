/**
 * Issue 24, fresh reads: two machines on one remote (a real `git daemon` on 127.0.0.1, and a bare
 * repository by path). Machine A publishes a run; machine B adds rows to it and another run, and
 * pushes. On A, `sync` fetches and integrates although A has nothing to push; `pull --fetch`
 * materializes the run as the remote has it (9 rows, not the local 7); `list` reads the newest tip
 * and says which; offline, reads say how old their view of the remote is.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isolateGitForSuite, makeTempDir, startGitDaemon, type GitDaemon } from './helpers/git-fixtures.js';
import { cli } from './publish-helpers.js';
import { makeClone, makeRemote, makeRun, refOf, RESULTS_REF } from './sync-helpers.js';
import { git } from './helpers/git-fixtures.js';

isolateGitForSuite();
let daemon: GitDaemon | null = null;
afterEach(async () => {
  await daemon?.stop();
  daemon = null;
});

interface Listed {
  runs: { run_id: string; total: number; where: string }[];
  read: { relation: string; newest: string; fetched: boolean; remote_seen_at: string | null; description: string };
}

async function listJson(dir: string, extra: string[] = []): Promise<Listed> {
  const r = await cli(['list', '--json', ...extra], dir);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed;
}

const rowsOf = async (dir: string) => (await readFile(join(dir, 'index.jsonl'), 'utf8')).split('\n').filter(Boolean).length;

/** A and B cloned from `url`; A published run R (7 rows); B took it, added 2 rows to R and a run S, pushed. */
async function twoMachines(url: string) {
  const a = await makeClone(url, 'a');
  const b = await makeClone(url, 'b');
  const first = await cli(['publish', await makeRun({ experiment: 'shared', rows: 7, minute: 5 }), '--push', '--json'], a);
  expect(first.code, first.stderr).toBe(0);
  const runId = (JSON.parse(first.stdout) as { location: { path: string } }).location.path;
  expect((await cli(['sync'], b)).code).toBe(0);
  const shard = await cli(['publish', await makeRun({ experiment: 'shared', rows: 2, minute: 5, firstRow: 7 }), '--push', '--json'], b);
  expect(shard.code, shard.stderr).toBe(0);
  expect((JSON.parse(shard.stdout) as { location: { path: string } }).location.path).toBe(runId);
  const other = await cli(['publish', await makeRun({ experiment: 'other', rows: 3, minute: 30, seed: 9 }), '--push', '--json'], b);
  expect(other.code, other.stderr).toBe(0);
  const otherId = (JSON.parse(other.stdout) as { location: { path: string } }).location.path;
  return { a, b, runId, otherId };
}

describe('fresh reads over a git daemon on 127.0.0.1', () => {
  it('pull --fetch materializes the run as the remote has it, and says it read the newer remote-tracking branch', async () => {
    const base = await makeTempDir('agentv-daemon');
    await git(base, ['init', '-q', '--bare', 'results.git']);
    daemon = await startGitDaemon(base);
    const { a, runId } = await twoMachines(daemon.url('results.git'));
    // Without a fetch, A's view is what it had: 7 rows, and it says so.
    const stale = join(await makeTempDir('agentv-pull'), 'stale');
    const before = await cli(['pull', runId, '--out', stale], a);
    expect(before.code, before.stderr).toBe(0);
    expect(await rowsOf(stale)).toBe(7);
    expect(before.stdout).toContain('from the local results branch');
    expect(before.stdout).toMatch(/origin last seen (just now|\d+ min ago)/);

    const fresh = join(await makeTempDir('agentv-pull'), 'fresh');
    const after = await cli(['pull', runId, '--fetch', '--out', fresh, '--json'], a);
    expect(after.code, after.stderr).toBe(0);
    const pulled = JSON.parse(after.stdout) as { source: string; read: { relation: string; fetched: boolean } };
    expect(pulled).toMatchObject({ source: 'remote', read: { relation: 'remote-ahead', fetched: true } });
    expect(await rowsOf(fresh)).toBe(9);
    const human = await cli(['pull', runId, '--out', join(await makeTempDir('agentv-pull'), 'h')], a);
    expect(human.stdout).toContain('from the remote-tracking results branch (newer than the local one)');
  }, 120_000);

  it('list --fetch shows the run as the remote has it and the run only the remote has; sync then brings the local branch up with nothing to push', async () => {
    const base = await makeTempDir('agentv-daemon');
    await git(base, ['init', '-q', '--bare', 'results.git']);
    daemon = await startGitDaemon(base);
    const { a, runId, otherId } = await twoMachines(daemon.url('results.git'));

    const offline = await listJson(a);
    expect(offline.runs.map((r) => r.run_id)).not.toContain(otherId);
    expect(offline.runs.find((r) => r.run_id === runId)?.total).toBe(7);
    expect(offline.read).toMatchObject({ fetched: false, relation: 'same' });

    const fetched = await listJson(a, ['--fetch']);
    expect(fetched.read).toMatchObject({ fetched: true, relation: 'remote-ahead', newest: 'remote' });
    expect(fetched.read.description).toMatch(/^read origin\/agentv\/results\/v1 .*newer than the local/);
    expect(fetched.runs.find((r) => r.run_id === runId)).toMatchObject({ total: 9, where: 'both' });
    expect(fetched.runs.find((r) => r.run_id === otherId)).toMatchObject({ where: 'remote' });

    // sync: A has nothing to push, and still takes in what B pushed.
    const localBefore = await refOf(a, RESULTS_REF);
    const s = await cli(['sync', '--json'], a);
    expect(s.code, s.stderr).toBe(0);
    const synced = JSON.parse(s.stdout) as { fetch: { fast_forwards: number }; push: { classification: string } };
    expect(synced.fetch.fast_forwards).toBeGreaterThan(0);
    expect(synced.push.classification).toBe('nothing-to-push');
    expect(await refOf(a, RESULTS_REF)).not.toBe(localBefore);
    expect(await refOf(a, RESULTS_REF)).toBe(await refOf(a, `refs/remotes/origin/agentv/results/v1`));
    const human = await cli(['sync'], a);
    expect(human.stdout).toContain('fetched origin: nothing new');

    // Offline now: the daemon is gone, reads still answer and say how old their view of origin is.
    await daemon.stop();
    daemon = null;
    const after = await listJson(a);
    expect(after.runs.find((r) => r.run_id === runId)?.total).toBe(9);
    expect(after.runs.map((r) => r.run_id)).toContain(otherId);
    expect(after.read.remote_seen_at).not.toBeNull();
    expect(after.read.description).toMatch(/origin last seen (just now|\d+ min ago) \(--fetch to refresh\)/);
    const status = await cli(['status', '--json'], a);
    expect((JSON.parse(status.stdout) as { remote_seen_at: string | null }).remote_seen_at).toBe(after.read.remote_seen_at);
    expect((await cli(['status'], a)).stdout).toMatch(/as of the last fetch or push, (just now|\d+ min ago)/);
    // A fetching read that cannot reach the remote fails plainly (exit 3), it does not pretend.
    const failed = await cli(['list', '--fetch'], a);
    expect(failed.code).toBe(3);
  }, 120_000);
});

describe('fresh reads over a bare remote by path', () => {
  it('sync with nothing to push fetches and fast-forwards both branches; a second sync finds nothing new', async () => {
    const remote = await makeRemote();
    const { a, otherId } = await twoMachines(remote);
    const s = await cli(['sync'], a);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toMatch(/fetched origin: took in what others pushed \(2 branches fast-forwarded\)/);
    expect((await listJson(a)).runs.map((r) => r.run_id)).toContain(otherId);
    const again = await cli(['sync', '--json'], a);
    const r = JSON.parse(again.stdout) as { fetch: { fast_forwards: number; merges: number }; push: { classification: string } };
    expect(r.fetch).toMatchObject({ fast_forwards: 0, merges: 0 });
    expect(r.push.classification).toBe('nothing-to-push');
  }, 120_000);

  it('a machine that never fetched says so, and a remote-only run is read from the tracking ref', async () => {
    const remote = await makeRemote();
    const { b } = await twoMachines(remote);
    const c = await makeClone(remote, 'c');
    const never = await listJson(c);
    expect(never.read.remote_seen_at).toBeNull();
    expect(never.runs).toEqual([]);
    const r = await cli(['list'], c);
    expect(r.stdout).toContain('nothing published yet');
    const fetched = await listJson(c, ['--fetch']);
    expect(fetched.read).toMatchObject({ relation: 'remote-only', newest: 'remote' });
    expect(fetched.runs.length).toBe((await listJson(b)).runs.length);
    // trend over published runs reads the same view, and says so.
    const t = await cli(['trend', '--published', '--json'], c);
    expect(t.code, t.stderr).toBe(0);
    expect((JSON.parse(t.stdout) as { read: string }).read).toMatch(/^read origin\/agentv\/results\/v1 .*no local agentv\/results\/v1/);
  }, 120_000);
});
