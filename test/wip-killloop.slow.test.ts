/**
 * kill -9 at random points (issue: "repeat 50 times"): `exec`, `wip checkpoint --watch` and the
 * daemon are SIGKILLed at a random moment while a run is being written and checkpointed. After
 * every kill: no corrupt ref and `git fsck` clean (here and on the remote), the WIP branch holds
 * exactly a prefix of index.jsonl made of complete rows (every row written before the last
 * completed checkpoint is recoverable), recovery gives back those rows once each, and — every few
 * iterations — resuming the run and publishing it yields every row exactly once.
 *
 * Iterations: AGENTV_KILL_ITERATIONS (default 12, what `npm run test:all` runs; `npm run test:soak`
 * runs 50). A full-matrix suite (test/tiers.mjs): the pull-request tier's kill loop is
 * publish-crash.slow.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
// Deterministic per seed, so a failing iteration can be replayed (AGENTV_KILL_SEED).
import { rng } from '../bench/synthetic.mjs';
import { lsTree, openRepo, readBlobs, resolveRef, type Repo } from '../src/git/index.js';
import { publish } from '../src/publish/publish.js';
import { parseWipMeta, recoverWip, wipBranch } from '../src/wip/index.js';
import { git, gitsRunningIn, initRepo, makeTempDir, makeUserRepoWithRemote, isolateGitForSuite } from './helpers/git-fixtures.js';
import { killPid, sleep, startCli, startProcess, testIds, waitFor, WRITER, type Proc } from './helpers/wip-fixtures.js';

const ITERATIONS = Number(process.env.AGENTV_KILL_ITERATIONS ?? 12);
const ROWS = 40;

isolateGitForSuite();
const procs: Proc[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) await p.stop(2_000);
  for (const pid of pids.splice(0)) killPid(pid);
});

async function capturedIndex(repo: Repo, commit: string): Promise<string> {
  const segs = (await lsTree(repo, commit, { path: 'index/', recursive: true })).sort((a, b) => (a.path < b.path ? -1 : 1));
  const blobs = await readBlobs(
    repo,
    segs.map((s) => s.sha),
  );
  return segs.map((s) => blobs.get(s.sha)!.toString('utf8')).join('');
}

const seq = (n: number) => Array.from({ length: n }, (_, i) => `t-${String(i).padStart(4, '0')}`);

it(`survives kill -9 of exec / wip checkpoint / the daemon at random points (${ITERATIONS} iterations)`, async () => {
  const seed = Number(process.env.AGENTV_KILL_SEED ?? 20260301);
  const random = rng(seed);
  const shared = await makeUserRepoWithRemote();
  const sharedRepo = await openRepo(shared.work);
  const runs = await makeTempDir('kill-runs');
  const stats = { exec: 0, checkpoint: 0, daemon: 0, withCheckpoint: 0, killedAfterCheckpoint: 0, published: 0 };

  for (let i = 0; i < ITERATIONS; i++) {
    const kind = (['exec', 'exec', 'exec', 'checkpoint', 'daemon'] as const)[i % 5]!;
    stats[kind]++;
    // Counted from the moment the victim is up (a loaded CI machine starts node slowly), so the
    // kills land while rows are being written and checkpointed, from right away to well after.
    const killAfter = Math.floor(random() * 1_300);
    const ts = `2026-04-01T10-00-${String(i % 60).padStart(2, '0')}-${String(i).padStart(3, '0')}Z`;
    // The daemon gets a repository of its own: a daemon killed -9 holds its lock until it goes stale.
    const work = kind === 'daemon' ? await initRepo() : shared.work;
    const repo = kind === 'daemon' ? await openRepo(work) : sharedRepo;
    const runDir = join(kind === 'daemon' ? join(work, '.agentv/results') : runs, 'kill', ts);
    const pidFile = `${runDir}.pid`;
    const env = { AGENTV_RESULTS_HOST: 'killhost' };
    const writerArgs = [WRITER, runDir, '--rows', String(ROWS), '--delay-ms', '12', '--sidecars', '--no-summary', '--pid-file', pidFile];
    let victim: Proc;
    let writer: Proc | null = null;
    if (kind === 'exec') {
      const push = i % 2 === 0 ? '--push' : '--no-push';
      victim = startCli(
        ['exec', '--out', runDir, '--interval', '0.05', '--every-rows', '2', push, '--', process.execPath, ...writerArgs, '--die-with-parent'],
        { cwd: work, env },
      );
    } else {
      writer = startProcess(process.execPath, writerArgs);
      procs.push(writer);
      await waitFor('the run to start', () => existsSync(join(runDir, 'index.jsonl')), 30_000, 10);
      victim =
        kind === 'checkpoint'
          ? startCli(['wip', 'checkpoint', runDir, '--watch', '--interval', '0.05', '--every-rows', '2', '--no-push', '--dir', work], { cwd: work, env })
          : startCli(['daemon', '--interval', '0.05', '--every-rows', '2', '--no-push', '--scan-interval', '0.1'], { cwd: work, env });
    }
    procs.push(victim);
    const ready = kind === 'exec' ? /command started/ : kind === 'daemon' ? /daemon started/ : /checkpoint \d+ of/;
    await waitFor(`${kind} to start`, () => ready.test(victim.stderr() + victim.stdout()) || victim.done, 20_000, 10);
    const ref = `refs/heads/${wipBranch('killhost', `kill/${ts}`)}`;
    // Every other iteration kills only once a checkpoint has completed (a positive signal, not a
    // rate that load changes): such a checkpoint must survive the kill.
    const afterCheckpoint = i % 2 === 1;
    if (afterCheckpoint) {
      await waitFor('the first checkpoint', async () => victim.done || (await resolveRef(repo, ref)) !== null, 20_000, 10);
      await sleep(Math.floor(killAfter / 6));
    } else {
      await sleep(killAfter);
    }
    const aliveAtKill = !victim.done;
    victim.kill('SIGKILL');
    await victim.exited;
    if (existsSync(pidFile)) killPid(Number(readFileSync(pidFile, 'utf8')));
    if (writer) await writer.stop(2_000);
    // Wait (bounded) until the git processes orphaned by the kill have finished or aborted (their
    // stdin is gone): fsck checks the repository they leave, not one they are still writing.
    await waitFor("the killed command's git processes to end", () => gitsRunningIn([work, shared.remote]).length === 0, 30_000, 20);

    // 1. Repository integrity, here and on the remote.
    expect(await git(work, ['fsck', '--no-dangling', '--no-progress'])).toBe('');
    if (kind !== 'daemon') expect(await git(shared.remote, ['fsck', '--no-dangling', '--no-progress'])).toBe('');

    const tip = await resolveRef(repo, ref);
    if (afterCheckpoint && aliveAtKill) {
      if (tip === null) {
        // The only way a completed checkpoint may go: the run was published first (its WIP ended).
        const published = await git(work, ['ls-tree', '-r', '--name-only', 'refs/heads/agentv/results/v1']).catch(() => '');
        expect(published, `iteration ${i} (${kind}): a completed checkpoint survives kill -9 unless the run was published`).toContain(ts);
      } else {
        stats.killedAfterCheckpoint++;
      }
    }
    if (tip === null) continue; // killed before the first checkpoint completed: nothing was promised
    stats.withCheckpoint++;

    // 2. The branch holds exactly a prefix of index.jsonl made of complete rows.
    const meta = parseWipMeta((await readBlobs(repo, [`${tip}:wip.json`])).get(`${tip}:wip.json`));
    expect(meta, `iteration ${i} (${kind}): wip.json`).not.toBeNull();
    const onDisk = readFileSync(join(runDir, 'index.jsonl'), 'utf8');
    const captured = await capturedIndex(repo, tip);
    expect(captured, `iteration ${i} (${kind}, killed after ${killAfter} ms): captured bytes`).toBe(onDisk.slice(0, meta!.index_bytes));
    expect(captured.endsWith('\n') || captured === '').toBe(true);
    expect(testIds(captured)).toEqual(seq(meta!.rows));
    // Linear history: each checkpoint on top of the previous one.
    expect(await git(work, ['rev-list', '--min-parents=2', '--count', tip])).toBe('0');

    // 3. Recovery gives back exactly those rows, once each.
    const out = join(await makeTempDir('kill-recovered'), 'kill', ts);
    const rec = await recoverWip({ repo, remote: null, source: `kill/${ts}`, out, fetch: false });
    expect(rec.duplicatesDropped).toBe(0);
    expect(readFileSync(join(out, 'index.jsonl'), 'utf8')).toBe(captured);

    // 4. Every fifth iteration (and the last): resume, finish, publish — every row exactly once.
    if (i % 5 === 1 || i === ITERATIONS - 1) {
      const resume = startProcess(process.execPath, [WRITER, out, '--rows', String(ROWS), '--delay-ms', '0', '--sidecars', '--resume']);
      procs.push(resume);
      expect(await resume.exited).toBe(0);
      const res = await publish({ cwd: work, run: out, push: false });
      const spec = `${res.commits.results}:${res.location.path}/index.jsonl`;
      const ids = testIds((await readBlobs(repo, [spec])).get(spec)!.toString('utf8'));
      expect(ids.sort()).toEqual(seq(ROWS));
      stats.published++;
    }
    for (const p of procs.splice(0)) p.kill('SIGKILL');
  }
  // The loop must actually have killed processes holding a completed checkpoint: those iterations
  // wait for one before they kill, so this holds whatever the machine's load (only a victim that
  // finished its whole run before the kill is not counted).
  expect(stats.killedAfterCheckpoint).toBeGreaterThan(0);
  process.stderr.write(`kill loop (seed ${seed}): ${JSON.stringify(stats)}\n`);
}, 600_000);
