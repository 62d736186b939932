/**
 * The gate's decision per matched test, pure: the same function `gateRuns` (and so the CLI, the
 * action and the library) calls, and the one the noise simulation (bench/gate-noise.ts,
 * test/gate-noise-sim.test.ts) runs thousands of times in process.
 *
 * Today's rule (no history, `--history 0`, or too little history): a test regresses when its
 * best-attempt score drops by more than the tolerance or its verdict flips in a way the score does
 * not explain (see gate.ts).
 *
 * With history (the last N published runs of the baseline's experiment, up to the baseline), per
 * (test, target):
 * - its history's attempts are pooled (passed of total over the runs that hold it);
 * - it is **noisy** when its history holds both passing and failing attempts;
 * - a one-sided Fisher exact test asks whether the candidate's attempts (passed of total) are
 *   improbable under the history's rate, and Tarone's method keeps the chance that an unchanged
 *   suite names any test at or under alpha = 1 - confidence (model/noise-test.ts);
 * - a test the test names regresses: kind `reliability` when its best-attempt score and verdict
 *   hide the drop (24 of 24 attempts over 8 runs, 1 of 3 now, still scored 1);
 * - a test that is not noisy also regresses by today's rule (its history never failed, or never
 *   passed: any flip is news);
 * - a noisy test regresses only when the test names it: its score and verdict moving is what its
 *   history says it does, and is reported as neither a regression nor an improvement.
 */
import { noiseTest, type PassCount } from '../model/noise-test.js';

/** Float slack so that 0.85 - 0.75 (= -0.0999…) is not read as a drop of more than 0.1. */
const EPSILON = 1e-9;

/** A test's history: over how many runs, and their attempts pooled. */
export interface HistoryCount extends PassCount {
  runs: number;
}

export interface GateCase {
  test_id: string;
  target?: string;
  baseline: { score: number; verdict?: string };
  candidate: { score: number; verdict?: string; attempts?: PassCount };
  /** This test's history (null or absent: none, today's rule). */
  history?: HistoryCount | null;
}

/** A test's attempts against its history, when the history rule judged it. */
export interface GateAttempts {
  history: HistoryCount;
  candidate: PassCount;
  /** The one-sided Fisher p-value (smaller: the candidate is less likely under the history). */
  p: number;
}

export interface GateTest {
  test_id: string;
  /** The target, when rows are matched per (test id, target) (`allTargets`). */
  target?: string;
  baseline: number;
  candidate: number;
  delta: number;
  /**
   * What made it a regression or an improvement: the score moved past the tolerance, the verdict
   * flipped, or (with history) its attempt success dropped below what its history makes probable
   * while the best-attempt score and verdict hide it (`reliability`).
   */
  reason: 'score' | 'verdict' | 'reliability';
  baseline_verdict?: string;
  candidate_verdict?: string;
  /** With history: the attempts judged and the p-value. */
  attempts?: GateAttempts;
  /** With history: its history holds both passing and failing attempts. */
  noisy?: boolean;
}

/** A test whose history shows it noisy: listed whether it regressed or not. */
export interface NoisyTest {
  test_id: string;
  target?: string;
  history: HistoryCount;
  candidate: PassCount | null;
  /** The one-sided p-value (null: the candidate has no attempts to judge). */
  p: number | null;
  /** The candidate is improbable even for this noisy test (it is among the regressions). */
  regressed: boolean;
}

export interface GateDecisionOptions {
  tolerance: number;
  /** The family-wise false-alarm level of the history rule (1 - confidence); null: today's rule only. */
  alpha: number | null;
}

export interface GateDecision {
  /** Worst first. */
  regressions: GateTest[];
  /** Best first. */
  improvements: GateTest[];
  /** Strongest evidence first (smallest p). */
  noisy: NoisyTest[];
  /** The history rule's threshold: p <= alpha / k names a test (null: the rule did not run). */
  noise: { alpha: number; k: number; threshold: number; judged: number } | null;
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

/** Today's rule on one test: regression or improvement and why, or null. */
function scoreRule(c: GateCase, tolerance: number): { kind: 'regression' | 'improvement'; reason: 'score' | 'verdict' } | null {
  const delta = c.candidate.score - c.baseline.score;
  const flip = verdictFlip(c.baseline, c.candidate);
  if (flip === 'regression') return { kind: 'regression', reason: 'verdict' };
  if (delta < -tolerance - EPSILON) return { kind: 'regression', reason: 'score' };
  if (flip === 'improvement') return { kind: 'improvement', reason: 'verdict' };
  if (delta > tolerance + EPSILON) return { kind: 'improvement', reason: 'score' };
  return null;
}

/** The fewest runs of history the rule judges a test by (fewer: today's rule). */
export const MIN_HISTORY_RUNS = 2;

/** A history the rule can judge: at least MIN_HISTORY_RUNS runs and at least one attempt. */
const usable = (h: HistoryCount | null | undefined): h is HistoryCount => !!h && h.runs >= MIN_HISTORY_RUNS && h.total > 0;

/** The gate's decision over every matched test (see the module comment). */
export function decideGate(cases: readonly GateCase[], opts: GateDecisionOptions): GateDecision {
  const judged: number[] = [];
  if (opts.alpha !== null)
    for (const [i, c] of cases.entries()) if (usable(c.history) && c.candidate.attempts && c.candidate.attempts.total > 0) judged.push(i);
  const tested =
    opts.alpha !== null && judged.length > 0
      ? noiseTest(
          judged.map((i) => ({ history: cases[i]!.history!, candidate: cases[i]!.candidate.attempts! })),
          opts.alpha,
        )
      : null;
  const pOf = new Map<number, { p: number; named: boolean }>();
  if (tested) for (const [j, i] of judged.entries()) pOf.set(i, { p: tested.p[j]!, named: tested.named[j]! });
  const regressions: GateTest[] = [];
  const improvements: GateTest[] = [];
  const noisy: NoisyTest[] = [];
  cases.forEach((c, i) => {
    const h = opts.alpha !== null && usable(c.history) ? c.history : null;
    const isNoisy = h !== null && h.passed > 0 && h.passed < h.total;
    const judgedHere = pOf.get(i);
    const rule = scoreRule(c, opts.tolerance);
    const named = judgedHere?.named === true;
    const test = (reason: GateTest['reason']): GateTest => {
      const t: GateTest = { test_id: c.test_id, baseline: c.baseline.score, candidate: c.candidate.score, delta: c.candidate.score - c.baseline.score, reason };
      if (c.target !== undefined) t.target = c.target;
      if (c.baseline.verdict !== undefined) t.baseline_verdict = c.baseline.verdict;
      if (c.candidate.verdict !== undefined) t.candidate_verdict = c.candidate.verdict;
      if (h && judgedHere) t.attempts = { history: h, candidate: c.candidate.attempts!, p: judgedHere.p };
      if (h) t.noisy = isNoisy;
      return t;
    };
    if (isNoisy) {
      const entry: NoisyTest = { test_id: c.test_id, history: h, candidate: c.candidate.attempts ?? null, p: judgedHere?.p ?? null, regressed: named };
      if (c.target !== undefined) entry.target = c.target;
      noisy.push(entry);
      // Its score and verdict moving is what its history says it does: only the attempt test decides.
      if (named) regressions.push(test(rule?.kind === 'regression' ? rule.reason : 'reliability'));
      return;
    }
    if (rule?.kind === 'regression') regressions.push(test(rule.reason));
    else if (named) regressions.push(test('reliability'));
    else if (rule?.kind === 'improvement') improvements.push(test(rule.reason));
  });
  const pKey = (t: GateTest) => t.attempts?.p ?? 1;
  regressions.sort((a, b) => a.delta - b.delta || pKey(a) - pKey(b) || a.test_id.localeCompare(b.test_id));
  improvements.sort((a, b) => b.delta - a.delta || a.test_id.localeCompare(b.test_id));
  noisy.sort((a, b) => (a.p ?? 1) - (b.p ?? 1) || a.test_id.localeCompare(b.test_id));
  return {
    regressions,
    improvements,
    noisy,
    noise: tested && opts.alpha !== null ? { alpha: opts.alpha, k: tested.k, threshold: tested.threshold, judged: judged.length } : null,
  };
}
