/**
 * Run detail, compare and the per-run report need a run's files as a workspace on disk (that is
 * what the run reader, `compareRuns` and `generateReport` read). `pull` materializes one run from
 * the results branch into a private cache directory of this server; a run's light files do not
 * change once published (tags and feedback are read from the branch each time instead), so each
 * run is pulled once per server and concurrent requests share the pull.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pull } from '../history/pull.js';
import type { TargetOptions } from '../branch/target.js';
import { generateReport } from '../report/generate.js';

export class RunCache {
  private root: Promise<string> | null = null;
  private pulled = new Map<string, Promise<string>>();
  private reports = new Map<string, Promise<string>>();

  private dirRoot(): Promise<string> {
    this.root ??= mkdtemp(join(tmpdir(), 'agentv-results-serve-'));
    return this.root;
  }

  /** The run's workspace directory (pulled on first use). */
  workspace(opts: TargetOptions, runId: string): Promise<string> {
    const key = `${opts.project ?? ''}\0${runId}`;
    let p = this.pulled.get(key);
    if (!p) {
      p = (async () => {
        const dir = join(await this.dirRoot(), createHash('sha256').update(key).digest('hex').slice(0, 24));
        await pull({ ...opts, runId, out: dir, force: true });
        return dir;
      })();
      this.pulled.set(key, p);
      // A failed pull (unknown run, remote not fetched yet) must not stick.
      p.catch(() => this.pulled.delete(key));
    }
    return p;
  }

  /** The report's HTML file for the run, generated once. */
  report(opts: TargetOptions, runId: string): Promise<string> {
    const key = `${opts.project ?? ''}\0${runId}`;
    let p = this.reports.get(key);
    if (!p) {
      p = (async () => {
        const dir = await this.workspace(opts, runId);
        return (await generateReport({ run: dir, out: join(dir, '.agentv-results-report.html') })).out;
      })();
      this.reports.set(key, p);
      p.catch(() => this.reports.delete(key));
    }
    return p;
  }

  async close(): Promise<void> {
    if (this.root) await rm(await this.root, { recursive: true, force: true });
  }
}
