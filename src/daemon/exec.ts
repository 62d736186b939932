/**
 * `exec -- <command…>`: run an eval command, checkpoint the run workspace it writes while it runs,
 * forward signals to it, and when it exits publish the run (pushed per results.auto_push) and exit
 * with the command's status.
 *
 * Which workspace: `--out <dir>` names it; otherwise every run under the results root whose
 * index.jsonl appears or grows after the command started is followed (a command may write several).
 * Works with any command that writes a run workspace: nothing here knows about AgentV's CLI.
 *
 * On SIGINT/SIGTERM the signal goes to the command and every followed run is checkpointed at once
 * (flush), so what was written survives even if exec is killed right after; exec itself keeps
 * waiting for the command. A run without summary.json when the command exits did not finish: it
 * gets a final full checkpoint and stays on its WIP branch for `wip recover`.
 */
import { basename, resolve } from 'node:path';
import type { PublishResult } from '../publish/publish-job.js';
import type { PushOutcome } from '../sync/push-branches.js';
import { resolveTarget, targetOptionsOf, type TargetOptions } from '../repo/target.js';
import { flag, objectOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { DEFAULT_EVERY_ROWS, DEFAULT_INTERVAL_MS } from '../wip/index.js';
import { FORWARDED_SIGNALS, startCommand } from './child.js';
import { DEFAULT_ROOT } from './daemon-options.js';
import { finishRun } from './finish-run.js';
import { ObjectStoreError } from '../errors/store-errors.js';
import { silentLogger, type Logger } from './log.js';
import { Outbox } from './outbox.js';
import { RunFollower, type Followed } from './exec-follow.js';
import { inspectRun } from '../runs/read/run-dir-state.js';
import { onSignals } from '../util/signals.js';

/** `execRun`'s options (the `exec` command's flags come from the same fields). */
export const ExecOptionsSchema = z.strictObject({
  /** The command and its arguments (no shell). */
  command: z.array(z.string()).min(1),
  /** The run workspace the command writes. */
  out: z.string().optional().meta(flag('--out <run-dir>', 'The run workspace the command writes (default: any run that appears under --root)')),
  /** Without `out`: the results root to watch for runs (default .agentv/results). */
  root: z.string().default(DEFAULT_ROOT).meta(flag('--root <dir>', 'Results root to look for the run in when --out is not given (default .agentv/results)')),
  intervalMs: z
    .number()
    .nonnegative()
    .default(DEFAULT_INTERVAL_MS)
    .meta(flag('--interval <s>', 'Seconds between checkpoints (default 30)', { as: 'seconds' })),
  everyRows: z.number().nonnegative().default(DEFAULT_EVERY_ROWS).meta(flag('--every-rows <n>', 'Also checkpoint after this many new rows (default 50)')),
  /** Push (results and WIP); default results.auto_push. */
  push: z
    .boolean()
    .optional()
    .meta(flag('--push', 'Push results and WIP branches (default: results.auto_push)', { negate: { flag: '--no-push', help: 'Commit locally only' } })),
  ...TargetFields,
  /** How often the index and the root are looked at (default: the interval, between 50 and 500 ms). */
  pollMs: z.number().positive().optional(),
  networkTimeoutMs: z.number().positive().optional(),
  host: z.string().optional(),
  logger: objectOf<Logger>().default(silentLogger),
  /** Forward this process's signals to the command (the CLI does). */
  handleSignals: z.boolean().default(false),
  /** Children in their own process group (default: when stdin is not a terminal). */
  interactive: z.boolean().optional(),
});
export type ExecOptions = z.input<typeof ExecOptionsSchema>;

export interface ExecRunReport {
  dir: string;
  runId: string | null;
  branch: string | null;
  checkpoints: number;
  rows: number;
  finished: boolean;
  publish: PublishResult | null;
  push: PushOutcome | null;
  wip: string;
  queued: string[];
  error: string | null;
}

export interface ExecReport {
  /** The command's exit status (shell convention for signals). */
  status: number;
  runs: ExecRunReport[];
  /** Something after the command failed: publishing or pushing (exit codes in ARCHITECTURE.md; `cause` when an error). */
  failure: { code: number; message: string; cause?: unknown } | null;
}

/** Run a command (an eval) while checkpointing its run, then publish it when it ends, as `agentv-results exec` does. */
export async function execRun(options: ExecOptions): Promise<ExecReport> {
  const opts = parseOptions('execRun', ExecOptionsSchema, options);
  const cwd = opts.cwd;
  const logger = opts.logger;
  const target = await resolveTarget(targetOptionsOf(opts));
  const push = (opts.push ?? target.config.auto_push) && target.remote !== null;
  const outbox = Outbox.forCommonDir(target.repo.commonDir);
  const pollMs = opts.pollMs ?? Math.min(500, Math.max(50, opts.intervalMs));
  const fixed = opts.out ? resolve(cwd, opts.out) : null;
  const root = resolve(cwd, opts.root);
  const follower = await RunFollower.start({
    target,
    push,
    fixed,
    root,
    host: opts.host,
    intervalMs: opts.intervalMs,
    everyRows: opts.everyRows,
    pollMs,
    networkTimeoutMs: opts.networkTimeoutMs,
    logger,
  });

  const env = { ...(opts.env ?? process.env), ...(fixed ? { AGENTV_RESULTS_RUN_DIR: fixed } : {}) };
  const child = await startCommand(opts.command, { cwd, env, interactive: opts.interactive });
  logger.info('command started', { pid: child.pid, command: opts.command.join(' '), out: fixed ?? undefined, root: fixed ? undefined : root });
  const unsubscribe = opts.handleSignals
    ? onSignals(FORWARDED_SIGNALS, (sig) => {
        logger.info('forwarding signal to the command', { signal: sig, pid: child.pid });
        child.forward(sig);
        if (sig === 'SIGINT' || sig === 'SIGTERM' || sig === 'SIGHUP') void follower.flushAll();
      })
    : () => undefined;

  let exited = false;
  const exit = child.exited.then((e) => {
    exited = true;
    return e;
  });
  // Discovery ticks until the command exits (bounded by the command's own lifetime).
  while (!exited) {
    await follower.discover().catch((err: unknown) => logger.warn('cannot look for runs', { error: (err as Error).message }));
    await Promise.race([exit, new Promise((r) => setTimeout(r, pollMs))]);
  }
  const { status } = await exit;
  unsubscribe();
  logger.info('command exited', { status });
  // best effort: a last look for runs after the command ended; the runs already found are kept
  await follower.discover(true).catch(() => undefined);

  const runs: ExecRunReport[] = [];
  let failure: ExecReport['failure'] = null;
  for (const f of follower.runs()) {
    await f.starting;
    runs.push(
      await finishOne(
        f,
        { target, targetOptions: targetOptionsOf(opts), push, outbox, logger, networkTimeoutMs: opts.networkTimeoutMs },
        (fail) => (failure = failure ?? fail),
      ),
    );
  }
  return { status, runs, failure };
}

async function finishOne(
  f: Followed,
  ctx: {
    target: Awaited<ReturnType<typeof resolveTarget>>;
    targetOptions: TargetOptions;
    push: boolean;
    outbox: Outbox;
    logger: Logger;
    networkTimeoutMs?: number;
  },
  fail: (f: { code: number; message: string; cause?: unknown }) => void,
): Promise<ExecRunReport> {
  const { logger } = ctx;
  const state = await inspectRun(f.dir);
  const finished = state?.summaryComplete === true;
  const report: ExecRunReport = {
    dir: f.dir,
    runId: f.session?.checkpointer.runId ?? null,
    branch: f.session?.checkpointer.branch ?? null,
    checkpoints: f.checkpoints,
    rows: 0,
    finished,
    publish: null,
    push: null,
    wip: 'none',
    queued: [],
    error: null,
  };
  try {
    // Unfinished: a full final checkpoint (also files no row points at). Finished: the publish
    // captures everything, so the session only stops.
    const last = state ? await f.session?.stop({ flush: !finished, full: true }) : await f.session?.stop({ flush: false });
    report.rows = last?.rows ?? f.session?.checkpointer.state.meta?.rows ?? 0;
    if (last && last.status !== 'unchanged') report.checkpoints++;
  } catch (err) {
    report.error = (err as Error).message;
    logger.warn('final checkpoint failed', { dir: f.dir, error: report.error });
  }
  if (!state) {
    report.error = `the run directory ${f.dir} disappeared${report.branch ? `; its checkpoints are on ${report.branch}` : ''}`;
    logger.warn('run directory is gone', { dir: f.dir, wip: report.branch ?? undefined });
    return report;
  }
  if (!finished) {
    report.wip = report.branch ? 'kept' : 'none';
    logger.warn('run did not finish (no summary.json); its checkpoints stay on the WIP branch', {
      dir: f.dir,
      wip: report.branch ?? undefined,
      recover: report.runId ? `agentv-results wip recover ${report.runId}` : undefined,
    });
    return report;
  }
  try {
    const done = await finishRun({
      target: ctx.target,
      targetOptions: ctx.targetOptions,
      runDir: f.dir,
      wipRef: f.session?.checkpointer.ref ?? null,
      push: ctx.push,
      outbox: ctx.outbox,
      logger,
      networkTimeoutMs: ctx.networkTimeoutMs,
    });
    report.publish = done.publish;
    report.push = done.push;
    report.wip = done.wip;
    report.queued = done.queued;
    report.runId = done.publish.runId;
    if (done.push?.classification === 'conflict') fail({ code: 1, message: done.push.message });
    else if (done.push && !done.push.landed && ctx.target.config.require_push)
      fail({ code: 3, message: `${done.push.message}; the run is committed locally and queued` });
  } catch (err) {
    report.error = (err as Error).message;
    if (err instanceof ObjectStoreError && err.transient) {
      // storage_mode hybrid, the bucket unreachable: nothing was committed; the run waits in the
      // outbox (a daemon, or `daemon --once`, publishes it) as a push waits for its remote.
      const id = await ctx.outbox.put({
        kind: 'publish',
        run_dir: f.dir,
        run_id: report.runId ?? basename(f.dir),
        wip_ref: f.session?.checkpointer.ref ?? null,
      });
      report.queued.push(id);
      logger.warn('object store not reachable; the run is queued for publish', { dir: f.dir, error: report.error });
      fail({ code: 3, message: `${report.error}; the run is queued in the outbox (agentv-results daemon --once publishes it)`, cause: err });
      return report;
    }
    logger.error('publish failed', { dir: f.dir, error: report.error });
    fail({ code: 3, message: report.error, cause: err });
  }
  return report;
}
