/**
 * The `wip` commands as library verbs: each takes the target options every branch verb takes (the
 * repository is found from `cwd`, the remote and the configuration as `publish` finds them), so a
 * program needs no `Repo`. `checkpointWip` is `wip checkpoint`, with `watch` its loop: checkpoint
 * until the run finishes (its summary is complete), the directory goes, or a shutdown signal comes.
 * They live here, not in wip/, because the loop asks the daemon's run tracker whether a run is done.
 */
import * as z from 'zod';
import { objectStoreForReading } from '../repo/storage.js';
import { resolveTarget, type TargetOptions } from '../repo/target.js';
import { checkOptions, fnOf, TargetFields } from '../options/verb-options.js';
import { cleanWip, listWip, recoverWip, WipError, WipSession, type CleanResult, type RecoverResult, type WipEvent, type WipListing } from './index.js';
import { inspectRun } from '../runs/read/run-dir-state.js';
import { onSignals, SHUTDOWN_SIGNALS, signalStatus } from '../util/signals.js';

export const CheckpointWipOptionsSchema = z.object({
  ...TargetFields,
  /** The run workspace (`.agentv/results/<experiment>/<timestamp>`). */
  runDir: z.string(),
  /** Push the WIP branch (default: results.auto_push). */
  push: z.boolean().optional(),
  /** Walk the whole workspace (also files no row points at, and deletions). */
  full: z.boolean().optional(),
  /** Keep checkpointing until the run finishes or a shutdown signal arrives (then flush). */
  watch: z.boolean().optional(),
  /** With watch: time between checkpoints (default 30 s) and new rows that force one (default 50). */
  intervalMs: z.number().optional(),
  everyRows: z.number().optional(),
  onEvent: fnOf<(event: WipEvent) => void>().optional(),
});
export type CheckpointWipOptions = TargetOptions & Omit<z.infer<typeof CheckpointWipOptionsSchema>, keyof TargetOptions>;

export interface CheckpointWipResult {
  events: WipEvent[];
  /** The shutdown signal that ended the watch (null: the run finished, or no watch). */
  signal: NodeJS.Signals | null;
  /** The process exit status the CLI uses: 3 a push did not land (no watch), 128+n a signal, else 0. */
  status: number;
}

/** `wip checkpoint`: checkpoint a running eval's directory once, or keep watching it until a signal or the run's end. */
export async function checkpointWip(opts: CheckpointWipOptions): Promise<CheckpointWipResult> {
  checkOptions('checkpointWip', CheckpointWipOptionsSchema, opts);
  const { runDir: given, full, watch, onEvent, ...rest } = opts;
  const events: WipEvent[] = [];
  const session = await WipSession.start({
    ...rest,
    runDir: given,
    intervalMs: opts.intervalMs ?? 30_000,
    everyRows: opts.everyRows ?? 50,
    pollMs: 500,
    noStartCheckpoint: true,
    onEvent: (e) => {
      events.push(e);
      onEvent?.(e);
    },
  });
  await session.checkpoint({ full: Boolean(full) });
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

export const ListWipBranchesOptionsSchema = z.object({
  ...TargetFields,
  /** Ask the remote (default true). */
  fetch: z.boolean().optional(),
});
export type ListWipBranchesOptions = TargetOptions & Omit<z.infer<typeof ListWipBranchesOptionsSchema>, keyof TargetOptions>;

/** `wip list`: local and remote WIP branches with host, run, rows and age. */
export async function listWipBranches(opts: ListWipBranchesOptions = {}): Promise<WipListing> {
  checkOptions('listWipBranches', ListWipBranchesOptionsSchema, opts);
  const target = await resolveTarget(opts);
  return listWip({ repo: target.repo, remote: target.remote, fetch: opts.fetch !== false });
}

export const RecoverWipRunOptionsSchema = z.object({
  ...TargetFields,
  /** A WIP branch or a run id. */
  source: z.string(),
  /** The workspace to write (default `.agentv/results/<run id>` under `cwd`). */
  out: z.string().optional(),
  /** Look at the remote's WIP branches too (default true). */
  fetch: z.boolean().optional(),
});
export type RecoverWipRunOptions = TargetOptions & Omit<z.infer<typeof RecoverWipRunOptionsSchema>, keyof TargetOptions>;

/** `wip recover`: rebuild a run workspace from its WIP branch, atomically (hybrid storage: from the bucket too). */
export async function recoverWipRun(opts: RecoverWipRunOptions): Promise<RecoverResult> {
  checkOptions('recoverWipRun', RecoverWipRunOptionsSchema, opts);
  const target = await resolveTarget(opts);
  const store = objectStoreForReading(target.config);
  try {
    return await recoverWip({
      repo: target.repo,
      remote: target.remote,
      source: opts.source,
      out: opts.out,
      cwd: opts.cwd ?? process.cwd(),
      fetch: opts.fetch !== false,
      store,
    });
  } finally {
    await store?.close();
  }
}

export const CleanWipBranchesOptionsSchema = z.object({
  ...TargetFields,
  /** Only branches whose last checkpoint is older than this (default 14 days). */
  olderThanMs: z.number().optional(),
  /** Also delete branches whose run is not published. */
  forceUnpublished: z.boolean().optional(),
  dryRun: z.boolean().optional(),
});
export type CleanWipBranchesOptions = TargetOptions & Omit<z.infer<typeof CleanWipBranchesOptionsSchema>, keyof TargetOptions>;

/** `wip clean`: delete WIP branches whose run is published (and that are old enough). */
export async function cleanWipBranches(opts: CleanWipBranchesOptions = {}): Promise<CleanResult> {
  checkOptions('cleanWipBranches', CleanWipBranchesOptionsSchema, opts);
  const target = await resolveTarget(opts);
  return cleanWip({
    repo: target.repo,
    remote: target.remote,
    resultsRef: target.resultsRef,
    olderThanMs: opts.olderThanMs ?? 14 * 86400 * 1000,
    forceUnpublished: Boolean(opts.forceUnpublished),
    dryRun: Boolean(opts.dryRun),
  });
}
