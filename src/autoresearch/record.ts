/**
 * `autoresearch record`: one cycle of the agentv-bench skill's loop, as the skill's bash steps would do it —
 * extract the cycle's score, per-assertion pass rates and cost from its run, decide keep/drop with
 * `compare` against the best kept run, append the line to `_autoresearch/iterations.jsonl`, and
 * rewrite `trajectory.html`.
 *
 * Numbers follow the agentv-bench skill's jq one-liners: score = mean of every `scores[].score` of every row
 * (a row without `scores[]` counts its own score), assertions = that mean per assertion type,
 * cost = `timing.json` `cost_usd`, else the sum of the rows' `cost_usd`, else 0.
 *
 * Decision: cycle 1 is always kept (nothing to compare with). Later cycles are compared with the
 * run of the most recent kept cycle (its `run_path`, which we record; or `baseline` when given)
 * with `agentv compare`'s defaults, and the agentv-bench skill's rules turn the summary into keep/drop
 * (wins > losses; equal mean and a simpler artifact; else drop).
 */
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../errors/input-error.js';
import { CompareThresholdField, compareRuns, DEFAULT_COMPARE_THRESHOLD } from '../compare/compare.js';
import { loadScoreRows, type ScoreRow } from '../compare/score-rows.js';
import { appendIteration, readIterations, type Iteration } from './iterations.js';
import { renderTrajectoryHtml } from './trajectory-html.js';
import { writeOutputFile } from '../util/output-target.js';
import { readOptionalJson } from '../util/safe-open.js';
import { flag, parseOptions } from '../options/verb-options.js';
import * as z from 'zod';

export interface AutoresearchPaths {
  /** The experiment directory holding `_autoresearch/`. */
  experimentDir: string;
  dir: string;
  iterations: string;
  trajectory: string;
}

/**
 * The agentv-bench skill's location: `.agentv/results/runs/<experiment>/_autoresearch/` (AgentV reserves the
 * `runs` namespace, so it never mistakes it for a run), or under an explicit experiment directory.
 */
export function autoresearchPaths(opts: { experiment: string; experimentDir?: string; cwd?: string }): AutoresearchPaths {
  if (!/^[A-Za-z0-9._-]+$/.test(opts.experiment) || opts.experiment === '.' || opts.experiment === '..') {
    throw new InputError(`experiment name ${JSON.stringify(opts.experiment)}: use only letters, digits, ".", "_" and "-"`);
  }
  const cwd = opts.cwd ?? process.cwd();
  const experimentDir = resolve(cwd, opts.experimentDir ?? join('.agentv', 'results', 'runs', opts.experiment));
  const dir = join(experimentDir, '_autoresearch');
  return { experimentDir, dir, iterations: join(dir, 'iterations.jsonl'), trajectory: join(dir, 'trajectory.html') };
}

/** The fields both autoresearch verbs take: where the experiment's `_autoresearch/` is, and whether the loop is over. */
const ExperimentFields = {
  experiment: z.string().meta(flag('--experiment <name>', 'Experiment name, e.g. autoresearch-pdf-skill (required)')),
  experimentDir: z
    .string()
    .optional()
    .meta(flag('--experiment-dir <dir>', 'Experiment directory holding _autoresearch/ (default: .agentv/results/runs/<experiment>)')),
};
/** The loop is over: the page stops refreshing itself. */
const finalField = z.boolean().default(false).meta(flag('--final', 'Write trajectory.html without auto-refresh: the loop is over'));
const cwdField = z
  .string()
  .default(() => process.cwd())
  .meta(flag('--dir <dir>', 'Working directory (paths are resolved from here)'));

/** `recordCycle`'s options, parsed once at its door (the `autoresearch` commands' flags come from these fields, in this order). */
export const RecordCycleOptionsSchema = z.strictObject({
  ...ExperimentFields,
  /** This cycle's run: a run directory, its index.jsonl, or a results JSONL file. */
  run: z.string(),
  mutation: z.string().optional().meta(flag('--mutation <text>', 'record: one-line description of what changed this cycle')),
  /** Compare against this run instead of the most recent kept cycle's. */
  baseline: z.string().optional().meta(flag('--baseline <run>', "record: compare with this run instead of the most recent kept cycle's run")),
  threshold: CompareThresholdField.meta(
    flag('--threshold <delta>', `record: compare's win/loss threshold (default ${DEFAULT_COMPARE_THRESHOLD}, as agentv compare)`),
  ),
  /** For the simplicity rule at equal scores. */
  baselineArtifact: z
    .string()
    .optional()
    .meta(flag('--baseline-artifact <path>', 'record: the kept artifact (file: lines, folder: bytes) for the "simpler at equal score" rule')),
  candidateArtifact: z.string().optional().meta(flag('--candidate-artifact <path>', "record: this cycle's artifact")),
  /** Write the trajectory without its auto-refresh (the loop is over). */
  final: finalField,
  cwd: cwdField,
  /** Fixed clock for tests. */
  now: z.date().optional(),
});

export type RecordCycleOptions = z.input<typeof RecordCycleOptionsSchema>;

export interface CycleMetrics {
  score: number;
  assertions: Record<string, number>;
  cost_usd: number;
}

export interface RecordCycleResult {
  paths: AutoresearchPaths;
  /** The line appended. */
  iteration: Iteration & {
    run_path: string;
    baseline?: string;
    compare?: { wins: number; losses: number; ties: number; mean_delta: number };
    rationale: string;
  };
  warnings: string[];
}

const round = (x: number) => Number(x.toFixed(6));

export function cycleMetrics(rows: ScoreRow[]): Omit<CycleMetrics, 'cost_usd'> & { rowCost: number | null } {
  const all: number[] = [];
  const byType = new Map<string, number[]>();
  let rowCost: number | null = null;
  for (const row of rows) {
    if (row.cost_usd !== undefined) rowCost = (rowCost ?? 0) + row.cost_usd;
    if (!row.scores || row.scores.length === 0) {
      all.push(row.score);
      continue;
    }
    for (const s of row.scores) {
      all.push(s.score);
      const key = s.type ?? s.name ?? 'unnamed';
      byType.set(key, [...(byType.get(key) ?? []), s.score]);
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const assertions: Record<string, number> = {};
  for (const [k, v] of [...byType].sort(([a], [b]) => a.localeCompare(b))) assertions[k] = round(mean(v));
  return { score: all.length > 0 ? round(mean(all)) : 0, assertions, rowCost };
}

async function timingCost(runDir: string | null): Promise<number | null> {
  if (!runDir) return null;
  // optional: no timing.json (or not JSON), no cost; one that cannot be read is said, not taken for none
  const t = (await readOptionalJson(join(runDir, 'timing.json'), { kind: 'run-file' })) as { cost_usd?: unknown } | null | undefined;
  return typeof t?.cost_usd === 'number' && Number.isFinite(t.cost_usd) ? t.cost_usd : null;
}

/** Rewrite trajectory.html atomically: an open tab reloading mid-write never sees half a page. */
export async function writeTrajectory(paths: AutoresearchPaths, iterations: Iteration[], opts: { experiment: string; final?: boolean }): Promise<void> {
  // A default path (not named by the user): a device or FIFO there is refused, a link replaced, not followed.
  await writeOutputFile(paths.trajectory, [renderTrajectoryHtml(iterations, { experiment: opts.experiment, live: !opts.final })], {
    named: false,
    label: 'trajectory.html at',
  });
}

/** Record one autoresearch cycle: compare the run with the baseline, decide keep or discard, append it to iterations.jsonl. */
export async function recordCycle(options: RecordCycleOptions): Promise<RecordCycleResult> {
  const opts = parseOptions('recordCycle', RecordCycleOptionsSchema, options);
  const { cwd } = opts;
  const paths = autoresearchPaths({ experiment: opts.experiment, experimentDir: opts.experimentDir, cwd });
  const existing = await readIterations(paths.iterations);
  const warnings = [...existing.warnings];
  const src = await loadScoreRows(opts.run, { cwd });
  warnings.push(...src.warnings);
  const metrics = cycleMetrics(src.rows);
  const cost = (await timingCost(src.runDir)) ?? metrics.rowCost ?? 0;
  const runPath = src.runDir ?? src.path;
  const cycle = existing.iterations.reduce((m, it) => Math.max(m, it.cycle), 0) + 1;
  const lastKept = [...existing.iterations]
    .sort((a, b) => a.cycle - b.cycle)
    .filter((it) => it.decision === 'keep')
    .at(-1);
  const baseline = opts.baseline ?? (typeof lastKept?.run_path === 'string' ? lastKept.run_path : undefined);

  let decision: 'keep' | 'drop';
  let rationale: string;
  let compare: RecordCycleResult['iteration']['compare'];
  if (cycle === 1 && opts.baseline === undefined) {
    decision = 'keep';
    rationale = 'first cycle: always kept (nothing to compare with)';
  } else {
    if (baseline === undefined) {
      throw new InputError(
        `no baseline for cycle ${cycle}: ${paths.iterations} has no kept cycle with a run_path — pass --baseline <run> (the best kept run's directory or index.jsonl)`,
      );
    }
    const report = await compareRuns({
      baseline,
      candidate: opts.run,
      cwd,
      threshold: opts.threshold,
      decide: true,
      baselineArtifact: opts.baselineArtifact,
      candidateArtifact: opts.candidateArtifact,
    });
    warnings.push(...report.warnings);
    const { wins, losses, ties, mean_delta } = report.summary;
    compare = { wins, losses, ties, mean_delta };
    decision = report.decision!.decision === 'keep' ? 'keep' : 'drop';
    rationale = report.decision!.rationale;
  }
  const now = opts.now ?? new Date();
  const iteration: RecordCycleResult['iteration'] = {
    cycle,
    score: metrics.score,
    decision,
    cost_usd: round(cost),
    assertions: metrics.assertions,
    mutation: opts.mutation ?? '',
    run_dir: basename(runPath) === 'index.jsonl' ? basename(dirname(runPath)) : basename(runPath),
    timestamp: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    run_path: runPath,
    ...(baseline !== undefined && cycle > 1 ? { baseline } : {}),
    ...(compare ? { compare } : {}),
    rationale,
  };
  await appendIteration(paths.iterations, iteration);
  // Re-read what is on disk (another writer's lines included) for the page.
  const after = await readIterations(paths.iterations);
  await writeTrajectory(paths, after.iterations, { experiment: opts.experiment, final: opts.final });
  return { paths, iteration, warnings };
}

/** `renderTrajectory`'s options, parsed once at its door. */
export const TrajectoryOptionsSchema = z.strictObject({
  ...ExperimentFields,
  final: finalField,
  cwd: cwdField,
});

export type TrajectoryOptions = z.input<typeof TrajectoryOptionsSchema>;

export interface TrajectoryResult {
  paths: AutoresearchPaths;
  /** The page was written final (no auto-refresh). */
  final: boolean;
  iterations: Iteration[];
  warnings: string[];
}

/** Rewrite trajectory.html from iterations.jsonl (e.g. `--final` when the loop is over). */
export async function renderTrajectory(options: TrajectoryOptions): Promise<TrajectoryResult> {
  const opts = parseOptions('renderTrajectory', TrajectoryOptionsSchema, options);
  const paths = autoresearchPaths(opts);
  const { iterations, warnings } = await readIterations(paths.iterations);
  if (iterations.length === 0 && warnings.length === 0)
    throw new InputError(`no cycles recorded yet: ${paths.iterations} is missing or empty — record one with \`agentv-results autoresearch record\``);
  await writeTrajectory(paths, iterations, { experiment: opts.experiment, final: opts.final });
  return { paths, final: opts.final, iterations, warnings };
}
