/**
 * A daemon's loop: the parts it is made of — the run tracker, the outbox worker, the watcher, the
 * scheduled archive and sync-branch jobs — wired to one loop state the rounds (daemon-rounds.ts)
 * work on.
 */
import { isAncestor, resolveRef } from '../git/index.js';
import { objectStoreFor } from '../repo/storage.js';
import { targetOptionsOf, type PublishTarget } from '../repo/target.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { findRunDirs } from '../runs/read/run-dir-state.js';
import { notifyWebhook, type Webhook, type WebhookEvent } from '../util/webhook.js';
import { ArchiveSchedule } from './archive-schedule.js';
import type { ParsedDaemonOptions } from './daemon-options.js';
import type { Logger } from './log.js';
import { OutboxWorker } from './outbox-worker.js';
import type { Outbox } from './outbox.js';
import type { Switch } from './stop-switch.js';
import { SyncBranchSchedule } from './sync-branch-schedule.js';
import { RunTracker } from './tracker.js';
import { RunWatcher } from './watcher.js';

/** What the loops share: the parts a daemon is made of, and what they found to do. */
export interface Loop {
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

export interface LoopParts {
  root: string;
  target: PublishTarget;
  push: boolean;
  logger: Logger;
  sw: Switch;
  outbox: Outbox;
}

/** The tracker, the outbox worker and the watcher, wired to one shared loop state. */
export function assembleLoop(opts: ParsedDaemonOptions, p: LoopParts): Loop {
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
