/**
 * The daemon end to end with real processes against a `git daemon` remote on 127.0.0.1 that is
 * stopped and restarted mid-test: runs checkpointed while in progress, published when finished,
 * queued while the remote is away (durably: the outbox survives a restart), then pushed together,
 * merged with what others pushed meanwhile, each run exactly once. Plus the instance lock, SIGTERM,
 * a run directory deleted while watched, polling, `--once`, and JSON logs.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDaemon } from '../src/daemon/daemon.js';
import { createLogger } from '../src/daemon/log.js';
import { openRepo, readBlobs, lsTree } from '../src/git/index.js';
import { runCli } from './helpers/cli.js';
import { freePort, git, makeTempDir, makeUserRepoWithRemote, isolateGitForSuite } from './helpers/git-fixtures.js';
import {
  appendRows,
  restartableGitDaemon,
  startCli,
  startProcess,
  testIds,
  waitFor,
  WRITER,
  type Proc,
  type RestartableGitDaemon,
} from './helpers/wip-fixtures.js';

isolateGitForSuite();

const procs: Proc[] = [];
const daemons: RestartableGitDaemon[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) await p.stop(5_000);
  for (const d of daemons.splice(0)) await d.stop();
});

const ENV = { AGENTV_RESULTS_HOST: 'hosta' };
const FAST = ['--interval', '0.2', '--every-rows', '3', '--retry-max', '0.5', '--push'];

async function servedRepo(): Promise<{ work: string; remote: string; root: string; gd: RestartableGitDaemon }> {
  const fx = await makeUserRepoWithRemote();
  const gd = await restartableGitDaemon(fx.root, await freePort());
  daemons.push(gd);
  await git(fx.work, ['remote', 'set-url', 'origin', gd.url('remote.git')]);
  return { work: fx.work, remote: fx.remote, root: fx.root, gd };
}

function daemon(work: string, extra: string[] = []): Proc {
  const p = startCli(['daemon', ...FAST, '--log-format', 'json', ...extra], { cwd: work, env: ENV });
  procs.push(p);
  return p;
}

/** Log lines of a daemon (JSON). */
function logs(p: Proc): { msg: string; [k: string]: unknown }[] {
  return p
    .stderr()
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { msg: string });
}

async function remoteCatalogRunIds(remote: string): Promise<string[]> {
  const repo = await openRepo(remote);
  const files = await lsTree(repo, 'refs/heads/agentv/results/v1', { path: '.indexes/', recursive: true }).catch(() => []);
  const blobs = await readBlobs(
    repo,
    files.map((f) => f.sha),
  );
  return files.flatMap((f) =>
    blobs
      .get(f.sha)!
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { run_id: string }).run_id),
  );
}

function finishedRun(work: string, runId: string, rows: number): string {
  const dir = join(work, '.agentv/results', runId);
  appendRows(dir, 0, rows);
  writeFileSync(join(dir, 'summary.json'), '{}\n');
  return dir;
}

describe('daemon', () => {
  it('checkpoints, publishes, queues while the remote is down, then pushes everything merged and once', async () => {
    const { work, remote, root, gd } = await servedRepo();
    const d = daemon(work);
    await waitFor('daemon started', () => logs(d).some((l) => l.msg === 'daemon started'), 20_000);

    // Run 1 in progress: checkpointed and its WIP branch pushed; then finished: published, WIP gone.
    const run1 = join(work, '.agentv/results/exp/2026-03-01T10-00-00-000Z');
    const w = startProcess(process.execPath, [WRITER, run1, '--rows', '30', '--delay-ms', '40']);
    procs.push(w);
    await waitFor('WIP branch of run 1 on the remote', async () => (await git(remote, ['for-each-ref', 'refs/heads/agentv/wip'])) !== '', 30_000);
    expect(await w.exited).toBe(0);
    await waitFor('run 1 on the remote', async () => (await remoteCatalogRunIds(remote)).includes('2026-03-01T10-00-00-000Z'), 30_000);
    await waitFor('run 1 WIP branch deleted', async () => (await git(remote, ['for-each-ref', 'refs/heads/agentv/wip'])) === '', 30_000);
    expect(logs(d).some((l) => l.msg === 'checkpoint')).toBe(true);

    // The remote goes away; two runs finish meanwhile: committed locally, queued.
    await gd.stop();
    finishedRun(work, 'exp/2026-03-02T10-00-00-000Z', 5);
    finishedRun(work, 'exp/2026-03-03T10-00-00-000Z', 6);
    await waitFor('both published locally', () => logs(d).filter((l) => l.msg === 'published').length >= 3, 30_000);
    await waitFor('push failed and queued', () => logs(d).some((l) => l.msg === 'remote not reachable; work stays queued'), 30_000);
    const st = await runCli(['status', '--json', '--dir', work]);
    const outbox = (JSON.parse(st.stdout) as { extra: { outbox: { pending: boolean; queued: { kind: string }[]; daemon: { pid: number } | null } } }).extra
      .outbox;
    expect(outbox.pending).toBe(true);
    expect(outbox.queued.map((q) => q.kind)).toContain('push-results');
    expect(outbox.daemon?.pid).toBe(d.pid);

    // Someone else publishes to the remote while it is unreachable for us (straight to the bare repo).
    const other = join(await makeTempDir('other'), 'clone');
    await git(root, ['clone', '-q', remote, other]);
    finishedRun(other, 'exp/2026-03-04T10-00-00-000Z', 4);
    const pub = await runCli(['publish', join(other, '.agentv/results/exp/2026-03-04T10-00-00-000Z'), '--push'], { cwd: other });
    expect(pub.code).toBe(0);

    // The remote comes back: everything lands, merged with the other machine's run.
    await gd.start();
    await waitFor('all runs on the remote', async () => (await remoteCatalogRunIds(remote)).length === 4, 30_000);
    const ids = await remoteCatalogRunIds(remote);
    expect(new Set(ids)).toEqual(new Set(['2026-03-01T10-00-00-000Z', '2026-03-02T10-00-00-000Z', '2026-03-03T10-00-00-000Z', '2026-03-04T10-00-00-000Z']));
    expect(await git(remote, ['rev-list', '--merges', '--count', 'refs/heads/agentv/results/v1'])).not.toBe('0');
    // No duplicate rows in any run.
    const repo = await openRepo(remote);
    for (const [id, n] of [
      ['2026-03-01T10-00-00-000Z', 30],
      ['2026-03-02T10-00-00-000Z', 5],
      ['2026-03-03T10-00-00-000Z', 6],
    ] as const) {
      const spec = `refs/heads/agentv/results/v1:${id}/index.jsonl`;
      const rows = testIds((await readBlobs(repo, [spec])).get(spec)!.toString('utf8'));
      expect(rows).toHaveLength(n);
      expect(new Set(rows).size).toBe(n);
    }
    await waitFor('the daemon noticed the remote is back', () => logs(d).some((l) => l.msg === 'remote reachable again; queued work pushed'), 10_000);

    // Clean shutdown on SIGTERM: exit 0, lock released.
    d.kill('SIGTERM');
    expect(await d.exited).toBe(0);
    expect(existsSync(join(work, '.git/agentv-results/daemon.json'))).toBe(false);
    expect(logs(d).at(-1)?.msg).toBe('daemon stopped');
    expect(await git(work, ['fsck', '--no-dangling'])).toBe('');
  });

  it('keeps queued work in the outbox journal across a restart', async () => {
    const { work, remote, gd } = await servedRepo();
    await gd.stop();
    const d1 = daemon(work);
    finishedRun(work, 'exp/2026-03-05T10-00-00-000Z', 3);
    await waitFor('queued after a failed push', () => logs(d1).some((l) => l.msg === 'remote not reachable; work stays queued'), 30_000);
    d1.kill('SIGTERM');
    expect(await d1.exited).toBe(0);
    const journal = readFileSync(join(work, '.git/agentv-results/outbox.jsonl'), 'utf8');
    expect(journal).toMatch(/"kind":"push-results"/);

    await gd.start();
    const once = await runCli(['daemon', '--once', '--push', '--dir', work], { env: ENV });
    expect(once.code).toBe(0);
    expect(await remoteCatalogRunIds(remote)).toEqual(['2026-03-05T10-00-00-000Z']);
    const st = JSON.parse((await runCli(['status', '--json', '--dir', work])).stdout) as { extra: { outbox: { pending: boolean; queued: unknown[] } } };
    expect(st.extra.outbox).toMatchObject({ pending: false, queued: [] });
  });

  it('--once with the remote down exits 3 and leaves the work queued', async () => {
    const { work, gd } = await servedRepo();
    await gd.stop();
    finishedRun(work, 'exp/2026-03-06T10-00-00-000Z', 2);
    const once = await runCli(['daemon', '--once', '--push', '--retry-max', '0.2', '--dir', work], { env: ENV });
    expect(once.code).toBe(3);
    expect(once.stderr).toMatch(/remote not reachable; work stays queued/);
    const st = await runCli(['status', '--dir', work]);
    expect(st.stdout).toMatch(/outbox/);
    expect(st.stdout).toMatch(/push-results/);
  });

  it('one daemon per repository: a second one names the holder; a kill -9 holder is replaced', async () => {
    const { work } = await servedRepo();
    const a = daemon(work);
    const b = daemon(work);
    const first = await Promise.race([a.exited.then(() => a), b.exited.then(() => b)]);
    const survivor = first === a ? b : a;
    expect(await first.exited).toBe(1);
    expect(first.stderr()).toMatch(new RegExp(`another agentv-results daemon already runs for this repository: pid ${survivor.pid}`));
    expect(survivor.done).toBe(false);

    // kill -9: the next daemon sees the holder is dead and takes over once its lock goes stale.
    survivor.kill('SIGKILL');
    await survivor.exited;
    const c = daemon(work);
    await waitFor('replacement daemon started', () => logs(c).some((l) => l.msg === 'daemon started'), 30_000);
    expect(logs(c).some((l) => l.msg === 'a previous daemon died without releasing its lock; waiting for it to go stale')).toBe(true);
    finishedRun(work, 'exp/2026-03-07T10-00-00-000Z', 2);
    await waitFor('published by the replacement', () => logs(c).some((l) => l.msg === 'published'), 30_000);
  }, 90_000);

  it('survives a run directory deleted while watched, and works by polling', async () => {
    const { work } = await servedRepo();
    const d = daemon(work, ['--poll', '--scan-interval', '0.2', '--no-push']);
    await waitFor('daemon started', () => logs(d).some((l) => l.msg === 'daemon started' && l.mode === 'polling'), 20_000);
    const doomed = join(work, '.agentv/results/exp/2026-03-08T10-00-00-000Z');
    appendRows(doomed, 0, 4);
    await waitFor('checkpointed', () => logs(d).some((l) => l.msg === 'checkpoint' && l.rows === 4), 20_000);
    rmSync(doomed, { recursive: true });
    await waitFor(
      'deletion noticed',
      () => logs(d).some((l) => l.msg === 'run directory deleted while watched; its checkpoints stay on the WIP branch'),
      20_000,
    );
    // Still alive and working; the deleted run is recoverable from its WIP branch.
    finishedRun(work, 'exp/2026-03-09T10-00-00-000Z', 3);
    await waitFor('next run published', () => logs(d).some((l) => l.msg === 'published' && l.run === '2026-03-09T10-00-00-000Z'), 20_000);
    const list = JSON.parse((await runCli(['wip', 'list', '--json', '--no-fetch', '--dir', work])).stdout) as { branches: { run_id: string; rows: number }[] };
    expect(list.branches).toContainEqual(expect.objectContaining({ run_id: 'exp/2026-03-08T10-00-00-000Z', rows: 4 }));
    d.kill('SIGTERM');
    expect(await d.exited).toBe(0);
  });

  it('(library) pauses an idle unfinished run and wakes it when it changes; stops on abort', async () => {
    const { work } = await servedRepo();
    const lines: { msg: string; rows?: number }[] = [];
    const logger = createLogger({ format: 'json', write: (l) => lines.push(JSON.parse(l) as { msg: string }) });
    const stop = new AbortController();
    const crashed = join(work, '.agentv/results/exp/2026-03-10T10-00-00-000Z');
    appendRows(crashed, 0, 3);
    const running = runDaemon({
      cwd: work,
      push: false,
      poll: true,
      scanIntervalMs: 100,
      intervalMs: 100,
      checkpointPollMs: 50,
      dormantAfterMs: 400,
      logger,
      signal: stop.signal,
      host: 'hosta',
    });
    try {
      await waitFor('idle run paused', () => lines.some((l) => l.msg === 'run idle; checkpointing paused until it changes' && l.rows === 3), 20_000);
      appendRows(crashed, 3, 5);
      await waitFor('woken up and checkpointed', () => lines.some((l) => l.msg === 'checkpoint' && l.rows === 5), 20_000);
    } finally {
      stop.abort();
    }
    const report = await running;
    expect(report).toMatchObject({ stoppedBy: 'abort', queued: 0, failed: 0 });
    expect(report.checkpoints).toBeGreaterThanOrEqual(2);
  });
});
