/**
 * What `exec` watches while its command runs: the run workspaces the command writes (the one named
 * by --out, or those under the results root whose index changes), each checkpointed by its own WIP
 * session from the moment it appears.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PublishTarget } from '../repo/target.js';
import { objectStoreFor } from '../repo/storage.js';
import { WipSession, type WipEvent } from '../wip/index.js';
import type { Logger } from './log.js';
import { findRunDirs, inspectRun } from '../runs/read/run-dir-state.js';
import { absentAs } from '../errors/errors.js';

export interface Followed {
  dir: string;
  session: WipSession | null;
  starting: Promise<void> | null;
  checkpoints: number;
  error: string | null;
}

export interface RunFollowerOptions {
  target: PublishTarget;
  push: boolean;
  /** The run directory given with --out, or null to find runs under `root`. */
  fixed: string | null;
  root: string;
  host?: string;
  intervalMs: number;
  everyRows: number;
  pollMs: number;
  networkTimeoutMs?: number;
  logger: Logger;
}

export class RunFollower {
  private readonly followed = new Map<string, Followed>();

  private constructor(
    private readonly o: RunFollowerOptions,
    /** Without --out: runs whose index.jsonl size/mtime differ from this snapshot are the command's. */
    private readonly baseline: Map<string, string>,
  ) {}

  static async start(o: RunFollowerOptions): Promise<RunFollower> {
    const baseline = new Map<string, string>();
    if (!o.fixed) for (const d of await findRunDirs(o.root)) baseline.set(d, await indexKey(d));
    return new RunFollower(o, baseline);
  }

  runs(): IterableIterator<Followed> {
    return this.followed.values();
  }

  /** Looks for the command's runs; `final` (after it exited): a finished run is only published. */
  async discover(final = false): Promise<void> {
    const candidates: string[] = [];
    if (this.o.fixed) {
      if ((await inspectRun(this.o.fixed))?.hasIndex) candidates.push(this.o.fixed);
    } else {
      for (const d of await findRunDirs(this.o.root)) if (!this.baseline.has(d) || this.baseline.get(d) !== (await indexKey(d))) candidates.push(d);
    }
    for (const d of candidates) {
      if (this.followed.has(d)) continue;
      const state = await inspectRun(d);
      // AgentV's runs (5.x and 4.42) are checkpointed by AgentV itself (agentv/wip/ with auto_push); we publish them once finished.
      this.follow(d, !(final && state?.summaryComplete) && (state?.layout ?? 'bundle') === 'bundle');
    }
  }

  /** One last checkpoint of every followed run (on a forwarded SIGINT/SIGTERM/SIGHUP). */
  async flushAll(): Promise<void> {
    for (const f of this.followed.values()) {
      await f.starting;
      await f.session?.checkpoint().catch((err: unknown) => this.o.logger.warn('flush failed', { dir: f.dir, error: (err as Error).message }));
    }
  }

  private follow(dir: string, checkpoint: boolean): void {
    const { o } = this;
    const f: Followed = { dir, session: null, starting: null, checkpoints: 0, error: null };
    this.followed.set(dir, f);
    // A run first seen after the command exited, already finished, only needs its publish.
    if (!checkpoint) return;
    f.starting = WipSession.start({
      repo: o.target.repo,
      remoteName: o.target.remote,
      store: objectStoreFor(o.target.config),
      heavyBytes: o.target.config.heavy_threshold_bytes,
      push: o.push,
      runDir: dir,
      host: o.host,
      intervalMs: o.intervalMs,
      everyRows: o.everyRows,
      pollMs: o.pollMs,
      pushTimeoutMs: o.networkTimeoutMs,
      onEvent: this.onEvent(f),
    }).then(
      (s) => {
        f.session = s;
      },
      (err: unknown) => {
        f.error = (err as Error).message;
        this.followed.delete(dir); // try again at the next discovery tick
        o.logger.warn('cannot checkpoint run yet', { dir, error: f.error });
      },
    );
  }

  private onEvent(f: Followed): (e: WipEvent) => void {
    const { logger } = this.o;
    return (e) => {
      if (e.type === 'checkpoint' && e.result.status !== 'unchanged') {
        f.checkpoints++;
        logger.info('checkpoint', {
          run: e.result.runId,
          checkpoint: e.result.checkpoint,
          rows: e.result.rows,
          added: e.result.addedRows,
          wip: e.result.branch,
        });
      } else if (e.type === 'push' && e.result.classification !== 'ok') {
        logger.warn('WIP push did not land; the next checkpoint retries', { message: e.result.message });
      } else if (e.type === 'error') {
        logger.warn(e.phase === 'push' ? 'WIP push failed' : 'checkpoint failed', { dir: f.dir, error: e.error.message });
      }
    };
  }
}

async function indexKey(dir: string): Promise<string> {
  // absent: no index yet reads as "none"; anything else propagates
  const st = (await stat(join(dir, 'index.jsonl')).catch(absentAs(null))) ?? (await stat(join(dir, '.internal', 'index.jsonl')).catch(absentAs(null)));
  return st ? `${st.size}:${st.mtimeMs}` : 'none';
}
