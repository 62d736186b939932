/**
 * The daemon's view of each run workspace under the root: in progress (a WIP session checkpoints
 * it), finished (queued for publish), or handled. `examine(dir)` is idempotent and cheap: it is
 * called for every watcher event and for every run on every rescan.
 */
import type { ObjectStore } from '../store/object-store.js';
import { basename, dirname, join } from 'node:path';
import { readBlobs, readObjects, resolveRef, type Repo } from '../git/index.js';
import { sanitizeSegment } from '../model/path-segments.js';
import { runLocation, STABLE_RUNS_DIR } from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import { runManifestOf } from '../runs/export/source.js';
import { RECOVERY_MARKER, runIdOfDir, WipSession, wipBranch, type WipEvent } from '../wip/index.js';
import type { Logger } from './log.js';
import type { Outbox } from './outbox.js';
import { inspectRun } from '../runs/read/run-dir-state.js';
import { catalogListsRun } from '../layout/catalog-check.js';
import { readOptionalJson } from '../util/safe-open.js';

export interface TrackerOptions {
  repo: Repo;
  resultsRef: string;
  remote: string | null;
  push: boolean;
  outbox: Outbox;
  logger: Logger;
  host: string;
  intervalMs?: number;
  everyRows?: number;
  checkpointPollMs?: number;
  /** A summary.json that does not parse is published anyway after this long (its error then shows; runDaemon's schema holds the default). */
  settleMs: number;
  /**
   * An unfinished run whose index.jsonl has not changed for this long (a crashed eval left behind)
   * stops being polled; its last checkpoint is kept, and any change to it wakes it up again.
   */
  dormantAfterMs: number;
  /** Something was queued: the work loop should run. */
  wake: () => void;
  /** storage_mode hybrid: where checkpoints put heavy files. */
  store?: ObjectStore | null;
  heavyBytes?: number;
}

interface Tracked {
  phase: 'active' | 'dormant' | 'queued' | 'handled' | 'error';
  /** index.jsonl mtime when the run went dormant. */
  dormantAt?: number | null;
  session: WipSession | null;
  /** First time summary.json was seen incomplete. */
  summarySeenAt: number | null;
  retryAt: number;
}

export class RunTracker {
  private readonly runs = new Map<string, Tracked>();
  private readonly examining = new Map<string, Promise<void>>();
  private readonly puts = new Set<Promise<void>>();
  checkpoints = 0;

  constructor(private readonly opts: TrackerOptions) {}

  get activeRuns(): string[] {
    return [...this.runs].filter(([, t]) => t.phase === 'active').map(([d]) => d);
  }

  get trackedDirs(): string[] {
    return [...this.runs.keys()];
  }

  /** Serialized per directory: a burst of watcher events for one run examines it once at a time. */
  examine(dir: string): Promise<void> {
    const prev = this.examining.get(dir) ?? Promise.resolve();
    const next = prev
      .then(() => this.examineNow(dir))
      .catch((err: unknown) => {
        this.opts.logger.error('could not examine run', { dir, error: (err as Error).message });
      });
    this.examining.set(dir, next);
    void next.finally(() => {
      if (this.examining.get(dir) === next) this.examining.delete(dir);
    });
    return next;
  }

  /** Wait for examinations and outbox writes in flight (before a `--once` round, or exiting). */
  async settle(): Promise<void> {
    await Promise.all([...this.examining.values()]);
    await Promise.all([...this.puts]);
  }

  /** Stop every WIP session; with flush, capture what is pending first (clean shutdown). */
  async stopAll(opts: { flush: boolean }): Promise<void> {
    await Promise.all([...this.examining.values()]);
    for (const [dir, t] of this.runs) {
      if (!t.session) continue;
      try {
        const r = await t.session.stop({ flush: opts.flush });
        if (r && r.status !== 'unchanged') this.afterCheckpoint(dir, t.session, r.commit);
      } catch (err) {
        this.opts.logger.warn('final checkpoint failed', { dir, error: (err as Error).message });
      }
      t.session = null;
    }
    await Promise.all([...this.puts]);
  }

  private async examineNow(dir: string): Promise<void> {
    const { logger } = this.opts;
    const state = await inspectRun(dir);
    const t = this.runs.get(dir);
    if (state === null || !state.hasIndex) {
      if (t) {
        const branch = t.session?.checkpointer.branch;
        const rows = t.session?.checkpointer.state.meta?.rows;
        // best effort: the run is dropped; its WIP branch stays as it is
        await t.session?.stop({ flush: false }).catch(() => undefined);
        this.runs.delete(dir);
        if (state === null && t.phase === 'active')
          logger.warn('run directory deleted while watched; its checkpoints stay on the WIP branch', { dir, wip: branch, rows });
      }
      return;
    }
    if (t && (t.phase === 'queued' || t.phase === 'handled')) return;
    if (t?.phase === 'error' && Date.now() < t.retryAt) return;

    if (state.hasSummary) {
      const now = Date.now();
      if (!state.summaryComplete) {
        const seen = t?.summarySeenAt ?? now;
        if (t) t.summarySeenAt = seen;
        else this.runs.set(dir, { phase: 'active', session: null, summarySeenAt: seen, retryAt: 0 });
        // Still being written: a later event (or rescan) looks again.
        if (now - seen < this.opts.settleMs) return;
      }
      await this.finished(dir, t ?? null);
      return;
    }
    if (t?.session) {
      const idle = state.indexMtimeMs !== null && Date.now() - state.indexMtimeMs > this.opts.dormantAfterMs;
      if (idle && (await t.session.checkpointer.pendingRows()) === 0) {
        const session = t.session;
        t.session = null;
        // logged by the session: the last checkpoint failing leaves the previous one
        const last = await session.stop({ flush: true }).catch(() => null);
        if (last && last.status !== 'unchanged') this.afterCheckpoint(dir, session, last.commit);
        this.runs.set(dir, { phase: 'dormant', session: null, summarySeenAt: null, retryAt: 0, dormantAt: state.indexMtimeMs });
        logger.info('run idle; checkpointing paused until it changes', { run: session.checkpointer.runId, dir, rows: session.checkpointer.state.meta?.rows });
      }
      return;
    }
    if (t?.phase === 'dormant' && t.dormantAt === state.indexMtimeMs) return;
    // An AgentV run in progress (5.x or 4.42): AgentV checkpoints it itself (its own agentv/wip/
    // branches when auto_push is on); we wait for its final summary (4.42: benchmark) and publish then.
    if (state.layout !== 'bundle') {
      if (!t) this.runs.set(dir, { phase: 'active', session: null, summarySeenAt: null, retryAt: 0 });
      return;
    }
    await this.startSession(dir, t ?? null);
  }

  private async finished(dir: string, t: Tracked | null): Promise<void> {
    const { logger, outbox } = this.opts;
    // The runner is done: no more checkpoints. The publish captures the whole workspace.
    const session = t?.session ?? null;
    // best effort: the run is finished and published from its files, not from the session
    if (session) await session.stop({ flush: false }).catch(() => undefined);
    const runId = await runIdOf(dir);
    const wipRef = session?.checkpointer.ref ?? (await this.existingWipRef(dir, await wipRunIdOf(dir)));
    const id = `publish:${dir}`;
    const queued = await outbox.get(id);
    if (queued) {
      this.runs.set(dir, { phase: 'queued', session: null, summarySeenAt: null, retryAt: 0 });
      return;
    }
    if (await this.isPublished(runId, dir)) {
      this.runs.set(dir, { phase: 'handled', session: null, summarySeenAt: null, retryAt: 0 });
      // Published before (by hand, by exec, by an earlier daemon) but its WIP branch survived:
      // delete it once the publish is confirmed on the remote.
      if (wipRef && this.opts.remote !== null && this.opts.push) {
        await outbox.put({ kind: 'finalize-wip', ref: wipRef, run_id: runId, run_path: runLocation(runId).path, results_commit: null });
        this.opts.wake();
      }
      return;
    }
    await outbox.put({ kind: 'publish', run_dir: dir, run_id: runId, wip_ref: wipRef });
    this.runs.set(dir, { phase: 'queued', session: null, summarySeenAt: null, retryAt: 0 });
    logger.info('run finished; queued for publish', { run: runId, dir });
    this.opts.wake();
  }

  private async startSession(dir: string, t: Tracked | null): Promise<void> {
    const { logger } = this.opts;
    try {
      const session = await WipSession.start({
        repo: this.opts.repo,
        remoteName: this.opts.remote,
        push: false, // pushes go through the outbox (durable, coalesced, backed off)
        runDir: dir,
        host: this.opts.host,
        intervalMs: this.opts.intervalMs,
        everyRows: this.opts.everyRows,
        pollMs: this.opts.checkpointPollMs,
        noStartCheckpoint: true,
        store: this.opts.store ?? null,
        ...(this.opts.heavyBytes !== undefined ? { heavyBytes: this.opts.heavyBytes } : {}),
        onEvent: (e) => this.onSessionEvent(dir, e),
      });
      this.runs.set(dir, { phase: 'active', session, summarySeenAt: null, retryAt: 0 });
      logger.info('run in progress; checkpointing', { run: session.checkpointer.runId, dir, wip: session.checkpointer.branch });
      // The checkpoint at start, reported like every other one.
      await session.checkpoint().catch((err: unknown) => this.onSessionEvent(dir, { type: 'error', phase: 'checkpoint', error: err as Error }));
    } catch (err) {
      const retryAt = Date.now() + 30_000;
      this.runs.set(dir, { phase: 'error', session: null, summarySeenAt: t?.summarySeenAt ?? null, retryAt });
      logger.warn('cannot checkpoint run; will retry', { dir, error: (err as Error).message });
    }
  }

  private onSessionEvent(dir: string, e: WipEvent): void {
    const t = this.runs.get(dir);
    if (e.type === 'checkpoint') {
      for (const line of e.result.refused) this.opts.logger.warn('not checkpointed (publish would refuse it)', { dir, what: line });
      if (e.result.status === 'unchanged') return;
      this.checkpoints++;
      this.opts.logger.info('checkpoint', {
        run: e.result.runId,
        checkpoint: e.result.checkpoint,
        rows: e.result.rows,
        added: e.result.addedRows,
        files: e.result.files,
        wip: e.result.branch,
      });
      if (t?.session) this.afterCheckpoint(dir, t.session, e.result.commit);
    } else if (e.type === 'error') {
      this.opts.logger.warn('checkpoint failed', { dir, error: e.error.message });
      // The directory vanished (or lost its index): let examine() notice and drop it.
      void this.examine(dir);
    }
  }

  private afterCheckpoint(_dir: string, session: WipSession, _commit: string): void {
    if (this.opts.remote === null || !this.opts.push) return;
    const put = this.opts.outbox
      .put({ kind: 'push-wip', ref: session.checkpointer.ref })
      .then(() => this.opts.wake())
      .catch((err: unknown) => this.opts.logger.error('could not queue a WIP push', { wip: session.checkpointer.ref, error: (err as Error).message }));
    this.puts.add(put);
    void put.finally(() => this.puts.delete(put));
  }

  private async existingWipRef(dir: string, runId: string): Promise<string | null> {
    let branch = wipBranch(this.opts.host, runId);
    // No marker (or not JSON): not a recovered workspace. One that cannot be read fails this examination, logged with its reason.
    const marker = (await readOptionalJson(join(dir, RECOVERY_MARKER), { kind: 'run-file' })) as { branch?: unknown } | null | undefined;
    if (typeof marker?.branch === 'string') branch = marker.branch;
    const ref = `refs/heads/${branch}`;
    return (await resolveRef(this.opts.repo, ref)) ? ref : null;
  }

  /**
   * On the local results branch already (its day's catalog lists it): one small blob read. A run
   * of AgentV 4.42 published in its own layout has no catalog line: its `runs/<exp>/<ts>/` is looked up.
   */
  private async isPublished(runId: string, dir: string): Promise<boolean> {
    if ((await runManifestOf(dir))?.layout === 'agentv-stable') {
      const spec = `${this.opts.resultsRef}:${STABLE_RUNS_DIR}/${basename(dirname(dir))}/${basename(dir)}`;
      // unknown: an unreadable tip reads as "not published yet"; the next scan asks again
      const found = await readObjects(this.opts.repo, [spec]).catch(() => new Map());
      if (found.get(spec)?.type === 'tree') return true;
    }
    let catalogPath: string;
    try {
      catalogPath = runLocation(runId).catalogPath;
    } catch (err) {
      if (err instanceof LayoutError) return false;
      throw err;
    }
    const spec = `${this.opts.resultsRef}:${catalogPath}`;
    // unknown: an unreadable catalog reads as "not published yet"; the next scan asks again
    const blob = (await readBlobs(this.opts.repo, [spec]).catch(() => new Map<string, Buffer | null>())).get(spec);
    return blob ? catalogListsRun(blob.toString('utf8'), runId) : false;
  }
}

async function summaryRunId(dir: string): Promise<string | null> {
  // No summary (yet) or not JSON: no recorded id. One that cannot be read is said (the run is not published under a guessed id).
  const s = (await readOptionalJson(join(dir, 'summary.json'), { kind: 'run-file' })) as { run_id?: unknown } | null | undefined;
  return typeof s?.run_id === 'string' && s.run_id.length > 0 ? s.run_id : null;
}

/**
 * The id publish will use (export's rule for a workspace): summary.json's run_id when it has one,
 * else the folder name — AgentV's bare run id, the run's directory at the results branch root.
 */
async function runIdOf(dir: string): Promise<string> {
  return (await summaryRunId(dir)) ?? sanitizeSegment(basename(dir));
}

/** The id the run's WIP branch is named after: a recorded `<experiment>/<timestamp>`, else `<parent>/<dir>`. */
async function wipRunIdOf(dir: string): Promise<string> {
  const recorded = await summaryRunId(dir);
  return recorded?.includes('/') ? recorded : runIdOfDir(dir);
}
