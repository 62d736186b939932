/**
 * The few Python number rules skill-creator's scripts apply to benchmark statistics, so that our
 * benchmark.json and what `aggregate_benchmark.py` computes from the same files agree to the digit.
 *
 * JavaScript's `Math.round(x * 1e4) / 1e4` and `toFixed` differ from Python's `round(x, 4)` and
 * `f"{x:+.2f}"` on ties: Python rounds the exact binary value half-to-even (round(0.03125, 4) is
 * 0.0312, f"{2.5:+.0f}" is "+2"; JavaScript gives 0.0313 and "3").
 */

/** |x| as a decimal string with `digits` fraction digits, rounded half-to-even on its exact value. */
function fixedHalfEven(abs: number, digits: number): string {
  // toFixed is exact on the binary value; 30 more digits tell a true tie from a near one (a double
  // that is not a tie differs from it long before the 30th extra digit at any magnitude we meet).
  const wide = abs.toFixed(Math.min(100, digits + 30));
  const [int, frac = ''] = wide.split('.');
  const rest = frac.slice(digits);
  const half = '5'.padEnd(rest.length, '0');
  let n = BigInt(int! + frac.slice(0, digits));
  if (rest > half || (rest === half && n % 2n === 1n)) n += 1n;
  if (digits === 0) return n.toString();
  const s = n.toString().padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

/** Python's `round(x, digits)` for a float. */
export function pyRound(x: number, digits: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x;
  const v = Number(fixedHalfEven(Math.abs(x), digits));
  return x < 0 || Object.is(x, -0) ? -v : v;
}

/** Python's `f"{x:+.{digits}f}"`. */
export function pySignedFixed(x: number, digits: number): string {
  const negative = x < 0 || Object.is(x, -0);
  if (!Number.isFinite(x)) return `${negative ? '-' : '+'}${Math.abs(x) === Infinity ? 'inf' : 'nan'}`;
  return `${negative ? '-' : '+'}${fixedHalfEven(Math.abs(x), digits)}`;
}

/**
 * Python's built-in `sum()` of numbers read from our JSON files, as current CPython computes it.
 * JSON.stringify writes a number without a fraction exactly when it is an integer, and Python's
 * json reads those back as ints: `sum()` adds leading ints exactly, turns into a float at the
 * first float (one plain addition), then carries on with Neumaier's compensated summation (ints
 * included), adding the compensation once at the end. (Python before 3.12 added plainly
 * throughout; the two differ only in the last bit of a sum.) Values Python computed as floats
 * (squared deviations) pass `integersAreInts: false`.
 */
export function pySum(values: readonly number[], { integersAreInts = true } = {}): number {
  let k = 0;
  let int = 0;
  for (; integersAreInts && k < values.length && Number.isInteger(values[k]); k++) int += values[k]!;
  if (k === values.length) return int;
  let hi = int + values[k++]!;
  let lo = 0;
  for (; k < values.length; k++) {
    const x = values[k]!;
    const t = hi + x;
    if (Math.abs(hi) >= Math.abs(x)) lo += hi - t + x;
    else lo += x - t + hi;
    hi = t;
  }
  return lo !== 0 && Number.isFinite(lo) ? hi + lo : hi;
}

/** skill-creator's statistics of a list: mean, sample standard deviation, min, max, each rounded to 4 digits. */
export function pyStats(values: readonly number[]): { mean: number; stddev: number; min: number; max: number } {
  const n = values.length;
  if (n === 0) return { mean: 0, stddev: 0, min: 0, max: 0 };
  const mean = pySum(values) / n;
  const stddev =
    n > 1
      ? Math.sqrt(
          pySum(
            values.map((x) => (x - mean) * (x - mean)),
            { integersAreInts: false },
          ) /
            (n - 1),
        )
      : 0;
  let min = Infinity;
  let max = -Infinity;
  for (const x of values) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { mean: pyRound(mean, 4), stddev: pyRound(stddev, 4), min: pyRound(min, 4), max: pyRound(max, 4) };
}
