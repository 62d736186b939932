/**
 * `trend` over every source: local runs (src/results/trend.ts) or published ones. Published runs
 * are found with the branch listing and materialized with `pull` — both from the publish library,
 * so this module sits above publish and never reads the results branch itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../derive/export.js';
import { listRuns, type ListOptions } from '../history/list.js';
import { pull } from '../history/pull.js';
import { checkTrendOptions, loadTrendRun, trendLocal, trendOfRuns, type LoadedTrendRun, type TrendOptions, type TrendReport } from '../results/trend.js';

export interface TrendAllOptions extends TrendOptions {
  /** Read published runs from the results branch instead of local ones. */
  published?: boolean;
  /** Listing options (remote, fetch, config file, project …) when `published`. */
  list?: Omit<ListOptions, 'experiment' | 'limit' | 'cwd'>;
}

export async function trend(opts: TrendAllOptions = {}): Promise<TrendReport> {
  if (!opts.published) return trendLocal(opts);
  checkTrendOptions(opts);
  if ((opts.sources ?? []).length > 0) throw new InputError('pass run paths or --published, not both');
  const cwd = opts.cwd ?? process.cwd();
  const listed = await listRuns({ ...opts.list, cwd, experiment: opts.experiment });
  // Pull only what a series will use: the newest `last` runs of each experiment × target
  // (the listing is newest first).
  const wanted = new Set<string>();
  const perSeries = new Map<string, number>();
  for (const run of listed.runs) {
    for (const t of opts.target ? run.targets.filter((x) => x === opts.target) : run.targets) {
      const key = JSON.stringify([run.experiment, t]);
      const n = perSeries.get(key) ?? 0;
      if (opts.last === undefined || n < opts.last) wanted.add(run.run_id);
      perSeries.set(key, n + 1);
    }
  }
  const tmp = await mkdtemp(join(tmpdir(), 'agentv-trend-'));
  try {
    const warnings: string[] = [];
    const runs: LoadedTrendRun[] = [];
    let i = 0;
    for (const run of listed.runs.filter((r) => wanted.has(r.run_id))) {
      // The listing fetched already (when asked): every pull reads what it saw, without fetching again.
      const pulled = await pull({ ...opts.list, fetch: false, cwd, runId: run.run_id, out: join(tmp, String(i++)) });
      const { warnings: w, ...loaded } = await loadTrendRun(pulled.dir, cwd, run.run_id, run.experiment);
      warnings.push(...w);
      // The temporary pull directory is gone after this call: name the run by its id instead.
      runs.push({ ...loaded, path: `${run.run_id}/index.jsonl` });
    }
    if (runs.length === 0)
      throw new InputError(
        `no published runs${opts.experiment ? ` of experiment ${opts.experiment}` : ''}${opts.target ? ` for target ${opts.target}` : ''} on ${listed.branch}`,
      );
    return { ...trendOfRuns(runs, opts, 'published', warnings), read: listed.read.description };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
