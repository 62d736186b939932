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
 *
 * This file starts and stops a daemon; its options and report are daemon-options.ts, its parts
 * wired together daemon-loop.ts, its rounds daemon-rounds.ts, its stop switch stop-switch.ts.
 */
import { resolve } from 'node:path';
import { parseOptions } from '../options/verb-options.js';
import { resolveTarget, targetOptionsOf, type PublishTarget } from '../repo/target.js';
import { onSignals, SHUTDOWN_SIGNALS } from '../util/signals.js';
import { DaemonOptionsSchema, type DaemonOptions, type DaemonReport, type ParsedDaemonOptions } from './daemon-options.js';
import { assembleLoop, type Loop } from './daemon-loop.js';
import { runOnceRounds, runWatchLoop } from './daemon-rounds.js';
import { acquireDaemonLock } from './instance-lock.js';
import type { Logger } from './log.js';
import { Outbox } from './outbox.js';
import { Switch } from './stop-switch.js';

/** Watch a directory for AgentV runs: checkpoint them while they run, publish them when done, retry pushes from a durable outbox. */
export async function runDaemon(options: DaemonOptions = {}): Promise<DaemonReport> {
  const opts = parseOptions('runDaemon', DaemonOptionsSchema, options);
  const root = resolve(opts.cwd, opts.root);
  const logger = opts.logger;
  const target: PublishTarget = await resolveTarget(targetOptionsOf(opts));
  // The daemon is the hands-off publisher: it pushes unless told not to (--no-push), whatever auto_push says.
  const push = opts.push && target.remote !== null;
  const sw = new Switch(opts.once ? 'once' : 'abort');
  const lock = await lockDaemon(target, root, logger, sw);
  const outbox = Outbox.forCommonDir(target.repo.commonDir);
  const loop = assembleLoop(opts, { root, target, push, logger, sw, outbox });
  const { tracker, watcher } = loop;
  const unwire = stopOnSignals(opts, sw, logger);

  try {
    await outbox.compact().catch((err: unknown) => logger.warn('could not compact the outbox', { error: (err as Error).message }));
    await watcher.start();
    logger.info('daemon started', {
      pid: process.pid,
      root,
      repo: target.repo.workTree ?? target.repo.gitDir,
      remote: target.remote ?? undefined,
      push,
      mode: watcher.mode,
      once: opts.once,
    });
    opts.onReady?.({ root, mode: watcher.mode });
    if (opts.once) await runOnceRounds(loop);
    else {
      await runWatchLoop(loop);
      logger.info('stopping: flushing in-progress checkpoints', { runs: tracker.activeRuns.length });
      await tracker.stopAll({ flush: true });
    }
  } finally {
    unwire();
    await watcher.close();
    await tracker.stopAll({ flush: false });
    // best effort: compacting at shutdown; the journal stays valid uncompacted
    await outbox.compact().catch(() => undefined);
    await lock.release();
  }
  const report = await finalReport(loop, outbox);
  logger.info('daemon stopped', { ...report });
  return report;
}

/** One daemon per repository: the lock, and what happens when this process loses it. */
function lockDaemon(target: PublishTarget, root: string, logger: Logger, sw: Switch) {
  return acquireDaemonLock(
    target.repo.commonDir,
    { root },
    {
      onCompromised: (err) => {
        logger.error('daemon lock lost (this process stalled and another daemon took over); stopping', { error: err.message });
        sw.stop('lock-lost');
      },
      onWait: (holder) => logger.info('a previous daemon died without releasing its lock; waiting for it to go stale', { pid: holder?.pid ?? null }),
    },
  );
}

/** Signals (when asked) and the caller's AbortSignal stop the loop; returns what undoes the wiring. */
function stopOnSignals(opts: ParsedDaemonOptions, sw: Switch, logger: Logger): () => void {
  const unsubscribe = opts.handleSignals
    ? onSignals(SHUTDOWN_SIGNALS, (sig) => {
        logger.info('signal received; shutting down', { signal: sig });
        sw.stop('signal');
      })
    : () => undefined;
  const onAbort = (): void => sw.stop('abort');
  opts.signal?.addEventListener('abort', onAbort);
  if (opts.signal?.aborted) sw.stop('abort');
  return () => {
    unsubscribe();
    opts.signal?.removeEventListener('abort', onAbort);
  };
}

async function finalReport(loop: Loop, outbox: Outbox): Promise<DaemonReport> {
  const items = await outbox.items();
  return {
    published: loop.published,
    checkpoints: loop.tracker.checkpoints,
    queued: items.filter((i) => i.state === 'pending').length,
    failed: items.filter((i) => i.state === 'dead').length,
    remoteDown: loop.remoteDown,
    archived: loop.archive?.archived ?? 0,
    expired: loop.archive?.expired ?? 0,
    stoppedBy: loop.sw.stoppedBy,
  };
}
