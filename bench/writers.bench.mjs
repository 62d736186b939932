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
import { rm } from 'node:fs/promises';
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
  const s = { cold: [], warm: [], catalog: [] };
  let counts = null;
  for (let i = 0; i < RUNS + 1; i++) {
    await rm(cacheFile(avBig), { force: true });
    await rm(cacheFile(avSmall), { force: true });
    let n = 0;
    const cold = await time(async () => (n = (await list(avBig)).runs.length));
    const warm = await time(() => list(avBig));
    const catalog = await time(() => list(ours));
    if (i > 0) {
      s.cold.push(cold);
      s.warm.push(warm);
      s.catalog.push(catalog);
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
  return {
    avBig,
    ours,
    counts,
    cold: median(s.cold),
    warm: median(s.warm),
    catalog: median(s.catalog),
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
    const markdown = `## Every writer's runs, fresh reads (issue 24)

Library calls in one process (\`listRuns({ withOverlays: true })\` is the CLI's \`list\`; \`rollover()\`, \`publish({ push: false })\`); medians of ${RUNS} samples, the two sides interleaved; git ${(await git.gitVersion()).raw}, Node ${process.version}. AgentV-written runs are synthetic runs in the layout of AgentV's \`auto_push\` (bench/agentv-seed.mjs: \`<run_id>/summary.json\` with AgentV's \`counts\` and \`metadata\`, \`.internal/index.jsonl\`, 6 per-test folders; no catalog line), seeded with one fast-import.

| figure | measured | baseline | ratio | target |
|---|---|---|---|---|
| \`list\`, ${BIG.toLocaleString('en-US')} AgentV-written runs, cold (every summary read; cache removed) | ${fmtMs(l.cold)} | \`list\`, ${BIG.toLocaleString('en-US')} catalogued runs: ${fmtMs(l.catalog)} | ${fmtRatio(coldRatio)} | ≤ 2x ${pass(coldRatio <= 2)} |
| \`list\`, the same, warm (run files cached by tree id) | ${fmtMs(l.warm)} | the same ${fmtMs(l.catalog)} | ${fmtRatio(warmRatio)} | ≤ 2x ${pass(warmRatio <= 2)} |
| \`list\`, ${BIG.toLocaleString('en-US')} vs ${SMALL.toLocaleString('en-US')} AgentV-written runs, cold | ${fmtMs(l.coldBig)} | ${fmtMs(l.coldSmall)} | ${fmtRatio(linRatio)} | ≤ 4.5x ${pass(linRatio <= 4.5)} |
| \`archive\` of ${BIG.toLocaleString('en-US')} AgentV-written runs down to the listing budget | ${fmtMs(a.archiveMs)} (${a.res.archived.length.toLocaleString('en-US')} archived, ${a.res.live} live; listing ${Math.round(a.res.listing.before / 1024).toLocaleString('en-US')} → ${Math.round(a.res.listing.after / 1024)} KiB, budget ${Math.round(a.res.listing.max / 1024)} KiB) | — | — | reported |
| \`publish\` (40 rows) onto the archived branch | ${fmtMs(a.onto)} | onto a new branch: ${fmtMs(a.fresh)} | ${fmtRatio(pubRatio)} | ≤ 1.2x ${pass(pubRatio <= 1.2)} |
| \`list --fetch\`, nothing new on a local bare remote (${BIG.toLocaleString('en-US')} catalogued runs) | ${fmtMs(f.fetched)} | \`list\`: ${fmtMs(f.plain)} | ${fmtRatio(fetchRatio)} | ≤ 1.3x ${pass(fetchRatio <= 1.3)} |

${l.counts} runs listed at ${BIG.toLocaleString('en-US')}. Before issue 24, \`list\` read every listed run's overlays as \`<tip>:<run>/tags.json\`, which makes git search the root tree once per run: 29 s for 5,000 AgentV-written runs on this machine, quadratic; the overlays are now read by the run directory's tree id, and AgentV-written runs are read from their summary.json alone (their index only when the summary lacks counts, targets or time), then cached by tree id in \`.git/agentv-results/run-rows.v1.json\`.

The cold figure misses its target: the first \`list\` after AgentV's runs arrive reads every one of their \`summary.json\` files (git inflating 20,000 blobs is most of it, and on this shared machine the cold samples spread from 3x to 5.4x across two runs of this bench); every later \`list\`, \`archive\` and \`expire\` reads only runs it has not seen (the warm row), so a team pays the cold cost once per run per machine. Writing those rows into our catalog on the branch, so that no machine pays it, is not done yet.
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
