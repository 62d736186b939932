// The gate's noise simulation at full size (issue 49): the false-alarm rate of an unchanged noisy
// suite and the power against a few reliable tests made unreliable, each with its 95% interval,
// for the history rule (default) and today's rule, on the built gate's decision function.
//   node bench/gate-noise.bench.mjs [--trials 2000] [--seed 49]
import { decideGate } from '../dist/compare/gate-decision.js';
import { simulateGate } from './gate-noise-sim.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const trials = arg('trials', 2000);
const seed = arg('seed', 49);
const pct = (x) => `${(x * 100).toFixed(1)}%`;
const rows = [];
for (const history of [true, false]) {
  const rule = history ? 'history (10 runs, 95%)' : "today's rule";
  const t0 = process.cpuUsage();
  const nul = simulateGate({ decide: decideGate, seed, trials, history });
  rows.push([
    rule,
    'unchanged suite',
    `${nul.failed}/${trials} = ${pct(nul.rate)} [${pct(nul.interval[0])}, ${pct(nul.interval[1])}]`,
    '–',
    String(nul.otherNamed),
  ]);
  for (const rate of [0.5, 0.3, 0]) {
    const p = simulateGate({ decide: decideGate, seed: seed + 1, trials, history, degrade: { count: 5, rate } });
    rows.push([
      rule,
      `5 always-pass tests now pass ${pct(rate)}`,
      `${p.failed}/${trials} = ${pct(p.rate)} [${pct(p.interval[0])}, ${pct(p.interval[1])}]`,
      `${p.degradedNamed}/${p.degradedTotal} = ${pct(p.degradedNamed / p.degradedTotal)}`,
      String(p.otherNamed),
    ]);
  }
  const cpu = process.cpuUsage(t0);
  rows.push([rule, `(${4 * trials} gates: ${((cpu.user + cpu.system) / 1e6).toFixed(2)} CPU-s)`, '', '', '']);
}
console.log('| Rule | Candidates | Gates failed [95% Wilson] | Degraded tests named | Other tests named |');
console.log('|---|---|--:|--:|--:|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
