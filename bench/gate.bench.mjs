/**
 * `gate` against `compare` on the same two local runs of 3,000 tests each (issue 26: the gate may
 * cost at most 1.5x compare). Fresh processes, the two commands alternated so both see the same
 * machine load, median of BENCH_RUNS after one warm-up of each. The candidate regresses every 7th
 * test and improves every 5th, so the gate has regressions, improvements and a Markdown table to
 * write.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TESTS = 3000;
const TARGET = 1.5;

async function run_(dir, score) {
  await mkdir(dir, { recursive: true });
  const lines = [];
  for (let i = 0; i < TESTS; i++)
    lines.push(
      JSON.stringify({
        test_id: `suite-${i % 40}/case-${i}`,
        target: 'agent',
        suite: 's',
        timestamp: '2026-11-20T09:00:00.000Z',
        score: score(i),
        verdict: score(i) >= 0.8 ? 'pass' : 'fail',
      }),
    );
  await writeFile(join(dir, 'index.jsonl'), lines.join('\n') + '\n');
  return dir;
}

export async function run() {
  const work = await mkdtemp(join(tmpdir(), 'bench-gate-'));
  try {
    const base = (i) => Math.round((((i * 37) % 100) / 100) * 100) / 100;
    const a = await run_(join(work, 'baseline'), base);
    const b = await run_(join(work, 'candidate'), (i) => (i % 7 === 0 ? Math.max(0, base(i) - 0.3) : i % 5 === 0 ? Math.min(1, base(i) + 0.3) : base(i)));
    const commands = {
      compare: ['compare', a, b, '--json'],
      // Allowed regressions: the gate does all its work and exits 0 (runMeasured wants exit 0).
      gate: ['gate', a, b, '--json', '--max-regressions', String(TESTS)],
      markdown: ['gate', a, b, '--format', 'markdown', '--max-regressions', String(TESTS)],
    };
    const times = { compare: [], gate: [], markdown: [] };
    for (let i = 0; i < RUNS + 1; i++) {
      for (const [name, args] of Object.entries(commands)) {
        const r = await runMeasured(process.execPath, [CLI, ...args], { cwd: work });
        if (i > 0) times[name].push(r.ms);
      }
    }
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    const gateRatio = m.gate / m.compare;
    const mdRatio = m.markdown / m.compare;
    const lines = [
      '## gate (issue 26)',
      '',
      `Two local runs of ${TESTS.toLocaleString('en-US')} tests each (the candidate regresses every 7th test and improves every 5th; mean delta positive, so compare exits 0; the gate allows the regressions with \`--max-regressions\`, so it exits 0 after all its work). Fresh processes, the three commands alternated, median of ${RUNS} after one warm-up. Target: gate ≤ ${TARGET}x compare.`,
      '',
      '| command | median | ratio |',
      '|---|---|---|',
      `| \`compare a b --json\` | ${fmtMs(m.compare)} | 1.00× (baseline) |`,
      `| \`gate a b --json --max-regressions 3000\` | ${fmtMs(m.gate)} | ${fmtRatio(gateRatio)} of compare |`,
      `| \`gate a b --format markdown --max-regressions 3000\` | ${fmtMs(m.markdown)} | ${fmtRatio(mdRatio)} of compare |`,
      '',
      `Verdict: gate ${gateRatio <= TARGET ? 'meets' : 'misses'} the ${TARGET}x target (${fmtRatio(gateRatio)}). It reads the same two runs through compare's own loader and matcher and adds one pass over the matched tests; most of either command's time is the process start.`,
    ];
    return { markdown: lines.join('\n') };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
