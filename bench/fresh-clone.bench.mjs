/**
 * Issue 37: what a fresh depth-1 clone (actions/checkout) fetches of the results branch. A remote
 * whose agentv/results/v1 has N publishes in its history (built with one `git fast-import`: each
 * commit adds a run of ~2 KB and drops the one 40 commits older, so the tip keeps the newest 40
 * runs, as `archive` leaves it) plus a baseline and a candidate published by the CLI. Measured:
 *   - the tip pack: the tip commit with its trees and blobs alone, the floor for any read;
 *   - the full history: what a fetch of the branch without depth brings;
 *   - `gate @baseline <candidate> --fetch` in a depth-1 clone: bytes it fetched, wall time against
 *     the same gate in a clone that already has everything (no fetch);
 *   - `publish --push` from a depth-1 clone: bytes it fetched;
 *   - on a live branch of 20,000 runs (one commit, seeded with bench/archive-lib.mjs seedLiveRuns):
 *     `list --fetch` in a depth-1 clone against `list` where the branch is local, and `serve`'s
 *     first page (`GET /api/runs`, timed from the process start) on a fresh `git clone` (only the
 *     remote-tracking ref) against the same in the repository that wrote the branch.
 * Bytes fetched: the size of the packs the fetch kept (fetch.unpackLimit=1 keeps every fetch as
 * one pack, as received). The remote is a bare repository over file://.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, dashboardUrl, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';
import { seedLiveRuns } from './archive-lib.mjs';
import { freshRepo, git, isolateGitEnv, makeWorkspace } from './publish-lib.mjs';

const SIZES = (process.env.BENCH_FRESH_CLONE_PUBLISHES ?? '3000,30000').split(',').filter(Boolean).map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LIVE = 40;
const LIVE_BRANCH_RUNS = Number(process.env.BENCH_FRESH_CLONE_LIVE_RUNS ?? 20000);

const g = async (cwd, args, opts = {}) => (await git.runGit(args, { cwd, ...opts })).stdout.toString('utf8').trim();

async function cli(cwd, args, okCodes = [0]) {
  const { spawn } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (okCodes.includes(code) ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-1500)}`))));
  });
}

/** Bytes of the pack files under a repository (every fetch kept as one pack). */
async function packBytes(repo) {
  const dir = join(repo, '.git', 'objects', 'pack');
  let total = 0;
  for (const f of await readdir(dir).catch(() => [])) if (f.endsWith('.pack')) total += (await stat(join(dir, f))).size;
  return total;
}

/** N commits on agentv/results/v1 of `repo`, each adding one run and dropping the one LIVE commits older. */
async function buildHistory(repo, n) {
  const proc = git.spawnGit(['fast-import', '--quiet', '--done'], { gitDir: join(repo, '.git') });
  proc.stdout.resume();
  const base = Date.UTC(2025, 0, 1);
  const id = (i) => new Date(base + i * 60_000).toISOString().replace(/[:.]/g, '-');
  let chunk = '';
  for (let i = 0; i < n; i++) {
    const rows = [];
    for (let t = 0; t < 8; t++)
      rows.push(
        JSON.stringify({
          test_id: `suite/case-${t}`,
          target: 'agent',
          timestamp: new Date(base + i * 60_000).toISOString(),
          score: ((i * 31 + t * 7) % 100) / 100,
          run: i,
        }),
      );
    const data = `${rows.join('\n')}\n`;
    chunk += `commit refs/heads/agentv/results/v1\ncommitter Bench <bench@example.invalid> ${1735689600 + i * 60} +0000\ndata 8\npublish\n`;
    chunk += `M 100644 inline ${id(i)}/index.jsonl\ndata ${Buffer.byteLength(data)}\n${data}\n`;
    if (i >= LIVE) chunk += `D ${id(i - LIVE)}\n`;
    chunk += '\n';
    if (chunk.length > 1 << 20) {
      await proc.write(chunk);
      chunk = '';
    }
  }
  await proc.write(`${chunk}done\n`);
  proc.stdin.end();
  await proc.exited;
}

async function measure(work, n) {
  const seed = join(work, `seed-${n}`);
  const bare = join(work, `remote-${n}.git`);
  await git.runGit(['init', '-q', '-b', 'main', seed]);
  await g(seed, ['commit', '-q', '--allow-empty', '--no-gpg-sign', '-m', 'init']);
  await buildHistory(seed, n);
  await git.runGit(['init', '-q', '--bare', '-b', 'main', bare]);
  const url = `file://${bare}`;
  await g(seed, ['remote', 'add', 'origin', url]);
  await g(seed, ['push', '-q', 'origin', 'main', 'agentv/results/v1']);
  const out = (s) => JSON.parse(s);
  const baseline = out(
    await cli(seed, ['publish', (await makeWorkspace(work, { rows: 40, seed: 1, day: 400, experiment: 'bench' })).dir, '--push', '--json']),
  ).run_id;
  const candidate = out(
    await cli(seed, ['publish', (await makeWorkspace(work, { rows: 40, seed: 2, day: 401, experiment: 'bench' })).dir, '--push', '--json']),
  ).run_id;
  await cli(seed, ['tag', baseline, '+baseline']);

  // The floor: the tip commit's objects alone, packed.
  const tip = await g(bare, ['rev-parse', 'agentv/results/v1']);
  const objects = await g(bare, ['rev-list', '--objects', '--no-walk', tip]);
  const tipPack = (
    await git.runGit(['pack-objects', '--stdout', '-q'], {
      cwd: bare,
      input: `${objects
        .split('\n')
        .map((l) => l.split(' ')[0])
        .join('\n')}\n`,
    })
  ).stdout.length;

  const depth1 = async (name) => {
    const dir = join(work, `${name}-${n}`);
    await git.runGit(['clone', '-q', '--depth', '1', url, dir]);
    await g(dir, ['config', 'fetch.unpackLimit', '1']);
    return dir;
  };
  // The whole history, as a fetch without depth brings it.
  const hist = await depth1('history');
  const h0 = await packBytes(hist);
  await g(hist, ['fetch', '-q', 'origin', 'agentv/results/v1:refs/remotes/origin/agentv/results/v1']);
  const historyBytes = (await packBytes(hist)) - h0;

  const gateArgs = ['gate', '@baseline', candidate, '--json', '--max-regressions', '100000', '--removed-tests', 'allow'];
  const gateBytes = [];
  const gateMs = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = await depth1(`gate-${i}`);
    const before = await packBytes(dir);
    gateMs.push((await runMeasured(process.execPath, [CLI, ...gateArgs, '--fetch'], { cwd: dir })).ms);
    gateBytes.push((await packBytes(dir)) - before);
  }
  // The same gate where everything is already here (a full clone, results branch fetched).
  const full = join(work, `full-${n}`);
  await git.runGit(['clone', '-q', '--no-local', url, full]);
  const fullMs = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const r = await runMeasured(process.execPath, [CLI, ...gateArgs], { cwd: full });
    if (i > 0) fullMs.push(r.ms);
  }

  const pub = await depth1('publish');
  const p0 = await packBytes(pub);
  await cli(pub, ['publish', (await makeWorkspace(work, { rows: 40, seed: 3, day: 402, experiment: 'bench' })).dir, '--push', '--json']);
  const publishBytes = (await packBytes(pub)) - p0;
  return { n, tipPack, historyBytes, gateBytes: median(gateBytes), gateMs: median(gateMs), fullMs: median(fullMs), publishBytes };
}

/** Milliseconds from starting `serve --port 0` in `cwd` to the first page of /api/runs answered (and the run total). */
async function serveFirstPage(cwd) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--read-only'], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const url = await dashboardUrl(child);
    const body = await (await fetch(`${url}/api/runs`)).json();
    return { ms: performance.now() - t0, total: body.total };
  } finally {
    const closed = new Promise((r) => child.once('close', r));
    child.kill('SIGTERM');
    await closed;
  }
}

async function measureLive(work) {
  const n = LIVE_BRANCH_RUNS;
  const template = await makeWorkspace(work, { rows: 6, seed: 3, turns: 1 });
  const seed = await freshRepo(work, `live-${n}`);
  await g(seed, ['commit', '-q', '--allow-empty', '--no-gpg-sign', '-m', 'init']);
  const t0 = performance.now();
  await seedLiveRuns(seed, template, { count: n, perDay: 250, experiment: 'bench' });
  const seedMs = performance.now() - t0;
  const bare = join(work, `live-${n}.git`);
  await git.runGit(['init', '-q', '--bare', '-b', 'main', bare]);
  const url = `file://${bare}`;
  await g(seed, ['remote', 'add', 'origin', url]);
  await g(seed, ['push', '-q', 'origin', 'main', 'agentv/results/v1', 'agentv/artifacts/v1']);
  const listArgs = ['list', '--json', '--limit', '50'];
  const listFetch = [];
  const listLocal = [];
  const serveFresh = [];
  const serveLocal = [];
  let total = 0;
  for (let i = 0; i < RUNS; i++) {
    const ci = join(work, `live-ci-${i}`);
    await git.runGit(['clone', '-q', '--depth', '1', url, ci]);
    listFetch.push((await runMeasured(process.execPath, [CLI, ...listArgs, '--fetch'], { cwd: ci })).ms);
    listLocal.push((await runMeasured(process.execPath, [CLI, ...listArgs], { cwd: seed })).ms);
    const teammate = join(work, `live-clone-${i}`);
    await git.runGit(['clone', '-q', '--no-local', url, teammate]);
    const fresh = await serveFirstPage(teammate);
    total = fresh.total;
    serveFresh.push(fresh.ms);
    serveLocal.push((await serveFirstPage(seed)).ms);
    await rm(ci, { recursive: true, force: true });
    await rm(teammate, { recursive: true, force: true });
  }
  return {
    n,
    total,
    seedMs,
    listFetchMs: median(listFetch),
    listLocalMs: median(listLocal),
    serveFreshMs: median(serveFresh),
    serveLocalMs: median(serveLocal),
  };
}

const kib = (b) => `${(b / 1024).toFixed(0)} KiB`;

export async function run() {
  isolateGitEnv();
  const work = await mkdtemp(join(tmpdir(), 'bench-fresh-clone-'));
  try {
    const rows = [];
    for (const n of SIZES) rows.push(await measure(work, n));
    const live = LIVE_BRANCH_RUNS > 0 ? await measureLive(work) : null;
    const [load1] = (await import('node:os')).loadavg();
    const lines = [
      '## Fresh clones: the tip, not the history (issue 37)',
      '',
      `A remote whose \`agentv/results/v1\` has N publishes in its history (one \`git fast-import\`: each commit adds a run of ~2 KB and drops the one ${LIVE} commits older, so the tip holds the newest ${LIVE} runs as \`archive\` leaves it), plus a baseline and a candidate published and tagged with the CLI; served over file://. A depth-1 clone of \`main\` (actions/checkout) has no results branch: its first fetch of our branches is a depth-1 fetch (repo/team-tip.ts \`firstFetchDepth\`). Bytes: the packs a fetch kept (\`fetch.unpackLimit=1\`). Times: median of ${RUNS}, fresh processes. Targets: gate's bytes ≤ 2x the tip pack at every N (not growing with history), gate's time ≤ 2x the gate in a clone that has everything, publish's bytes ≤ 3x the tip pack.`,
      '',
      '| publishes in history | tip pack (baseline) | full history fetch | `gate @baseline <run> --fetch` fetched | `publish --push` fetched | gate --fetch in depth-1 clone | gate in a clone with everything |',
      '|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.n.toLocaleString('en-US')} | ${kib(r.tipPack)} (1.00x) | ${kib(r.historyBytes)} (${fmtRatio(r.historyBytes / r.tipPack)}) | ${kib(r.gateBytes)} (${fmtRatio(r.gateBytes / r.tipPack)}) | ${kib(r.publishBytes)} (${fmtRatio(r.publishBytes / r.tipPack)}) | ${fmtMs(r.gateMs)} (${fmtRatio(r.gateMs / r.fullMs)}) | ${fmtMs(r.fullMs)} (1.00x) |`,
      ),
      '',
      `Host load (1-minute load average on 2 cores) at the end: ${load1.toFixed(1)}; ratios are to a baseline measured alongside, in the same loop.`,
      '',
      `Verdict: gate fetched ${rows.map((r) => fmtRatio(r.gateBytes / r.tipPack)).join(', ')} of the tip pack (target ≤ 2x), publish ${rows.map((r) => fmtRatio(r.publishBytes / r.tipPack)).join(', ')} (target ≤ 3x), gate's wall time ${rows.map((r) => fmtRatio(r.gateMs / r.fullMs)).join(', ')} of a gate with everything local (target ≤ 2x; both are mostly process start and reading two runs; before issue 37's third pass a depth-1 gate fetched three times, a depth-1 fetch and then a full one for each run name and pull, 2.30x at 30,000 publishes: run names now resolve with one fetch per command). The fetch is depth 1 without a blob filter: the tip's blobs are the floor's own, so a filter could only go below the tip pack, which the targets do not ask for.`,
    ];
    if (live)
      lines.push(
        '',
        `**A live branch of ${live.total.toLocaleString('en-US')} runs** (one commit, 6-test runs, seeded in ${fmtMs(live.seedMs)} with bench/archive-lib.mjs seedLiveRuns, pushed to a bare remote over file://). \`list --fetch\` runs in a depth-1 clone of \`main\` (its first fetch of the branch is depth 1); \`serve\`'s first page is \`GET /api/runs\` timed from the process start, on a fresh \`git clone\` (the branch only as \`origin/agentv/results/v1\`). Baselines: the same command in the repository that wrote the branch (local branch, nothing to fetch), alternated with it. Medians of ${RUNS}, fresh processes and fresh clones each time. Both commands read the catalog's day files and the page's overlays, not the runs, so a fresh clone pays only its one depth-1 fetch (list) or nothing at all (serve reads \`origin/agentv/results/v1\`); serve's ratio below 1 is within this loaded host's noise over few samples (not investigated further).`,
        '',
        '| on a fresh clone | wall time | where the branch is local (baseline) | ratio |',
        '|---|---|---|---|',
        `| \`list --fetch --limit 50\` (depth-1 clone) | ${fmtMs(live.listFetchMs)} | ${fmtMs(live.listLocalMs)} | ${fmtRatio(live.listFetchMs / live.listLocalMs)} |`,
        `| \`serve\`: start to the first page of \`/api/runs\` (fresh clone) | ${fmtMs(live.serveFreshMs)} | ${fmtMs(live.serveLocalMs)} | ${fmtRatio(live.serveFreshMs / live.serveLocalMs)} |`,
      );
    return { markdown: lines.join('\n') };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
