/**
 * Attempt statistics: what a test's repeated attempts say about how reliably it passes.
 *
 * - The attempt success rate `c/n` with a 95% Wilson score interval (E. B. Wilson, "Probable
 *   inference, the law of succession, and statistical inference", JASA 22, 1927). Unlike the
 *   normal (Wald) interval it stays inside [0, 1] and is not degenerate at 0 of n or n of n, which
 *   is where a test with three attempts usually sits.
 * - pass@k, the chance that at least one of k attempts drawn without replacement from the n run
 *   passes: the unbiased estimator `1 - C(n-c, k) / C(n, k)` of Chen et al. 2021 ("Evaluating
 *   Large Language Models Trained on Code", the Codex paper), computed as their numerically stable
 *   product `1 - prod_{i=n-c+1..n} (1 - k/i)`.
 * - pass^k, the chance that all k attempts pass (τ-bench, Yao et al. 2024): estimated without bias
 *   by `C(c, k) / C(n, k)`.
 * Both for k = 1..n. Field names follow AgentV's where it has them (`passed_samples`,
 * `total_samples`, `pass_rate`).
 *
 * Pure: no I/O, no Node imports (the gate, the report, the Dashboard's script and the site use the
 * same functions). Each exported function checks its arguments at its door (number-args.ts): a
 * count that is not a number, negative, or out of its range is an InvalidArgumentsError naming the
 * argument, never a NaN answer; the loops inside call the unchecked forms.
 */

import { attemptsOf, hasRepeats } from './attempts.js';
import { arrayArg, numberArg, objectArg } from './number-args.js';

/** The normal quantile of a two-sided 95% interval. */
export const Z_95 = 1.959963984540054;

export interface RateInterval {
  low: number;
  high: number;
}

/**
 * Wilson score interval of `passed` successes in `total` trials at normal quantile `z` (95% by
 * default); `passed` above `total` counts as `total`, and no trials give the whole [0, 1].
 */
export function wilsonInterval(passed: number, total: number, z = Z_95): RateInterval {
  numberArg('wilsonInterval', 'passed', passed, { min: 0 });
  numberArg('wilsonInterval', 'total', total, { min: 0 });
  numberArg('wilsonInterval', 'z', z, { above: 0 });
  return wilson(passed, total, z);
}

function wilson(passed: number, total: number, z: number): RateInterval {
  if (!(total > 0)) return { low: 0, high: 1 };
  const c = Math.min(Math.max(passed, 0), total);
  const p = c / total;
  const z2 = z * z;
  const denom = 1 + z2 / total;
  const centre = (p + z2 / (2 * total)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total))) / denom;
  // At 0 of n and n of n the bound is exactly 0 or 1 (floating point leaves 1e-17 off).
  return { low: c === 0 ? 0 : Math.max(0, centre - half), high: c === total ? 1 : Math.min(1, centre + half) };
}

/** The door of pass@k and pass^k: n attempts (at least 1), c of them passed (0..n), k drawn (1..n). */
function checkNck(verb: string, n: number, c: number, k: number): void {
  numberArg(verb, 'n', n, { int: true, min: 1 });
  numberArg(verb, 'c', c, { int: true, min: 0, max: n });
  numberArg(verb, 'k', k, { int: true, min: 1, max: n });
}

/** Unbiased pass@k (Chen et al. 2021) for n attempts of which c passed: `1 - C(n-c,k)/C(n,k)`. */
export function passAtK(n: number, c: number, k: number): number {
  checkNck('passAtK', n, c, k);
  return passAt(n, c, k);
}

function passAt(n: number, passed: number, k: number): number {
  if (n - passed < k) return 1;
  let miss = 1;
  for (let i = n - passed + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/** pass^k (τ-bench: all k attempts succeed) for n attempts of which c passed: `C(c,k)/C(n,k)`. */
export function passHatK(n: number, c: number, k: number): number {
  checkNck('passHatK', n, c, k);
  return passHat(n, c, k);
}

function passHat(n: number, passed: number, k: number): number {
  if (passed < k) return 0;
  let all = 1;
  for (let i = 0; i < k; i++) all *= (passed - i) / (n - i);
  return all;
}

/** One (test, target)'s attempt statistics. */
export interface AttemptStats {
  /** Attempts that passed (AgentV's name). */
  passed_samples: number;
  /** Attempts run (AgentV's name). */
  total_samples: number;
  /** passed_samples / total_samples (AgentV's name), 0..1. */
  pass_rate: number;
  /** 95% Wilson score interval of the attempt success rate. */
  ci95: RateInterval;
  /** Unbiased pass@k for k = 1..total_samples, keyed by k. */
  pass_at_k: Record<string, number>;
  /** pass^k (all k succeed) for k = 1..total_samples, keyed by k. */
  pass_hat_k: Record<string, number>;
}

/** The largest k pass@k and pass^k are given for by default. */
const MAX_K = 20;

/** The statistics of `passed` of `total` attempts; k runs up to `maxK` (default: every k up to the attempts, at most 20). */
export function attemptStats(passed: number, total: number, maxK = MAX_K): AttemptStats {
  numberArg('attemptStats', 'total', total, { int: true, min: 0 });
  numberArg('attemptStats', 'passed', passed, { int: true, min: 0, max: total });
  numberArg('attemptStats', 'maxK', maxK, { int: true, min: 0 });
  return statsOf(passed, total, maxK);
}

/** attemptStats past its door: `c` of `n` attempts, whole numbers with c <= n. */
function statsOf(c: number, n: number, maxK: number): AttemptStats {
  const pass_at_k: Record<string, number> = {};
  const pass_hat_k: Record<string, number> = {};
  for (let k = 1; k <= Math.min(n, maxK); k++) {
    pass_at_k[String(k)] = passAt(n, c, k);
    pass_hat_k[String(k)] = passHat(n, c, k);
  }
  return {
    passed_samples: c,
    total_samples: n,
    pass_rate: n > 0 ? c / n : 0,
    ci95: wilson(c, n, Z_95),
    pass_at_k,
    pass_hat_k,
  };
}

/**
 * The mean attempt success rate over (test, target) pairs: each pair's `passed/total`, averaged
 * (a pair with no attempts is left out); null for none.
 */
export function meanAttemptRate(pairs: readonly { passed: number; total: number }[]): number | null {
  arrayArg('meanAttemptRate', 'pairs', pairs).forEach((p, i) => {
    const pair = objectArg('meanAttemptRate', `pairs.${i}`, p);
    numberArg('meanAttemptRate', `pairs.${i}.total`, pair.total, { min: 0 });
    numberArg('meanAttemptRate', `pairs.${i}.passed`, pair.passed, { min: 0, max: pair.total as number });
  });
  return meanRate(pairs);
}

function meanRate(pairs: readonly { passed: number; total: number }[]): number | null {
  let sum = 0;
  let count = 0;
  for (const p of pairs) {
    if (!(p.total > 0)) continue;
    sum += p.passed / p.total;
    count++;
  }
  return count > 0 ? sum / count : null;
}

/** `c/n passed (rate%, 95% CI lo–hi%)` for text and Markdown output. */
export function formatAttemptRate(passed: number, total: number): string {
  const ci = wilson(passed, total, Z_95);
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  return `${passed}/${total} passed (${pct(total > 0 ? passed / total : 0)}, 95% CI ${pct(ci.low)}–${pct(ci.high)})`;
}

/** `pass@k 0.67, pass^k 0.00` at k = the attempts run, for text and Markdown output. */
export function formatPassK(stats: Pick<AttemptStats, 'total_samples' | 'pass_at_k' | 'pass_hat_k'>): string {
  const k = String(stats.total_samples);
  const at = stats.pass_at_k[k];
  const hat = stats.pass_hat_k[k];
  if (at === undefined || hat === undefined) return '';
  return `pass@${k} ${at.toFixed(2)}, pass^${k} ${hat.toFixed(2)}`;
}

/** One (test, target)'s attempts in a run's statistics. */
export interface TestAttemptStats extends AttemptStats {
  test_id: string;
  target: string;
  /** AgentV's aggregation strategy of the row. */
  strategy: string | null;
}

/** Attempts totals of one target (or the whole run): attempts passed/total and the mean attempt success rate over its tests. */
export interface AttemptTotals {
  passed_samples: number;
  total_samples: number;
  /** The mean over (test, target) pairs of each pair's attempt success rate, 0..1. */
  mean_pass_rate: number;
}

/** A run's attempt statistics: per (test, target), per target and for the run. */
export interface RunAttemptStats extends AttemptTotals {
  targets: Record<string, AttemptTotals>;
  tests: TestAttemptStats[];
}

function totalsOf(tests: readonly TestAttemptStats[]): AttemptTotals {
  let passed = 0;
  let total = 0;
  for (const t of tests) {
    passed += t.passed_samples;
    total += t.total_samples;
  }
  const mean = meanRate(tests.map((t) => ({ passed: t.passed_samples, total: t.total_samples })));
  return { passed_samples: passed, total_samples: total, mean_pass_rate: mean ?? 0 };
}

/**
 * The attempt statistics of a run's rows (model/attempts.ts reads each row's attempts; a row that
 * ran once counts as one attempt); null when no row was repeated, so runs without repeats print
 * what they always printed.
 */
export function runAttemptStats(rows: readonly Record<string, unknown>[]): RunAttemptStats | null {
  arrayArg('runAttemptStats', 'rows', rows).forEach((row, i) => {
    objectArg('runAttemptStats', `rows.${i}`, row);
  });
  const tests: TestAttemptStats[] = [];
  let repeated = false;
  for (const row of rows) {
    const a = attemptsOf(row);
    if (hasRepeats(a)) repeated = true;
    tests.push({
      test_id: typeof row.test_id === 'string' ? row.test_id : '',
      target: typeof row.target === 'string' ? row.target : 'default',
      strategy: a.strategy,
      ...statsOf(a.passed, a.total, MAX_K),
    });
  }
  if (!repeated) return null;
  const byTarget = new Map<string, TestAttemptStats[]>();
  for (const t of tests) {
    const list = byTarget.get(t.target);
    if (list) list.push(t);
    else byTarget.set(t.target, [t]);
  }
  const targets: Record<string, AttemptTotals> = {};
  for (const [target, list] of [...byTarget].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) targets[target] = totalsOf(list);
  return { ...totalsOf(tests), targets, tests };
}
