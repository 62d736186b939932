/**
 * Issue 49 item 5: the gate with history (`--history 10`, the default) on a results branch of many
 * runs costs at most 1.5x the gate without (`--history 0`) on the same baseline and candidate: it
 * reads the listing the baseline's name needs anyway (kept per tip on disk) and the light rows of
 * the 10 runs, nothing else. Also `flaky` over the last 50 runs. The branch is seeded with
 * archive-lib's seedLiveRuns (every run a graft of one exported run of BENCH_GATE_TESTS tests,
 * catalogued as publish writes it); fresh CLI processes as a user runs them, the commands
 * alternated, median of BENCH_RUNS after one warm-up; wall and CPU seconds (user + system of the
 * process, from /usr/bin/time) reported. BENCH_GATE_BRANCH_RUNS sizes the branch (default 20,000;
 * several sizes comma-separated to show the cost does not grow with the branch).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, fmtMs, fmtRatio, median } from './lib.mjs';
import { seedLiveRuns } from './archive-lib.mjs';
import { freshRepo, isolateGitEnv, makeWorkspace } from './publish-lib.mjs';

export const optIn = true;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SIZES = String(process.env.BENCH_GATE_BRANCH_RUNS ?? '20000')
  .split(',')
  .map(Number);
const TESTS = Number(process.env.BENCH_GATE_TESTS ?? 1000);
const TARGET = 1.5;

/** The CLI as a user runs it: wall ms and CPU seconds (user + system) of the process. */
function measured(args, cwd, okCodes = [0, 1]) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%U %S', process.execPath, CLI, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (!okCodes.includes(code)) return reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
      const [u, s] = stderr.trim().split('\n').pop().split(' ').map(Number);
      resolve({ ms, cpu: u + s });
    });
  });
}

export async function measure(size) {
  const work = await mkdtemp(join(tmpdir(), 'bench-gate-history-'));
  try {
    const template = await makeWorkspace(work, { rows: TESTS, seed: 5, turns: 1 });
    const candidate = await makeWorkspace(work, { rows: TESTS, seed: 6, turns: 1, day: 400 });
    const repo = await freshRepo(work, 'live');
    await mkdir(join(repo, '.agentv'), { recursive: true });
    await writeFile(join(repo, '.agentv', 'config.yaml'), 'results:\n  path: .\n  branch: agentv/results/v1\n');
    const t0 = performance.now();
    await seedLiveRuns(repo, template, { count: size, perDay: 250, experiment: 'bench' });
    const seedMs = performance.now() - t0;
    const commands = {
      without: ['gate', '@latest', candidate.dir, '--history', '0', '--json', '--removed-tests', 'allow'],
      with: ['gate', '@latest', candidate.dir, '--history', '10', '--json', '--removed-tests', 'allow'],
      flaky: ['flaky', '--experiment', 'bench', '--last', '50', '--json'],
    };
    // The history is read: 10 runs, the rule applied (the seeded runs all hold the same rows).
    const probe = await promisify(execFile)(process.execPath, [CLI, ...commands.with], { cwd: repo, maxBuffer: 1 << 28 }).catch((e) => e);
    const history = JSON.parse(probe.stdout).history;
    if (history.runs.length !== Math.min(10, size) || !history.applied) throw new Error(`history not read: ${JSON.stringify(history)}`);
    const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
    for (let i = 0; i < RUNS + 1; i++)
      for (const [name, args] of Object.entries(commands)) {
        const r = await measured(args, repo);
        if (i > 0) times[name].push(r);
      }
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, { ms: median(v.map((x) => x.ms)), cpu: median(v.map((x) => x.cpu)) }]));
    return { size, seedMs, m };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export async function run() {
  isolateGitEnv();
  const rows = [];
  for (const size of SIZES) rows.push(await measure(size));
  const lines = [
    '## gate with history, flaky (issue 49 item 5)',
    '',
    `A results branch of N runs of one experiment (${TESTS} tests each), the gate of a local candidate against \`@latest\` with and without \`--history 10\`, and \`flaky --last 50\`. Fresh CLI processes, alternated, median of ${RUNS} after one warm-up. Target: with history ≤ ${TARGET}x without; flaky < 10 s.`,
    '',
    '| runs on the branch | gate --history 0 | gate --history 10 | ratio (wall) | ratio (CPU) | flaky --last 50 |',
    '|--:|--:|--:|--:|--:|--:|',
    ...rows.map(
      (r) =>
        `| ${r.size.toLocaleString('en-US')} | ${fmtMs(r.m.without.ms)} (${r.m.without.cpu.toFixed(2)} CPU-s) | ${fmtMs(r.m.with.ms)} (${r.m.with.cpu.toFixed(2)} CPU-s) | ${fmtRatio(r.m.with.ms / r.m.without.ms)} | ${fmtRatio(r.m.with.cpu / r.m.without.cpu)} | ${fmtMs(r.m.flaky.ms)} (${r.m.flaky.cpu.toFixed(2)} CPU-s) |`,
    ),
  ];
  return { markdown: lines.join('\n') };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log((await run()).markdown);
