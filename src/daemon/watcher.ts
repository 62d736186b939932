/**
 * Watching a results root for run activity. chokidar (inotify/FSEvents) gives near-immediate
 * notice that a run appeared or wrote its summary.json; when it cannot (inotify watch limit, a
 * network filesystem, or `--poll`), the watcher falls back to polling: the caller's periodic
 * rescan (findRunDirs) then carries discovery alone, at a shorter interval.
 *
 * Only the first levels matter: `<root>/<exp>/<ts>/{index.jsonl,summary.json}` and
 * `<root>/<run>/{index.jsonl,summary.json}`. Sidecar trees below a run are never watched (a run
 * can hold tens of thousands of files; watching them would exhaust inotify watches).
 */
import { watch, type FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, relative, sep } from 'node:path';
import type { Logger } from './log.js';
import { absentAs } from '../errors/errors.js';

const RUN_FILES = new Set(['index.jsonl', 'summary.json']);

export interface RunWatcherOptions {
  /** Never use OS events (polling only). */
  poll?: boolean;
  /** A run directory changed (null: something above run level changed — rescan). */
  onChange: (runDir: string | null) => void;
  logger: Logger;
}

export class RunWatcher {
  private watcher: FSWatcher | null = null;
  private _mode: 'events' | 'polling' = 'polling';

  constructor(
    readonly root: string,
    private readonly opts: RunWatcherOptions,
  ) {}

  get mode(): 'events' | 'polling' {
    return this._mode;
  }

  /** Start watching; resolves once the initial watch is set up (or polling was chosen). */
  async start(): Promise<void> {
    if (this.opts.poll) return;
    // absent: not created yet; anything else (a root we may not read) propagates
    const exists = await stat(this.root).then((s) => s.isDirectory(), absentAs(false));
    // chokidar does not pick up a root created later; the rescan finds it and calls start() again.
    if (!exists) return;
    const w = watch(this.root, {
      ignoreInitial: true,
      depth: 2,
      persistent: true,
      ignored: (path: string, stats?: Stats) => this.ignored(path, stats),
    });
    this.watcher = w;
    this._mode = 'events';
    w.on('all', (event, path) => this.route(event, path));
    w.on('error', (err: unknown) => {
      this.opts.logger.warn('file watcher failed; falling back to polling', { root: this.root, error: (err as Error).message ?? String(err) });
      void this.fallBack();
    });
    await new Promise<void>((resolvePromise) => {
      const timer = setTimeout(resolvePromise, 5_000);
      w.once('ready', () => {
        clearTimeout(timer);
        resolvePromise();
      });
    });
  }

  get watching(): boolean {
    return this.watcher !== null;
  }

  async close(): Promise<void> {
    const w = this.watcher;
    this.watcher = null;
    this._mode = 'polling';
    // best effort: closing a watcher at shutdown
    if (w) await w.close().catch(() => undefined);
  }

  private async fallBack(): Promise<void> {
    await this.close();
    this.opts.onChange(null);
  }

  private parts(path: string): string[] {
    const rel = relative(this.root, path);
    return rel === '' ? [] : rel.split(sep);
  }

  private ignored(path: string, stats?: Stats): boolean {
    const parts = this.parts(path);
    // AgentV 5 keeps its manifest in `<run>/.internal/index.jsonl`: that one hidden folder is watched.
    if (parts.some((p, i) => (p.startsWith('.') && !(i === 1 && p === '.internal')) || p === '..')) return true;
    if (parts.length <= 1) return false;
    // Depth 2: a run's files, or an experiment's run directory. Depth 3: a run's files only.
    if (parts.length === 2) return stats?.isFile() === true && !RUN_FILES.has(parts[1] as string);
    if (parts.length === 3) return stats?.isDirectory() === true || !RUN_FILES.has(parts[2] as string);
    return true;
  }

  private route(event: string, path: string): void {
    const parts = this.parts(path);
    const name = basename(path);
    if (RUN_FILES.has(name) && (parts.length === 2 || parts.length === 3)) {
      this.opts.onChange(parts[1] === '.internal' ? dirname(dirname(path)) : dirname(path));
      return;
    }
    if (event === 'addDir' || event === 'unlinkDir') {
      // A new or removed directory at run or experiment level: the rescan sorts out which it is.
      if (parts.length === 2 && event === 'unlinkDir') this.opts.onChange(path);
      else this.opts.onChange(null);
    }
  }
}
