/**
 * `summary`: a run's aggregate metrics, per target and overall.
 *
 * summary.json is the run's own record, so it is used as written when it is present and valid.
 * When it is missing or unreadable (a runner that wrote only index.jsonl, a damaged file) the
 * same document is recomputed from the index rows with the aggregator export uses, so the two
 * paths can never disagree about what a number means.
 */
import { SummarySchema, type IndexRow, type Summary } from '../model/artifacts.js';
import { runAttemptStats, type RunAttemptStats } from '../model/attempt-stats.js';
import { RunAggregator } from './export/aggregate.js';
import { DEFAULT_THRESHOLD } from './export/normalize.js';
import { InputError } from '../errors/input-error.js';
import { distinct, filterTargets } from './read/case-keys.js';
import { loadRun, type LoadedRun } from './read/run-reader.js';
import * as z from 'zod';
import { flag, parseOptions, PathsCwdField } from '../options/verb-options.js';
import { runShown, ShownAsField } from '../util/run-shown.js';

/** The options of `summarizeRun` (the `summary` command's flags come from the same fields). */
export const SummaryOptionsSchema = z.strictObject({
  /** A run workspace directory or its index.jsonl. */
  run: z.string(),
  /** The name the run is known by, when it is read from a copy (a published run pulled into a scratch directory: its run id): errors and warnings name it so. Default: the path as given. */
  shownAs: ShownAsField,
  /** Only these targets (implies recomputing, since summary.json totals span every target). */
  targets: z.array(z.string()).default([]).meta(flag('--target <name>', 'Only this target (repeatable); recomputes from the rows')),
  /** Ignore summary.json and recompute from the rows. */
  recompute: z.boolean().default(false).meta(flag('--recompute', 'Recompute from index.jsonl instead of reading summary.json')),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
});
export type SummaryOptions = z.input<typeof SummaryOptionsSchema>;

export interface RunSummaryReport {
  run_id: string;
  experiment: string;
  dir: string;
  /** `bundle`: read as it is; `agentv`: another layout (AgentV 5, pipeline bench, Era-A) read through a derived copy. */
  layout: LoadedRun['layout'];
  /** Where the numbers come from. */
  source: 'summary.json' | 'recomputed';
  /** Why they were recomputed, when they were. */
  reason: string | null;
  summary: Summary;
  /**
   * Attempt statistics of a run with repeated attempts (per test and target, per target, and the
   * run's mean attempt success rate), always from the rows; null when no test was repeated.
   */
  attempts: RunAttemptStats | null;
  /** Manifest problems met while reading (malformed index lines are skipped, not counted). */
  warnings: string[];
}

/** Fold rows into a summary.json document (the same one export writes). */
export function recomputeSummary(rows: IndexRow[], meta: { run_id: string; experiment: string; threshold?: number }): Summary {
  const agg = new RunAggregator();
  let earliest: string | null = null;
  for (const row of rows) {
    agg.add(row);
    if (row.timestamp && !Number.isNaN(Date.parse(row.timestamp)) && (earliest === null || Date.parse(row.timestamp) < Date.parse(earliest)))
      earliest = row.timestamp;
  }
  return agg.summary({
    run_id: meta.run_id,
    experiment: meta.experiment,
    timestamp: earliest,
    eval_file: '',
    threshold: meta.threshold ?? DEFAULT_THRESHOLD,
  }) as Summary;
}

function thresholdOf(run: LoadedRun): number | undefined {
  const t = run.summary?.threshold;
  return typeof t === 'number' ? t : undefined;
}

/** A run's aggregate metrics, per target and overall: its summary.json as written, or recomputed from the rows. */
export async function summarizeRun(options: SummaryOptions): Promise<RunSummaryReport> {
  const opts = parseOptions('summarizeRun', SummaryOptionsSchema, options);
  const run = await loadRun(opts.run, { cwd: opts.cwd, shownAs: opts.shownAs });
  const selected = filterTargets(run.rows, opts.targets);
  const base = {
    run_id: run.runId,
    experiment: run.experiment,
    dir: run.sourceDir ?? run.dir!,
    layout: run.layout,
    attempts: runAttemptStats(selected as unknown as Record<string, unknown>[]),
    warnings: run.problems,
  };
  let reason: string | null = null;
  if (opts.targets.length > 0) reason = `filtered to target${opts.targets.length === 1 ? '' : 's'} ${opts.targets.join(', ')}`;
  else if (opts.recompute) reason = 'requested (--recompute)';
  else if (run.summary === null) reason = 'summary.json is missing or not valid JSON';
  if (reason === null) {
    const parsed = SummarySchema.safeParse(run.summary);
    if (parsed.success) return { ...base, source: 'summary.json', reason: null, summary: parsed.data };
    const issue = parsed.error.issues[0];
    reason = `summary.json does not match its schema (${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'})`;
  }
  const rows = selected;
  if (rows.length === 0 && opts.targets.length > 0) {
    throw new InputError(
      `${runShown(opts.run, opts.shownAs)} has no rows for target ${opts.targets.join(', ')} (targets: ${distinct(run.rows.map((r) => r.target)).join(', ') || 'none'})`,
    );
  }
  const summary = recomputeSummary(rows, { run_id: run.runId, experiment: run.experiment, threshold: thresholdOf(run) });
  return { ...base, source: 'recomputed', reason, summary };
}
