/**
 * Issue 41: the daemon publishing runs one after another keeps its resident memory and its scratch
 * disk flat. One `agentv-results daemon --push` process (file-system events, JSON log) watches a
 * clone of a bare remote; the bench writes a finished run (AgentV's plain result rows in
 * index.jsonl, a layout publish derives, then summary.json), waits for
 * the daemon's "published" and "results pushed" lines, and writes the next. At run 1, 50, 100, …
 * it reads the daemon's VmRSS from /proc and the bytes under its TMPDIR (a directory of its own:
 * every scratch copy the daemon makes lands there) and under the clone's .git/agentv-results
 * (the outbox and daemon state).
 *
 * Opt-in (minutes): `npm run bench -- daemon-soak`, or `node bench/daemon-soak.bench.mjs` (prints
 * the samples as JSON). BENCH_SOAK_RUNS (default 200), BENCH_SOAK_ROWS (rows a run, default 20).
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, ROOT } from './lib.mjs';
import { writeSyntheticResults } from './synthetic.mjs';

const { runGit } = await import(join(ROOT, 'dist/git/index.js'));

const RUNS = Number(process.env.BENCH_SOAK_RUNS ?? 200);
const ROWS = Number(process.env.BENCH_SOAK_ROWS ?? 20);
const WAIT_MS = 120_000;
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};
const log = (m) => process.stderr.write(`  ${m}\n`);

export const optIn = true;

/** The runs at which a sample is taken: 1, every 50th, and the last. */
export function samplePoints(runs) {
  const points = new Set([1, runs]);
  for (let i = 50; i < runs; i += 50) points.add(i);
  return [...points].sort((a, b) => a - b);
}

/** Bytes of every regular file under `dir` (0 when it does not exist). */
export function bytesUnder(dir) {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return 0;
    throw err;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += bytesUnder(p);
    else if (e.isFile()) total += lstatSync(p).size;
  }
  return total;
}

function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

async function userRepo(dir) {
  const remote = join(dir, 'remote.git');
  const work = join(dir, 'work');
  const git = (args, cwd) => runGit(args, { cwd, env: { ...process.env, ...GIT_ENV } });
  await git(['init', '-q', '--bare', '-b', 'main', remote]);
  await git(['init', '-q', '-b', 'main', work]);
  writeFileSync(join(work, 'README.md'), '# bench\n');
  await git(['add', 'README.md'], work);
  await git(['commit', '-q', '--no-gpg-sign', '-m', 'init'], work);
  await git(['remote', 'add', 'origin', remote], work);
  await git(['push', '-q', 'origin', 'main'], work);
  return { work, remote };
}

export async function measure() {
  const work = await mkdtemp(join(tmpdir(), 'avr-daemon-soak-'));
  const scratch = join(work, 'tmp');
  mkdirSync(scratch);
  let daemon = null;
  try {
    const results = join(work, 'rows.jsonl');
    await writeSyntheticResults(results, { rows: ROWS, seed: 41, turns: 2 });
    const rowsText = readFileSync(results, 'utf8');
    const user = await userRepo(work);
    daemon = spawn(process.execPath, [CLI, 'daemon', '--push', '--log-format', 'json', '--interval', '3600', '--every-rows', '100000', '--retry-max', '1'], {
      cwd: user.work,
      env: { ...process.env, ...GIT_ENV, TMPDIR: scratch, AGENTV_RESULTS_HOST: 'bench' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const events = [];
    let partial = '';
    const waiters = new Set();
    daemon.stderr.on('data', (chunk) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop();
      for (const line of lines) {
        let ev;
        try {
          ev = JSON.parse(line);
        } catch {
          ev = { msg: line };
        }
        events.push(ev);
        for (const w of waiters) w();
      }
    });
    const exited = new Promise((res) => daemon.once('exit', (code) => res(code)));
    /** Resolves with the index of the first event from `from` on that `test` accepts. */
    const waitFor = (from, test, what) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const i = events.findIndex((e, j) => j >= from && test(e));
          if (i !== -1) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(i);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`daemon: no ${what} within ${WAIT_MS} ms; last lines: ${JSON.stringify(events.slice(-5))}`));
        }, WAIT_MS);
        waiters.add(check);
        exited.then((code) => reject(new Error(`daemon exited ${code} while waiting for ${what}: ${JSON.stringify(events.slice(-5))}`)));
        check();
      });
    await waitFor(0, (e) => e.msg === 'daemon started', 'start');
    const points = new Set(samplePoints(RUNS));
    const samples = [];
    const t0 = performance.now();
    for (let i = 1; i <= RUNS; i++) {
      const ts = new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString().replace(/[:.]/g, '-');
      const dir = join(user.work, '.agentv', 'results', 'soak', ts);
      mkdirSync(dir, { recursive: true });
      const from = events.length;
      writeFileSync(join(dir, 'index.jsonl'), rowsText);
      writeFileSync(join(dir, 'summary.json'), '{}\n');
      const at = await waitFor(from, (e) => e.msg === 'published' && e.run === ts, `publish of run ${i}`);
      await waitFor(at, (e) => e.msg === 'results pushed' || e.msg === 'results already on the remote', `push of run ${i}`);
      if (points.has(i)) {
        const sample = {
          run: i,
          rss_bytes: rssBytes(daemon.pid),
          scratch_bytes: bytesUnder(scratch),
          state_bytes: bytesUnder(join(user.work, '.git', 'agentv-results')),
          seconds: Math.round((performance.now() - t0) / 100) / 10,
        };
        samples.push(sample);
        log(JSON.stringify(sample));
      }
    }
    const failures = events.filter((e) => e.level === 'warn' || e.level === 'error');
    return { runs: RUNS, rows: ROWS, samples, warnings: failures.length };
  } finally {
    if (daemon && daemon.exitCode === null) {
      daemon.kill('SIGTERM');
      await new Promise((res) => daemon.once('exit', res));
    }
    await rm(work, { recursive: true, force: true });
  }
}

const mib = (b) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;

export async function run() {
  const r = await measure();
  const first = r.samples[0];
  const last = r.samples.at(-1);
  const rows = r.samples.map(
    (s) =>
      `| ${s.run} | ${mib(s.rss_bytes)} | ${(s.rss_bytes / first.rss_bytes).toFixed(2)}x | ${kib(s.scratch_bytes)} | ${kib(s.state_bytes)} | ${s.seconds} s |`,
  );
  const markdown = [
    '## The daemon publishing runs in a row: memory and scratch disk (issue 41)',
    '',
    `\`bench/daemon-soak.bench.mjs\` (opt-in): one \`daemon --push\` process publishes ${r.runs} runs one after another (${r.rows} rows each, AgentV's plain result rows in index.jsonl, a layout publish derives), each pushed to a bare remote before the next is written; ${new Date().toISOString().slice(0, 10)}, Node ${process.version}. Resident memory is the daemon's VmRSS; scratch is every byte under the daemon's own TMPDIR; state is the clone's \`.git/agentv-results\` (outbox journal, daemon state). Warnings or errors in the daemon's log: ${r.warnings}.`,
    '',
    '| run | resident memory | vs run 1 | scratch disk | daemon state | elapsed |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Run ${last.run} against run 50 (after warm-up): resident memory ${(last.rss_bytes / (r.samples.find((s) => s.run === 50) ?? first).rss_bytes).toFixed(2)}x; scratch disk ${kib(last.scratch_bytes)} at the end.`,
  ].join('\n');
  return { markdown, ...r };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown, ...r } = await run();
  process.stderr.write(`${markdown}\n`);
  process.stdout.write(`${JSON.stringify({ when: new Date().toISOString(), node: process.version, ...r }, null, 2)}\n`);
}
