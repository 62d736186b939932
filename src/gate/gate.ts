/**
 * `gate`: the CI check of a candidate run against a baseline, per test rather than on the mean.
 *
 * `compare` keeps AgentV's rule (exit 1 when the rounded mean delta is below 0), so a -0.001 mean
 * with every test tied fails it. The gate follows the convention of test runners and eval services
 * (and AgentV's own open request to move compare there): it fails on tests that got worse.
 *
 * - A matched test **regresses** when its score drops by more than `tolerance`
 *   (candidate < baseline - tolerance), or when its verdict flips pass -> fail/error in a way the
 *   score does not explain. The tolerance governs scores: a pass -> fail flip whose score fell is
 *   a verdict that only restates the score against a pass threshold somewhere between the two
 *   scores (derived, or AgentV's own `score >= threshold`), so it counts only when the drop is past
 *   the tolerance. A flip to `error`, or pass -> fail with the same or a higher score (an execution
 *   failure, a grader's own verdict), counts whatever the tolerance.
 * - A matched test **improves** when its score rises by more than `tolerance`, or on a
 *   fail/error -> pass flip the score does not explain (error -> pass always does).
 * - The gate fails when regressions exceed `maxRegressions` (default 0), when tests of the baseline
 *   are missing from the candidate and `removedTests` is `fail` (the default: a crashed shard must
 *   not pass as "fewer tests"), or when new tests appear and `newTests` is `fail`.
 * - The mean delta is reported, never decisive.
 * - With `history` (the last N published runs of the baseline's line, read by gate/gate-history.ts),
 *   each test is also judged against its own noise: ./gate-decision.ts, the one decision function.
 *
 * Matching is compare's (src/compare/compare.ts, src/compare/match-rule.ts): same sources, same
 * target narrowing, so the gate and compare never disagree on a test's delta. Unlike compare's
 * default, the gate matches per (test id, target) whenever a run holds several targets (`'auto'`):
 * a regression of one target among two must not hide behind the other's row.
 */
import * as z from 'zod';
import { CompareOptionsSchema, loadComparison, type CompareReport } from '../compare/compare.js';
import { RunsShownAsField } from '../util/run-shown.js';
import { flag, objectOf, parseOptions } from '../options/verb-options.js';
import type { ScoreRow } from '../compare/score-rows.js';
import { matchKey, type MatchRule, type Pooled } from '../compare/match-rule.js';
import { decideGate, MIN_HISTORY_RUNS, type GateCase, type GateDecision, type GateTest, type HistoryCount, type NoisyTest } from './gate-decision.js';

export { verdictFlip, decideGate } from './gate-decision.js';
export type { GateAttempts, GateCase, GateDecision, GateDecisionOptions, GateTest, HistoryCount, NoisyTest } from './gate-decision.js';

/** A drop of more than this is a regression by default: AgentV compare's tie band. */
export const DEFAULT_GATE_TOLERANCE = 0.1;
/** How many published runs of the baseline's line the gate reads as history by default. */
export const DEFAULT_GATE_HISTORY = 10;
/** The history rule's confidence: an unchanged suite fails the gate at most 1 - this of the time. */
export const DEFAULT_GATE_CONFIDENCE = 0.95;

export type TestSetPolicy = 'allow' | 'fail';

/** The runs of the baseline's line the gate judges noise by: each run's light rows (attempts counted). */
export interface GateHistoryInput {
  /** How many runs were asked for (`--history`). */
  requested: number;
  /** The runs read, newest first (the baseline among them when it is published). */
  runs: { run_id: string; rows: ScoreRow[] }[];
  /** Why fewer runs than asked were read, or none (a local baseline, no experiment): shown as is. */
  note?: string;
}

const policy = z.enum(['allow', 'fail']);

/**
 * The gate's rule: each field with its one default and, where the command has it, its flag. Both
 * doors (`gateRuns`, `gateCheck`) spread these; `gateCheck` hands its parsed value on, so no default
 * is applied twice.
 */
export const GateRuleFields = {
  /** A score drop of more than this regresses a test (AgentV compare's tie band). */
  tolerance: z
    .number()
    .min(0)
    .default(DEFAULT_GATE_TOLERANCE)
    .meta(flag('--tolerance <x>', `A score drop of more than x regresses a test (default ${DEFAULT_GATE_TOLERANCE}, agentv compare's tie band)`)),
  /** The gate fails when more tests than this regress. */
  maxRegressions: z.number().int().min(0).default(0).meta(flag('--max-regressions <n>', 'Fail only when more than n tests regress (default 0)')),
  /** Judge each test against the last n published runs of the baseline's experiment, up to the baseline (0: today's rule). */
  history: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(DEFAULT_GATE_HISTORY)
    .meta(
      flag(
        '--history <n>',
        `Judge each test against its own noise over the last n published runs of the baseline's experiment, up to the baseline (default ${DEFAULT_GATE_HISTORY}; 0: today's rule only). Fewer than 2 runs: today's rule, said so`,
      ),
    ),
  /** The history rule's confidence: an unchanged suite fails at most 1 - confidence of the time (alpha over all the tests of the run). */
  confidence: z
    .number()
    .min(0.5)
    .max(0.9999)
    .default(DEFAULT_GATE_CONFIDENCE)
    .meta(
      flag(
        '--confidence <x>',
        `The history rule's confidence (default ${DEFAULT_GATE_CONFIDENCE}): an unchanged suite fails the gate at most 1 - x of the time, over all its tests`,
      ),
    ),
  /** Tests only the candidate has: reported; `fail` fails the gate. */
  newTests: policy.default('allow').meta(flag('--new-tests <policy>', 'Tests only the candidate has: allow (default, reported) or fail')),
  /** Tests only the baseline has: reported; `fail` fails the gate (a crashed shard must not pass as "fewer tests"). */
  removedTests: policy.default('fail').meta(flag('--removed-tests <policy>', 'Tests only the baseline has: fail (default) or allow (reported)')),
  /** Narrow both sides to these targets before matching. */
  targets: z.array(z.string()).optional().meta(flag('--target <name>', 'Compare only this target on both sides (repeatable)')),
  /** Narrow one side (overrides `targets` for that side). */
  baselineTargets: z.array(z.string()).optional().meta(flag('--baseline-target <name>', 'Narrow the baseline to this target (repeatable)')),
  candidateTargets: z.array(z.string()).optional().meta(flag('--candidate-target <name>', 'Narrow the candidate to this target (repeatable)')),
  /** Match rows per (test id, target): `'auto'` when a run holds several targets; false: by test id alone (compare's default). */
  allTargets: z
    .union([z.boolean(), z.literal('auto')])
    .default('auto')
    .meta(
      flag(
        '--all-targets',
        'Match rows per (test id, target) even when neither run holds several targets (the gate already does whenever one does, so every target of a multi-target run is gated)',
      ),
    ),
};

/** `gateRuns`'s options: two run paths and the gate's rule. */
export const GateOptionsSchema = z.strictObject({
  baseline: z.string(),
  candidate: z.string(),
  /** The names the runs are known by, when they are read from copies (published runs: their run ids); default the paths as given (compare's). */
  shownAs: RunsShownAsField,
  ...GateRuleFields,
  /** The baseline line's history (gate/gate-history.ts): each test judged against its own noise. Absent or null: today's rule. */
  history: objectOf<GateHistoryInput>().nullable().optional(),
  /** `older-first`: the older run is the baseline, whichever was given first (compare's). */
  order: z.enum(['given', 'older-first']).default('given'),
  cwd: z.string().default(() => process.cwd()),
});

export type GateOptions = z.input<typeof GateOptionsSchema>;

/** A test of one side only: its target when rows are matched per (test id, target). */
export interface GateSetEntry {
  test_id: string;
  target?: string;
}

/** What the history rule read and whether it ran. */
export interface GateHistoryReport {
  /** Runs asked for (0: today's rule by request). */
  requested: number;
  /** The run ids read, newest first. */
  runs: string[];
  /** The history rule judged the tests (false: too little history; today's rule applied). */
  applied: boolean;
  confidence: number;
  /** The per-test threshold: a p-value at or under it names a test (alpha / Tarone's k). */
  threshold: number | null;
  /** How many tests the attempt test judged, and Tarone's k among them. */
  judged: number;
  tarone_k: number | null;
  /** One sentence for people: what the history was and which rule applied. */
  note: string;
}

export interface GateReport {
  passed: boolean;
  /** Why the gate failed, one sentence each (empty when it passed). */
  failures: string[];
  /** Worst first. */
  regressions: GateTest[];
  /** Best first. */
  improvements: GateTest[];
  /** Tests whose history shows them noisy (both passing and failing attempts), strongest evidence first. */
  noisy: NoisyTest[];
  /** The history rule: what was read, whether it applied. */
  history: GateHistoryReport;
  /** Test ids only the candidate / only the baseline has (per target: a test id missing for any target is listed). */
  new_tests: string[];
  removed_tests: string[];
  /** The same, one entry per (test id, target) when rows are matched per target. */
  new: GateSetEntry[];
  removed: GateSetEntry[];
  /** How rows were matched (see compare's `match`), what matching by test id hid, and one sentence saying so. */
  match: MatchRule;
  pooled: Pooled | null;
  match_note: string;
  summary: {
    matched: number;
    regressions: number;
    improvements: number;
    unchanged: number;
    new_tests: number;
    removed_tests: number;
    noisy: number;
    baseline_mean: number;
    candidate_mean: number;
    mean_delta: number;
  };
  tolerance: number;
  max_regressions: number;
  policy: { new_tests: TestSetPolicy; removed_tests: TestSetPolicy };
  sources: CompareReport['sources'];
  warnings: string[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The last row per matching key. */
function lastRows(rows: ScoreRow[], rule: MatchRule): Map<string, ScoreRow> {
  const out = new Map<string, ScoreRow>();
  for (const r of rows) out.set(matchKey(r, rule), r);
  return out;
}

/** `test (target)` when the entry has a target. */
export const gateTestName = (t: { test_id: string; target?: string }) => (t.target === undefined ? t.test_id : `${t.test_id} (${t.target})`);

/** A row's attempts: AgentV's repeats, else the row itself as one attempt when it states a verdict. */
export function attemptCount(row: ScoreRow | undefined): HistoryCount | undefined {
  if (!row) return undefined;
  if (row.attempts) return { runs: 1, passed: row.attempts.passed, total: row.attempts.total };
  return row.verdict === undefined ? undefined : { runs: 1, passed: row.verdict === 'pass' ? 1 : 0, total: 1 };
}

/** Each key's history over the runs (the last row of a key in a run counts): runs holding it, attempts pooled. */
export function historyCounts(history: GateHistoryInput, rule: MatchRule): Map<string, HistoryCount> {
  const out = new Map<string, HistoryCount>();
  for (const run of history.runs) {
    for (const [key, row] of lastRows(run.rows, rule)) {
      const a = attemptCount(row);
      if (!a || a.total === 0) continue;
      const h = out.get(key) ?? { runs: 0, passed: 0, total: 0 };
      h.runs++;
      h.passed += a.passed;
      h.total += a.total;
      out.set(key, h);
    }
  }
  return out;
}

/** Whether the history can be used at all, and the sentence saying what it was. */
function historyVerdict(
  history: GateHistoryInput | null | undefined,
  counts: Map<string, HistoryCount> | null,
  confidence: number,
): { applied: boolean; note: string } {
  if (!history || history.requested === 0)
    return { applied: false, note: "no history asked for (--history 0): today's rule (score drop past the tolerance, verdict flip)" };
  const n = history.runs.length;
  const read = `${plural(n, 'run')} of history read (asked ${history.requested})${history.note ? `: ${history.note}` : ''}`;
  if (n < MIN_HISTORY_RUNS) return { applied: false, note: `${read}; too little history (fewer than ${MIN_HISTORY_RUNS} runs): today's rule applied` };
  if (!counts || [...counts.values()].every((h) => h.runs < MIN_HISTORY_RUNS))
    return { applied: false, note: `${read}; no test has attempts in ${MIN_HISTORY_RUNS} runs: today's rule applied` };
  return { applied: true, note: `${read}; each test judged against its own history at ${round6(confidence * 100)}% confidence over the run` };
}

/** Gate two run directories: a test that regressed (by today's rule, or against its own history), or a test set changed against the policy, fails it. */
export async function gateRuns(options: GateOptions): Promise<GateReport> {
  const opts = parseOptions('gateRuns', GateOptionsSchema, options);
  const { tolerance, maxRegressions, confidence, newTests, removedTests } = opts;
  // Compare's own parse, for the fields it shares (its threshold default is not the gate's business: outcomes are not read).
  const { report, baseline, candidate } = await loadComparison(
    parseOptions('gateRuns', CompareOptionsSchema, {
      baseline: opts.baseline,
      candidate: opts.candidate,
      shownAs: opts.shownAs,
      cwd: opts.cwd,
      targets: opts.targets,
      baselineTargets: opts.baselineTargets,
      candidateTargets: opts.candidateTargets,
      allTargets: opts.allTargets,
      order: opts.order,
    }),
  );
  const rule = report.match;
  const baseRows = lastRows(baseline, rule);
  const candRows = lastRows(candidate, rule);
  const counts = opts.history && opts.history.requested > 0 ? historyCounts(opts.history, rule) : null;
  const verdictOfHistory = historyVerdict(opts.history, counts, confidence);
  let baseSum = 0;
  let candSum = 0;
  const cases: GateCase[] = report.matched.map((m) => {
    baseSum += m.score1;
    candSum += m.score2;
    const key = matchKey(m, rule);
    const b = baseRows.get(key);
    const c = candRows.get(key);
    const out: GateCase = {
      test_id: m.test_id,
      baseline: { score: m.score1, verdict: b?.verdict },
      candidate: { score: m.score2, verdict: c?.verdict, attempts: passCount(c) },
      history: verdictOfHistory.applied ? (counts?.get(key) ?? null) : null,
    };
    if (m.target !== undefined) out.target = m.target;
    return out;
  });
  const decision: GateDecision = decideGate(cases, { tolerance, alpha: verdictOfHistory.applied ? round6(1 - confidence) : null });
  const { regressions, improvements, noisy } = decision;
  const removed = report.unmatched.baseline_only;
  const added = report.unmatched.candidate_only;
  const entries = (pairs: { test_id: string; target: string }[] | undefined, ids: string[]): GateSetEntry[] =>
    pairs ? pairs.map((p) => ({ test_id: p.test_id, target: p.target })) : ids.map((test_id) => ({ test_id }));
  const removedEntries = entries(report.unmatched.baseline_only_pairs, removed);
  const addedEntries = entries(report.unmatched.candidate_only_pairs, added);
  const failures: string[] = [];
  const names = (list: GateSetEntry[]) => `${list.slice(0, 5).map(gateTestName).join(', ')}${list.length > 5 ? ', …' : ''}`;
  if (regressions.length > maxRegressions) failures.push(`${plural(regressions.length, 'test')} regressed (allowed: ${maxRegressions}): ${names(regressions)}`);
  if (removedTests === 'fail' && removedEntries.length > 0)
    failures.push(
      `${plural(removedEntries.length, 'baseline test')} missing from the candidate: ${names(removedEntries)} (--removed-tests allow accepts that)`,
    );
  if (newTests === 'fail' && addedEntries.length > 0)
    failures.push(`${plural(addedEntries.length, 'new test')} not in the baseline: ${names(addedEntries)} (--new-tests allow accepts that)`);
  const matched = report.matched.length;
  return {
    passed: failures.length === 0,
    failures,
    regressions,
    improvements,
    noisy,
    history: {
      requested: opts.history?.requested ?? 0,
      runs: (opts.history?.runs ?? []).map((r) => r.run_id),
      applied: verdictOfHistory.applied,
      confidence,
      threshold: decision.noise?.threshold ?? null,
      judged: decision.noise?.judged ?? 0,
      tarone_k: decision.noise?.k ?? null,
      note: verdictOfHistory.note,
    },
    new_tests: added,
    removed_tests: removed,
    new: addedEntries,
    removed: removedEntries,
    match: rule,
    pooled: report.pooled,
    match_note: report.match_note,
    summary: {
      matched,
      regressions: regressions.length,
      improvements: improvements.length,
      unchanged: matched - regressions.length - improvements.length,
      new_tests: addedEntries.length,
      removed_tests: removedEntries.length,
      noisy: noisy.length,
      baseline_mean: round3(baseSum / matched),
      candidate_mean: round3(candSum / matched),
      mean_delta: report.summary.mean_delta,
    },
    tolerance,
    max_regressions: maxRegressions,
    policy: { new_tests: newTests, removed_tests: removedTests },
    sources: report.sources,
    warnings: report.warnings,
  };
}

const passCount = (row: ScoreRow | undefined) => {
  const a = attemptCount(row);
  return a ? { passed: a.passed, total: a.total } : undefined;
};

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
