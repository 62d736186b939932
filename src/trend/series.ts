/**
 * The trend of runs: its types, its computation and its regression rule — the one home of both
 * `trend` (CLI), `/api/trend` (the Dashboard's charts) and the library's `trend()`.
 *
 * Each series is computed as `agentv trend` computes it on the same runs, so the tools classify
 * alike:
 * - the series' runs in chronological order by the timestamp of their first (filtered) row, else
 *   the name of the directory holding the manifest;
 * - only the test ids every run of the series has count (unless `allowMissingTests`);
 * - a run's point is the mean score of its rows for those ids, rounded to 6 decimals;
 * - least-squares slope over the run index 0..n-1; degrading when slope <= -threshold, improving
 *   when slope >= threshold, else stable (threshold 0.01 by default).
 *
 * Which runs form a series: by default ONE series of every run selected, every target pooled, as
 * `agentv trend` without `--target` forms it (AgentV knows no experiment in a trend either: the
 * runs given, or the last N, are the series). `byTarget` splits it per target (as `agentv trend
 * --target <t>` for each target); `byExperiment` per experiment. The `experiment`/`target` filters
 * narrow the runs first.
 *
 * Regression marks on the points (what the Dashboard draws red): a point is marked when its mean
 * score is below the previous point's AND the trend of the series up to and including that point
 * is degrading by the same rule — so a flat or rising line never carries a mark, and a falling
 * one carries them where it fell.
 *
 * Series order: the most recent first (the timestamp of the last point), then the larger (more
 * runs), then by experiment and target.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../errors/input-error.js';
import { loadScoreRows, passVerdict, resolveManifest, type ScoreRow } from '../compare/score-rows.js';
import { readOptionalJson, readRegularText } from '../util/safe-open.js';
import * as z from 'zod';
import { flag } from '../options/verb-options.js';

export const DEFAULT_SLOPE_THRESHOLD = 0.01;
export type { SkippedSeries, TrendDirection, TrendReport, TrendRunPoint, TrendSeries } from './report-types.js';
import type { SkippedSeries, TrendDirection, TrendReport, TrendRunPoint, TrendSeries } from './report-types.js';

/** The options of a trend over runs (`trend()`'s, less where the runs come from): each default here, once. */
export const TrendFields = {
  /**
   * Run directories, index.jsonl or results files. Empty: the local runs under .agentv/results/. A
   * run read from a copy (a published run pulled into a scratch directory) is given with its run id,
   * `{ path, runId }`: its point and every warning name it by that id.
   */
  sources: z.array(z.union([z.string(), z.strictObject({ path: z.string(), runId: z.string().optional() })])).default([]),
  experiment: z.string().optional().meta(flag('--experiment <name>', 'Only this experiment')),
  target: z.string().optional().meta(flag('--target <name>', 'Only this target')),
  suite: z.string().optional().meta(flag('--suite <name>', 'Only rows of this suite')),
  /** One series per target instead of every target pooled. */
  byTarget: z
    .boolean()
    .default(false)
    .meta(flag('--by-target', 'One series per target (as agentv trend --target <t> for each) instead of every target pooled')),
  /** One series per experiment instead of every run selected. */
  byExperiment: z.boolean().default(false).meta(flag('--by-experiment', 'One series per experiment instead of every run selected')),
  /** Only the most recent N runs of each series (a slope needs two). */
  last: z.number().int().min(2).optional().meta(flag('--last <n>', 'Only the n most recent runs of each series (n >= 2)')),
  /** Minimum |slope| per run to call a series improving or degrading. */
  slopeThreshold: z
    .number()
    .min(0)
    .default(DEFAULT_SLOPE_THRESHOLD)
    .meta(
      flag('--slope-threshold <x>', `Minimum |slope| per run to call a series improving or degrading (default ${DEFAULT_SLOPE_THRESHOLD}, as agentv trend)`),
    ),
  allowMissingTests: z
    .boolean()
    .default(false)
    .meta(flag('--allow-missing-tests', 'Average each run over all its tests instead of only the tests every run of the series has')),
  failOnDegrading: z.boolean().default(false).meta(flag('--fail-on-degrading', 'Exit 1 when any series is degrading')),
  cwd: z
    .string()
    .default(() => process.cwd())
    .meta(flag('--dir <dir>', 'Working directory (local runs are read from <dir>/.agentv/results/)')),
};

/** The options of a trend over given runs (`trendOfRuns`, `trendLocal`): the trend fields alone. */
export const TrendSeriesOptionsSchema = z.strictObject(TrendFields);
/** A trend's options as a caller gives them. */
export type TrendOptions = z.input<typeof TrendSeriesOptionsSchema>;
/** A trend's options once parsed at `trend()`'s door: every default applied. */
export type TrendParsed = z.output<typeof TrendSeriesOptionsSchema>;

export interface LoadedTrendRun {
  path: string;
  runId?: string;
  experiment: string;
  rows: ScoreRow[];
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const round6 = (x: number) => Number(x.toFixed(6));

export function classifyTrend(slope: number, threshold = DEFAULT_SLOPE_THRESHOLD): TrendDirection {
  if (slope <= -threshold) return 'degrading';
  if (slope >= threshold) return 'improving';
  return 'stable';
}

/** Least squares of values against their index 0..n-1. */
export function linearFit(values: number[]): { slope: number; intercept: number; r_squared: number } {
  const n = values.length;
  const mx = (n - 1) / 2;
  const my = mean(values);
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (i - mx) * (values[i]! - my);
    den += (i - mx) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  const intercept = my - slope * mx;
  let ssTot = 0;
  let ssRes = 0;
  for (let i = 0; i < n; i++) {
    ssTot += (values[i]! - my) ** 2;
    ssRes += (values[i]! - (intercept + slope * i)) ** 2;
  }
  return { slope, intercept, r_squared: ssTot === 0 ? 1 : 1 - ssRes / ssTot };
}

/** The regression marks of a series' points, oldest first (see the module comment). */
export function regressionMarks(scores: number[], threshold = DEFAULT_SLOPE_THRESHOLD): boolean[] {
  return scores.map((s, i) => i > 0 && s < scores[i - 1]! && classifyTrend(linearFit(scores.slice(0, i + 1)).slope, threshold) === 'degrading');
}

async function experimentOf(runDir: string | null, rows: ScoreRow[]): Promise<string> {
  const fromRow = rows.find((r) => r.experiment)?.experiment;
  if (fromRow) return fromRow;
  if (runDir) {
    // No summary (or not JSON): the default experiment. One that cannot be read is said, not taken for none.
    const summary = (await readOptionalJson(join(runDir, 'summary.json'), { kind: 'run-file' })) as
      | { experiment?: unknown; metadata?: { experiment?: unknown } }
      | null
      | undefined;
    const e = summary?.metadata?.experiment ?? summary?.experiment;
    if (typeof e === 'string' && e) return e;
  }
  return 'default';
}

/** A run's rows for a trend; a run read from a copy is named by its `runId` (its path and warnings say it). */
export async function loadTrendRun(source: string, cwd: string, runId?: string, experiment?: string): Promise<LoadedTrendRun & { warnings: string[] }> {
  const src = await loadScoreRows(source, { cwd, shownAs: runId });
  return { path: src.path, runId, experiment: experiment ?? (await experimentOf(src.runDir, src.rows)), rows: src.rows, warnings: src.warnings };
}

/**
 * Run directories under `.agentv/results/`: AgentV's `<run_id>/`, ours `<experiment>/<ts>/`, or
 * the older `runs/<experiment>/<ts>/` — a directory with a manifest is a run and is not entered;
 * `.`/`_` folders (AgentV internals, `_autoresearch`) are skipped.
 */
export async function localRunDirs(cwd: string): Promise<string[]> {
  const root = resolve(cwd, '.agentv', 'results');
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith('.') || e.name.startsWith('_')) continue;
      const child = join(dir, e.name);
      if (resolveManifest(child)) out.push(child);
      else if (depth < 3) await walk(child, depth + 1);
    }
  };
  await walk(root, 1);
  return out.sort();
}

/** AgentV's sort key and label: the first row's timestamp, else the manifest's directory name. */
function sortKey(run: { path: string }, rows: ScoreRow[]): string {
  return rows[0]?.timestamp ?? basename(dirname(run.path));
}

/** Which series a row belongs to, given the split asked for. */
export interface SeriesKey {
  experiment: string | null;
  target: string | null;
}

/** How a series is named to a reader: `experiment × target`, `all` for what is pooled. */
export function seriesName(s: SeriesKey): string {
  return `${s.experiment ?? 'all experiments'} × ${s.target ?? 'all targets'}`;
}

const keyId = (k: SeriesKey) => JSON.stringify([k.experiment, k.target]);

/** The keys of the series a run feeds (after the filters), for a caller that selects runs before loading them. */
export function seriesKeysOf(
  run: { experiment: string; targets: string[] },
  opts: Pick<TrendOptions, 'experiment' | 'target' | 'byTarget' | 'byExperiment'>,
): SeriesKey[] {
  if (opts.experiment !== undefined && run.experiment !== opts.experiment) return [];
  const targets = opts.target !== undefined ? run.targets.filter((t) => t === opts.target) : run.targets;
  if (targets.length === 0) return [];
  const experiment = opts.byExperiment || opts.experiment !== undefined ? run.experiment : null;
  if (!opts.byTarget) return [{ experiment, target: opts.target ?? null }];
  return targets.map((target) => ({ experiment, target }));
}

type SeriesParams = Pick<TrendParsed, 'slopeThreshold' | 'failOnDegrading' | 'allowMissingTests' | 'suite' | 'last'>;

const sum = (xs: (number | undefined)[]): number | null => {
  const present = xs.filter((x): x is number => x !== undefined);
  return present.length === 0 ? null : Number(present.reduce((s, x) => s + x, 0).toFixed(6));
};

function buildSeries(key: SeriesKey, runs: LoadedTrendRun[], opts: SeriesParams): TrendSeries | SkippedSeries {
  const { experiment, target } = key;
  let filtered = runs
    .map((run) => ({
      run,
      rows: run.rows.filter((r) => (target === null || (r.target ?? 'default') === target) && (opts.suite ? r.suite === opts.suite : true)),
    }))
    .filter((x) => x.rows.length > 0)
    .map((x) => ({ ...x, key: sortKey(x.run, x.rows) }))
    .sort((a, b) => a.key.localeCompare(b.key));
  if (opts.last !== undefined) filtered = filtered.slice(-opts.last);
  if (filtered.length < 2) return { experiment, target, runs: filtered.length, reason: 'a trend needs at least 2 runs' };
  let ids: Set<string> | undefined;
  if (!opts.allowMissingTests) {
    ids = new Set(filtered[0]!.rows.map((r) => r.test_id));
    for (const f of filtered.slice(1)) {
      const have = new Set(f.rows.map((r) => r.test_id));
      for (const id of ids) if (!have.has(id)) ids.delete(id);
    }
    if (ids.size === 0) return { experiment, target, runs: filtered.length, reason: 'no test id is shared by all runs (use --allow-missing-tests)' };
  }
  const targets = new Set<string>();
  const points: TrendRunPoint[] = filtered.map(({ run, rows }) => {
    const used = ids ? rows.filter((r) => ids!.has(r.test_id)) : rows;
    for (const r of used) targets.add(r.target ?? 'default');
    const timestamp = used[0]?.timestamp ?? rows[0]?.timestamp;
    const p: TrendRunPoint = {
      label: timestamp ?? basename(dirname(run.path)),
      path: run.path,
      matched_test_count: used.length,
      mean_score: round6(mean(used.map((r) => r.score))),
      // A row without a verdict (AgentV 5 on a test run once) counts by AgentV's threshold on its score.
      pass_rate: used.length === 0 ? null : round6(used.filter((r) => passVerdict(r) === 'pass').length / used.length),
      cost_usd: sum(used.map((r) => r.cost_usd)),
      duration_ms: sum(used.map((r) => r.duration_ms)),
      regression: false,
    };
    if (timestamp !== undefined) p.timestamp = timestamp;
    if (run.runId) p.run_id = run.runId;
    return p;
  });
  const marks = regressionMarks(
    points.map((p) => p.mean_score),
    opts.slopeThreshold,
  );
  points.forEach((p, i) => {
    p.regression = marks[i]!;
  });
  const fit = linearFit(points.map((p) => p.mean_score));
  const direction = classifyTrend(fit.slope, opts.slopeThreshold);
  return {
    experiment,
    target,
    targets: [...targets].sort(),
    runs: points,
    summary: {
      run_count: points.length,
      matched_test_count: ids?.size ?? Math.min(...points.map((p) => p.matched_test_count)),
      date_range: { start: points[0]!.timestamp, end: points.at(-1)!.timestamp },
      slope: round6(fit.slope),
      intercept: round6(fit.intercept),
      r_squared: round6(fit.r_squared),
      direction,
    },
    regression: { slope_threshold: opts.slopeThreshold, fail_on_degrading: opts.failOnDegrading, triggered: opts.failOnDegrading && direction === 'degrading' },
  };
}

/** Most recent first, then the larger, then by name. */
function seriesOrder(a: TrendSeries, b: TrendSeries): number {
  const end = (s: TrendSeries) => s.runs.at(-1)?.timestamp ?? s.runs.at(-1)?.label ?? '';
  return (
    end(b).localeCompare(end(a)) ||
    b.summary.run_count - a.summary.run_count ||
    (a.experiment ?? '').localeCompare(b.experiment ?? '') ||
    (a.target ?? '').localeCompare(b.target ?? '')
  );
}

/** Trend of runs already loaded (local, given or pulled). */
export function trendOfRuns(loaded: LoadedTrendRun[], opts: TrendParsed, source: TrendReport['source'], warnings: string[] = []): TrendReport {
  const { slopeThreshold } = opts;
  const runs = opts.experiment ? loaded.filter((r) => r.experiment === opts.experiment) : loaded;
  const keys = new Map<string, SeriesKey>();
  for (const run of runs) {
    const targets = [...new Set(run.rows.map((r) => r.target ?? 'default'))];
    for (const k of seriesKeysOf({ experiment: run.experiment, targets }, opts)) keys.set(keyId(k), k);
  }
  const series: TrendSeries[] = [];
  const skipped: SkippedSeries[] = [];
  const params: SeriesParams = {
    slopeThreshold,
    failOnDegrading: opts.failOnDegrading,
    allowMissingTests: opts.allowMissingTests,
    suite: opts.suite,
    last: opts.last,
  };
  for (const key of keys.values()) {
    const s = buildSeries(key, key.experiment === null ? runs : runs.filter((r) => r.experiment === key.experiment), params);
    if ('summary' in s) series.push(s);
    else skipped.push(s);
  }
  if (series.length === 0 && skipped.length === 0) {
    throw new InputError(`no runs match${opts.experiment ? ` experiment ${opts.experiment}` : ''}${opts.target ? ` target ${opts.target}` : ''}`);
  }
  series.sort(seriesOrder);
  skipped.sort((a, b) => (a.experiment ?? '').localeCompare(b.experiment ?? '') || (a.target ?? '').localeCompare(b.target ?? ''));
  return {
    series,
    skipped,
    filters: {
      experiment: opts.experiment,
      target: opts.target,
      suite: opts.suite,
      allow_missing_tests: params.allowMissingTests,
      last: opts.last,
      by_target: opts.byTarget,
      by_experiment: opts.byExperiment,
    },
    source,
    slope_threshold: slopeThreshold,
    fail_on_degrading: params.failOnDegrading,
    triggered: series.some((s) => s.regression.triggered),
    warnings,
  };
}

/** Trend of the runs given as paths, or of the local runs under .agentv/results/. */
export async function trendLocal(opts: TrendParsed): Promise<TrendReport> {
  const { cwd, sources } = opts;
  const paths = sources.length > 0 ? sources : await localRunDirs(cwd);
  if (paths.length === 0) throw new InputError(`no runs under ${resolve(cwd, '.agentv', 'results')} — pass run directories or results files, or --published`);
  const warnings: string[] = [];
  const runs: LoadedTrendRun[] = [];
  for (const p of paths) {
    const { warnings: w, ...run } = typeof p === 'string' ? await loadTrendRun(p, cwd) : await loadTrendRun(p.path, cwd, p.runId);
    warnings.push(...w);
    runs.push(run);
  }
  return trendOfRuns(runs, opts, sources.length > 0 ? 'paths' : 'local', warnings);
}
