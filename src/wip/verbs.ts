/**
 * The `wip` commands as library verbs: each takes the target options every branch verb takes (the
 * repository is found from `cwd`, the remote and the configuration as `publish` finds them), so a
 * program needs no `Repo`. `checkpointWip` is `wip checkpoint`, with `watch` its loop: checkpoint
 * until the run finishes (its summary is complete), the directory goes, or a shutdown signal comes.
 * They live here, not in wip/, because the loop asks the daemon's run tracker whether a run is done.
 */
import * as z from 'zod';
import { WipError } from '../errors/wip-errors.js';
import { objectStoreForReading } from '../repo/storage.js';
import { resolveTarget } from '../repo/target.js';
import { flag, fnOf, parseOptions, TargetFields } from '../options/verb-options.js';
import {
  cleanWip,
  DEFAULT_EVERY_ROWS,
  DEFAULT_INTERVAL_MS,
  listWip,
  recoverWip,
  WipSession,
  type CleanResult,
  type RecoverResult,
  type WipEvent,
  type WipListing,
} from './index.js';
import { inspectRun } from '../runs/read/run-dir-state.js';
import { onSignals, SHUTDOWN_SIGNALS, signalStatus } from '../util/signals.js';

/** `--push` / `--no-push`: neither given leaves the field unset (the configuration decides). */
const pushFlagMeta = (help = 'Push the WIP branch (default: results.auto_push)', noHelp = 'Do not push') =>
  flag('--push', help, { negate: { flag: '--no-push', help: noHelp } });

export const CheckpointWipOptionsSchema = z.strictObject({
  ...TargetFields,
  /** The run workspace (`.agentv/results/<experiment>/<timestamp>`). */
  runDir: z.string(),
  /** Keep checkpointing until the run finishes or a shutdown signal arrives (then flush). */
  watch: z.boolean().default(false).meta(flag('--watch', 'Keep checkpointing until the run finishes or a signal arrives (flushes on SIGINT/SIGTERM)')),
  /** With watch: time between checkpoints (default 30 s) and new rows that force one (default 50). */
  intervalMs: z
    .number()
    .nonnegative()
    .default(DEFAULT_INTERVAL_MS)
    .meta(flag('--interval <s>', 'With --watch: seconds between checkpoints (default 30)', { as: 'seconds' })),
  everyRows: z
    .number()
    .nonnegative()
    .default(DEFAULT_EVERY_ROWS)
    .meta(flag('--every-rows <n>', 'With --watch: also checkpoint after this many new rows (default 50)')),
  /** Walk the whole workspace (also files no row points at, and deletions). */
  full: z.boolean().default(false).meta(flag('--full', 'Walk the whole workspace (also files no row points at, and deletions)')),
  /** Push the WIP branch (default: results.auto_push). */
  push: z.boolean().optional().meta(pushFlagMeta()),
  onEvent: fnOf<(event: WipEvent) => void>().optional(),
});
export type CheckpointWipOptions = z.input<typeof CheckpointWipOptionsSchema>;

export interface CheckpointWipResult {
  events: WipEvent[];
  /** The shutdown signal that ended the watch (null: the run finished, or no watch). */
  signal: NodeJS.Signals | null;
  /** The process exit status the CLI uses: 3 a push did not land (no watch), 128+n a signal, else 0. */
  status: number;
}

/** `wip checkpoint`: checkpoint a running eval's directory once, or keep watching it until a signal or the run's end. */
export async function checkpointWip(options: CheckpointWipOptions): Promise<CheckpointWipResult> {
  const opts = parseOptions('checkpointWip', CheckpointWipOptionsSchema, options);
  const { runDir: given, full, watch, onEvent, ...rest } = opts;
  const events: WipEvent[] = [];
  const session = await WipSession.start({
    ...rest,
    runDir: given,
    pollMs: 500,
    noStartCheckpoint: true,
    onEvent: (e) => {
      events.push(e);
      onEvent?.(e);
    },
  });
  await session.checkpoint({ full });
  if (!watch) {
    await session.stop({ flush: false });
    return { events, signal: null, status: events.some((e) => e.type === 'push' && e.result.classification !== 'ok') ? 3 : 0 };
  }
  const runDir = session.checkpointer.runDir;
  let signal: NodeJS.Signals | null = null;
  let wake: () => void = () => undefined;
  const unsubscribe = onSignals(SHUTDOWN_SIGNALS, (sig) => {
    signal = sig;
    wake();
  });
  try {
    for (;;) {
      const state = await inspectRun(runDir);
      if (signal || !state || state.summaryComplete) break;
      await new Promise<void>((r) => {
        const t = setTimeout(r, 500);
        wake = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  } finally {
    unsubscribe();
  }
  if (!(await inspectRun(runDir))) {
    await session.stop({ flush: false });
    throw new WipError(`${runDir} disappeared while watched; its checkpoints are on ${session.checkpointer.branch}`);
  }
  await session.stop({ flush: true });
  const ended = signal as NodeJS.Signals | null;
  return { events, signal: ended, status: ended ? signalStatus(ended) : 0 };
}

/** `--no-fetch`: the remote is asked unless it is given. */
const fetchField = () => z.boolean().default(true).meta(flag('--no-fetch', 'Do not ask the remote'));

export const ListWipBranchesOptionsSchema = z.strictObject({
  ...TargetFields,
  /** Ask the remote (default true). */
  fetch: fetchField(),
});
export type ListWipBranchesOptions = z.input<typeof ListWipBranchesOptionsSchema>;

/** `wip list`: local and remote WIP branches with host, run, rows and age. */
export async function listWipBranches(options: ListWipBranchesOptions = {}): Promise<WipListing> {
  const opts = parseOptions('listWipBranches', ListWipBranchesOptionsSchema, options);
  const target = await resolveTarget(opts);
  return listWip({ repo: target.repo, remote: target.remote, fetch: opts.fetch });
}

export const RecoverWipRunOptionsSchema = z.strictObject({
  ...TargetFields,
  /** A WIP branch or a run id. */
  source: z.string(),
  /** The workspace to write (default `.agentv/results/<run id>` under `cwd`). */
  out: z.string().optional().meta(flag('--out <dir>', 'The workspace to write (default .agentv/results/<run_id>)')),
  /** Look at the remote's WIP branches too (default true). */
  fetch: fetchField(),
});
export type RecoverWipRunOptions = z.input<typeof RecoverWipRunOptionsSchema>;

/** `wip recover`: rebuild a run workspace from its WIP branch, atomically (hybrid storage: from the bucket too). */
export async function recoverWipRun(options: RecoverWipRunOptions): Promise<RecoverResult> {
  const opts = parseOptions('recoverWipRun', RecoverWipRunOptionsSchema, options);
  const target = await resolveTarget(opts);
  const store = objectStoreForReading(target.config);
  try {
    return await recoverWip({
      repo: target.repo,
      remote: target.remote,
      source: opts.source,
      out: opts.out,
      cwd: opts.cwd,
      fetch: opts.fetch,
      store,
    });
  } finally {
    await store?.close();
  }
}

export const CleanWipBranchesOptionsSchema = z.strictObject({
  ...TargetFields,
  /** Only branches whose last checkpoint is older than this (default 14 days). */
  olderThanMs: z
    .number()
    .nonnegative()
    .default(14 * 86_400_000)
    .meta(flag('--older-than <age>', 'Only branches whose last checkpoint is older (default 14d)', { as: 'duration' })),
  /** Also delete branches whose run is not published. */
  forceUnpublished: z.boolean().default(false).meta(flag('--force-unpublished', 'Also delete branches whose run is not published (each is listed)')),
  dryRun: z.boolean().default(false).meta(flag('--dry-run', 'Say what would be deleted')),
});
export type CleanWipBranchesOptions = z.input<typeof CleanWipBranchesOptionsSchema>;

/** `wip clean`: delete WIP branches whose run is published (and that are old enough). */
export async function cleanWipBranches(options: CleanWipBranchesOptions = {}): Promise<CleanResult> {
  const opts = parseOptions('cleanWipBranches', CleanWipBranchesOptionsSchema, options);
  const target = await resolveTarget(opts);
  return cleanWip({
    repo: target.repo,
    remote: target.remote,
    resultsRef: target.resultsRef,
    olderThanMs: opts.olderThanMs,
    forceUnpublished: opts.forceUnpublished,
    dryRun: opts.dryRun,
  });
}
