/**
 * CLI start-up: every command, and every file git hands to our merge driver, pays it once.
 *   npm run bench -- startup
 * Whole processes, interleaved round-robin so machine noise hits each alike: bare `node -e 0`
 * (the floor); the CLI as tsc writes it (dist/cli/run.js, ~250 ES modules resolved and loaded one
 * by one); the previous shipping form, ES-module chunks split at the command table (built here into
 * a temporary directory with the settings it shipped with); and the shipped binary
 * (dist/cli/main.js: one CommonJS bundle run from V8's compiled code kept per command), with its
 * cache warm (a command's second start onwards) and with no cache (its first start, or
 * AGENTV_RESULTS_CODE_CACHE=off).
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { CLI, ROOT, fmtMs, fmtRatio, median } from './lib.mjs';

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 21);

function timeOnce(args, env, cwd) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore', env: { ...process.env, ...env }, cwd });
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}`);
  return performance.now() - t0;
}

/** The CLI as it shipped before the code cache: ES modules, split at the command table. */
async function splitBundle(dir) {
  await mkdir(join(dir, 'dist', 'cli'), { recursive: true });
  await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await build({
    entryPoints: { main: join(ROOT, 'dist/cli/run.js') },
    outdir: join(dir, 'dist', 'cli'),
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@aws-sdk/client-s3'],
    banner: { js: "import { createRequire as __agentvCreateRequire } from 'node:module'; const require = __agentvCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return join(dir, 'dist', 'cli', 'main.js');
}

/** A repository with the README's example run, and a cache warmed by one merge and one publish, as a user's is after their first. */
async function warmCache(dir) {
  const repo = join(dir, 'repo');
  const cache = join(dir, 'cache');
  const git = (args) => spawnSync('git', args, { cwd: repo, stdio: 'ignore' });
  await mkdir(repo);
  git(['init', '-q', '-b', 'main']);
  git(['-c', 'user.name=Bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'init']);
  const env = {
    AGENTV_RESULTS_CACHE: cache,
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.invalid',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  };
  await writeFile(join(dir, 'base.jsonl'), '{"test_id":"a"}\n');
  await writeFile(join(dir, 'ours.jsonl'), '{"test_id":"a"}\n{"test_id":"b"}\n');
  await writeFile(join(dir, 'theirs.jsonl'), '{"test_id":"a"}\n{"test_id":"c"}\n');
  timeOnce([CLI, 'merge-driver', 'jsonl', join(dir, 'base.jsonl'), join(dir, 'ours.jsonl'), join(dir, 'theirs.jsonl'), 'index.jsonl'], env, repo);
  timeOnce([CLI, 'publish', join(ROOT, 'examples/results/demo-agent.jsonl'), '--no-push'], env, repo);
  // No command: the overview help and the version keep one each.
  timeOnce([CLI, '--help'], env, repo);
  timeOnce([CLI, '--version'], env, repo);
  return { warm: env, cold: { ...env, AGENTV_RESULTS_CODE_CACHE: 'off' } };
}

export async function run() {
  const tmp = await mkdtemp(join(tmpdir(), 'bench-startup-'));
  try {
    const split = await splitBundle(join(tmp, 'split'));
    const { warm, cold } = await warmCache(tmp);
    const modules = join(ROOT, 'dist/cli/run.js');
    const cases = {
      floor: [['-e', '0']],
      driverModules: [[modules, 'merge-driver', '--help']],
      driverSplit: [[split, 'merge-driver', '--help']],
      driverCold: [[CLI, 'merge-driver', '--help'], cold],
      driverWarm: [[CLI, 'merge-driver', '--help'], warm],
      publishSplit: [[split, 'publish', '--help']],
      publishCold: [[CLI, 'publish', '--help'], cold],
      publishWarm: [[CLI, 'publish', '--help'], warm],
      helpSplit: [[split, '--help']],
      helpCold: [[CLI, '--help'], cold],
      helpWarm: [[CLI, '--help'], warm],
      versionSplit: [[split, '--version']],
      versionWarm: [[CLI, '--version'], warm],
    };
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < ROUNDS + 1; i++) {
      for (const [k, [args, env]] of Object.entries(cases)) {
        const ms = timeOnce(args, env ?? {}, tmp);
        if (i > 0) samples[k].push(ms);
      }
    }
    const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
    const row = (label, key) => `| ${label} | ${fmtMs(m[key])} | ${fmtRatio(m[key] / m.floor)} | ${fmtMs(m[key] - m.floor)} |`;
    const above = (a, b) => fmtRatio((m[a] - m.floor) / (m[b] - m.floor));
    const lines = [
      '## CLI start-up',
      '',
      `Whole processes, interleaved, median of ${ROUNDS} rounds after one warm-up (\`node ${process.version.slice(1)}\`). "Split" is how the CLI shipped before: ES-module chunks split at the command table, a command loading its own. "Shipped" is \`dist/cli/main.js\` running the one-file CommonJS bundle: "warm" from the compiled code it kept for that command (every start after a command's first success), "cold" compiling it (a command's first start, or \`AGENTV_RESULTS_CODE_CACHE=off\`). A command's help reads that command's cache and writes none; the overview help and \`--version\` keep one each.`,
      '',
      '| command | median | ratio to bare node | above bare node |',
      '|---|---|---|---|',
      `| \`node -e 0\` (floor) | ${fmtMs(m.floor)} | 1.00x | — |`,
      row('`merge-driver --help`, tsc output (module by module)', 'driverModules'),
      row('`merge-driver --help`, split (before)', 'driverSplit'),
      row('`merge-driver --help`, shipped, cold', 'driverCold'),
      row('`merge-driver --help`, shipped, warm', 'driverWarm'),
      row('`publish --help`, split (before)', 'publishSplit'),
      row('`publish --help`, shipped, cold', 'publishCold'),
      row('`publish --help`, shipped, warm', 'publishWarm'),
      row('`--help` (every command), split (before)', 'helpSplit'),
      row('`--help` (every command), shipped, cold', 'helpCold'),
      row('`--help` (every command), shipped, warm', 'helpWarm'),
      row('`--version`, split (before)', 'versionSplit'),
      row('`--version`, shipped, warm', 'versionWarm'),
      '',
      `Time above bare node, shipped and warm against the split chunks: the merge driver (git starts it once per conflicted file) **${above('driverWarm', 'driverSplit')}**, \`publish\` **${above('publishWarm', 'publishSplit')}**, the overview help, which evaluates every command's code, **${above('helpWarm', 'helpSplit')}**, \`--version\` **${above('versionWarm', 'versionSplit')}**. A command's first start, cold, costs the merge driver **${above('driverCold', 'driverSplit')}** and \`publish\` **${above('publishCold', 'publishSplit')}** of the split chunks' time above bare node, once per machine, version of node and version of agentv-results.`,
    ];
    return { markdown: lines.join('\n') };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await run()).markdown);
