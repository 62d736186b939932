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
 *
 * Matching is compare's (src/compare/compare.ts, src/compare/match-rule.ts): same sources, same
 * target narrowing, so the gate and compare never disagree on a test's delta. Unlike compare's
 * default, the gate matches per (test id, target) whenever a run holds several targets (`'auto'`):
 * a regression of one target among two must not hide behind the other's row.
 */
import { InputError } from '../runs/export/export.js';
import { loadComparison, type CompareOptions, type CompareReport } from './compare.js';
import type { ScoreRow } from './score-rows.js';
import { matchKey, type MatchRule, type Pooled } from './match-rule.js';

/** A drop of more than this is a regression by default: AgentV compare's tie band. */
export const DEFAULT_GATE_TOLERANCE = 0.1;
/** Float slack so that 0.85 - 0.75 (= -0.0999…) is not read as a drop of more than 0.1. */
const EPSILON = 1e-9;

export type TestSetPolicy = 'allow' | 'fail';

export interface GateOptions extends Pick<CompareOptions, 'baseline' | 'candidate' | 'cwd' | 'targets' | 'baselineTargets' | 'candidateTargets' | 'order'> {
  /** Match rows per (test id, target): `'auto'` (default) when a run holds several targets; false: by test id alone (compare's default). */
  allTargets?: CompareOptions['allTargets'];
  /** A score drop of more than this regresses a test. Default 0.1. */
  tolerance?: number;
  /** The gate fails when more tests than this regress. Default 0. */
  maxRegressions?: number;
  /** Tests only the candidate has: reported; `fail` fails the gate. Default `allow`. */
  newTests?: TestSetPolicy;
  /** Tests only the baseline has: reported; `fail` (default) fails the gate. */
  removedTests?: TestSetPolicy;
}

/** A test of one side only: its target when rows are matched per (test id, target). */
export interface GateSetEntry {
  test_id: string;
  target?: string;
}

export interface GateTest {
  test_id: string;
  /** The target, when rows are matched per (test id, target) (`allTargets`). */
  target?: string;
  baseline: number;
  candidate: number;
  delta: number;
  /** What made it a regression or an improvement: the score moved past the tolerance, or the verdict flipped. */
  reason: 'score' | 'verdict';
  baseline_verdict?: string;
  candidate_verdict?: string;
}

export interface GateReport {
  passed: boolean;
  /** Why the gate failed, one sentence each (empty when it passed). */
  failures: string[];
  /** Worst first. */
  regressions: GateTest[];
  /** Best first. */
  improvements: GateTest[];
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

/** The last verdict per matching key. */
function lastVerdicts(rows: ScoreRow[], rule: MatchRule): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const r of rows) out.set(matchKey(r, rule), r.verdict);
  return out;
}

const failed = (v: string | undefined) => v === 'fail' || v === 'error';

/**
 * How a verdict flip counts: `regression`/`improvement` when the score does not explain it,
 * `score` when it only restates the score against a pass threshold between the two scores (the
 * tolerance then decides), null when the verdict did not flip.
 */
export function verdictFlip(
  baseline: { score: number; verdict?: string },
  candidate: { score: number; verdict?: string },
): 'regression' | 'improvement' | 'score' | null {
  const [bv, cv] = [baseline.verdict, candidate.verdict];
  if (bv === 'pass' && failed(cv)) return cv === 'fail' && candidate.score < baseline.score ? 'score' : 'regression';
  if (failed(bv) && cv === 'pass') return bv === 'fail' && candidate.score > baseline.score ? 'score' : 'improvement';
  return null;
}

/** `test (target)` when the entry has a target. */
export const gateTestName = (t: { test_id: string; target?: string }) => (t.target === undefined ? t.test_id : `${t.test_id} (${t.target})`);

function policyOf(name: string, value: unknown, fallback: TestSetPolicy): TestSetPolicy {
  if (value === undefined) return fallback;
  if (value === 'allow' || value === 'fail') return value;
  throw new InputError(`${name} must be allow or fail (got ${JSON.stringify(value)})`);
}

/** Gate two run directories: a test that regressed by more than the tolerance, or a test set changed against the policy, fails it. */
export async function gateRuns(opts: GateOptions): Promise<GateReport> {
  const tolerance = opts.tolerance ?? DEFAULT_GATE_TOLERANCE;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new InputError(`--tolerance must be a number >= 0 (got ${opts.tolerance})`);
  const maxRegressions = opts.maxRegressions ?? 0;
  if (!Number.isInteger(maxRegressions) || maxRegressions < 0)
    throw new InputError(`--max-regressions must be a whole number >= 0 (got ${opts.maxRegressions})`);
  const newTests = policyOf('--new-tests', opts.newTests, 'allow');
  const removedTests = policyOf('--removed-tests', opts.removedTests, 'fail');
  const { report, baseline, candidate } = await loadComparison({
    baseline: opts.baseline,
    candidate: opts.candidate,
    cwd: opts.cwd,
    targets: opts.targets,
    baselineTargets: opts.baselineTargets,
    candidateTargets: opts.candidateTargets,
    allTargets: opts.allTargets ?? 'auto',
    order: opts.order,
  });
  const rule = report.match;
  const baseVerdicts = lastVerdicts(baseline, rule);
  const candVerdicts = lastVerdicts(candidate, rule);
  const regressions: GateTest[] = [];
  const improvements: GateTest[] = [];
  let baseSum = 0;
  let candSum = 0;
  for (const m of report.matched) {
    baseSum += m.score1;
    candSum += m.score2;
    const key = matchKey(m, rule);
    const bv = baseVerdicts.get(key);
    const cv = candVerdicts.get(key);
    const test = (reason: GateTest['reason']): GateTest => {
      const t: GateTest = { test_id: m.test_id, baseline: m.score1, candidate: m.score2, delta: m.delta, reason };
      if (m.target !== undefined) t.target = m.target;
      if (bv !== undefined) t.baseline_verdict = bv;
      if (cv !== undefined) t.candidate_verdict = cv;
      return t;
    };
    const flip = verdictFlip({ score: m.score1, verdict: bv }, { score: m.score2, verdict: cv });
    if (flip === 'regression') regressions.push(test('verdict'));
    else if (m.delta < -tolerance - EPSILON) regressions.push(test('score'));
    else if (flip === 'improvement') improvements.push(test('verdict'));
    else if (m.delta > tolerance + EPSILON) improvements.push(test('score'));
  }
  regressions.sort((a, b) => a.delta - b.delta || a.test_id.localeCompare(b.test_id));
  improvements.sort((a, b) => b.delta - a.delta || a.test_id.localeCompare(b.test_id));
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
