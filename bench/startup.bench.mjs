/**
 * CLI start-up: every command, and every file git hands to our merge driver, pays it once.
 *   npm run bench -- startup
 * Whole processes, interleaved round-robin so machine noise hits each alike: bare `node -e 0`
 * (the floor); the CLI as tsc writes it (dist/cli/unbundled.js, ~250 ES modules resolved and
 * loaded one by one); the same code as one bundled file (the previous shipping form, built here
 * into a temporary directory); and the shipped bundle (dist/cli/main.js), split at the command
 * table so a command loads its own code only.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { CLI, ROOT, fmtMs, fmtRatio, median } from './lib.mjs';

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 21);

function timeOnce(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}`);
  return performance.now() - t0;
}

/** The CLI as one file, as it shipped before the split (same esbuild settings, no splitting). */
async function oneFileBundle(dir) {
  await mkdir(join(dir, 'dist', 'cli'), { recursive: true });
  await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
  const outfile = join(dir, 'dist', 'cli', 'main.js');
  await build({
    entryPoints: [join(ROOT, 'dist/cli/unbundled.js')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // As the shipped bundle (scripts/bundle-cli.mjs): the S3 SDK stays outside, loaded only in hybrid mode.
    external: ['@aws-sdk/client-s3'],
    banner: { js: "import { createRequire as __agentvCreateRequire } from 'node:module'; const require = __agentvCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return outfile;
}

export async function run() {
  const tmp = await mkdtemp(join(tmpdir(), 'bench-startup-'));
  try {
    const one = await oneFileBundle(tmp);
    const unbundled = join(ROOT, 'dist/cli/unbundled.js');
    const cases = {
      floor: ['-e', '0'],
      driverUnbundled: [unbundled, 'merge-driver', '--help'],
      driverOne: [one, 'merge-driver', '--help'],
      driverSplit: [CLI, 'merge-driver', '--help'],
      publishOne: [one, 'publish', '--help'],
      publishSplit: [CLI, 'publish', '--help'],
      helpOne: [one, '--help'],
      helpSplit: [CLI, '--help'],
      versionSplit: [CLI, '--version'],
    };
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < ROUNDS + 1; i++) {
      for (const [k, args] of Object.entries(cases)) {
        const ms = timeOnce(args);
        if (i > 0) samples[k].push(ms);
      }
    }
    const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
    const row = (label, key) => `| ${label} | ${fmtMs(m[key])} | ${fmtRatio(m[key] / m.floor)} | ${fmtMs(m[key] - m.floor)} |`;
    const above = (a, b) => fmtRatio((m[a] - m.floor) / (m[b] - m.floor));
    const lines = [
      '## CLI start-up',
      '',
      `Whole processes, interleaved, median of ${ROUNDS} rounds after one warm-up (\`node ${process.version.slice(1)}\`). "One file" is the same code bundled without splitting (how the CLI shipped before); "split" is the shipped \`dist/cli/main.js\`, which loads only the invoked command's chunks.`,
      '',
      '| command | median | ratio to bare node | above bare node |',
      '|---|---|---|---|',
      `| \`node -e 0\` (floor) | ${fmtMs(m.floor)} | 1.00x | — |`,
      row('`merge-driver --help`, unbundled (tsc output)', 'driverUnbundled'),
      row('`merge-driver --help`, one file', 'driverOne'),
      row('`merge-driver --help`, split (shipped)', 'driverSplit'),
      row('`publish --help`, one file', 'publishOne'),
      row('`publish --help`, split (shipped)', 'publishSplit'),
      row('`--help` (every command), one file', 'helpOne'),
      row('`--help` (every command), split (shipped)', 'helpSplit'),
      row('`--version`, split (shipped)', 'versionSplit'),
      '',
      `Time above bare node, split against one file: the merge driver (git starts it once per conflicted file) **${above('driverSplit', 'driverOne')}**, \`publish\` **${above('publishSplit', 'publishOne')}**, the overview help, which loads every command's chunks, **${above('helpSplit', 'helpOne')}**. Against tsc's output, which with the command table also loads only the merge driver's modules (one file each), the split bundle's merge driver takes **${above('driverSplit', 'driverUnbundled')}** the time above bare node and the one-file bundle **${above('driverOne', 'driverUnbundled')}**.`,
    ];
    return { markdown: lines.join('\n') };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await run()).markdown);
