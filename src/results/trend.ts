/**
 * `trend`: is an experiment × target getting better or worse over its runs?
 *
 * One series per (experiment, target). Each series is computed as `agentv trend --target <t>`
 * computes it on the same runs, so the two tools classify alike:
 * - runs in chronological order by the timestamp of their first (filtered) row, else the name of
 *   the directory holding the manifest;
 * - only the test ids every run of the series has count (unless `allowMissingTests`);
 * - a run's point is the mean score of its rows for those ids, rounded to 6 decimals;
 * - least-squares slope over the run index 0..n-1; degrading when slope <= -threshold, improving
 *   when slope >= threshold, else stable (threshold 0.01 by default).
 * Each series object carries AgentV's `runs`/`summary`/`regression` field names.
 *
 * Sources here: run directories / index.jsonl / results files given by the caller, or the local
 * `.agentv/results/` runs. Published runs are listed and pulled one layer up (src/trend), which
 * hands the loaded runs to `trendOfRuns`.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../derive/export.js';
import { loadScoreRows, resolveManifest, type ScoreRow } from './score-rows.js';

export const DEFAULT_SLOPE_THRESHOLD = 0.01;
export type TrendDirection = 'improving' | 'stable' | 'degrading';

export interface TrendRunPoint {
  label: string;
  path: string;
  timestamp?: string;
  matched_test_count: number;
  mean_score: number;
  /** Ours: the run id, when the run came from the results branch or a summary.json names it. */
  run_id?: string;
}

export interface TrendSeries {
  experiment: string;
  target: string;
  runs: TrendRunPoint[];
  summary: {
    run_count: number;
    matched_test_count: number;
    date_range: { start?: string; end?: string };
    slope: number;
    intercept: number;
    r_squared: number;
    direction: TrendDirection;
  };
  regression: { slope_threshold: number; fail_on_degrading: boolean; triggered: boolean };
}

export interface SkippedSeries {
  experiment: string;
  target: string;
  runs: number;
  reason: string;
}

export interface TrendReport {
  series: TrendSeries[];
  skipped: SkippedSeries[];
  filters: { experiment?: string; target?: string; suite?: string; allow_missing_tests: boolean; last?: number };
  source: 'paths' | 'local' | 'published';
  slope_threshold: number;
  fail_on_degrading: boolean;
  /** True when failOnDegrading and some series is degrading (the CLI exits 1). */
  triggered: boolean;
  warnings: string[];
  /** With published runs: which tip of the results branch was read, and how fresh the remote side is. */
  read?: string;
}

export interface TrendOptions {
  /** Run directories, index.jsonl or results files. Empty: the local runs under .agentv/results/. */
  sources?: string[];
  cwd?: string;
  experiment?: string;
  target?: string;
  suite?: string;
  /** Only the most recent N runs of each series. */
  last?: number;
  slopeThreshold?: number;
  failOnDegrading?: boolean;
  allowMissingTests?: boolean;
}

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

async function experimentOf(runDir: string | null, rows: ScoreRow[]): Promise<string> {
  const fromRow = rows.find((r) => r.experiment)?.experiment;
  if (fromRow) return fromRow;
  if (runDir) {
    try {
      const summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')) as { experiment?: unknown; metadata?: { experiment?: unknown } };
      const e = summary.metadata?.experiment ?? summary.experiment;
      if (typeof e === 'string' && e) return e;
    } catch {
      // no summary: the default experiment
    }
  }
  return 'default';
}

export async function loadTrendRun(source: string, cwd: string, runId?: string, experiment?: string): Promise<LoadedTrendRun & { warnings: string[] }> {
  const src = await loadScoreRows(source, { cwd });
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

function buildSeries(
  experiment: string,
  target: string,
  runs: LoadedTrendRun[],
  opts: Required<Pick<TrendOptions, 'slopeThreshold' | 'failOnDegrading' | 'allowMissingTests'>> & { suite?: string; last?: number },
): TrendSeries | SkippedSeries {
  let filtered = runs
    .map((run) => ({ run, rows: run.rows.filter((r) => (r.target ?? 'default') === target && (opts.suite ? r.suite === opts.suite : true)) }))
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
  const points: TrendRunPoint[] = filtered.map(({ run, rows }) => {
    const used = ids ? rows.filter((r) => ids!.has(r.test_id)) : rows;
    const timestamp = used[0]?.timestamp ?? rows[0]?.timestamp;
    const p: TrendRunPoint = {
      label: timestamp ?? basename(dirname(run.path)),
      path: run.path,
      matched_test_count: used.length,
      mean_score: round6(mean(used.map((r) => r.score))),
    };
    if (timestamp !== undefined) p.timestamp = timestamp;
    if (run.runId) p.run_id = run.runId;
    return p;
  });
  const fit = linearFit(points.map((p) => p.mean_score));
  const direction = classifyTrend(fit.slope, opts.slopeThreshold);
  return {
    experiment,
    target,
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

export function checkTrendOptions(opts: TrendOptions): void {
  const t = opts.slopeThreshold ?? DEFAULT_SLOPE_THRESHOLD;
  if (!Number.isFinite(t) || t < 0) throw new InputError(`--slope-threshold must be a number >= 0 (got ${opts.slopeThreshold})`);
  if (opts.last !== undefined && !(Number.isInteger(opts.last) && opts.last >= 2))
    throw new InputError(`--last must be a whole number >= 2 (got ${opts.last})`);
}

/** Trend of runs already loaded (local or pulled): one series per experiment × target. */
export function trendOfRuns(loaded: LoadedTrendRun[], opts: TrendOptions, source: TrendReport['source'], warnings: string[] = []): TrendReport {
  checkTrendOptions(opts);
  const slopeThreshold = opts.slopeThreshold ?? DEFAULT_SLOPE_THRESHOLD;
  const runs = opts.experiment ? loaded.filter((r) => r.experiment === opts.experiment) : loaded;
  const keys = new Map<string, { experiment: string; target: string }>();
  for (const run of runs) {
    for (const row of run.rows) {
      const target = row.target ?? 'default';
      if (opts.target && target !== opts.target) continue;
      keys.set(JSON.stringify([run.experiment, target]), { experiment: run.experiment, target });
    }
  }
  const series: TrendSeries[] = [];
  const skipped: SkippedSeries[] = [];
  const params = {
    slopeThreshold,
    failOnDegrading: Boolean(opts.failOnDegrading),
    allowMissingTests: Boolean(opts.allowMissingTests),
    suite: opts.suite,
    last: opts.last,
  };
  for (const { experiment, target } of [...keys.values()].sort((a, b) => a.experiment.localeCompare(b.experiment) || a.target.localeCompare(b.target))) {
    const s = buildSeries(
      experiment,
      target,
      runs.filter((r) => r.experiment === experiment),
      params,
    );
    if ('summary' in s) series.push(s);
    else skipped.push(s);
  }
  if (series.length === 0 && skipped.length === 0) {
    throw new InputError(`no runs match${opts.experiment ? ` experiment ${opts.experiment}` : ''}${opts.target ? ` target ${opts.target}` : ''}`);
  }
  return {
    series,
    skipped,
    filters: { experiment: opts.experiment, target: opts.target, suite: opts.suite, allow_missing_tests: params.allowMissingTests, last: opts.last },
    source,
    slope_threshold: slopeThreshold,
    fail_on_degrading: params.failOnDegrading,
    triggered: series.some((s) => s.regression.triggered),
    warnings,
  };
}

/** Trend of the runs given as paths, or of the local runs under .agentv/results/. */
export async function trendLocal(opts: TrendOptions = {}): Promise<TrendReport> {
  checkTrendOptions(opts);
  const cwd = opts.cwd ?? process.cwd();
  const sources = opts.sources ?? [];
  const paths = sources.length > 0 ? sources : await localRunDirs(cwd);
  if (paths.length === 0) throw new InputError(`no runs under ${resolve(cwd, '.agentv', 'results')} — pass run directories or results files, or --published`);
  const warnings: string[] = [];
  const runs: LoadedTrendRun[] = [];
  for (const p of paths) {
    const { warnings: w, ...run } = await loadTrendRun(p, cwd);
    warnings.push(...w);
    runs.push(run);
  }
  return trendOfRuns(runs, opts, sources.length > 0 ? 'paths' : 'local', warnings);
}
