/**
 * The daemon's options (`runDaemon`'s door and the `daemon` command's flags, from the same fields)
 * and the report it returns when it stops.
 */
import * as z from 'zod';
import { flag, fnOf, objectOf, TargetFields } from '../options/verb-options.js';
import type { Webhook } from '../util/webhook.js';
import { wipHost, DEFAULT_EVERY_ROWS, DEFAULT_INTERVAL_MS } from '../wip/index.js';
import { ArchiveScheduleOptionsSchema } from './archive-schedule.js';
import { silentLogger, type Logger } from './log.js';
import { DEFAULT_NOTIFY_AFTER_MS } from './outbox-worker.js';
import { DEFAULT_SYNC_BRANCHES_EVERY_MS } from './sync-branch-schedule.js';

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
export type ParsedDaemonOptions = z.output<typeof DaemonOptionsSchema>;

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
