/**
 * Issue 23's figures: publishing a run `agentv eval` wrote.
 *
 *  1. Our `publish` of an AgentV run vs AgentV's own `auto_push` of the same run, both a local
 *     commit only (no remote configured, `auto_push: false`): goal <= 0.5x. AgentV publishes from
 *     inside `agentv eval`, so its share is measured from the outside: every git process the eval
 *     starts belongs to the publish, and git's trace2 event log (switched on in the throwaway
 *     HOME's git config) gives the window from the first one's start to the last one's exit. Ours
 *     is the same work in process (`publish()`, into a fresh repository); the whole command,
 *     `node dist/cli/main.js publish <run>` with node's start, is reported beside it. Each sample
 *     checks that both results trees under the run are identical.
 *  2. Listing cost: bytes of `git ls-tree -r --name-only` of the results branch per test, which is
 *     what AgentV's Dashboard reads into its 1 MB buffer: an AgentV run published by AgentV, the
 *     same run published by us, and every real result file in ../shared/fixtures/agentv exported
 *     and published by us (one result row = one test), catalog files included.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, ROOT, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';
import { git, isolateGitEnv, makeWorkDir, publish } from './publish-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const AGENTV_DIR = process.env.AGENTV_CLIENT_DIR ?? resolve(ROOT, '../shared/agentv-client');
const AGENTV = join(AGENTV_DIR, 'agentv');
const FIXTURES = process.env.AGENTV_FIXTURES_DIR ?? resolve(ROOT, '../shared/fixtures/agentv');
const BRANCH = 'agentv/results/v1';
const log = (m) => process.stderr.write(`  ${m}\n`);
const pass = (ok) => (ok ? '✅' : '❌');

function sh(cmd, args, opts) {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', rej);
    child.on('close', (code) => (code === 0 ? res(out) : rej(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out.slice(-2000)}`))));
  });
}

/**
 * AgentV's git processes report their start and exit times through git's own trace2 event log,
 * switched on in the throwaway HOME's global git config (AgentV scrubs GIT_* variables from the
 * environment of the git it runs, not HOME): no wrapper process, nothing added to their cost.
 */
async function traceGit(home, logFile) {
  await writeFile(join(home, '.gitconfig'), `[trace2]\n\teventTarget = ${logFile}\n[user]\n\tname = Bench\n\temail = bench@example.invalid\n`);
}

/** The window from the first git start to the last git exit in a trace2 event log, and how many git processes ran. */
async function gitWindow(logFile) {
  const starts = [];
  const exits = [];
  for (const line of (await readFile(logFile, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line);
    if (e.event === 'start') starts.push(Date.parse(e.time) + Number(/\.(\d{3})(\d{3})/.exec(e.time)?.[2] ?? 0) / 1000);
    if (e.event === 'exit') exits.push(Date.parse(e.time) + Number(/\.(\d{3})(\d{3})/.exec(e.time)?.[2] ?? 0) / 1000);
  }
  return { ms: Math.max(...exits) - Math.min(...starts), calls: starts.length };
}

/** The sample project as a repository without a remote, results configured for a local commit only. */
async function project(work, name) {
  const dir = join(work, name);
  await cp(join(AGENTV_DIR, 'sample-project'), dir, { recursive: true });
  await writeFile(join(dir, '.gitignore'), '.agentv/\n');
  const cfg = join(dir, '.agentv', 'config.yaml');
  await writeFile(cfg, `${(await readFile(cfg, 'utf8')).trimEnd()}\nresults:\n  path: .\n  branch: ${BRANCH}\n  auto_push: false\n`);
  await git.runGit(['init', '-q', '-b', 'main'], { cwd: dir });
  await git.runGit(['add', '-A'], { cwd: dir });
  await git.runGit(['commit', '-q', '-m', 'sample'], { cwd: dir });
  return dir;
}

async function agentvEval(dir, home, logFile) {
  await rm(logFile, { force: true });
  await traceGit(home, logFile);
  try {
    await sh(AGENTV, ['eval', 'evals/demo.eval.yaml', '--experiment', 'bench'], { cwd: dir, env: { ...process.env, HOME: home, NO_COLOR: '1', CI: '1' } });
  } finally {
    await rm(join(home, '.gitconfig'), { force: true });
  }
  const { ms: window, calls } = await gitWindow(logFile);
  const runs = (await readdir(join(dir, '.agentv', 'results'), { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
  return { windowMs: window, calls, runDir: join(dir, '.agentv', 'results', runs[0].name), runId: runs[0].name };
}

const listingBytes = async (repo, path) =>
  Buffer.byteLength((await git.runGit(['ls-tree', '-r', '--name-only', `refs/heads/${BRANCH}`, ...(path ? ['--', path] : [])], { cwd: repo })).stdout);

async function publishVsAutoPush(work, home) {
  const theirs = [];
  const ours = [];
  const command = [];
  let calls = 0;
  let identical = true;
  let listing = null;
  for (let i = 0; i < RUNS + 1; i++) {
    const a = await project(work, `agentv-${i}`);
    const ev = await agentvEval(a, home, join(work, `git-${i}.log`));
    const b = await project(work, `ours-${i}`);
    const copy = join(b, '.agentv', 'results', ev.runId);
    await cp(ev.runDir, copy, { recursive: true });
    const ms = (await runMeasured(process.execPath, [CLI, 'publish', copy, '--no-push'], { cwd: b })).ms;
    // The same publish as a library call into a third repository: AgentV's window is in-process too.
    const c = await project(work, `lib-${i}`);
    const libCopy = join(c, '.agentv', 'results', ev.runId);
    await cp(ev.runDir, libCopy, { recursive: true });
    const t0 = performance.now();
    await publish({ run: libCopy, cwd: c, push: false });
    const libMs = performance.now() - t0;
    const tree = async (repo) => String((await git.runGit(['ls-tree', '-r', `refs/heads/${BRANCH}`, '--', `${ev.runId}/`], { cwd: repo })).stdout);
    const [ta, tb] = [await tree(a), await tree(b)];
    const same = ta === tb && ta.length > 0;
    if (!same) {
      log(`the two results trees differ under ${ev.runId}/`);
    }
    identical &&= same;
    if (i === 0) {
      const tests = JSON.parse(await readFile(join(ev.runDir, 'summary.json'), 'utf8')).counts.total_tests;
      listing = {
        tests,
        agentv: await listingBytes(a),
        ours: await listingBytes(b),
        agentvRun: await listingBytes(a, `${ev.runId}/`),
        oursRun: await listingBytes(b, `${ev.runId}/`),
      };
    } else {
      theirs.push(ev.windowMs);
      ours.push(libMs);
      command.push(ms);
      calls = ev.calls;
    }
    log(`sample ${i}: AgentV window ${fmtMs(ev.windowMs)} (${ev.calls} git calls), ours ${fmtMs(libMs)} (command ${fmtMs(ms)}), trees identical: ${same}`);
    for (const d of [a, b, c]) await rm(d, { recursive: true, force: true });
  }
  return { theirs: median(theirs), ours: median(ours), command: median(command), calls, identical, listing };
}

/** Every fixture exported and published by us into one repository: listing bytes per result row. */
async function fixtureListing(work) {
  if (!existsSync(FIXTURES)) return null;
  const repo = join(work, 'fixtures-repo');
  await git.runGit(['init', '-q', '-b', 'main', repo]);
  let rows = 0;
  let runs = 0;
  for (const f of (await readdir(FIXTURES)).filter((n) => n.endsWith('.jsonl')).sort()) {
    const r = JSON.parse(await sh(process.execPath, [CLI, 'publish', join(FIXTURES, f), '--no-push', '--json'], { cwd: repo }).catch(() => 'null'));
    if (!r) continue;
    rows += r.counts.total;
    runs += 1;
  }
  return { runs, rows, bytes: await listingBytes(repo) };
}

export async function run() {
  if (!existsSync(AGENTV)) return { markdown: '## Publishing an AgentV run\n\nSkipped: the real AgentV client is not beside the repository.\n' };
  isolateGitEnv();
  const work = await makeWorkDir();
  const home = await mkdtemp(join(tmpdir(), 'bench-agentv-home-'));
  try {
    const p = await publishVsAutoPush(work, home);
    const fx = await fixtureListing(work);
    const r = p.ours / p.theirs;
    const l = p.listing;
    const lines = [
      '## Publishing an AgentV run (issue 23)',
      '',
      `The sample project's run (\`agentv eval\`, ${l.tests} tests), published as a local commit only. AgentV's \`auto_push\` runs inside \`agentv eval\`, so it is timed from the outside: all ${p.calls} git processes the eval starts are its publish's, and git's own trace2 event log gives the window from the first one's start to the last one's exit. Ours is the same work in process (\`publish()\` of the library); the whole command, node start included, is shown for orientation. Medians of ${RUNS}, the sides interleaved.`,
      '',
      '| | median | ratio | goal | |',
      '|---|---|---|---|---|',
      `| AgentV \`auto_push\` (local commit) | ${fmtMs(p.theirs)} | 1.00x | | |`,
      `| our \`publish\` (local commit) | ${fmtMs(p.ours)} | ${fmtRatio(r)} | ≤ 0.5x | ${pass(r <= 0.5)} |`,
      `| our \`agentv-results publish\` command, node start included | ${fmtMs(p.command)} | ${fmtRatio(p.command / p.theirs)} | | |`,
      '',
      `Both results trees under the run identical in every sample (paths, modes, blobs): ${pass(p.identical)}.`,
      '',
      "**Listing cost** (`git ls-tree -r --name-only` of `agentv/results/v1`, what AgentV's Dashboard reads into 1 MB):",
      '',
      '| | bytes | per test |',
      '|---|---|---|',
      `| AgentV run, published by AgentV (run only) | ${l.agentvRun} | ${(l.agentvRun / l.tests).toFixed(0)} |`,
      `| the same run, published by us (run only) | ${l.oursRun} | ${(l.oursRun / l.tests).toFixed(0)} (goal ≤ AgentV's ${pass(l.oursRun <= l.agentvRun)}) |`,
      `| whole branch, AgentV / ours (ours adds the day's catalog and our .gitattributes lines) | ${l.agentv} / ${l.ours} | ${(l.agentv / l.tests).toFixed(0)} / ${(l.ours / l.tests).toFixed(0)} |`,
      ...(fx
        ? [
            `| ${fx.runs} real result files exported and published by us (${fx.rows} result rows), whole branch | ${fx.bytes} | ${(fx.bytes / fx.rows).toFixed(0)} |`,
          ]
        : []),
      '',
      `At these rates AgentV's 1 MB buffer holds about ${Math.floor(1048576 / (l.oursRun / l.tests)).toLocaleString('en-US')} tests of AgentV runs (whoever publishes them)${fx ? ` and about ${Math.floor(1048576 / (fx.bytes / fx.rows)).toLocaleString('en-US')} result rows of our exports` : ''}.`,
    ];
    return { markdown: lines.join('\n') + '\n' };
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  }
}
