// The gate's noise simulation at full size (issue 49): the false-alarm rate of an unchanged noisy
// suite and the power against a few reliable tests made unreliable, each with its 95% interval,
// for the history rule (default) and the score and verdict rule, on the built gate's decision
// function. Counts, not times: the figures do not depend on the machine's load.
//   node bench/gate-noise.bench.mjs [--trials 2000] [--seed 49]   (or npm run bench -- gate-noise)
import { decideGate } from '../dist/gate/gate-decision.js';
import { simulateGate } from './gate-noise-sim.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const pct = (x) => `${(x * 100).toFixed(1)}%`;

export async function run() {
  const trials = arg('trials', Number(process.env.BENCH_NOISE_TRIALS ?? 2000));
  const seed = arg('seed', 49);
  const rows = [];
  for (const history of [true, false]) {
    const rule = history ? 'history (10 runs, 95%)' : 'score and verdict rule';
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
  const lines = [
    "## The gate's noise rule: false alarms and power (issue 49)",
    '',
    `The gate's own decision function (\`gate/gate-decision.ts\`, the code the CLI runs) on seeded suites of 100 tests, 5 attempts each, pass rates spread from 0 to 1 (30% always pass, 10% always fail, 60% uniform), 10 runs of history; a fresh suite per trial; ${trials} trials per row, 95% Wilson intervals. Targets: an unchanged suite fails at most 1 gate in 20; a few reliable tests made unreliable fail at least 18 in 20, most of them named.`,
    '',
    '| Rule | Candidates | Gates failed [95% Wilson] | Degraded tests named | Other tests named |',
    '|---|---|--:|--:|--:|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
  return { markdown: lines.join('\n') };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await run()).markdown);
