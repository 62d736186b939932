/**
 * CLI start-up: every command, and every file git hands to our merge driver, pays it once.
 *   npm run bench -- startup
 * Three commands timed as whole processes, interleaved round-robin so machine noise hits each
 * alike: bare `node -e 0` (the floor), the CLI as tsc writes it (dist/cli/unbundled.js, ~250 ES
 * modules resolved and loaded one by one), and the shipped bundle (dist/cli/main.js).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, ROOT, fmtMs, fmtRatio, median } from './lib.mjs';

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 21);

function timeOnce(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}`);
  return performance.now() - t0;
}

export async function run() {
  const cases = {
    floor: ['-e', '0'],
    unbundled: [join(ROOT, 'dist/cli/unbundled.js'), '--version'],
    bundled: [CLI, '--version'],
    bundledHelp: [CLI, 'validate', '--help'],
  };
  const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < ROUNDS + 1; i++) {
    for (const [k, args] of Object.entries(cases)) {
      const ms = timeOnce(args);
      if (i > 0) samples[k].push(ms);
    }
  }
  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const lines = [
    '## CLI start-up',
    '',
    `Whole processes, interleaved, median of ${ROUNDS} rounds after one warm-up (\`node ${process.version.slice(1)}\`).`,
    '',
    '| command | median | ratio to bare node | above bare node |',
    '|---|---|---|---|',
    `| \`node -e 0\` (floor) | ${fmtMs(m.floor)} | 1.00x | — |`,
    `| \`agentv-results --version\`, unbundled (tsc output) | ${fmtMs(m.unbundled)} | ${fmtRatio(m.unbundled / m.floor)} | ${fmtMs(m.unbundled - m.floor)} |`,
    `| \`agentv-results --version\`, bundled (shipped) | ${fmtMs(m.bundled)} | ${fmtRatio(m.bundled / m.floor)} | ${fmtMs(m.bundled - m.floor)} |`,
    `| \`agentv-results validate --help\`, bundled | ${fmtMs(m.bundledHelp)} | ${fmtRatio(m.bundledHelp / m.floor)} | ${fmtMs(m.bundledHelp - m.floor)} |`,
    '',
    `The bundle cuts the CLI's own start-up (time above bare node) to **${fmtRatio((m.bundled - m.floor) / (m.unbundled - m.floor))}** of the unbundled one.`,
  ];
  return { markdown: lines.join('\n') };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await run()).markdown);
