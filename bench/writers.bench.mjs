/**
 * Issue 24's figures: every run on the branch is first-class whoever wrote it, and no read is stale.
 *
 *  1. `list` over 20,000 AgentV-written runs (synthetic, AgentV's auto_push layout, no catalog
 *     line: bench/agentv-seed.mjs) vs `list` over 20,000 runs in our catalog (<= 2x), cold (the
 *     run-files cache removed before each sample: every summary read) and warm (cached by tree id);
 *     and linear: 20,000 vs 5,000 AgentV-written runs (<= 4.5x).
 *  2. `archive` of the 20,000 AgentV-written runs down to the listing budget (time reported), then
 *     publish onto the archived branch vs onto a new branch (<= 1.2x).
 *  3. `list --fetch` with nothing new on a local bare remote vs `list` (<= 1.3x).
 *
 * Library calls in one process (`listRuns({ withOverlays: true })` is what the CLI's `list` runs),
 * medians, the two sides of every ratio sampled interleaved.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os, { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ROOT, fmtMs, fmtRatio, median, timeIt } from './lib.mjs';
import {
  freshRepo,
  git,
  isolateGitEnv,
  listRuns,
  makeWorkDir,
  makeWorkspace,
  publish,
  resetBranches,
  seedRuns,
  RESULTS_REF,
  ARTIFACTS_REF,
} from './publish-lib.mjs';
import { seedAgentvRuns } from './agentv-seed.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BIG = Number(process.env.BENCH_WRITERS_RUNS ?? 20_000);
const SMALL = BIG / 4;
const { rollover } = await import(join(ROOT, 'dist/archive/rollover.js'));
const log = (m) => process.stderr.write(`  ${m}\n`);
const pass = (ok) => (ok ? '✅' : '❌');

const time = async (fn) => (await timeIt(fn)).ms;

/**
 * CPU time of this process and of the git processes it has waited for (Linux: /proc/self/stat's
 * cutime + cstime), in ms. On a shared machine wall time swings with the load; CPU time does not.
 */
function cpuNow() {
  const self = process.cpuUsage();
  let children = 0;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = ((Number(f[13]) + Number(f[14])) * 1000) / 100; // fields 16, 17 in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
  return (self.user + self.system) / 1000 + children;
}
/** Wall and CPU ms of one call (cpu null off Linux). */
async function both(fn) {
  const c0 = cpuNow();
  const ms = await time(fn);
  const c1 = cpuNow();
  return { ms, cpu: c0 === null || c1 === null ? null : c1 - c0 };
}
const cpuText = (x) => (x === null ? 'n/a' : fmtMs(x));

const cacheFile = (repo) => join(repo, '.git', 'agentv-results', 'run-rows.v1.json');
const list = (cwd, extra = {}) => listRuns({ cwd, withOverlays: true, ...extra });

async function listing(work) {
  const avBig = await freshRepo(work, 'agentv-big');
  const avSmall = await freshRepo(work, 'agentv-small');
  const ours = await freshRepo(work, 'catalog-big');
  log(`seeding ${BIG} + ${SMALL} AgentV-written runs and ${BIG} catalogued runs…`);
  await seedAgentvRuns(avBig, { count: BIG });
  await seedAgentvRuns(avSmall, { count: SMALL });
  // One row per run: the catalog list reads catalog lines, never run files, so the run's size does not matter.
  const template = await makeWorkspace(work, { rows: 1, seed: 4, turns: 1 });
  await seedRuns(ours, template, { count: BIG, days: 60 });
  const s = { cold: [], warm: [], catalog: [], coldCpu: [], warmCpu: [], catalogCpu: [], gitRead: [], gitReadCpu: [] };
  let counts = null;
  // The floor of a cold list: git's own inflating of every run's summary.json, as the list reads
  // them (same specs, same processes), with our parsing skipped.
  const { forEachBlob, openRepo, lsTree, resolveRef } = git;
  const avRepo = await openRepo(avBig);
  const specs = (await lsTree(avRepo, await resolveRef(avRepo, RESULTS_REF))).filter((e) => e.type === 'tree').map((e) => `${e.sha}:summary.json`);
  const processes = Math.min(2, availableParallelism());
  let summaryBytes = 0;
  for (let i = 0; i < RUNS + 1; i++) {
    await rm(cacheFile(avBig), { force: true });
    await rm(cacheFile(avSmall), { force: true });
    let n = 0;
    const cold = await both(async () => (n = (await list(avBig)).runs.length));
    const warm = await both(() => list(avBig));
    const catalog = await both(() => list(ours));
    const gitRead = await both(() => {
      summaryBytes = 0;
      return forEachBlob(avRepo, specs, (_spec, data) => (summaryBytes += data?.length ?? 0), { processes });
    });
    if (i > 0) {
      s.cold.push(cold.ms);
      s.warm.push(warm.ms);
      s.catalog.push(catalog.ms);
      s.gitRead.push(gitRead.ms);
      if (cold.cpu !== null && catalog.cpu !== null) {
        s.coldCpu.push(cold.cpu);
        s.warmCpu.push(warm.cpu);
        s.catalogCpu.push(catalog.cpu);
        s.gitReadCpu.push(gitRead.cpu);
      }
    }
    counts ??= n;
  }
  // Linearity, cold on both sides (each sample reads every run's summary).
  const lin = { big: [], small: [] };
  for (let i = 0; i < RUNS; i++) {
    await rm(cacheFile(avSmall), { force: true });
    lin.small.push(await time(() => list(avSmall)));
    await rm(cacheFile(avBig), { force: true });
    lin.big.push(await time(() => list(avBig)));
  }
  // Another machine after one `archive` (that moved nothing: no listing budget) wrote what it read
  // of the runs onto the branch (foreign-catalog.ts): its first list, no cache of its own.
  const r = await openRepo(avBig);
  const before = { results: await resolveRef(r, RESULTS_REF), artifacts: await resolveRef(r, ARTIFACTS_REF) };
  await rm(cacheFile(avBig), { force: true });
  let catalogued = null;
  const catalogMs = await time(async () => {
    catalogued = await rollover({ cwd: avBig, keepDays: 100_000, keepRuns: 1_000_000, maxListingBytes: 0, now: new Date('2026-06-01T00:00:00Z') });
  });
  const lined = { ms: [], cpu: [], catalog: [], catalogCpu: [] };
  for (let i = 0; i < RUNS + 1; i++) {
    await rm(cacheFile(avBig), { force: true });
    const a = await both(() => list(avBig));
    const b = await both(() => list(ours));
    if (i > 0) {
      lined.ms.push(a.ms);
      lined.catalog.push(b.ms);
      if (a.cpu !== null && b.cpu !== null) {
        lined.cpu.push(a.cpu);
        lined.catalogCpu.push(b.cpu);
      }
    }
  }
  await resetBranches(avBig, before);
  return {
    avBig,
    ours,
    counts,
    catalogMs,
    catalogued: catalogued.catalogued,
    lined: median(lined.ms),
    linedCatalog: median(lined.catalog),
    linedCpu: lined.cpu.length > 0 ? median(lined.cpu) : null,
    linedCatalogCpu: lined.catalogCpu.length > 0 ? median(lined.catalogCpu) : null,
    cold: median(s.cold),
    warm: median(s.warm),
    catalog: median(s.catalog),
    coldCpu: s.coldCpu.length > 0 ? median(s.coldCpu) : null,
    catalogCpu: s.catalogCpu.length > 0 ? median(s.catalogCpu) : null,
    warmCpu: s.warmCpu.length > 0 ? median(s.warmCpu) : null,
    gitReadCpu: s.gitReadCpu.length > 0 ? median(s.gitReadCpu) : null,
    gitRead: median(s.gitRead),
    summaryBytes,
    processes,
    coldBig: median(lin.big),
    coldSmall: median(lin.small),
  };
}

async function archiveAndPublish(work, avBig) {
  const r = await git.openRepo(avBig);
  const seeded = { results: await git.resolveRef(r, RESULTS_REF), artifacts: await git.resolveRef(r, ARTIFACTS_REF) };
  let res = null;
  const archiveMs = await time(async () => {
    res = await rollover({ cwd: avBig, keepDays: 100_000, keepRuns: 1_000_000, now: new Date('2026-06-01T00:00:00Z') });
  });
  const archived = { results: await git.resolveRef(r, RESULTS_REF), artifacts: await git.resolveRef(r, ARTIFACTS_REF) };
  const ws = await makeWorkspace(work, { rows: 40, seed: 11, turns: 1, day: 200 });
  const onto = [];
  const fresh = [];
  for (let i = 0; i < RUNS + 1; i++) {
    await resetBranches(avBig, archived);
    const a = await time(() => publish({ run: ws.dir, cwd: avBig, push: false }));
    const empty = await freshRepo(work, `empty-${i}`);
    const b = await time(() => publish({ run: ws.dir, cwd: empty, push: false }));
    await rm(empty, { recursive: true, force: true });
    if (i > 0) {
      onto.push(a);
      fresh.push(b);
    }
  }
  await resetBranches(avBig, archived);
  return { archiveMs, res, seeded, onto: median(onto), fresh: median(fresh) };
}

async function fetchCost(work, repo) {
  const bare = join(work, 'remote.git');
  await git.runGit(['init', '-q', '--bare', bare]);
  await git.runGit(['remote', 'add', 'origin', bare], { cwd: repo });
  await git.runGit(['push', '-q', 'origin', `${RESULTS_REF}:${RESULTS_REF}`, `${ARTIFACTS_REF}:${ARTIFACTS_REF}`], { cwd: repo });
  await list(repo, { fetch: true });
  const plain = [];
  const fetched = [];
  for (let i = 0; i < RUNS * 2 + 1; i++) {
    const a = await time(() => list(repo));
    const b = await time(() => list(repo, { fetch: true }));
    if (i > 0) {
      plain.push(a);
      fetched.push(b);
    }
  }
  return { plain: median(plain), fetched: median(fetched) };
}

export async function run() {
  isolateGitEnv();
  const loadStart = os.loadavg()[0].toFixed(1);
  const work = await makeWorkDir();
  try {
    const l = await listing(work);
    const a = await archiveAndPublish(work, l.avBig);
    const f = await fetchCost(work, l.ours);
    const coldRatio = l.cold / l.catalog;
    const warmRatio = l.warm / l.catalog;
    const linRatio = l.coldBig / l.coldSmall;
    const pubRatio = a.onto / a.fresh;
    const fetchRatio = f.fetched / f.plain;
    const cpuRatio = l.coldCpu === null ? null : l.coldCpu / l.catalogCpu;
    const linedRatio = l.lined / l.linedCatalog;
    const linedCpuRatio = l.linedCpu === null ? null : l.linedCpu / l.linedCatalogCpu;
    // The floor in CPU time when it can be measured (the machine's load moves wall time), else wall.
    const floorRatio = l.coldCpu === null ? (l.warm + l.gitRead) / l.catalog : (l.warmCpu + l.gitReadCpu) / l.catalogCpu;
    const markdown = `## Every writer's runs, fresh reads (issue 24)

Library calls in one process (\`listRuns({ withOverlays: true })\` is the CLI's \`list\`; \`rollover()\`, \`publish({ push: false })\`); medians of ${RUNS} samples, the two sides interleaved; load average ${loadStart} at the start, ${os.loadavg()[0].toFixed(1)} at the end on ${os.availableParallelism()} cores; git ${(await git.gitVersion()).raw}, Node ${process.version}. AgentV-written runs are synthetic runs in the layout of AgentV's \`auto_push\` (bench/agentv-seed.mjs: \`<run_id>/summary.json\` with AgentV's \`counts\` and \`metadata\`, \`.internal/index.jsonl\`, 6 per-test folders; no catalog line), seeded with one fast-import.

| figure | measured | baseline | ratio | target |
|---|---|---|---|---|
| \`list\`, ${BIG.toLocaleString('en-US')} AgentV-written runs, cold (every summary read; cache removed) | ${fmtMs(l.cold)} | \`list\`, ${BIG.toLocaleString('en-US')} catalogued runs: ${fmtMs(l.catalog)} | ${fmtRatio(coldRatio)} | ≤ 2x ${pass(coldRatio <= 2)} |
| \`list\`, the same, warm (run files cached by tree id) | ${fmtMs(l.warm)} | the same ${fmtMs(l.catalog)} | ${fmtRatio(warmRatio)} | ≤ 2x ${pass(warmRatio <= 2)} |
| the same two, CPU time (ours + git's; the machine's load does not move it) | ${cpuText(l.coldCpu)} | ${cpuText(l.catalogCpu)} | ${cpuRatio === null ? 'n/a' : fmtRatio(cpuRatio)} | ≤ 2x ${cpuRatio === null ? '' : pass(cpuRatio <= 2)} |
| floor of the cold \`list\`: git alone inflating the ${BIG.toLocaleString('en-US')} summaries (${Math.round(l.summaryBytes / 1e6)} MB; \`cat-file --batch\` × ${l.processes}, nothing parsed), wall / CPU | ${fmtMs(l.gitRead)} / ${cpuText(l.gitReadCpu)} | \`list\`, catalogued: ${fmtMs(l.catalog)} / ${cpuText(l.catalogCpu)} | ${fmtRatio(l.gitRead / l.catalog)} / ${l.gitReadCpu === null ? 'n/a' : fmtRatio(l.gitReadCpu / l.catalogCpu)} | — |
| floor of the cold \`list\` as a ratio: warm \`list\` + that read (${l.coldCpu === null ? 'wall' : 'CPU'} time) | ${fmtMs(l.coldCpu === null ? l.warm + l.gitRead : l.warmCpu + l.gitReadCpu)} | ${fmtMs(l.coldCpu === null ? l.catalog : l.catalogCpu)} | ${fmtRatio(floorRatio)} | — |
| \`list\`, the same runs on another machine (no cache) after one \`archive\` wrote what it read onto the branch (\`.indexes/agentv-results-foreign.<day>.jsonl\`) | ${fmtMs(l.lined)} | \`list\`, catalogued: ${fmtMs(l.linedCatalog)} | ${fmtRatio(linedRatio)} | ≤ 2x ${pass(linedRatio <= 2)} |
| the same two, CPU time | ${cpuText(l.linedCpu)} | ${cpuText(l.linedCatalogCpu)} | ${linedCpuRatio === null ? 'n/a' : fmtRatio(linedCpuRatio)} | ≤ 2x ${linedCpuRatio === null ? '' : pass(linedCpuRatio <= 2)} |
| that \`archive\` (nothing moved: \`--max-listing-bytes 0\`; ${l.catalogued.toLocaleString('en-US')} runs catalogued, every summary read: the team's one cold read) | ${fmtMs(l.catalogMs)} | — | — | reported |
| \`list\`, ${BIG.toLocaleString('en-US')} vs ${SMALL.toLocaleString('en-US')} AgentV-written runs, cold | ${fmtMs(l.coldBig)} | ${fmtMs(l.coldSmall)} | ${fmtRatio(linRatio)} | ≤ 4.5x ${pass(linRatio <= 4.5)} |
| \`archive\` of ${BIG.toLocaleString('en-US')} AgentV-written runs down to the listing budget | ${fmtMs(a.archiveMs)} (${a.res.archived.length.toLocaleString('en-US')} archived, ${a.res.live} live; listing ${Math.round(a.res.listing.before / 1024).toLocaleString('en-US')} → ${Math.round(a.res.listing.after / 1024)} KiB, budget ${Math.round(a.res.listing.max / 1024)} KiB) | — | — | reported |
| \`publish\` (40 rows) onto the archived branch | ${fmtMs(a.onto)} | onto a new branch: ${fmtMs(a.fresh)} | ${fmtRatio(pubRatio)} | ≤ 1.2x ${pass(pubRatio <= 1.2)} |
| \`list --fetch\`, nothing new on a local bare remote (${BIG.toLocaleString('en-US')} catalogued runs) | ${fmtMs(f.fetched)} | \`list\`: ${fmtMs(f.plain)} | ${fmtRatio(fetchRatio)} | ≤ 1.3x ${pass(fetchRatio <= 1.3)} |

${l.counts} runs listed at ${BIG.toLocaleString('en-US')}. Before issue 24, \`list\` read every listed run's overlays as \`<tip>:<run>/tags.json\`, which makes git search the root tree once per run: 29 s for 5,000 AgentV-written runs on this machine, quadratic; the overlays are now read by the run directory's tree id, and AgentV-written runs are read from their summary.json alone (their index only when the summary lacks counts, targets or time), then cached by tree id in \`.git/agentv-results/run-rows.v1.json\`.

The cold row is the first \`list\` on a machine after AgentV's runs arrive: it reads every one of their \`summary.json\` files, streamed through \`cat-file --batch\` (${l.processes} process${l.processes === 1 ? '' : 'es'} side by side) and parsed as they arrive, keeping only the members a listed row needs. Its floor is the warm list plus git's own inflating of those summaries (the two floor rows): ${fmtRatio(floorRatio)} of the catalogued list here${l.coldCpu === null ? '' : `, and the cold list took ${fmtRatio(l.coldCpu / (l.warmCpu + l.gitReadCpu))} of that floor's CPU time`}${floorRatio > 2 ? ", so ≤ 2x cannot be reached by reading the runs' files faster; only by not reading them (rows in a catalog on the branch, not built: a read cannot commit, and a catalog line for a directory another tool may rewrite needs the tree id it was read from checked on every read)" : ''}. Every later \`list\`, \`archive\` and \`expire\` reads only runs it has not seen (the warm row), so a machine pays the cold cost once per run. The first \`archive\` (by hand or on the daemon's schedule) writes what it read onto the branch, keyed by each run directory's tree id (the "another machine" rows): from then on no machine of the team reads those runs' files, until AgentV changes a run (a new tree), which is read again and re-catalogued by the next \`archive\`. The cold row stays the cost of the one \`list\` that runs before any \`archive\` has; its floor (above) is git's inflating, not ours.
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
