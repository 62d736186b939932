/**
 * `failures`: only the failing cases of a run (verdict fail or error), each with what failed and
 * why — the failed assertions with their evidence, the graders that failed, and the error text.
 *
 * The index row says *that* a case failed; the sidecars say *why*, so they are read per failing
 * row: the test's own assertions (`testAssertions`, as the report lists them). A missing or
 * unreadable grading.json is reported on the case instead of being skipped: a failure without
 * evidence is still a failure.
 */
import { testAssertions } from '../model/grading.js';
import type { IndexRow } from '../model/artifacts.js';
import type { EvaluatorResult } from '../model/input-row.js';
import { selectCases } from './read/case-keys.js';
import { loadRun, readSidecarJson, type LoadedRun } from './read/run-reader.js';
import { caseListHead } from './read/case-list-head.js';
import { attemptsOf, hasRepeats } from '../model/attempts.js';
import { attemptStats, type AttemptStats } from '../model/attempt-stats.js';
import type { FeedbackNote } from '../merge/index.js';
import * as z from 'zod';
import { flag, parseOptions, PathsCwdField } from '../options/verb-options.js';
import { ShownAsField } from '../util/run-shown.js';

/** The options of `listFailures` (the `failures` command's flags come from the same fields, in this order). */
export const FailuresOptionsSchema = z.strictObject({
  /** A run workspace directory or its index.jsonl. */
  run: z.string(),
  /** The name the run is known by, when it is read from a copy (a published run pulled into a scratch directory: its run id): errors and the report's `dir` name it so. Default: the path as given. */
  shownAs: ShownAsField,
  /** Only these targets. */
  targets: z.array(z.string()).default([]).meta(flag('--target <name>', 'Only this target (repeatable)')),
  /** Test-id globs (`*`, `?`). */
  testIds: z.array(z.string()).default([]).meta(flag('--test-id <glob>', 'Only test ids matching this glob (* and ?); repeatable')),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
});
export type FailuresOptions = z.input<typeof FailuresOptionsSchema>;

export interface FailedAssertion {
  text: string;
  evidence: string;
}

export interface FailedGrader {
  name: string;
  type: string;
  score: number;
  verdict: string | null;
  reasoning: string | null;
}

export interface FailingCase {
  test_id: string;
  suite: string;
  target: string;
  attempt: number;
  variant: string | null;
  verdict: 'fail' | 'error';
  execution_status: string;
  score: number;
  error: string | null;
  assertions: { passed: number; total: number };
  failed_assertions: FailedAssertion[];
  failed_graders: FailedGrader[];
  /** Set when grading.json could not be read, so the evidence above is incomplete. */
  grading_problem: string | null;
  result_dir: string;
  grading_path: string;
  /** A repeated test's attempt statistics (every attempt failed, or too few passed for the strategy); null when it ran once. */
  attempts: (AttemptStats & { strategy: string | null }) | null;
}

export interface FailuresReport {
  run_id: string;
  experiment: string;
  dir: string;
  /** The run's tags (tags.json), as `pull` brought them down. */
  tags: string[];
  /** `agentv`: the run is in another layout, read through a derived copy; `grading_path` is that copy's. */
  layout: LoadedRun['layout'];
  /** Rows considered (after filters). */
  total: number;
  /** Each failing case with its reviewers' notes (feedback.json). */
  failures: (FailingCase & { feedback: FeedbackNote[] })[];
  warnings: string[];
}

interface GradingDoc {
  expectations?: { text?: unknown; passed?: unknown; evidence?: unknown }[];
  evaluators?: EvaluatorResult[];
}

/**
 * Graders that report a fail/error verdict. A grader without a verdict makes no pass/fail claim
 * (only a score), so it is not listed: the row's verdict already says the case failed.
 */
function failedGraders(evaluators: EvaluatorResult[] | undefined): FailedGrader[] {
  const out: FailedGrader[] = [];
  const walk = (list: EvaluatorResult[]) => {
    for (const e of list) {
      if (e.verdict === 'fail' || e.verdict === 'error') {
        out.push({ name: e.name, type: e.type, score: e.score, verdict: e.verdict, reasoning: typeof e.reasoning === 'string' ? e.reasoning : null });
      }
      // assert-set graders nest their members' results.
      if (Array.isArray(e.scores)) walk(e.scores);
    }
  };
  if (Array.isArray(evaluators)) walk(evaluators);
  return out;
}

async function describeFailure(run: Awaited<ReturnType<typeof loadRun>>, row: IndexRow): Promise<FailingCase> {
  const grading = await readSidecarJson<GradingDoc>(run, row, 'grading');
  const result = await readSidecarJson<{ scores?: EvaluatorResult[] }>(run, row, 'result');
  // The test's own assertions (model/grading.ts): result.json's, else grading.json's for older bundles.
  const expectations = testAssertions(result, grading) ?? [];
  return {
    test_id: row.test_id,
    suite: row.suite,
    target: row.target,
    attempt: row.attempt,
    variant: row.variant,
    verdict: row.verdict as 'fail' | 'error',
    execution_status: row.execution_status,
    score: row.score,
    error: row.error ?? null,
    assertions: { passed: row.assertions_summary.passed, total: row.assertions_summary.total },
    failed_assertions: expectations
      .filter((e) => e && e.passed === false)
      .map((e) => ({ text: String(e.text ?? ''), evidence: typeof e.evidence === 'string' ? e.evidence : '' })),
    failed_graders: failedGraders(Array.isArray(result?.scores) ? result.scores : grading?.evaluators),
    grading_problem: grading === null ? `${row.grading_path} is missing or not valid JSON` : null,
    result_dir: row.result_dir,
    grading_path: row.grading_path,
    attempts: attemptStatsOf(row),
  };
}

function attemptStatsOf(row: IndexRow): FailingCase['attempts'] {
  const a = attemptsOf(row as unknown as Record<string, unknown>);
  return hasRepeats(a) ? { strategy: a.strategy, ...attemptStats(a.passed, a.total) } : null;
}

/** The failing tests of a run with their failed assertions and graders, as `agentv-results failures` lists them. */
export async function listFailures(options: FailuresOptions): Promise<FailuresReport> {
  const opts = parseOptions('listFailures', FailuresOptionsSchema, options);
  const run = await loadRun(opts.run, { cwd: opts.cwd, shownAs: opts.shownAs });
  // "No failing cases" must not be the answer to a mistyped filter (selectCases refuses it).
  const rows = selectCases(run, opts);
  const failures: FailingCase[] = [];
  for (const row of rows) {
    if (row.verdict === 'pass') continue;
    failures.push(await describeFailure(run, row));
  }
  const { head, overlays } = await caseListHead(run, opts.shownAs);
  return {
    ...head,
    total: rows.length,
    failures: failures.map((f) => ({ ...f, feedback: overlays.notesOf(f.test_id) })),
    warnings: [...run.problems, ...overlays.warnings],
  };
}
