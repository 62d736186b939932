/**
 * WIP checkpoints and the daemon (issue: WIP checkpoints, exec, daemon).
 *
 * 1. Checkpoint cost grows with what changed, not with the run's size. A derived workspace of
 *    synthetic rows (every row with its attempt folder: result, grading, metrics, timing,
 *    transcript, answer — ~7 files) is checkpointed three ways, each adding 50 rows per tick:
 *      A  50 rows onto an empty run (a fresh WIP branch that only has its start checkpoint);
 *      B  50 rows onto a run that already has 5,000 rows checkpointed;
 *      C  baseline: copy the whole run into a worktree and `git add -A && git commit` (the approach
 *         of committing the run directory again on every tick).
 *    Targets: B within 2x of A; C at least 10x B.
 * 2. Daemon latency: from summary.json written to the run visible on the remote (its catalog line on
 *    the remote's results branch), median over 20 runs, against `agentv-results publish --push` by
 *    hand on identical runs (process start to visible). Target: within 1.5x.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, ROOT, fmtMs, fmtRatio, median, timeIt } from './lib.mjs';
import { writeSyntheticResults } from './synthetic.mjs';

const { runGit, openRepo } = await import(join(ROOT, 'dist/git/index.js'));
const { Checkpointer } = await import(join(ROOT, 'dist/wip/index.js'));
const { exportRun } = await import(join(ROOT, 'dist/runs/export/export.js'));

const BASE_ROWS = 5_000;
const TICK_ROWS = 50;
const TICKS = Number(process.env.BENCH_TICKS ?? 7);
const BASELINE_TICKS = Number(process.env.BENCH_BASELINE_TICKS ?? 3);
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 20);
const AUTHOR = { name: 'bench', email: 'bench@example.invalid' };
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};
Object.assign(process.env, GIT_ENV);

const git = async (cwd, args) => (await runGit(args, { cwd })).stdout.toString().trim();

/** Lines of index.jsonl and, per line, the sidecar folder it points at. */
function readIndex(dir) {
  return readFileSync(join(dir, 'index.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => ({ line: `${line}\n`, dir: JSON.parse(line).result_dir }));
}

/** Copy rows [from, to) (their sidecar folders, then their index lines) from the source workspace. */
function addRows(src, rows, dst, from, to) {
  for (let i = from; i < to; i++) cpSync(join(src, rows[i].dir), join(dst, rows[i].dir), { recursive: true });
  appendFileSync(
    join(dst, 'index.jsonl'),
    rows
      .slice(from, to)
      .map((r) => r.line)
      .join(''),
  );
}

async function checkpointFigures(work) {
  const results = join(work, 'results.jsonl');
  const total = BASE_ROWS + TICK_ROWS * (TICKS + 1);
  await writeSyntheticResults(results, { rows: total, seed: 7, turns: 2 });
  const src = join(work, 'source', 'bench', '2026-03-01T10-00-00-000Z');
  await exportRun({ source: results, out: src });
  const rows = readIndex(src);

  const repoDir = join(work, 'repo');
  await runGit(['init', '-q', '-b', 'main', repoDir]);
  const repo = await openRepo(repoDir);

  // A: 50 rows onto an empty run, a fresh run (and branch) per tick.
  const a = [];
  for (let t = 0; t < TICKS + 1; t++) {
    const dir = join(work, 'runs-a', 'bench', `2026-03-02T10-00-0${t}-000Z`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.jsonl'), '');
    const cp = await Checkpointer.open({ repo, runDir: dir, author: AUTHOR, host: 'bench' });
    await cp.checkpoint(); // the start checkpoint
    addRows(src, rows, dir, t * TICK_ROWS, (t + 1) * TICK_ROWS);
    const { ms, value } = await timeIt(() => cp.checkpoint());
    if (value.addedRows !== TICK_ROWS) throw new Error(`A: expected ${TICK_ROWS} rows, got ${value.addedRows}`);
    if (t > 0) a.push(ms); // first tick is warm-up
  }

  // B: 50 rows onto 5,000 checkpointed rows.
  const bDir = join(work, 'runs-b', 'bench', '2026-03-03T10-00-00-000Z');
  mkdirSync(bDir, { recursive: true });
  writeFileSync(join(bDir, 'index.jsonl'), '');
  addRows(src, rows, bDir, 0, BASE_ROWS);
  const cpB = await Checkpointer.open({ repo, runDir: bDir, author: AUTHOR, host: 'bench' });
  const big = await timeIt(() => cpB.checkpoint());
  const b = [];
  for (let t = 0; t < TICKS + 1; t++) {
    addRows(src, rows, bDir, BASE_ROWS + t * TICK_ROWS, BASE_ROWS + (t + 1) * TICK_ROWS);
    const { ms, value } = await timeIt(() => cpB.checkpoint());
    if (value.addedRows !== TICK_ROWS) throw new Error(`B: expected ${TICK_ROWS} rows, got ${value.addedRows}`);
    if (t > 0) b.push(ms);
  }
  const files = Number(await git(repoDir, ['ls-tree', '-r', '--name-only', cpB.ref]).then((s) => s.split('\n').length));

  // C: copy the whole run into a worktree and commit it again, every tick.
  const wt = join(work, 'worktree');
  await runGit(['init', '-q', '-b', 'wip', wt]);
  const cDir = join(work, 'runs-c', 'bench', '2026-03-04T10-00-00-000Z');
  mkdirSync(cDir, { recursive: true });
  writeFileSync(join(cDir, 'index.jsonl'), '');
  addRows(src, rows, cDir, 0, BASE_ROWS);
  const tick = async () => {
    cpSync(cDir, join(wt, 'run'), { recursive: true, force: true });
    await runGit(['add', '-A'], { cwd: wt });
    await runGit(['commit', '-q', '--no-gpg-sign', '--allow-empty', '-m', 'wip tick'], { cwd: wt });
  };
  await tick(); // the 5,000 rows already committed once
  const c = [];
  for (let t = 0; t < BASELINE_TICKS; t++) {
    addRows(src, rows, cDir, BASE_ROWS + t * TICK_ROWS, BASE_ROWS + (t + 1) * TICK_ROWS);
    c.push((await timeIt(tick)).ms);
  }
  return { a: median(a), b: median(b), c: median(c), big: big.ms, files, ticks: TICKS, baselineTicks: BASELINE_TICKS };
}

// ---------------------------------------------------------------------------------------------
// Daemon latency

function runProcess(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, env: { ...process.env, ...GIT_ENV, ...opts.env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-1000)}`))));
  });
}

async function userRepo(dir) {
  const remote = join(dir, 'remote.git');
  const work = join(dir, 'work');
  await runGit(['init', '-q', '--bare', '-b', 'main', remote]);
  await runGit(['init', '-q', '-b', 'main', work]);
  writeFileSync(join(work, 'README.md'), '# bench\n');
  await runGit(['add', 'README.md'], { cwd: work });
  await runGit(['commit', '-q', '--no-gpg-sign', '-m', 'init'], { cwd: work });
  await runGit(['remote', 'add', 'origin', remote], { cwd: work });
  await runGit(['push', '-q', 'origin', 'main'], { cwd: work });
  return { work, remote };
}

/** Polls the remote's catalog until it lists `runId`; returns the time it was first seen. */
async function visibleOnRemote(remote, runId, day, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  const spec = `refs/heads/agentv/results/v1:catalog/${day}.jsonl`;
  while (Date.now() < until) {
    const r = await runGit(['cat-file', '-p', spec], { gitDir: remote, okCodes: [0, 128] });
    if (r.code === 0 && r.stdout.toString().includes(`"run_id":"${runId}"`)) return performance.now();
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`${runId} never reached the remote`);
}

async function wipGone(remote, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await git(remote, ['for-each-ref', 'refs/heads/agentv/wip'])) === '') return;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('WIP branch never deleted');
}

async function latencyFigures(work) {
  const results = join(work, 'latency.jsonl');
  await writeSyntheticResults(results, { rows: 20, seed: 11, turns: 2 });
  const rowsText = readFileSync(results, 'utf8');
  const runDir = (root, i) => join(root, '.agentv/results/lat', `2026-03-05T10-${String(i).padStart(2, '0')}-00-000Z`);

  // By hand: publish --push as a fresh process, to exit (the run is on the remote then).
  const hand = await userRepo(join(work, 'hand'));
  const handMs = [];
  for (let i = 0; i < LATENCY_RUNS + 1; i++) {
    const dir = runDir(hand.work, i);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.jsonl'), rowsText);
    writeFileSync(join(dir, 'summary.json'), '{}\n');
    const t0 = performance.now();
    await runProcess(process.execPath, [CLI, 'publish', dir, '--push'], { cwd: hand.work });
    const t1 = await visibleOnRemote(hand.remote, `lat/2026-03-05T10-${String(i).padStart(2, '0')}-00-000Z`, '2026-03-05');
    if (i > 0) handMs.push(t1 - t0);
  }

  // Daemon: the run is written (and checkpointed, its WIP pushed), then summary.json appears.
  const d = await userRepo(join(work, 'daemon'));
  const daemon = spawn(process.execPath, [CLI, 'daemon', '--push', '--interval', '1', '--every-rows', '1000', '--retry-max', '1'], {
    cwd: d.work,
    env: { ...process.env, ...GIT_ENV, AGENTV_RESULTS_HOST: 'bench' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  daemon.stderr.on('data', (x) => (log += x));
  const daemonMs = [];
  try {
    while (!log.includes('daemon started')) await new Promise((res) => setTimeout(res, 20));
    for (let i = 0; i < LATENCY_RUNS + 1; i++) {
      const dir = runDir(d.work, i);
      mkdirSync(dirname(dir), { recursive: true });
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'index.jsonl'), rowsText);
      // Let the daemon see it in progress and push its WIP checkpoint, as during a real eval.
      const until = Date.now() + 30_000;
      while ((await git(d.remote, ['for-each-ref', 'refs/heads/agentv/wip'])) === '' && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
      const t0 = performance.now();
      writeFileSync(join(dir, 'summary.json'), '{}\n');
      const t1 = await visibleOnRemote(d.remote, `lat/2026-03-05T10-${String(i).padStart(2, '0')}-00-000Z`, '2026-03-05');
      await wipGone(d.remote); // the previous run's cleanup must not overlap the next measurement
      if (i > 0) daemonMs.push(t1 - t0);
    }
  } finally {
    daemon.kill('SIGTERM');
    await new Promise((res) => daemon.on('close', res));
  }
  return { hand: median(handMs), daemon: median(daemonMs), runs: LATENCY_RUNS };
}

export async function run() {
  const work = await mkdtemp(join(tmpdir(), 'bench-wip-'));
  try {
    const cp = await checkpointFigures(work);
    const lat = await latencyFigures(work);
    const markdown = `## WIP checkpoints and the daemon

Checkpoint cost (one tick adds ${TICK_ROWS} rows; synthetic derived workspace, ~7 files per row; the 5,000-row run's WIP tree holds ${cp.files.toLocaleString('en-US')} files; medians of ${cp.ticks} ticks after a warm-up, baseline ${cp.baselineTicks} ticks):

| checkpoint | median | ratio | target |
|---|---|---|---|
| A: ${TICK_ROWS} rows onto an empty run | ${fmtMs(cp.a)} | 1.00x | |
| B: ${TICK_ROWS} rows onto ${BASE_ROWS.toLocaleString('en-US')} checkpointed rows | ${fmtMs(cp.b)} | **${fmtRatio(cp.b / cp.a)}** of A | ≤ 2x of A |
| C: baseline — copy the whole run into a worktree, \`git add -A\`, \`git commit\` | ${fmtMs(cp.c)} | **${fmtRatio(cp.c / cp.b)}** of B | ≥ 10x of B |

(The first checkpoint of the 5,000-row run, which captures everything once, took ${fmtMs(cp.big)}.)

Daemon latency: summary.json written → run visible on the remote (its catalog line on the remote's results branch), median of ${lat.runs} runs of 20 rows, local bare remote:

| path | median | ratio | target |
|---|---|---|---|
| \`agentv-results publish --push\` by hand (process start → visible) | ${fmtMs(lat.hand)} | 1.00x | |
| \`agentv-results daemon\` (summary.json written → visible) | ${fmtMs(lat.daemon)} | **${fmtRatio(lat.daemon / lat.hand)}** | ≤ 1.5x |
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
