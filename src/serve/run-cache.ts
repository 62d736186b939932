/**
 * Run detail, compare and the per-run report need a run's files as a workspace on disk (that is
 * what the run reader, `compareRuns` and `generateReport` read). `pull` materializes one run from
 * the results branch into a private cache directory of this server; a run's light files do not
 * change once published (tags and feedback are read from the branch each time instead), so each
 * run is pulled once per server and concurrent requests share the pull.
 *
 * The cache is bounded: it holds the `maxRuns` runs used last (LRU). A run that falls out has its
 * pulled copy removed and its run handle disposed (the scratch copy a derived layout was read
 * through goes with it); a later request pulls it again.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pull } from '../branch-read/pull.js';
import { pullPayloads, type PayloadsResult } from '../branch-read/pull-payloads.js';
import type { PublishTarget, TargetOptions } from '../repo/target.js';
import { generateReport } from '../report/generate.js';
import type { LoadedRun } from '../runs/read/run-reader.js';
import { openRun, type RunHandle } from '../runs/read/run-handle.js';
import { summarizeRun, type RunSummaryReport } from '../runs/summary.js';
import type { ListedRun, ListResult } from '../branch-read/list.js';
import { pullRunsBatch } from '../branch-read/pull-batch.js';

/** A run's private copy's directory name: a hash of (project, run id). */
const dirName = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 24);

/**
 * Dispose of a cached run's handle (its derived scratch copy). Best effort: a handle that never
 * opened (a failed pull) has nothing to remove, and a copy that cannot be removed is left in the
 * system's temporary directory — the server's answers do not depend on it.
 */
async function disposeQuietly(handle: Promise<RunHandle>): Promise<void> {
  try {
    await (await handle).dispose();
  } catch {
    // nothing to remove (the pull failed) or not removable: best effort, said above
  }
}

/** Remove a pulled copy that fell out of the cache (best effort, as disposeQuietly). */
async function removeQuietly(dir: Promise<string>): Promise<void> {
  try {
    await rm(await dir, { recursive: true, force: true });
  } catch {
    // a failed pull made no copy; a copy rm cannot remove stays in the temporary directory
  }
}

/**
 * A loaded run and the handle it was read through. A request reading the run's files holds it
 * (`users`); a handle replaced (payloads arrived in a derived layout) or forgotten meanwhile is
 * disposed when the last of them lets go, never under a reader.
 */
interface LoadedEntry {
  handle: Promise<RunHandle>;
  run: Promise<LoadedRun>;
  users: number;
  retired: boolean;
}

/** Dispose of an entry no longer cached, now or when its last reader is done. */
function retire(entry: LoadedEntry): Promise<void> {
  entry.retired = true;
  return entry.users === 0 ? disposeQuietly(entry.handle) : Promise.resolve();
}

/** How many runs a server keeps pulled at once, unless told otherwise. */
export const DEFAULT_MAX_CACHED_RUNS = 32;

export class RunCache {
  private root: Promise<string> | null = null;
  /**
   * How many private copies this cache has made: each copy gets a directory of its own, so a run
   * pulled again right after it fell out of the cache never lands in the directory whose removal
   * (started when it fell out, not awaited) is still under way.
   */
  private copies = 0;
  /** Pulled runs, least recently used first (a use moves a run to the end). */
  private pulled = new Map<string, Promise<string>>();
  private reports = new Map<string, Promise<{ file: string; missing: PayloadsResult['missing'] }>>();
  private loaded = new Map<string, LoadedEntry>();
  /** Payload reads under way, one per (run, rows key): concurrent first opens of one test share one. */
  private payloadFlights = new Map<string, Promise<PayloadsResult>>();
  private answers = new Map<string, Promise<unknown>>();
  private overlays = new Map<string, { tags: string | null; feedback: string | null }>();

  constructor(private readonly maxRuns = DEFAULT_MAX_CACHED_RUNS) {}

  /** How many runs are pulled (or being pulled) now: never more than the bound. */
  get size(): number {
    return this.pulled.size;
  }

  /** Mark `key` used last; past the bound, forget the run used least recently, its copy and its handle. */
  private touch(key: string, p: Promise<string>): void {
    this.pulled.delete(key);
    this.pulled.set(key, p);
    while (this.pulled.size > this.maxRuns) {
      const [oldest, dir] = this.pulled.entries().next().value as [string, Promise<string>];
      this.forget(oldest, dir);
    }
  }

  private forget(key: string, dir: Promise<string>): void {
    this.pulled.delete(key);
    this.reports.delete(key);
    const loaded = this.loaded.get(key);
    this.loaded.delete(key);
    void Promise.all([loaded && retire(loaded), removeQuietly(dir)]);
  }

  private dirRoot(): Promise<string> {
    this.root ??= mkdtemp(join(tmpdir(), 'agentv-results-serve-'));
    return this.root;
  }

  /** The run's workspace directory (pulled on first use). */
  workspace(opts: TargetOptions, runId: string): Promise<string> {
    const key = `${opts.project ?? ''}\0${runId}`;
    let p = this.pulled.get(key);
    if (p) this.touch(key, p);
    else {
      p = (async () => {
        const dir = join(await this.dirRoot(), `${dirName(key)}-${++this.copies}`);
        await pull({ ...opts, runId, out: dir, force: true });
        return dir;
      })();
      this.touch(key, p);
      const mine = p;
      // A failed pull (unknown run, remote not fetched yet) must not stick.
      p.catch(() => {
        if (this.pulled.get(key) === mine) this.pulled.delete(key);
      });
    }
    return p;
  }

  /**
   * Many runs pulled at once, with their payloads (branch-read/pull-batch.ts: a few git
   * processes for all of them, where `workspace` spends several on each): the static site asks
   * about runs by the hundred. A run the batch leaves out is pulled alone on first use, as ever.
   * Each run's overlays, read from the same tip, are kept for `prefetchedOverlays`.
   */
  async prefetch(opts: TargetOptions, listed: Pick<ListResult, 'tips' | 'read'>, runs: ListedRun[]): Promise<void> {
    const keyOf = (runId: string) => `${opts.project ?? ''}\0${runId}`;
    const todo = runs.filter((r) => !this.pulled.has(keyOf(r.run_id)));
    if (todo.length === 0) return;
    const root = await this.dirRoot();
    const got = await pullRunsBatch({ ...opts, listed, runs: todo, withArtifacts: true, destOf: (id) => join(root, `${dirName(keyOf(id))}-${++this.copies}`) });
    for (const [id, r] of got) {
      this.pulled.set(keyOf(id), Promise.resolve(r.dir));
      if (r.overlays) this.overlays.set(keyOf(id), r.overlays);
    }
  }

  /** The tags.json and feedback.json texts `prefetch` read with the run (undefined: not prefetched). */
  prefetchedOverlays(opts: TargetOptions, runId: string): { tags: string | null; feedback: string | null } | undefined {
    return this.overlays.get(`${opts.project ?? ''}\0${runId}`);
  }

  /** True when this server has pulled the run, or is pulling it (a failed pull is forgotten). */
  has(opts: TargetOptions, runId: string): boolean {
    return this.pulled.has(`${opts.project ?? ''}\0${runId}`);
  }

  /** The run as the run reader loads it from its workspace (once; again after payloads arrive in a derived layout). */
  run(opts: TargetOptions, runId: string): Promise<LoadedRun> {
    return this.entry(opts, runId).run;
  }

  /**
   * `fn` over the loaded run, holding it: a payload read for another test that replaces the run's
   * handle meanwhile does not remove the files `fn` reads (the old handle goes once `fn` is done).
   */
  async withRun<T>(opts: TargetOptions, runId: string, fn: (run: LoadedRun) => Promise<T>): Promise<T> {
    const entry = this.entry(opts, runId);
    entry.users++;
    try {
      return await fn(await entry.run);
    } finally {
      entry.users--;
      if (entry.retired && entry.users === 0) await disposeQuietly(entry.handle);
    }
  }

  private entry(opts: TargetOptions, runId: string): LoadedEntry {
    const key = `${opts.project ?? ''}\0${runId}`;
    const cached = this.loaded.get(key);
    if (cached) {
      const pulled = this.pulled.get(key);
      if (pulled) this.touch(key, pulled);
      return cached;
    }
    // Opened once and kept with the run: its derived copy (another layout) is removed when the run is forgotten.
    // Its errors name it by its id (shownAs), not by this cache's private copy.
    const handle = this.workspace(opts, runId).then((dir) => openRun(dir, { shownAs: runId }));
    const run = handle.then((h) => h.load());
    const entry: LoadedEntry = { handle, run, users: 0, retired: false };
    this.loaded.set(key, entry);
    // observed: the caller awaits run and gets the error; this only forgets the cached failure and its handle
    run.catch(() => {
      if (this.loaded.get(key) === entry) this.loaded.delete(key);
      void disposeQuietly(handle);
    });
    return entry;
  }

  /**
   * The run as the run reader loads it and its figures as `summary` gives them, under the id it is
   * listed by. The private copy's directory is named by a hash; a run whose files record no id of
   * their own (AgentV 4.42's keep no summary.json) would otherwise be called by that hash, so it
   * takes the listed id (`<experiment>::<timestamp>` for a 4.42 run). An id the run's files do
   * record is kept.
   */
  async load(opts: TargetOptions, run: ListedRun): Promise<{ loaded: LoadedRun; summary: RunSummaryReport['summary'] }> {
    const dir = await this.workspace(opts, run.run_id);
    const [loaded, summarized] = await Promise.all([this.run(opts, run.run_id), summarizeRun({ run: dir, shownAs: run.run_id })]);
    if (loaded.runId !== basename(dir)) return { loaded, summary: summarized.summary };
    return { loaded: { ...loaded, runId: run.run_id }, summary: { ...summarized.summary, run_id: run.run_id } };
  }

  /**
   * Bring the payloads of the rows `rows` picks (all when omitted) into the run's workspace, from
   * the artifacts branch, fetched when this machine lacks them (branch-read/pull.ts pullPayloads).
   * Returns what is still missing; the loaded run is refreshed when the run reader reads a derived copy.
   */
  async payloads(
    opts: TargetOptions,
    runId: string,
    rows?: (row: Record<string, unknown>) => boolean,
    target?: PublishTarget,
    /** Names what `rows` picks (a test and target): concurrent calls with the same key share one read. Without it, every row. */
    rowsKey?: string,
  ): Promise<PayloadsResult> {
    const key = `${opts.project ?? ''}\0${runId}`;
    const flightKey = `${key}\0${rows === undefined ? '*' : (rowsKey ?? null)}`;
    const shared = rows === undefined || rowsKey !== undefined;
    const running = shared ? this.payloadFlights.get(flightKey) : undefined;
    if (running) return running;
    const flight = (async () => {
      const dir = await this.workspace(opts, runId);
      const res = await pullPayloads({ ...opts, runId, dir, rows, target });
      const cached = this.loaded.get(key);
      // a failed cached load has no layout to keep: it is dropped
      if (res.written.length > 0 && (await cached?.run.catch(() => null))?.layout !== 'bundle' && cached && this.loaded.get(key) === cached) {
        this.loaded.delete(key);
        await retire(cached);
      }
      return res;
    })();
    if (!shared) return flight;
    this.payloadFlights.set(flightKey, flight);
    try {
      return await flight;
    } finally {
      // Done (or failed): a later call reads again, and finds written what this one wrote.
      if (this.payloadFlights.get(flightKey) === flight) this.payloadFlights.delete(flightKey);
    }
  }

  /**
   * An answer computed from published runs only (a compare of two runs, say), kept for the life of
   * the server: a published run's files do not change. A failure is not kept. At most 64 answers.
   */
  memo<T>(key: string, compute: () => Promise<T>): Promise<T> {
    let p = this.answers.get(key) as Promise<T> | undefined;
    if (!p) {
      if (this.answers.size >= 64) this.answers.delete(this.answers.keys().next().value as string);
      p = compute();
      this.answers.set(key, p);
      // observed: the caller awaits p and gets the error; this only forgets the cached failure
      p.catch(() => this.answers.delete(key));
    }
    return p;
  }

  /** The report's HTML file for the run, with every payload the artifacts branch has (like the local report), generated once. */
  report(opts: TargetOptions, runId: string): Promise<{ file: string; missing: PayloadsResult['missing'] }> {
    const key = `${opts.project ?? ''}\0${runId}`;
    let p = this.reports.get(key);
    if (!p) {
      p = (async () => {
        const dir = await this.workspace(opts, runId);
        const { missing } = await this.payloads(opts, runId);
        return { file: (await generateReport({ run: dir, shownAs: runId, out: join(dir, '.agentv-results-report.html') })).out, missing };
      })();
      this.reports.set(key, p);
      // observed: the caller awaits p and gets the error; this only forgets the cached failure
      p.catch(() => this.reports.delete(key));
    }
    return p;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.payloadFlights.values()]);
    const handles = [...this.loaded.values()].map((l) => disposeQuietly(l.handle));
    this.loaded.clear();
    await Promise.all(handles);
    if (this.root) await rm(await this.root, { recursive: true, force: true });
  }
}
