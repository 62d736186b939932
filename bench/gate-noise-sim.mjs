// The gate's noise simulation (issue 49): a seeded suite of tests with attempt pass rates spread
// from 0 to 1, a history of published runs drawn from those rates, and candidates drawn either
// from the same rates (nothing changed: every failed gate is a false alarm) or with a few reliable
// tests made unreliable (the gate should fail and name them). The decision is the gate's own
// (`decideGate`, passed in: the test gives the source's, bench/gate-noise.bench.mjs the built one),
// so what is measured is what the CLI decides. Pure and in process: thousands of gates a second.
import { rng } from './synthetic.mjs';

/** Per-test attempt pass rates: 30% always pass, 10% always fail, the rest uniform in (0, 1). */
export function suiteRates(r, tests) {
  const rates = [];
  for (let i = 0; i < tests; i++) {
    const u = r();
    rates.push(u < 0.3 ? 1 : u < 0.4 ? 0 : r());
  }
  return rates;
}

function draw(r, rate, attempts) {
  let passed = 0;
  for (let a = 0; a < attempts; a++) if (r() < rate) passed++;
  return passed;
}

/** One test's row as AgentV 5.x scores it (pass_any): verdict pass when any attempt passed, score the best attempt's (0 or 1). */
const rowOf = (passed, total) => ({ score: passed > 0 ? 1 : 0, verdict: passed > 0 ? 'pass' : 'fail', attempts: { passed, total } });

/**
 * One suite, its history and one candidate, as the gate's cases. `degrade`: {count, rate} — that
 * many tests that always passed now pass at `rate` in the candidate.
 */
export function simulatedCases(r, { tests = 100, attempts = 5, runs = 10, degrade = null } = {}) {
  const rates = suiteRates(r, tests);
  const degraded = new Set();
  if (degrade) {
    const reliable = rates
      .map((x, i) => [x, i])
      .filter(([x]) => x === 1)
      .map(([, i]) => i);
    for (let k = 0; k < degrade.count && reliable.length > 0; k++) degraded.add(reliable.splice(Math.floor(r() * reliable.length), 1)[0]);
  }
  const cases = rates.map((rate, i) => {
    let passed = 0;
    let last = 0;
    for (let run = 0; run < runs; run++) {
      last = draw(r, rate, attempts);
      passed += last;
    }
    const cand = draw(r, degraded.has(i) ? degrade.rate : rate, attempts);
    const baseline = rowOf(last, attempts);
    return {
      test_id: `test-${String(i).padStart(3, '0')}`,
      baseline: { score: baseline.score, verdict: baseline.verdict },
      candidate: rowOf(cand, attempts),
      history: runs > 0 ? { runs, passed, total: runs * attempts } : null,
    };
  });
  return { cases, degraded: new Set([...degraded].map((i) => `test-${String(i).padStart(3, '0')}`)) };
}

/** Wilson's 95% score interval for k of n (Wilson 1927). */
export function wilson(k, n, z = 1.959964) {
  if (n === 0) return [0, 1];
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - h), Math.min(1, c + h)];
}

/**
 * `trials` gates on fresh suites: how many failed, and (with `degrade`) how many degraded tests
 * were named of how many, and how many named tests were not degraded.
 */
export function simulateGate({
  decide,
  seed = 1,
  trials = 200,
  tests = 100,
  attempts = 5,
  runs = 10,
  degrade = null,
  confidence = 0.95,
  tolerance = 0.1,
  history = true,
}) {
  const r = rng(seed);
  let failed = 0;
  let degradedTotal = 0;
  let degradedNamed = 0;
  let otherNamed = 0;
  for (let t = 0; t < trials; t++) {
    const { cases, degraded } = simulatedCases(r, { tests, attempts, runs, degrade });
    const d = decide(history ? cases : cases.map((c) => ({ ...c, history: null })), { tolerance, alpha: history ? 1 - confidence : null });
    if (d.regressions.length > 0) failed++;
    degradedTotal += degraded.size;
    for (const reg of d.regressions) {
      if (degraded.has(reg.test_id)) degradedNamed++;
      else otherNamed++;
    }
  }
  return { trials, failed, rate: failed / trials, interval: wilson(failed, trials), degradedTotal, degradedNamed, otherNamed };
}
