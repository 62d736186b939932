/**
 * `gate`: the CI check of a candidate run against a baseline, per test rather than on the mean.
 *
 * `compare` keeps AgentV's rule (exit 1 when the rounded mean delta is below 0), so a -0.001 mean
 * with every test tied fails it. The gate follows the convention of test runners and eval services
 * (and AgentV's own open request to move compare there): it fails on tests that got worse.
 *
 * - A matched test **regresses** when its score drops by more than `tolerance`
 *   (candidate < baseline - tolerance), or when the baseline row says pass and the candidate row
 *   says fail or error (rows that state a verdict; a score-only row is judged by its score).
 * - A matched test **improves** when its score rises by more than `tolerance`, or fail/error -> pass.
 * - The gate fails when regressions exceed `maxRegressions` (default 0), when tests of the baseline
 *   are missing from the candidate and `removedTests` is `fail` (the default: a crashed shard must
 *   not pass as "fewer tests"), or when new tests appear and `newTests` is `fail`.
 * - The mean delta is reported, never decisive.
 *
 * Matching is compare's (src/compare/compare.ts): same sources, same target narrowing, test ids
 * matched with the last row of a repeated id counting, so the gate and compare never disagree on a
 * test's delta.
 */
import { InputError } from '../runs/export/export.js';
import { loadComparison, type CompareOptions, type CompareReport } from './compare.js';
import type { ScoreRow } from './score-rows.js';

/** A drop of more than this is a regression by default: AgentV compare's tie band. */
export const DEFAULT_GATE_TOLERANCE = 0.1;
/** Float slack so that 0.85 - 0.75 (= -0.0999…) is not read as a drop of more than 0.1. */
const EPSILON = 1e-9;

export type TestSetPolicy = 'allow' | 'fail';

export interface GateOptions
  extends Pick<CompareOptions, 'baseline' | 'candidate' | 'cwd' | 'targets' | 'baselineTargets' | 'candidateTargets' | 'allTargets' | 'order'> {
  /** A score drop of more than this regresses a test. Default 0.1. */
  tolerance?: number;
  /** The gate fails when more tests than this regress. Default 0. */
  maxRegressions?: number;
  /** Tests only the candidate has: reported; `fail` fails the gate. Default `allow`. */
  newTests?: TestSetPolicy;
  /** Tests only the baseline has: reported; `fail` (default) fails the gate. */
  removedTests?: TestSetPolicy;
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
  new_tests: string[];
  removed_tests: string[];
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

/** The last verdict per test id, or per (test id, target) when compare matched pairs. */
function lastVerdicts(rows: ScoreRow[], byTarget: boolean): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const r of rows) out.set(byTarget ? JSON.stringify([r.test_id, r.target ?? null]) : r.test_id, r.verdict);
  return out;
}

function policyOf(name: string, value: unknown, fallback: TestSetPolicy): TestSetPolicy {
  if (value === undefined) return fallback;
  if (value === 'allow' || value === 'fail') return value;
  throw new InputError(`${name} must be allow or fail (got ${JSON.stringify(value)})`);
}

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
    allTargets: opts.allTargets,
    order: opts.order,
  });
  const byTarget = report.match === 'test+target';
  const baseVerdicts = lastVerdicts(baseline, byTarget);
  const candVerdicts = lastVerdicts(candidate, byTarget);
  const regressions: GateTest[] = [];
  const improvements: GateTest[] = [];
  let baseSum = 0;
  let candSum = 0;
  for (const m of report.matched) {
    baseSum += m.score1;
    candSum += m.score2;
    const key = byTarget ? JSON.stringify([m.test_id, m.target ?? null]) : m.test_id;
    const bv = baseVerdicts.get(key);
    const cv = candVerdicts.get(key);
    const test = (reason: GateTest['reason']): GateTest => {
      const t: GateTest = { test_id: m.test_id, baseline: m.score1, candidate: m.score2, delta: m.delta, reason };
      if (m.target !== undefined) t.target = m.target;
      if (bv !== undefined) t.baseline_verdict = bv;
      if (cv !== undefined) t.candidate_verdict = cv;
      return t;
    };
    if (m.delta < -tolerance - EPSILON) regressions.push(test('score'));
    else if (bv === 'pass' && (cv === 'fail' || cv === 'error')) regressions.push(test('verdict'));
    else if (m.delta > tolerance + EPSILON) improvements.push(test('score'));
    else if ((bv === 'fail' || bv === 'error') && cv === 'pass') improvements.push(test('verdict'));
  }
  regressions.sort((a, b) => a.delta - b.delta || a.test_id.localeCompare(b.test_id));
  improvements.sort((a, b) => b.delta - a.delta || a.test_id.localeCompare(b.test_id));
  const removed = report.unmatched.baseline_only;
  const added = report.unmatched.candidate_only;
  const failures: string[] = [];
  if (regressions.length > maxRegressions)
    failures.push(
      `${plural(regressions.length, 'test')} regressed (allowed: ${maxRegressions}): ${regressions
        .slice(0, 5)
        .map((r) => r.test_id)
        .join(', ')}${regressions.length > 5 ? ', …' : ''}`,
    );
  if (removedTests === 'fail' && removed.length > 0)
    failures.push(`${plural(removed.length, 'baseline test')} missing from the candidate (--removed-tests allow accepts that)`);
  if (newTests === 'fail' && added.length > 0) failures.push(`${plural(added.length, 'new test')} not in the baseline (--new-tests allow accepts that)`);
  const matched = report.matched.length;
  return {
    passed: failures.length === 0,
    failures,
    regressions,
    improvements,
    new_tests: added,
    removed_tests: removed,
    summary: {
      matched,
      regressions: regressions.length,
      improvements: improvements.length,
      unchanged: matched - regressions.length - improvements.length,
      new_tests: added.length,
      removed_tests: removed.length,
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
