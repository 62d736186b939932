/**
 * The checkpointing policy of one in-progress run, as a library an eval runner can embed:
 * checkpoint at start, every `intervalMs` when something changed, as soon as `everyRows` new
 * complete rows are written, and on flush() (at exit, on SIGINT/SIGTERM). Checkpoints never
 * overlap (one chain of promises); WIP pushes, when enabled, run one at a time and always carry the
 * newest tip, so pushes coalesce while the remote is slow or away.
 *
 *   const session = await WipSession.start({ runDir, flushOnSignals: true });
 *   ...the runner appends rows to index.jsonl...
 *   await session.stop();   // final flush
 */
import { resolve } from 'node:path';
import { configGetMany, gcAuto, type GcConfig, type Repo } from '../git/index.js';
import { Checkpointer, type CheckpointResult } from './checkpoint.js';
import { pushWipBranches, type WipPushResult } from './remote.js';
import { resolveTarget, type TargetOptions } from '../repo/target.js';
import { objectStoreFor } from '../repo/storage.js';
import type { ObjectStore } from '../store/object-store.js';
import { fnOf, objectOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';

export const DEFAULT_INTERVAL_MS = 30_000;
export const DEFAULT_EVERY_ROWS = 50;
/** How often the index is looked at for the row trigger (a stat and the new bytes only). */
export const DEFAULT_POLL_MS = 1_000;
/**
 * Every checkpoint is one small pack (fast-import); a four-hour run at 30 s makes hundreds. Every
 * so many checkpoints `git gc --auto` consolidates them once git's own thresholds say so (a no-op
 * otherwise), so object lookups do not slow down over a long run.
 */
const GC_EVERY = 32;

export type WipEvent =
  | { type: 'checkpoint'; result: CheckpointResult }
  | { type: 'push'; result: WipPushResult; sha: string }
  | { type: 'error'; phase: 'checkpoint' | 'push'; error: Error };

/** `WipSession.start`'s options, parsed once there (the defaults are here). */
export const WipSessionOptionsSchema = z.strictObject({
  ...TargetFields,
  /** The run workspace (relative paths resolve from `cwd`). */
  runDir: z.string(),
  /** Checkpoint this often when something changed (default 30 s). */
  intervalMs: z.number().nonnegative().default(DEFAULT_INTERVAL_MS),
  /** Checkpoint as soon as this many new complete rows are written (default 50; 0: never by rows). */
  everyRows: z.number().nonnegative().default(DEFAULT_EVERY_ROWS),
  /** How often the index is looked at (default: the interval, between 50 ms and 1 s). */
  pollMs: z.number().positive().optional(),
  /** Push the WIP branch after checkpoints; default results.auto_push. */
  push: z.boolean().optional(),
  pushTimeoutMs: z.number().positive().optional(),
  host: z.string().optional(),
  /**
   * Use this repository/remote instead of resolving the target from the configuration (the daemon's
   * and exec's, opened once for every run they follow).
   * @internal A program gives the target options (`cwd`, `remote`, `configFile`, `project`).
   */
  repo: objectOf<Repo>().optional(),
  /** @internal With `repo`. */
  remoteName: z.string().nullable().optional(),
  /** On SIGINT/SIGTERM: flush, then let the signal take its default course. */
  flushOnSignals: z.boolean().default(false),
  /** Skip the checkpoint at start (a caller that has just checkpointed). */
  noStartCheckpoint: z.boolean().default(false),
  onEvent: fnOf<(event: WipEvent) => void>().optional(),
  now: fnOf<() => Date>().optional(),
  /**
   * storage_mode hybrid: where heavy files go (with `repo`; else from the configuration).
   * @internal
   */
  store: objectOf<ObjectStore>().nullable().optional(),
  /** @internal With `repo`: the configuration's heavy_threshold_bytes. */
  heavyBytes: z.number().nonnegative().optional(),
});
type ParsedWipSessionOptions = z.output<typeof WipSessionOptionsSchema>;

/**
 * What a runner passes to `WipSession.start`: the schema's input, written out so the package's own
 * members (`repo`, `remoteName`, `store`, `heavyBytes`) stay out of the published declarations.
 * The check below keeps it equal to the schema.
 */
export interface WipSessionOptions extends TargetOptions {
  runDir: string;
  intervalMs?: number;
  everyRows?: number;
  pollMs?: number;
  /** Push the WIP branch after checkpoints; default results.auto_push. */
  push?: boolean;
  pushTimeoutMs?: number;
  host?: string;
  /** @internal */
  repo?: Repo;
  /** @internal */
  remoteName?: string | null;
  /** On SIGINT/SIGTERM: flush, then let the signal take its default course. */
  flushOnSignals?: boolean;
  /** Skip the checkpoint at start (a caller that has just checkpointed). */
  noStartCheckpoint?: boolean;
  onEvent?: (event: WipEvent) => void;
  now?: () => Date;
  /** @internal */
  store?: ObjectStore | null;
  /** @internal */
  heavyBytes?: number;
}
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
const _sameAsSchema: SameKeys<Omit<WipSessionOptions, 'resolved'>, z.input<typeof WipSessionOptionsSchema>> &
  (z.input<typeof WipSessionOptionsSchema> extends Omit<WipSessionOptions, 'resolved'> ? true : false) = true;
void _sameAsSchema;

export async function authorOf(repo: Repo): Promise<{ name: string; email: string }> {
  return (await settingsOf(repo)).author;
}

/** The author and gc's thresholds, with one git process (gc --auto is then started only when git's own thresholds could say yes). */
async function settingsOf(repo: Repo): Promise<{ author: { name: string; email: string }; gc: GcConfig }> {
  const c = await configGetMany(repo, ['user.name', 'user.email', 'gc.auto', 'gc.autoPackLimit']);
  return {
    author: { name: c.get('user.name') ?? 'agentv-results', email: c.get('user.email') ?? 'agentv-results@localhost' },
    gc: { auto: c.get('gc.auto'), autoPackLimit: c.get('gc.autoPackLimit') },
  };
}

/** The checkpointing of one running eval, for a runner to embed: at start, on a timer, every so many rows, and on flush or stop. */
export class WipSession {
  /** @internal The checkpoints' state (the daemon and exec read the run id, branch and rows from it). */
  readonly checkpointer: Checkpointer;
  readonly remote: string | null;
  readonly pushEnabled: boolean;
  private readonly opts: ParsedWipSessionOptions;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private lastCheckpointAt = 0;
  private stopped = false;
  private polling = false;
  private pushing: Promise<void> | null = null;
  private pushedSha: string | null = null;
  private pushAgain = false;
  private readonly signalHandlers: [NodeJS.Signals, () => void][] = [];
  /** gc's thresholds as configured when the session started. */
  private gc: GcConfig = {};

  private constructor(cp: Checkpointer, remote: string | null, pushEnabled: boolean, opts: ParsedWipSessionOptions) {
    this.checkpointer = cp;
    this.remote = remote;
    this.pushEnabled = pushEnabled && remote !== null;
    this.opts = opts;
  }

  /** Open the run's WIP branch and start checkpointing (by default a first checkpoint now). */
  static async start(opts: WipSessionOptions): Promise<WipSession> {
    const o = parseOptions('WipSession', WipSessionOptionsSchema, opts);
    let repo = o.repo;
    let remote = o.remoteName ?? null;
    let push = o.push ?? false;
    let store = o.store ?? null;
    let heavyBytes = o.heavyBytes;
    if (!repo) {
      const target = await resolveTarget(o);
      repo = target.repo;
      remote = target.remote;
      push = o.push ?? target.config.auto_push;
      store ??= objectStoreFor(target.config);
      heavyBytes ??= target.config.heavy_threshold_bytes;
    }
    const settings = await settingsOf(repo);
    const cp = await Checkpointer.open({
      repo,
      runDir: resolve(o.cwd, o.runDir),
      author: settings.author,
      host: o.host,
      now: o.now,
      store,
      ...(heavyBytes !== undefined ? { heavyBytes } : {}),
    });
    const session = new WipSession(cp, remote, push, o);
    session.gc = settings.gc;
    if (!o.noStartCheckpoint) await session.checkpoint();
    session.schedule();
    if (o.flushOnSignals) session.installSignalFlush();
    return session;
  }

  /** One checkpoint now (queued behind any running one); pushes in the background when enabled. */
  checkpoint(opts: { full?: boolean } = {}): Promise<CheckpointResult> {
    const run = this.chain.then(async () => {
      const result = await this.checkpointer.checkpoint(opts);
      this.lastCheckpointAt = Date.now();
      this.opts.onEvent?.({ type: 'checkpoint', result });
      if (this.pushEnabled && result.commit !== this.pushedSha) this.kickPush();
      return result;
    });
    // Housekeeping runs after the caller has its result; the next checkpoint waits for it.
    this.chain = run
      .then((r) => (r.status !== 'unchanged' && r.checkpoint % GC_EVERY === 0 ? gcAuto(this.checkpointer.repo, { config: this.gc }) : undefined))
      // logged: the checkpoint reports through onEvent; the loop goes on
      .catch(() => undefined);
    return run;
  }

  /** A runner can call this right after appending rows instead of waiting for the next poll. */
  nudge(): void {
    void this.poll();
  }

  /** Checkpoint whatever is pending and wait for the WIP push (bounded by the push timeout). */
  async flush(opts: { full?: boolean } = {}): Promise<CheckpointResult> {
    const result = await this.checkpoint(opts);
    await this.waitForPush();
    return result;
  }

  /** Stop the timers; by default flush first. */
  async stop(opts: { flush?: boolean; full?: boolean } = {}): Promise<CheckpointResult | null> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.removeSignalFlush();
    if (opts.flush === false) {
      await this.chain;
      await this.waitForPush();
      return null;
    }
    return this.flush({ full: opts.full });
  }

  private schedule(): void {
    // A short interval implies looking often; otherwise once a second is plenty for the row trigger.
    const pollMs = this.opts.pollMs ?? Math.min(DEFAULT_POLL_MS, Math.max(50, this.opts.intervalMs));
    this.lastCheckpointAt = Date.now();
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      const everyRows = this.opts.everyRows;
      const interval = this.opts.intervalMs;
      const due = Date.now() - this.lastCheckpointAt >= interval;
      const rows = await this.checkpointer.pendingRows();
      // The interval checkpoint is cheap when nothing changed (no commit is made).
      if (due || (everyRows > 0 && rows >= everyRows)) await this.checkpoint();
    } catch (err) {
      this.opts.onEvent?.({ type: 'error', phase: 'checkpoint', error: err as Error });
    } finally {
      this.polling = false;
    }
  }

  private kickPush(): void {
    if (this.pushing) {
      this.pushAgain = true;
      return;
    }
    this.pushing = (async () => {
      do {
        this.pushAgain = false;
        const { tip } = this.checkpointer.state;
        if (tip === null || tip === this.pushedSha) break;
        try {
          const result = await pushWipBranches(this.checkpointer.repo, this.remote as string, [{ ref: this.checkpointer.ref, sha: tip }], {
            timeoutMs: this.opts.pushTimeoutMs,
          });
          if (result.pushed.length > 0) this.pushedSha = tip;
          this.opts.onEvent?.({ type: 'push', result, sha: tip });
        } catch (err) {
          this.opts.onEvent?.({ type: 'error', phase: 'push', error: err as Error });
        }
      } while (this.pushAgain);
    })().finally(() => {
      this.pushing = null;
    });
  }

  private async waitForPush(): Promise<void> {
    if (!this.pushEnabled) return;
    if (this.pushing) await this.pushing;
    // The tip may be newer than what that push carried, or its push failed: one more attempt.
    if (this.checkpointer.state.tip !== this.pushedSha) {
      this.kickPush();
      if (this.pushing) await this.pushing;
    }
  }

  private installSignalFlush(): void {
    for (const sig of ['SIGINT', 'SIGTERM'] as NodeJS.Signals[]) {
      const handler = (): void => {
        this.removeSignalFlush();
        void this.stop()
          .catch((err: unknown) => this.opts.onEvent?.({ type: 'error', phase: 'checkpoint', error: err as Error }))
          // Re-raise for the default action (exit) only when nobody else handles the signal.
          .finally(() => {
            if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
          });
      };
      process.once(sig, handler);
      this.signalHandlers.push([sig, handler]);
    }
  }

  private removeSignalFlush(): void {
    for (const [sig, handler] of this.signalHandlers.splice(0)) process.removeListener(sig, handler);
  }
}
