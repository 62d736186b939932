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
import { objectStoreFor } from '../repo/storage.js';
import { resolve } from 'node:path';
import { isAncestor, resolveRef } from '../git/index.js';
import { resolveTarget, targetOptionsOf, type PublishTarget } from '../repo/target.js';
import { flag, fnOf, objectOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { trackingRef } from '../repo/tracking-refs.js';
import { wipHost, DEFAULT_EVERY_ROWS, DEFAULT_INTERVAL_MS } from '../wip/index.js';
import { ArchiveSchedule, ArchiveScheduleOptionsSchema } from './archive-schedule.js';
import { DEFAULT_SYNC_BRANCHES_EVERY_MS, SyncBranchSchedule } from './sync-branch-schedule.js';
import { acquireDaemonLock } from './instance-lock.js';
import { silentLogger, type Logger } from './log.js';
import { DEFAULT_NOTIFY_AFTER_MS } from './outbox-worker.js';
import { Outbox } from './outbox.js';
import { OutboxWorker } from './outbox-worker.js';
import { findRunDirs } from '../runs/read/run-dir-state.js';
import { onSignals, SHUTDOWN_SIGNALS } from '../util/signals.js';
import { RunTracker } from './tracker.js';
import { RunWatcher } from './watcher.js';
import { notifyWebhook, type Webhook, type WebhookEvent } from '../util/webhook.js';

export const DEFAULT_ROOT = '.agentv/results';

/** `runDaemon`'s options (the `daemon` command's flags come from the same fields). */
export const DaemonOptionsSchema = z.strictObject({
  /** Results root to watch (default .agentv/results, relative to cwd). */
  root: z.string().default(DEFAULT_ROOT).meta(flag('--root <dir>', 'Results root to watch (default .agentv/results)')),
  once: z.boolean().default(false).meta(flag('--once', 'Process what is there (checkpoint, publish, push the queue) and exit — for cron and CI')),
  intervalMs: z
    .number()
    .nonnegative()
    .default(DEFAULT_INTERVAL_MS)
    .meta(flag('--interval <s>', 'Seconds between checkpoints of a run in progress (default 30)', { as: 'seconds' })),
  everyRows: z.number().nonnegative().default(DEFAULT_EVERY_ROWS).meta(flag('--every-rows <n>', 'Also checkpoint after this many new rows (default 50)')),
  /** Poll instead of using file-system events. */
  poll: z.boolean().default(false).meta(flag('--poll', 'Poll the root instead of using file-system events')),
  /** Rescan period: the discovery interval when polling, a safety net with events (default 30 s with events, 2 s polling). */
  scanIntervalMs: z
    .number()
    .positive()
    .optional()
    .meta(flag('--scan-interval <s>', 'Seconds between rescans of the root (default 30 with events, 2 when polling)', { as: 'seconds' })),
  /** The longest wait between retries while the remote is unreachable (default 60 s; retries start at 1 s). */
  retryMaxMs: z
    .number()
    .positive()
    .default(60_000)
    .meta(flag('--retry-max <s>', 'Longest wait between retries while the remote is unreachable (default 60)', { as: 'seconds' })),
  /** Push results and WIP branches (default true: the daemon publishes and pushes). */
  push: z
    .boolean()
    .default(true)
    .meta(
      flag('--push', 'Push results and WIP branches (the default: the daemon publishes and pushes)', {
        negate: { flag: '--no-push', help: 'Commit locally only, push nothing' },
      }),
    ),
  /** Roll runs past the live window over to the month archives on this schedule (off by default). */
  archive: ArchiveScheduleOptionsSchema.optional(),
  /** POST a JSON event here when results go to a sync branch or pushes keep failing (src/util/webhook.ts: `webhookFrom`). */
  webhook: objectOf<Webhook>().nullable().default(null),
  /** How long pushes must fail before the webhook hears of it (default 30 min). */
  webhookAfterMs: z
    .number()
    .nonnegative()
    .default(DEFAULT_NOTIFY_AFTER_MS)
    .meta(flag('--webhook-after <duration>', 'How long pushes must fail before the webhook hears of it, once per outage (default 30m)', { as: 'duration' })),
  ...TargetFields,
  /** How often an in-progress run's index is looked at for the row trigger. */
  checkpointPollMs: z.number().positive().optional(),
  /** The retry policy while the remote is unreachable (default: from 1 s up to `retryMaxMs`). */
  backoff: z.strictObject({ baseMs: z.number().nonnegative(), capMs: z.number().nonnegative() }).optional(),
  networkTimeoutMs: z.number().positive().default(30_000),
  /** A summary.json that does not parse is published anyway after this long (default 10 s; its error then shows). */
  settleMs: z.number().nonnegative().default(10_000),
  /** Unfinished runs untouched this long stop being polled until they change (default 15 min). */
  dormantAfterMs: z
    .number()
    .nonnegative()
    .default(15 * 60_000),
  /** The host name on WIP branches (default: this machine's). */
  host: z
    .string()
    .min(1)
    .default(() => wipHost()),
  logger: objectOf<Logger>().default(silentLogger),
  /** Stop the daemon (tests, embedding). */
  signal: objectOf<AbortSignal>().optional(),
  /** Install SIGINT/SIGTERM/SIGHUP handlers (the CLI does). */
  handleSignals: z.boolean().default(false),
  /**
   * How often a pushing daemon syncs to take in the runs AgentV parked on sync branches (default 5
   * minutes; 0 turns it off). A `--once` run does it once, after its queue.
   */
  syncBranchesEveryMs: z.number().nonnegative().default(DEFAULT_SYNC_BRANCHES_EVERY_MS),
  /** Called once the daemon holds its lock and watches (tests wait for it). */
  onReady: fnOf<(info: { root: string; mode: 'events' | 'polling' }) => void>().optional(),
});
export type DaemonOptions = z.input<typeof DaemonOptionsSchema>;
type ParsedDaemonOptions = z.output<typeof DaemonOptionsSchema>;

export interface DaemonReport {
  published: number;
  checkpoints: number;
  /** Jobs still queued at exit (a later daemon or `--once` continues them). */
  queued: number;
  /** Jobs that gave up (see `status`). */
  failed: number;
  remoteDown: boolean;
  /** Runs the scheduled rollovers moved to the archive. */
  archived: number;
  /** Runs the scheduled retentions removed (when results.retention is configured). */
  expired: number;
  stoppedBy: 'once' | 'signal' | 'abort' | 'lock-lost';
}

/** Most rounds a `--once` run makes (each publish adds push jobs for the next round). */
const ONCE_ROUNDS = 6;

/**
 * The daemon's stop and wake-up switch: a signal, an abort, a lost lock or `--once` finishing stop
 * it; a file event or a finished checkpoint wakes its sleep early.
 */
class Switch {
  stopping = false;
  stoppedBy: DaemonReport['stoppedBy'];
  private wakeUp: (() => void) | null = null;

  constructor(initial: DaemonReport['stoppedBy']) {
    this.stoppedBy = initial;
  }

  readonly wake = (): void => {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  };

  stop(why: DaemonReport['stoppedBy']): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stoppedBy = why;
    this.wake();
  }

  /** Sleeps until `until` (epoch ms) or the next wake-up, whichever comes first. */
  sleepUntil(until: number): Promise<void> {
    return new Promise<void>((res) => {
      const timer = setTimeout(res, Math.max(10, until - Date.now()));
      this.wakeUp = () => {
        clearTimeout(timer);
        res();
      };
    });
  }
}

/** What the loops share: the parts a daemon is made of, and what they found to do. */
interface Loop {
  opts: ParsedDaemonOptions;
  sw: Switch;
  tracker: RunTracker;
  worker: OutboxWorker;
  watcher: RunWatcher;
  dirty: Set<string>;
  rescan: boolean;
  scan: () => Promise<void>;
  archive: ArchiveSchedule | null;
  syncBranches: SyncBranchSchedule | null;
  published: number;
  remoteDown: boolean;
  outbox: Outbox;
  /** Jobs completed since the outbox journal was last compacted. */
  sinceCompact: number;
}

/**
 * The outbox journal is append-only (a record per queued, done or dead job): a daemon that runs for
 * weeks compacts it after this many completed jobs, not only when it starts and stops, so its state
 * on disk stays flat however many runs it publishes (bench/daemon-soak.bench.mjs).
 */
const COMPACT_EVERY_JOBS = 100;

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

interface LoopParts {
  root: string;
  target: PublishTarget;
  push: boolean;
  logger: Logger;
  sw: Switch;
  outbox: Outbox;
}

/** The tracker, the outbox worker and the watcher, wired to one shared loop state. */
function assembleLoop(opts: ParsedDaemonOptions, p: LoopParts): Loop {
  const { root, target, push, logger, sw, outbox } = p;
  const host = opts.host;
  const tracker = new RunTracker({ ...trackerOptions(opts, target, push, host), outbox, logger, wake: sw.wake });
  // Bounded network operations keep a SIGTERM from waiting on a hung remote for long.
  const worker = new OutboxWorker({
    target,
    targetOptions: targetOptionsOf(opts),
    outbox,
    logger,
    push,
    backoff: opts.backoff ?? { baseMs: Math.min(1_000, opts.retryMaxMs), capMs: opts.retryMaxMs },
    networkTimeoutMs: opts.networkTimeoutMs,
    notify: opts.webhook ? notifier(opts.webhook, logger) : undefined,
    notifyAfterMs: opts.webhookAfterMs,
  });
  const watcher = new RunWatcher(root, {
    poll: opts.poll || opts.once,
    logger,
    onChange: (dir) => {
      if (dir === null) loop.rescan = true;
      else loop.dirty.add(dir);
      sw.wake();
    },
  });
  const loop: Loop = {
    opts,
    sw,
    tracker,
    worker,
    watcher,
    dirty: new Set<string>(),
    rescan: true,
    archive: opts.archive ? new ArchiveSchedule(opts.archive, target, push, logger) : null,
    syncBranches:
      push && target.remote !== null && opts.syncBranchesEveryMs !== 0
        ? new SyncBranchSchedule(opts.syncBranchesEveryMs, target, logger, targetOptionsOf(opts))
        : null,
    published: 0,
    remoteDown: false,
    outbox,
    sinceCompact: 0,
    scan: async () => {
      // Watcher first: a run created while the directories are listed is then seen by one or the other.
      if (!opts.once && !opts.poll && !watcher.watching) await watcher.start();
      const found = await findRunDirs(root);
      for (const d of new Set([...found, ...tracker.trackedDirs])) loop.dirty.add(d);
      if (push) await queueUnpushed(target, outbox);
    },
  };
  return loop;
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

function trackerOptions(opts: ParsedDaemonOptions, target: PublishTarget, push: boolean, host: string) {
  return {
    repo: target.repo,
    resultsRef: target.resultsRef,
    remote: target.remote,
    push,
    host,
    intervalMs: opts.intervalMs,
    everyRows: opts.everyRows,
    checkpointPollMs: opts.checkpointPollMs,
    settleMs: opts.settleMs,
    dormantAfterMs: opts.dormantAfterMs,
    store: objectStoreFor(target.config),
    heavyBytes: target.config.heavy_threshold_bytes,
  };
}

/** `--once`: examine every run, flush their checkpoints, then push until the outbox is done. */
async function runOnceRounds(loop: Loop): Promise<void> {
  await loop.scan();
  await Promise.all([...loop.dirty].map((d) => loop.tracker.examine(d)));
  loop.dirty.clear();
  await loop.tracker.stopAll({ flush: true });
  await loop.tracker.settle();
  for (let i = 0; i < ONCE_ROUNDS && !loop.sw.stopping; i++) {
    const r = await loop.worker.round({ force: true });
    loop.published += r.published;
    loop.remoteDown = r.remoteDown;
    if (r.completed === 0 || r.remoteDown) break;
  }
  if (loop.archive && !loop.sw.stopping && !loop.remoteDown) await loop.archive.run();
  if (loop.syncBranches && !loop.sw.stopping && !loop.remoteDown) await loop.syncBranches.run();
}

/** The long-running loop: rescan now and then, examine what changed, push, sleep until needed. */
async function runWatchLoop(loop: Loop): Promise<void> {
  const { opts, watcher } = loop;
  // With events the rescan is only a safety net; polling discovers runs with it; a root that
  // does not exist yet is looked for often, so the watcher starts soon after it appears.
  const scanEvery = (): number => opts.scanIntervalMs ?? (watcher.mode === 'events' ? 30_000 : opts.poll ? 2_000 : 500);
  let nextScanAt = 0;
  while (!loop.sw.stopping) {
    const now = Date.now();
    if (loop.rescan || now >= nextScanAt) {
      loop.rescan = false;
      nextScanAt = now + scanEvery();
      await loop.scan();
    }
    const dirs = [...loop.dirty];
    loop.dirty.clear();
    await Promise.all(dirs.map((d) => loop.tracker.examine(d)));
    if (loop.sw.stopping) break;
    const r = await loop.worker.round();
    loop.published += r.published;
    loop.remoteDown = r.remoteDown;
    loop.sinceCompact += r.completed;
    if (loop.sinceCompact >= COMPACT_EVERY_JOBS) {
      loop.sinceCompact = 0;
      await loop.outbox.compact().catch((err: unknown) => opts.logger.warn('could not compact the outbox', { error: (err as Error).message }));
    }
    if (loop.archive?.due() && !loop.sw.stopping) await loop.archive.run();
    if (loop.syncBranches?.due() && !loop.sw.stopping && !loop.remoteDown) await loop.syncBranches.run();
    if (loop.dirty.size > 0 || loop.rescan) continue;
    await loop.sw.sleepUntil(Math.min(nextScanAt, r.nextAt ?? Infinity, loop.archive?.nextAt ?? Infinity, loop.syncBranches?.nextAt ?? Infinity));
  }
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

/** Deliver to the webhook; a notification that fails is logged, never fatal. */
function notifier(hook: Webhook, logger: Logger): (event: WebhookEvent) => Promise<void> {
  return async (event) => {
    const sent = await notifyWebhook(hook, event);
    if (sent.ok) logger.info('webhook notified', { event: event.event });
    else logger.warn('webhook not delivered', { event: event.event, error: sent.error });
  };
}
