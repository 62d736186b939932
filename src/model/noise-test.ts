/**
 * The gate's test of "is this candidate improbable under its own history?": pure arithmetic over
 * attempt counts, no I/O (the simulation in bench/ and the PR-tier test run it as the gate does).
 *
 * - **One-sided Fisher exact test** (Fisher 1935, *The Design of Experiments*; Agresti 1992,
 *   "A survey of exact inference for contingency tables", Statistical Science 7(1)): the 2×2 table
 *   history (passed, failed attempts) vs candidate (passed, failed), conditioned on its margins; the
 *   p-value is the probability, under "candidate and history share one attempt success rate", of a
 *   candidate with this few passes or fewer: P(X <= c), X hypergeometric. It needs no prior and no
 *   normal approximation, and it carries the history's own uncertainty (24 of 24 is not "rate 1").
 * - **Multiplicity: Tarone's method** (Tarone 1990, "A modified Bonferroni method for discrete
 *   data", Biometrics 46(4); as used for Fisher's test by Terada et al. 2013, PNAS 110(32)). A gate
 *   runs one test per (test, target); Bonferroni over all of them would keep the family-wise false
 *   alarm rate under alpha but throw away power on tests that can never reach a small p-value
 *   (always failing ones, or noisy ones with few attempts). Tarone counts only the tests whose
 *   smallest attainable p-value (given the table's margins) could pass alpha/K: the smallest K with
 *   #{tests whose minimum p <= alpha/K} <= K. A test is then named when p <= alpha/K. The
 *   probability that an unchanged suite names any test stays <= alpha.
 */

const logFactorials: number[] = [0];

function logFactorial(n: number): number {
  for (let i = logFactorials.length; i <= n; i++) logFactorials.push(logFactorials[i - 1]! + Math.log(i));
  return logFactorials[n]!;
}

const logChoose = (n: number, k: number) => (k < 0 || k > n ? Number.NEGATIVE_INFINITY : logFactorial(n) - logFactorial(k) - logFactorial(n - k));

/** Attempt counts: how many passed of how many. */
export interface PassCount {
  passed: number;
  total: number;
}

function checkCount(name: string, c: PassCount): void {
  if (!Number.isInteger(c.passed) || !Number.isInteger(c.total) || c.passed < 0 || c.total < 0 || c.passed > c.total)
    throw new RangeError(`${name}: expected whole counts with 0 <= passed <= total (got ${c.passed}/${c.total})`);
}

/** P(X = x) for X hypergeometric: `draws` from `population` holding `successes`. */
function hyperPmf(x: number, population: number, successes: number, draws: number): number {
  return Math.exp(logChoose(successes, x) + logChoose(population - successes, draws - x) - logChoose(population, draws));
}

/** The margins of the history-vs-candidate table and the candidate's smallest possible pass count under them. */
function margins(history: PassCount, candidate: PassCount) {
  const population = history.total + candidate.total;
  const successes = history.passed + candidate.passed;
  const draws = candidate.total;
  const low = Math.max(0, draws - (population - successes));
  return { population, successes, draws, low };
}

/**
 * One-sided Fisher exact p-value that the candidate's attempt success is lower than the history's:
 * P(X <= candidate.passed) under the table's margins. 1 when either side has no attempts.
 */
export function fisherLowerP(history: PassCount, candidate: PassCount): number {
  checkCount('history', history);
  checkCount('candidate', candidate);
  if (history.total === 0 || candidate.total === 0) return 1;
  const { population, successes, draws, low } = margins(history, candidate);
  let p = 0;
  for (let x = low; x <= candidate.passed; x++) p += hyperPmf(x, population, successes, draws);
  return Math.min(1, p);
}

/** The smallest p-value `fisherLowerP` could give on a table with these margins (Tarone's "minimum attainable p"). */
export function fisherMinP(history: PassCount, candidate: PassCount): number {
  checkCount('history', history);
  checkCount('candidate', candidate);
  if (history.total === 0 || candidate.total === 0) return 1;
  const { population, successes, draws, low } = margins(history, candidate);
  return Math.min(1, hyperPmf(low, population, successes, draws));
}

/**
 * Tarone's count of the testable hypotheses: the smallest K >= 1 such that at most K of the
 * minimum attainable p-values are <= alpha / K. Tests whose minimum exceeds alpha / K cannot be
 * named and do not dilute the others.
 */
export function taroneK(minPs: readonly number[], alpha: number): number {
  const sorted = [...minPs].sort((a, b) => a - b);
  // m: how many minima are <= alpha / k (sorted ascending: a prefix). The cut only falls as k grows,
  // so the prefix only shrinks: one pass over the list in all, not one per k.
  let m = sorted.length;
  for (let k = 1; k <= sorted.length; k++) {
    const cut = alpha / k;
    while (m > 0 && sorted[m - 1]! > cut) m--;
    if (m <= k) return k;
  }
  return Math.max(1, sorted.length);
}

export interface NoiseTestInput {
  history: PassCount;
  candidate: PassCount;
}

export interface NoiseTestResult {
  /** One-sided Fisher p-value per input, in input order. */
  p: number[];
  /** Tarone's K: the per-test threshold is alpha / K. */
  k: number;
  /** alpha / K. */
  threshold: number;
  /** Per input: the candidate is improbable under its history at the family-wise level alpha. */
  named: boolean[];
}

/** Fisher's one-sided test on every input, named at the family-wise level `alpha` by Tarone's method. */
export function noiseTest(inputs: readonly NoiseTestInput[], alpha: number): NoiseTestResult {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be between 0 and 1 (got ${alpha})`);
  const p = inputs.map((i) => fisherLowerP(i.history, i.candidate));
  const k = taroneK(
    inputs.map((i) => fisherMinP(i.history, i.candidate)),
    alpha,
  );
  const threshold = alpha / k;
  return { p, k, threshold, named: p.map((x) => x <= threshold) };
}
