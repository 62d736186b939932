/**
 * Rates as every document of ours writes them: four decimal places (`0.6667`), half away from zero
 * as JavaScript rounds, and 0 for nothing counted. Summaries, benchmarks, gradings, catalog lines
 * and the run index all write a pass rate; they take it from here so none drifts to another digit.
 * (skill-creator's statistics, which follow Python's rounding, are runs/export/python-numbers.ts's.)
 */

/** `n` to four decimal places. */
export function round4(n: number): number {
  return Math.round(n * 10000) / 10000;
}

/** `passed / total` to four decimal places; 0 when nothing was counted. */
export function passRate(passed: number, total: number): number {
  return total === 0 ? 0 : round4(passed / total);
}
