/**
 * `daemon`: one long-lived process per results repository that checkpoints in-progress runs,
 * publishes finished ones and pushes everything, surviving restarts and offline periods.
 *
 *   lock (one per repository) -> compact the outbox -> watch the root (events, else polling)
 *   loop: examine runs that changed (tracker.ts) -> work the due outbox jobs (outbox-worker.ts)
 *         -> sleep until woken by an event, the next rescan or the next retry
 *   SIGTERM/SIGINT: stop watching, flush every in-progress run's checkpoint, release the lock.
 *
 * `once`: scan, checkpoint what is in progress, publish what is finished, push, exit: for cron/CI.
 */
import { resolve } from 'node:path';
import { isAncestor, resolveRef } from '../git/index.js';
import { resolveTarget, type PublishTarget, type TargetOptions } from '../branch/target.js';
import { trackingRef } from '../branch/refs.js';
import { wipHost, DEFAULT_EVERY_ROWS, DEFAULT_INTERVAL_MS } from '../wip/index.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { acquireDaemonLock } from './instance-lock.js';
import { silentLogger, type Logger } from './log.js';
import { Outbox } from './outbox.js';
import { OutboxWorker } from './outbox-worker.js';
import { findRunDirs } from './runs.js';
import { onSignals, SHUTDOWN_SIGNALS } from './signals.js';
import { RunTracker } from './tracker.js';
import { RunWatcher } from './watcher.js';

export const DEFAULT_ROOT = '.agentv/results';

export interface DaemonOptions extends TargetOptions {
  /** Results root to watch (default .agentv/results, relative to cwd). */
  root?: string;
  once?: boolean;
  /** Push results and WIP branches (default true: the daemon publishes and pushes). */
  push?: boolean;
  intervalMs?: number;
  everyRows?: number;
  /** Poll instead of using file-system events. */
  poll?: boolean;
  /** Rescan period: the discovery interval when polling, a safety net with events. */
  scanIntervalMs?: number;
  /** How often an in-progress run's index is looked at for the row trigger. */
  checkpointPollMs?: number;
  backoff?: BackoffPolicy;
  networkTimeoutMs?: number;
  settleMs?: number;
  /** Unfinished runs untouched this long stop being polled until they change (default 15 min). */
  dormantAfterMs?: number;
  host?: string;
  logger?: Logger;
  /** Stop the daemon (tests, embedding). */
  signal?: AbortSignal;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (the CLI does). */
  handleSignals?: boolean;
  /** Called once the daemon holds its lock and watches (tests wait for it). */
  onReady?: (info: { root: string; mode: 'events' | 'polling' }) => void;
}

export interface DaemonReport {
  published: number;
  checkpoints: number;
  /** Jobs still queued at exit (a later daemon or `--once` continues them). */
  queued: number;
  /** Jobs that gave up (see `status`). */
  failed: number;
  remoteDown: boolean;
  stoppedBy: 'once' | 'signal' | 'abort' | 'lock-lost';
}

/** Most rounds a `--once` run makes (each publish adds push jobs for the next round). */
const ONCE_ROUNDS = 6;

export async function runDaemon(opts: DaemonOptions = {}): Promise<DaemonReport> {
  const cwd = opts.cwd ?? process.cwd();
  const root = resolve(cwd, opts.root ?? DEFAULT_ROOT);
  const logger = opts.logger ?? silentLogger;
  const target: PublishTarget = await resolveTarget(opts);
  // The daemon is the hands-off publisher: it pushes unless told not to (--no-push), whatever auto_push says.
  const push = (opts.push ?? true) && target.remote !== null;
  const host = opts.host ?? wipHost();

  let stoppedBy: DaemonReport['stoppedBy'] = opts.once ? 'once' : 'abort';
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  const wake = (): void => {
    const w = wakeUp;
    wakeUp = null;
    w?.();
  };
  const stop = (why: DaemonReport['stoppedBy']): void => {
    if (stopping) return;
    stopping = true;
    stoppedBy = why;
    wake();
  };

  const lock = await acquireDaemonLock(target.repo.commonDir, { root }, {
    onCompromised: (err) => {
      logger.error('daemon lock lost (this process stalled and another daemon took over); stopping', { error: err.message });
      stop('lock-lost');
    },
    onWait: (holder) => logger.info('a previous daemon died without releasing its lock; waiting for it to go stale', { pid: holder?.pid ?? null }),
  });
  const outbox = Outbox.forCommonDir(target.repo.commonDir);
  const dirty = new Set<string>();
  let rescan = true;
  const tracker = new RunTracker({
    repo: target.repo,
    resultsRef: target.resultsRef,
    remote: target.remote,
    push,
    outbox,
    logger,
    host,
    intervalMs: opts.intervalMs ?? DEFAULT_INTERVAL_MS,
    everyRows: opts.everyRows ?? DEFAULT_EVERY_ROWS,
    checkpointPollMs: opts.checkpointPollMs,
    settleMs: opts.settleMs,
    dormantAfterMs: opts.dormantAfterMs,
    wake,
  });
  // Bounded network operations keep a SIGTERM from waiting on a hung remote for long.
  const worker = new OutboxWorker({ target, targetOptions: { ...opts, cwd }, outbox, logger, push, backoff: opts.backoff ?? DEFAULT_BACKOFF, networkTimeoutMs: opts.networkTimeoutMs ?? 30_000 });
  const watcher = new RunWatcher(root, {
    poll: opts.poll || opts.once,
    logger,
    onChange: (dir) => {
      if (dir === null) rescan = true;
      else dirty.add(dir);
      wake();
    },
  });
  const unsubscribe = opts.handleSignals
    ? onSignals(SHUTDOWN_SIGNALS, (sig) => {
        logger.info('signal received; shutting down', { signal: sig });
        stop('signal');
      })
    : () => undefined;
  const onAbort = (): void => stop('abort');
  opts.signal?.addEventListener('abort', onAbort);
  if (opts.signal?.aborted) stop('abort');

  let published = 0;
  let remoteDown = false;
  try {
    await outbox.compact().catch((err: unknown) => logger.warn('could not compact the outbox', { error: (err as Error).message }));
    await watcher.start();
    // With events the rescan is only a safety net; polling discovers runs with it; a root that
    // does not exist yet is looked for often, so the watcher starts soon after it appears.
    const scanEvery = (): number => opts.scanIntervalMs ?? (watcher.mode === 'events' ? 30_000 : opts.poll ? 2_000 : 500);
    logger.info('daemon started', { pid: process.pid, root, repo: target.repo.workTree ?? target.repo.gitDir, remote: target.remote ?? undefined, push, mode: watcher.mode, once: opts.once ?? false });
    opts.onReady?.({ root, mode: watcher.mode });

    const scan = async (): Promise<void> => {
      // Watcher first: a run created while the directories are listed is then seen by one or the other.
      if (!opts.once && !opts.poll && !watcher.watching) await watcher.start();
      const found = await findRunDirs(root);
      for (const d of new Set([...found, ...tracker.trackedDirs])) dirty.add(d);
      if (push) await queueUnpushed(target, outbox);
    };

    if (opts.once) {
      await scan();
      await Promise.all([...dirty].map((d) => tracker.examine(d)));
      dirty.clear();
      await tracker.stopAll({ flush: true });
      await tracker.settle();
      for (let i = 0; i < ONCE_ROUNDS && !stopping; i++) {
        const r = await worker.round({ force: true });
        published += r.published;
        remoteDown = r.remoteDown;
        if (r.completed === 0 || r.remoteDown) break;
      }
    } else {
      let nextScanAt = 0;
      while (!stopping) {
        const now = Date.now();
        if (rescan || now >= nextScanAt) {
          rescan = false;
          nextScanAt = now + scanEvery();
          await scan();
        }
        const dirs = [...dirty];
        dirty.clear();
        await Promise.all(dirs.map((d) => tracker.examine(d)));
        if (stopping) break;
        const r = await worker.round();
        published += r.published;
        remoteDown = r.remoteDown;
        if (dirty.size > 0 || rescan) continue;
        const until = Math.min(nextScanAt, r.nextAt ?? Infinity);
        await new Promise<void>((res) => {
          const timer = setTimeout(res, Math.max(10, until - Date.now()));
          wakeUp = () => {
            clearTimeout(timer);
            res();
          };
        });
      }
      logger.info('stopping: flushing in-progress checkpoints', { runs: tracker.activeRuns.length });
      await tracker.stopAll({ flush: true });
    }
  } finally {
    unsubscribe();
    opts.signal?.removeEventListener('abort', onAbort);
    await watcher.close();
    await tracker.stopAll({ flush: false });
    await outbox.compact().catch(() => undefined);
    await lock.release();
  }
  const items = await outbox.items();
  const report: DaemonReport = {
    published,
    checkpoints: tracker.checkpoints,
    queued: items.filter((i) => i.state === 'pending').length,
    failed: items.filter((i) => i.state === 'dead').length,
    remoteDown,
    stoppedBy,
  };
  logger.info('daemon stopped', { ...report });
  return report;
}

/**
 * Results committed locally that the remote lacks (published by hand while offline, or by an
 * `exec` whose push failed) get a push queued, so the daemon pushes everything, not only its own.
 */
async function queueUnpushed(target: PublishTarget, outbox: Outbox): Promise<void> {
  const remote = target.remote as string;
  const local = await resolveRef(target.repo, target.resultsRef);
  if (local === null) return;
  const tracking = await resolveRef(target.repo, trackingRef(remote, target.resultsRef));
  if (tracking !== null && (local === tracking || (await isAncestor(target.repo, local, tracking)))) return;
  if (await outbox.get('push-results')) return;
  await outbox.put({ kind: 'push-results' });
}
