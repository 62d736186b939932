/**
 * Issue 53, item 4: a request for one run reads that run. Warm `GET /api/runs/:id` on a results
 * branch of 100,000 runs as a ratio of the same request on a branch of 10 runs (target ≤ 2x), each
 * answered by `agentv-results serve` run as a user runs it (the built CLI, its own process, on
 * 127.0.0.1).
 *
 * Both branches are seeded the same way, with one fast-import and plumbing (bench/archive-lib.mjs
 * seedLiveRuns: every run directory a graft of one template run's tree, 6 tests and 2 targets,
 * catalogued as `publish` writes its lines, 250 runs a day), never by publishing. The requests:
 * each of `IDS` runs spread over the branch (newest, oldest, between) is asked once to warm the
 * server (its pull of the run, the run's summary), then `REQUESTS` requests go round them; the
 * figure is the median request. Then the results tip is moved MOVES times (a new commit of the same
 * files) and the one request after each move is timed: nothing the server keeps per tip helps it.
 * Beside each, the server process's CPU (its own and its git
 * children's, from /proc) per request, and a floor: `GET /api/config` (no git) on the same server.
 *
 * BENCH_ONE_RUN_COUNT sizes the big branch (default 100,000); BENCH_RUNS repeats the whole
 * measurement that many times on fresh servers and reports the median of the medians (default 3).
 * BENCH_BEFORE_CLI: another build's `dist/cli/main.js` (the code before this change, say) measured
 * the same way in the same rounds, alternating with this one, so both see the same load. Opt-in
 * (`npm run bench -- serve-one-run`): seeding 100,000 runs takes a minute or more.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedLiveRuns } from './archive-lib.mjs';
import { fmtMs, fmtRatio, median, ROOT, startServe } from './lib.mjs';
import { freshRepo, git, isolateGitEnv, makeWorkspace, RESULTS_REF } from './publish-lib.mjs';

export const optIn = true;
const COUNT = Number(process.env.BENCH_ONE_RUN_COUNT ?? 100_000);
const SMALL = 10;
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const REQUESTS = 40;
const IDS = 5;
/** Requests each made right after the results tip moved (a new commit of the same files): nothing kept for that tip. */
const MOVES = 10;
const IDENT = {
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
};
const CLI = join(ROOT, 'dist/cli/main.js');
const BEFORE_CLI = process.env.BENCH_BEFORE_CLI ?? null;
const PER_DAY = 250;

/** The run ids seedLiveRuns writes (experiment `bench`), `count` of them. */
function seededId(i) {
  const iso = new Date(Date.UTC(2026, 0, 1 + Math.floor(i / PER_DAY), 0, 0) + (i % PER_DAY) * 1000).toISOString();
  return `bench/${iso.replace(/:/g, '-').replace('.', '-')}`;
}

async function seeded(work, name, template, count) {
  const repo = await freshRepo(work, name);
  await mkdir(join(repo, '.agentv'), { recursive: true });
  await writeFile(join(repo, '.agentv', 'config.yaml'), 'results:\n  path: .\n  branch: agentv/results/v1\n');
  const t0 = performance.now();
  await seedLiveRuns(repo, template, { count, perDay: PER_DAY, experiment: 'bench' });
  const ids = Array.from({ length: IDS }, (_, k) => seededId(Math.round((k * (count - 1)) / (IDS - 1))));
  return { repo, ids, seedMs: performance.now() - t0 };
}

/** CPU seconds of a process and its waited-for children (utime, stime, cutime, cstime). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

async function get(url) {
  const res = await fetch(url);
  const body = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** One fresh server on `repo`: warm each id, then REQUESTS timed requests round them; the floor alike. */
async function measure({ repo, ids }, cli = CLI) {
  const s = await startServe(repo, cli);
  try {
    for (const id of ids) await get(`${s.url}/api/runs/${encodeURIComponent(id)}`);
    const ms = [];
    const cpu0 = cpuSeconds(s.pid);
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const body = await get(`${s.url}/api/runs/${encodeURIComponent(ids[i % ids.length])}`);
      ms.push(performance.now() - t0);
      if (body.run.run_id !== ids[i % ids.length]) throw new Error(`asked ${ids[i % ids.length]}, answered ${body.run.run_id}`);
    }
    const cpuMs = ((cpuSeconds(s.pid) - cpu0) * 1000) / REQUESTS;
    const floor = [];
    await get(`${s.url}/api/config`);
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      await get(`${s.url}/api/config`);
      floor.push(performance.now() - t0);
    }
    // The tip moves (as another machine's push or a tag edit moves it): the next request reads the
    // run again from the new tip (the server keeps what it read per tip; the run's pulled files stay).
    const moved = [];
    for (let i = 0; i < MOVES; i++) {
      const tip = (await git.runGit(['rev-parse', RESULTS_REF], { cwd: repo })).stdout.toString().trim();
      const commit = (await git.runGit(['commit-tree', `${tip}^{tree}`, '-p', tip, '-m', 'move'], { cwd: repo, env: IDENT })).stdout.toString().trim();
      await git.runGit(['update-ref', RESULTS_REF, commit, tip], { cwd: repo });
      const t0 = performance.now();
      await get(`${s.url}/api/runs/${encodeURIComponent(ids[i % ids.length])}`);
      moved.push(performance.now() - t0);
    }
    const total = (await get(`${s.url}/api/runs?limit=1`)).total;
    return { ms: median(ms), cpuMs, floor: median(floor), moved: median(moved), total };
  } finally {
    await s.stop();
  }
}

export async function run() {
  isolateGitEnv();
  const work = await mkdtemp(join(tmpdir(), 'bench-serve-one-run-'));
  const loads = [loadavg()[0]];
  try {
    const template = await makeWorkspace(work, { rows: 6, seed: 3, turns: 1 });
    const small = await seeded(work, 'small', template, SMALL);
    const big = await seeded(work, 'big', template, COUNT);
    const rounds = [];
    for (let r = 0; r < RUNS; r++) {
      rounds.push({
        small: await measure(small),
        big: await measure(big),
        ...(BEFORE_CLI ? { beforeSmall: await measure(small, BEFORE_CLI), beforeBig: await measure(big, BEFORE_CLI) } : {}),
      });
      loads.push(loadavg()[0]);
    }
    const pick = (side, k) => median(rounds.map((x) => x[side][k]));
    const side = (k) => ({ ms: pick(k, 'ms'), cpuMs: pick(k, 'cpuMs'), floor: pick(k, 'floor'), moved: pick(k, 'moved'), total: rounds[0][k].total });
    const out = { small: side('small'), big: side('big'), ...(BEFORE_CLI ? { beforeSmall: side('beforeSmall'), beforeBig: side('beforeBig') } : {}) };
    const ratio = out.big.ms / out.small.ms;
    const cpuRatio = out.big.cpuMs / out.small.cpuMs;
    const n = (x) => x.toLocaleString('en-US');
    const markdown = `## One run's request at 100,000 runs (issue 53)

Warm \`GET /api/runs/:id\` answered by \`agentv-results serve\` (the built CLI, its own process, on 127.0.0.1), on a results branch of ${n(out.big.total)} runs against one of ${n(out.small.total)}, both seeded by one fast-import and plumbing (bench/archive-lib.mjs seedLiveRuns: run directories grafted from one template run, catalog lines as \`publish\` writes them, ${PER_DAY} runs a day; the big one in ${fmtMs(big.seedMs)}). ${IDS} runs spread over each branch are each asked once to warm the server, then ${REQUESTS} requests go round them; medians over ${RUNS} fresh servers. CPU: the server process and its git children, per request. Floor: \`GET /api/config\` (no git) on the same servers. \`npm run bench -- serve-one-run\` (opt-in). Load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on ${cpus().length} cores during this run (other work on the machine): wall times are inflated and noisy, the CPU per request and the ratios are what to read.

| measure | ${n(out.small.total)} runs | ${n(out.big.total)} runs | ratio | target |
|---|---|---|---|---|
| \`GET /api/runs/:id\`, warm, median | ${fmtMs(out.small.ms)} | ${fmtMs(out.big.ms)} | ${fmtRatio(ratio)} | ≤ 2x ${ratio <= 2 ? '✓' : '✗'} |
| CPU per request (server and git) | ${fmtMs(out.small.cpuMs)} | ${fmtMs(out.big.cpuMs)} | ${fmtRatio(cpuRatio)} | |
| the first request after the tip moved (a new commit, same files), median of ${MOVES} | ${fmtMs(out.small.moved)} | ${fmtMs(out.big.moved)} | ${fmtRatio(out.big.moved / out.small.moved)} | |
| floor: \`GET /api/config\` | ${fmtMs(out.small.floor)} | ${fmtMs(out.big.floor)} | | |
| one run's request over the floor | ${fmtRatio(out.small.ms / out.small.floor)} | ${fmtRatio(out.big.ms / out.big.floor)} | | |
${
  out.beforeBig
    ? `| before (the build that listed the branch per request, same rounds): warm | ${fmtMs(out.beforeSmall.ms)} | ${fmtMs(out.beforeBig.ms)} | ${fmtRatio(out.beforeBig.ms / out.beforeSmall.ms)} | |
| before: CPU per request | ${fmtMs(out.beforeSmall.cpuMs)} | ${fmtMs(out.beforeBig.cpuMs)} | ${fmtRatio(out.beforeBig.cpuMs / out.beforeSmall.cpuMs)} | |
| before: the first request after the tip moved | ${fmtMs(out.beforeSmall.moved)} | ${fmtMs(out.beforeBig.moved)} | ${fmtRatio(out.beforeBig.moved / out.beforeSmall.moved)} | |
`
    : ''
}
The request finds its run where the id says it is (branch-read/find-run.ts: one \`ls-tree\` of exactly the run's places and its day's catalog files per tip, that catalog blob read by id and parsed once; never the listing nor the sync branches' status) and reads its tags and feedback with one more \`ls-tree\` (and a \`cat-file\` when it has any); both are kept per tip, so a warm request reads the refs and nothing of the branch. Right after the tip moved, those reads run again: what still grows with the branch there is git reading the branch's root tree (one entry per run: about 6 MB at 100,000 runs) once per \`ls-tree\`.${out.beforeBig ? " Before, each request listed the branch (its catalog read kept per tip, the rows searched for the id) and read the sync branches, and each of the run's two overlay files cost a target resolution and two lookups through the root tree; a moved tip meant reading every day's catalog again." : ''}
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
