/**
 * `trend` over every source: runs given as paths, the local `.agentv/results/` runs, or published
 * ones. The computation, its types and its regression rule are in ./series.ts; this module finds
 * the runs. Published runs are found with the branch listing and their result manifests read in
 * one batch (`readListedManifests`); a run whose manifest is not there as rows (archived, another
 * layout) is materialized with `pull` (or the caller's own materializer: the Dashboard's run
 * cache) — all from the history library, so this module never reads the results branch itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../errors/input-error.js';
import { listRuns, readListedManifests, type ListOptions, type ListResult } from '../branch-read/list.js';
import { manifestRows } from '../compare/score-rows.js';
import { pull, pullWhere } from '../branch-read/pull.js';
import { loadTrendRun, seriesKeysOf, TrendFields, trendLocal, trendOfRuns, type LoadedTrendRun, type TrendReport } from './series.js';
import * as z from 'zod';
import { flag, fnOf, objectOf, parseOptions, TargetFields } from '../options/verb-options.js';

export * from './series.js';

/** The listing flags of the commands that read published runs (`trend`, `flaky`): the `list` option's fields a user sets. */
export const PublishedListFlagsSchema = z.strictObject({
  fetch: z.boolean().optional().meta(flag('--fetch', 'With --published or published run names: fetch the results branch first')),
  remote: z.string().optional().meta(flag('--remote <name>', 'With --published or published run names: remote (default: results.remote, else origin)')),
  configFile: TargetFields.configFile,
  project: TargetFields.project,
});

/** `trend`'s options, parsed once at its door (the `trend` command's flags come from the same fields). */
export const TrendOptionsSchema = z.strictObject({
  /** Read published runs from the results branch instead of local ones. */
  published: z
    .boolean()
    .default(false)
    .meta(flag('--published', 'Use the runs published on the results branch (listed from its catalog and pulled), not local ones')),
  ...TrendFields,
  /** Listing options (remote, fetch, config file, project …) when `published`. */
  list: objectOf<Omit<ListOptions, 'experiment' | 'limit' | 'cwd'>>().optional(),
  /**
   * With `published`: where a listed run's files are read from (a directory the caller keeps, e.g.
   * a server's run cache). Default: each run pulled into a temporary directory removed afterwards.
   */
  materialize: fnOf<(runId: string) => Promise<string>>().optional(),
  /** With `published`: a listing the caller already made with the same `list` options (not fetched again). */
  listed: objectOf<ListResult>().optional(),
});

export type TrendAllOptions = z.input<typeof TrendOptionsSchema>;

/** Each (experiment, target) series' scores over the published runs, with its slope and direction, as `agentv-results trend` reports them. */
export async function trend(options: TrendAllOptions = {}): Promise<TrendReport> {
  const opts = parseOptions('trend', TrendOptionsSchema, options);
  if (!opts.published) return trendLocal(opts);
  if (opts.sources.length > 0) throw new InputError('pass run paths or --published, not both');
  const { cwd } = opts;
  const listed = opts.listed ?? (await listRuns({ ...opts.list, cwd, experiment: opts.experiment }));
  // Pull only what a series will use: the newest `last` runs of each series (the listing is newest first).
  const wanted = new Set<string>();
  const perSeries = new Map<string, number>();
  for (const run of listed.runs) {
    for (const key of seriesKeysOf(run, opts)) {
      const id = JSON.stringify([key.experiment, key.target]);
      const n = perSeries.get(id) ?? 0;
      if (opts.last === undefined || n < opts.last) wanted.add(run.run_id);
      perSeries.set(id, n + 1);
    }
  }
  const selected = listed.runs.filter((r) => wanted.has(r.run_id));
  const manifests = await readListedManifests({ ...opts.list, cwd }, listed, selected);
  let tmp: string | null = null;
  try {
    const warnings: string[] = [];
    const runs: LoadedTrendRun[] = [];
    let i = 0;
    for (const run of selected) {
      // Named by its id: where the rows were read from means nothing to the reader.
      const path = `${run.run_id}/index.jsonl`;
      const m = manifests.get(run.run_id);
      const parsed = m ? manifestRows(m.text, run.run_id) : null;
      if (parsed && parsed.rows.length > 0) {
        warnings.push(...parsed.warnings);
        runs.push({ path, runId: run.run_id, experiment: run.experiment, rows: parsed.rows });
        continue;
      }
      if (!opts.materialize) tmp ??= await mkdtemp(join(tmpdir(), 'agentv-trend-'));
      // The listing fetched already (when asked): every pull reads what it saw, without fetching again.
      const dir = opts.materialize
        ? await opts.materialize(run.run_id)
        : (await pull({ ...pullWhere(opts.list), fetch: false, cwd, runId: run.run_id, out: join(tmp!, String(i++)) })).dir;
      const { warnings: w, ...loaded } = await loadTrendRun(dir, cwd, run.run_id, run.experiment);
      warnings.push(...w);
      runs.push({ ...loaded, path });
    }
    if (runs.length === 0)
      throw new InputError(
        `no published runs${opts.experiment ? ` of experiment ${opts.experiment}` : ''}${opts.target ? ` for target ${opts.target}` : ''} on ${listed.branch}`,
      );
    return { ...trendOfRuns(runs, opts, 'published', warnings), read: listed.read.description };
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}
