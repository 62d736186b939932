/**
 * Issue 40's hostile groups, part A (nothing hangs), as a repeatable trial:
 *   npm run bench -- hostile-a      (writes its counts into BENCHMARKS.md)
 *   node bench/hostile-a.bench.mjs  (prints them)
 * Every verb is pointed at a named pipe nothing writes to, a link to /dev/zero, a socket and a
 * file over its kind's bound, in each slot it reads; ref names git refuses come from each source;
 * the server gets six requests on a pipe. A case holds when the command exits 2 naming the file
 * or setting within the bound (each process is killed by pid after BOUND ms: a hang is a case not
 * held, never a stuck trial). Invariants, not timings. Loopback only, everything in a temp dir.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, dashboardUrl, TRIAL_ENV } from './lib.mjs';

const BOUND = 30_000;
const MiB = 1024 * 1024;
const ENV = TRIAL_ENV;
const cli = (args, cwd, env = {}) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...ENV, ...env }, encoding: 'utf8', timeout: BOUND, killSignal: 'SIGKILL' });
  return { code: r.status ?? 128, err: r.stderr ?? '' };
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' }).trim();

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'agentv-hostile-a-'));
  const sockets = [];
  const groups = {};
  const failures = [];
  const tally = (group, held, what) => {
    groups[group] ??= { tried: 0, held: 0 };
    groups[group].tried++;
    if (held) groups[group].held++;
    else failures.push(`${group}: ${what}`);
  };
  let n = 0;
  const KINDS = {
    'named pipe': (p) => execFileSync('mkfifo', [p]),
    'link to /dev/zero': (p) => symlinkSync('/dev/zero', p),
    socket: async (p) => {
      const s = createServer();
      await new Promise((r) => s.listen(p, r));
      sockets.push(s);
    },
    'oversized file': (p, huge) => {
      writeFileSync(p, '');
      truncateSync(p, huge);
    },
  };
  try {
    // A repository with one published run, and a run folder to read.
    const work = join(root, 'user');
    mkdirSync(work);
    git(work, 'init', '-q');
    git(work, 'commit', '-q', '--allow-empty', '-m', 'init');
    const src = join(root, 'r.jsonl');
    writeFileSync(
      src,
      `${JSON.stringify({ test_id: 'alpha', suite: 's', target: 'm', score: 1, timestamp: '2026-03-01T10:00:00Z', assertions: [{ text: 'ok', passed: true }] })}\n`,
    );
    const runDir = join(root, 'run');
    cli(['export', src, '--out', runDir], root);
    cli(['publish', runDir], work);
    const clone = () => {
      const d = join(root, `c${n++}`);
      git(root, 'clone', '-q', work, d);
      mkdirSync(join(d, '.agentv'), { recursive: true });
      return d;
    };

    for (const [kind, make] of Object.entries(KINDS)) {
      // The config file, for every verb that reads it.
      const repo = clone();
      const file = join(repo, '.agentv', 'config.yaml');
      await make(file, 2 * MiB);
      for (const args of [
        ['list'],
        ['status'],
        ['publish', runDir],
        ['sync'],
        ['pull', 'x', '--out', join(root, `p${n++}`)],
        ['wip', 'list'],
        ['daemon', '--once'],
        ['serve', '--port', '0'],
        ['archive'],
        ['trend', '--published'],
      ]) {
        const r = cli(args, repo);
        tally('config file (.agentv/config.yaml)', r.code === 2 && r.err.includes(file), `${kind}, ${args[0]}: exit ${r.code}`);
      }
      const flagFile = join(root, `flag${n++}.yaml`);
      await make(flagFile, 2 * MiB);
      const f = cli(['list', '--config', flagFile], work);
      tally('--config', f.code === 2 && f.err.includes(flagFile), `${kind}: exit ${f.code}`);

      // A run's index, for every reader.
      const dir = join(root, `run${n++}`);
      cpSync(runDir, dir, { recursive: true });
      rmSync(join(dir, 'index.jsonl'));
      await make(join(dir, 'index.jsonl'), 1100 * MiB);
      for (const args of [
        ['show', dir],
        ['report', dir, '--out', join(root, `r${n++}.html`)],
        ['validate', dir],
        ['summary', dir],
        ['failures', dir],
        ['compare', dir, dir],
        ['trend', dir],
        ['export', dir, '--out', join(root, `e${n++}`)],
      ]) {
        const r = cli(args, root);
        tally("a run's index.jsonl", r.code === 2 && r.err.includes('index.jsonl'), `${kind}, ${args[0]}: exit ${r.code}`);
      }

      // A results file named on the command line.
      if (kind !== 'oversized file') {
        const input = join(root, `in${n++}.jsonl`);
        await make(input, 0);
        for (const args of [
          ['export', input, '--out', join(root, `x${n++}`)],
          ['validate', input],
          ['compare', input, input],
          ['trend', input],
        ]) {
          const r = cli(args, root);
          tally('a results file argument', r.code === 2 && r.err.includes(input), `${kind}, ${args[0]}: exit ${r.code}`);
        }
      }

      // The merge driver's three files.
      for (const slot of [0, 1, 2]) {
        const files = [0, 1, 2].map((i) => join(root, `m${n}-${i}`));
        n++;
        for (const [i, p] of files.entries()) if (i !== slot) writeFileSync(p, '');
        await make(files[slot], 600 * MiB);
        for (const driver of ['jsonl', 'json']) {
          const r = cli(['merge-driver', driver, ...files, 'x'], root);
          tally('merge-driver arguments', r.code === 2 && r.err.includes(files[slot]), `${kind}, ${driver} slot ${slot}: exit ${r.code}`);
        }
      }

      // The autoresearch log.
      const exp = join(root, `exp${n++}`);
      mkdirSync(join(exp, '_autoresearch'), { recursive: true });
      const log = join(exp, '_autoresearch', 'iterations.jsonl');
      await make(log, 100 * MiB);
      for (const args of [
        ['autoresearch', 'trajectory', '--experiment', 'x', '--experiment-dir', exp],
        ['autoresearch', 'record', runDir, '--experiment', 'x', '--experiment-dir', exp],
      ]) {
        const r = cli(args, root);
        tally('autoresearch log', r.code === 2 && r.err.includes(log), `${kind}, ${args[1]}: exit ${r.code}`);
      }
    }

    // report --out onto a pipe nothing reads.
    const fifo = join(root, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const o = cli(['report', runDir, '--out', fifo], root);
    tally('report --out onto a pipe with no reader', o.code === 2 && o.err.includes(fifo), `exit ${o.code}`);

    // Ref names git refuses, from each source.
    for (const name of ['agentv/results/v1.lock', 'agentv/.hidden', 'agentv/x.', 'agentv/x?*']) {
      const repo = clone();
      const file = join(repo, '.agentv', 'config.yaml');
      for (const [key, how] of [
        ['branch', 'file'],
        ['artifacts_branch', 'file'],
        ['branch', 'env'],
      ]) {
        if (how === 'file') writeFileSync(file, `results:\n  ${key}: "${name}"\n`);
        else rmSync(file, { force: true });
        const r = cli(['publish', runDir], repo, how === 'env' ? { AGENTV_RESULTS_BRANCH: name } : {});
        const names = r.err.includes(`results.${key}`) && r.err.includes(how === 'env' ? 'AGENTV_RESULTS_BRANCH' : file);
        tally('ref-name settings', r.code === 2 && names, `${name} in ${how} ${key}: exit ${r.code}`);
      }
    }

    // The server: six requests on a pipe, then /api/runs, then SIGTERM.
    const repo = clone();
    const logDir = join(repo, '.agentv', 'results', 'runs', 'exp', '_autoresearch');
    mkdirSync(logDir, { recursive: true });
    execFileSync('mkfifo', [join(logDir, 'iterations.jsonl')]);
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { cwd: repo, env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
    const kill = setTimeout(() => child.kill('SIGKILL'), 4 * BOUND);
    const exited = new Promise((r) => child.on('close', (code, signal) => r(signal === 'SIGKILL' ? 'killed' : code)));
    try {
      const url = await dashboardUrl(child);
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          fetch(`${url}/api/autoresearch/exp`, { signal: AbortSignal.timeout(BOUND) }).then(
            (r) => r.status,
            () => 'no answer',
          ),
        ),
      );
      for (const a of answers) tally('server', a === 400, `a request on the pipe: ${a}`);
      const runs = await fetch(`${url}/api/runs`, { signal: AbortSignal.timeout(BOUND) }).then(
        (r) => r.status,
        () => 'no answer',
      );
      tally('server', runs === 200, `/api/runs: ${runs}`);
      process.kill(child.pid, 'SIGTERM');
      const stop = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), BOUND).unref())]);
      tally('server', stop !== 'still running' && stop !== 'killed', `SIGTERM: ${stop}`);
    } finally {
      clearTimeout(kill);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  } finally {
    for (const s of sockets) s.close();
    rmSync(root, { recursive: true, force: true });
  }
  const total = Object.values(groups).reduce((a, g) => ({ tried: a.tried + g.tried, held: a.held + g.held }), { tried: 0, held: 0 });
  const markdown = [
    '## Hostile inputs, round three: nothing hangs (bench/hostile-a.bench.mjs, issue 40 part A)',
    '',
    'Each verb pointed at a named pipe nothing writes to, a link to /dev/zero, a socket and a file over',
    "its kind's bound, in each slot it reads; ref names git refuses from the file and the environment;",
    'six Dashboard requests on a pipe. Held: exit 2 naming the file or setting (the server: each request',
    `answered, /api/runs answered, SIGTERM stops it) within ${BOUND / 1000} s per process. Invariants, not timings.`,
    '',
    '| group | tried | held |',
    '| --- | ---: | ---: |',
    ...Object.entries(groups).map(([g, c]) => `| ${g} | ${c.tried} | ${c.held} |`),
    `| **all** | **${total.tried}** | **${total.held}** |`,
    '',
    failures.length ? `Not held:\n${failures.map((f) => `- ${f}`).join('\n')}` : 'Every case held.',
    '',
    'Before this change (the trial of issue 40): a config that is a pipe, a device or a link to /dev/zero',
    'hung every command, `merge-driver` on pipes and `report --out` onto a pipe with no reader blocked,',
    "branch names git refuses exited 3 with git's raw message, and six requests on a pipe froze the server.",
  ].join('\n');
  return { markdown, groups, failures };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { markdown } = await run();
  process.stdout.write(markdown + '\n');
}
