/**
 * `show`: case-level rows matching test-id globs, each with the key facts of its sidecars.
 *
 * The index row already carries score, verdict, duration, tokens and cost; the sidecars add what
 * it summarizes: the tool-call breakdown (metrics.json), the token split and its source label
 * (timing.json) and the assertion counts as graded (grading.json). A sidecar that is missing
 * leaves its facts null rather than failing the command — `validate` is where that is an error.
 */
import type { IndexRow } from '../model/artifacts.js';
import { mapLimit, selectCases } from './read/case-keys.js';
import { loadRun, readSidecarJson, refuseUnsafeRun, type LoadedRun } from './read/run-reader.js';
import { checkRunPathSync } from './read/run-files.js';
import { caseListHead } from './read/case-list-head.js';
import type { FeedbackNote } from '../merge/index.js';
import { attemptsDetail, type AttemptsDetail } from './attempt-details.js';
import * as z from 'zod';
import { flag, parseOptions, PathsCwdField } from '../options/verb-options.js';
import { runShown, ShownAsField } from '../util/run-shown.js';

/** The options of `showCases` (the `show` command's flags come from the same fields, in this order). */
export const ShowOptionsSchema = z.strictObject({
  /** A run workspace directory or its index.jsonl. */
  run: z.string(),
  /** The name the run is known by, when it is read from a copy (a published run pulled into a scratch directory: its run id): errors and the report's `dir` name it so. Default: the path as given. */
  shownAs: ShownAsField,
  /** Test-id globs (`*`, `?`); a case is shown when any matches. None: every case. */
  testIds: z.array(z.string()).default([]).meta(flag('--test-id <glob>', 'Test id or glob (* and ?); repeatable; default: every case')),
  /** Only these targets. */
  targets: z.array(z.string()).default([]).meta(flag('--target <name>', 'Only this target (repeatable)')),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
  /** Read a run holding unsafe paths with warnings instead of refusing it; unsafe paths are then shown as absent. */
  skipUnsafe: z
    .boolean()
    .default(false)
    .meta(
      flag('--skip-unsafe', 'Read a run holding unsafe paths (links out of it, pipes, row paths out of it) with a warning per path instead of refusing it'),
    ),
});
export type ShowOptions = z.input<typeof ShowOptionsSchema>;

export interface CaseDetails {
  test_id: string;
  suite: string;
  target: string;
  source_target: string;
  attempt: number;
  variant: string | null;
  timestamp: string | null;
  score: number;
  verdict: 'pass' | 'fail' | 'error';
  execution_status: string;
  error: string | null;
  duration_ms: number | null;
  total_tokens: number | null;
  token_usage: { input: number; output: number; cached: number } | null;
  usage_source: string | null;
  cost_usd: number | null;
  assertions: { passed: number; failed: number; total: number };
  tool_calls: { total: number; by_tool: Record<string, number> } | null;
  graders: { name: string; type: string; score: number; verdict?: string }[];
  /**
   * A repeated test's attempts under its aggregate (verdict and score above are AgentV's for the
   * strategy): the attempt statistics and each attempt's verdict, score, answer and transcript. Null
   * when the test ran once.
   */
  attempts: AttemptsDetail | null;
  projection_id: string;
  /** Paths relative to the run directory, as in the manifest; null when absent (or unsafe, with skipUnsafe). */
  paths: {
    result_dir: string;
    result: string | null;
    grading: string | null;
    metrics: string | null;
    timing: string | null;
    transcript: string | null;
    transcript_raw: string | null;
    answer: string | null;
    file_changes: string | null;
  };
}

export interface ShowReport {
  run_id: string;
  experiment: string;
  /** The run's directory (a run read from a copy: the name it is known by, `shownAs`). */
  dir: string;
  /** The run's tags (tags.json), as `pull` brought them down. */
  tags: string[];
  /** `agentv`: the run is in another layout, read through a derived copy; `paths` are that copy's and are not shown. */
  layout: LoadedRun['layout'];
  /** Each case with its reviewers' notes (feedback.json). */
  cases: (CaseDetails & { feedback: FeedbackNote[] })[];
  warnings: string[];
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

async function caseDetails(run: LoadedRun, row: IndexRow): Promise<CaseDetails> {
  const [metrics, timing, grading] = await Promise.all([
    readSidecarJson(run, row, 'metrics'),
    readSidecarJson(run, row, 'timing'),
    readSidecarJson(run, row, 'grading'),
  ]);
  const gradedSummary = grading?.summary as { passed?: unknown; failed?: unknown; total?: unknown } | undefined;
  const assertions =
    gradedSummary && num(gradedSummary.total) !== null
      ? { passed: num(gradedSummary.passed) ?? 0, failed: num(gradedSummary.failed) ?? 0, total: num(gradedSummary.total)! }
      : { passed: row.assertions_summary.passed, failed: row.assertions_summary.failed, total: row.assertions_summary.total };
  const byTool = metrics?.tool_calls;
  const tool_calls =
    metrics && num(metrics.total_tool_calls) !== null
      ? {
          total: num(metrics.total_tool_calls)!,
          by_tool: byTool && typeof byTool === 'object' && !Array.isArray(byTool) ? (byTool as Record<string, number>) : {},
        }
      : null;
  return {
    test_id: row.test_id,
    suite: row.suite,
    target: row.target,
    source_target: row.source_target,
    attempt: row.attempt,
    variant: row.variant,
    timestamp: row.timestamp,
    score: row.score,
    verdict: row.verdict,
    execution_status: row.execution_status,
    error: row.error ?? null,
    duration_ms: row.duration_ms ?? num(timing?.duration_ms),
    total_tokens: row.total_tokens ?? num(timing?.total_tokens),
    token_usage: row.token_usage ? { input: row.token_usage.input, output: row.token_usage.output, cached: row.token_usage.cached } : null,
    usage_source: typeof timing?.usage_source === 'string' ? timing.usage_source : null,
    cost_usd: row.cost_usd ?? num(timing?.cost_usd),
    assertions,
    tool_calls,
    graders: row.scores.map((s) => ({ name: s.name, type: s.type, score: s.score, ...(s.verdict === undefined ? {} : { verdict: s.verdict }) })),
    attempts: attemptsDetail(run, row),
    projection_id: row.projection_identity.id,
    paths: {
      result_dir: row.result_dir,
      result: row.result_path,
      grading: row.grading_path,
      metrics: row.metrics_path,
      timing: row.timing_path,
      transcript: row.transcript_path,
      transcript_raw: row.transcript_raw_path,
      answer: row.answer_path,
      file_changes: row.file_changes_path,
    },
  };
}

/** The details of a run's tests (scores, assertions, tool calls, paths), as `agentv-results show` prints them. */
export async function showCases(options: ShowOptions): Promise<ShowReport> {
  const opts = parseOptions('showCases', ShowOptionsSchema, options);
  const run = await loadRun(opts.run, { cwd: opts.cwd, shownAs: opts.shownAs });
  const unsafe = await refuseUnsafeRun(run, runShown(opts.run, opts.shownAs), opts.skipUnsafe);
  // "No cases" must not be the answer to a mistyped filter (selectCases refuses it).
  const rows = selectCases(run, opts);
  const cases = await mapLimit(rows, 16, (row) => caseDetails(run, row));
  const { head, overlays } = await caseListHead(run, opts.shownAs);
  return {
    ...head,
    cases: cases.map((c) => ({ ...c, paths: unsafe.length > 0 ? safePaths(run, c.paths) : c.paths, feedback: overlays.notesOf(c.test_id) })),
    warnings: [...unsafe, ...run.problems, ...overlays.warnings],
  };
}

/** A path that is not safe to open is not shown as the run's file: it reads as absent. */
function safePaths(run: LoadedRun, paths: CaseDetails['paths']): CaseDetails['paths'] {
  const dir = run.dir!;
  const out = { ...paths } as Record<string, string | null>;
  for (const [key, rel] of Object.entries(paths)) {
    if (key !== 'result_dir' && typeof rel === 'string' && checkRunPathSync(dir, rel).kind === 'bad') out[key] = null;
  }
  return out as CaseDetails['paths'];
}
