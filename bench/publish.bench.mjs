/**
 * Issue figures for `publish`, `list` (and the cost model behind them), in one run:
 *
 *  1. `publish` (local commit only, library call) of synthetic runs of ~200, ~2,000 and ~20,000
 *     files against (a) raw `git fast-import` of the same files into one commit (the floor) and
 *     (b) one git process per file (`hash-object` + `update-index` each, then write-tree /
 *     commit-tree: the existing AgentV approach). Targets at 2,000 files: <= 1.5x (a), >= 20x
 *     faster than (b).
 *  2. O(size of the run): the same publishes onto a branch seeded (one bulk fast-import) with
 *     10,000 runs of one experiment vs onto an empty branch: <= 1.2x.
 *  3. 1,000 real publishes in a row (library calls in this process; `git gc --auto` runs inside
 *     publish as it does for users): the last ones cost <= 1.2x the first ones.
 *  4. `list` over 3,000 runs vs over 10 runs (<= 2x), and vs walking the tree and reading every
 *     run's summary.json (>= 10x faster).
 *
 * Every timing is a median; pairs are measured interleaved so machine noise hits both sides.
 */
import { performance } from 'node:perf_hooks';
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';
import {
  freshRepo,
  git,
  listFiles,
  isolateGitEnv,
  listRuns,
  makeWorkDir,
  makeWorkspace,
  perFileProcesses,
  publish,
  rawFastImport,
  resetBranches,
  RESULTS_REF,
  ARTIFACTS_REF,
  seedRuns,
  agentvListing,
  workspaceOfSize,
} from './publish-lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 1000);
const SIZES = (process.env.BENCH_PUBLISH_SIZES ?? '200,2000,20000').split(',').map(Number);
const PER_FILE_SAMPLES = { 200: 3, 2000: 2, 20000: 1 };
const PER_FILE_LIMIT = Number(process.env.BENCH_PER_FILE_LIMIT ?? 2500);

async function time(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const pass = (ok) => (ok ? '✅' : '❌');
const log = (m) => process.stderr.write(`  ${m}\n`);

/** 1. publish vs the floor vs one process per file. */
async function sizes(work) {
  const rows = [];
  let n = 0;
  for (const target of SIZES) {
    const ws = await workspaceOfSize(work, target, { seed: target, day: 0 });
    const init = await makeWorkspace(work, { rows: 1, seed: 99, day: 5 });
    const floor = [];
    const ours = [];
    for (let i = 0; i < RUNS; i++) {
      const a = await freshRepo(work, `floor-${n++}`);
      floor.push(await time(() => rawFastImport(a, ws.dir, 'runs/bench/2026-01-01/x')));
      // Our publish onto existing branches (initialized by a tiny untimed publish): the steady state.
      const b = await freshRepo(work, `ours-${n++}`);
      await publish({ run: init.dir, cwd: b, push: false });
      ours.push(await time(() => publish({ run: ws.dir, cwd: b, push: false })));
      await rm(a, { recursive: true, force: true });
      await rm(b, { recursive: true, force: true });
    }
    // (b) spawns two processes per file: at 20,000 files that is 40,000 processes (15 min on this
    // machine), so there it is timed on its first PER_FILE_LIMIT files and scaled linearly.
    const perFile = [];
    const limit = Math.min(ws.files, PER_FILE_LIMIT);
    for (let i = 0; i < (PER_FILE_SAMPLES[target] ?? 1); i++) {
      const c = await freshRepo(work, `perfile-${n++}`);
      perFile.push((await time(() => perFileProcesses(c, ws.dir, 'runs/bench/2026-01-01/x', { limit }))) * (ws.files / limit));
      await rm(c, { recursive: true, force: true });
    }
    const row = {
      target,
      files: ws.files,
      floor: median(floor),
      ours: median(ours),
      perFile: median(perFile),
      perFileSamples: perFile.length,
      scaled: limit < ws.files ? limit : null,
    };
    log(`${ws.files} files: floor ${fmtMs(row.floor)}, publish ${fmtMs(row.ours)}, per-file ${fmtMs(row.perFile)}`);
    rows.push(row);
  }
  // For orientation: the whole command as a user runs it (process start included), 2,000 files.
  const ws = await workspaceOfSize(work, 2000, { seed: 7, day: 1 });
  const cliMs = [];
  for (let i = 0; i < 3; i++) {
    const repo = await freshRepo(work, `cli-${n++}`);
    cliMs.push((await runMeasured(process.execPath, [CLI, 'publish', ws.dir, '--no-push'], { cwd: repo })).ms);
    await rm(repo, { recursive: true, force: true });
  }
  return { rows, cli: median(cliMs) };
}

/** 2. The same publish onto 10,000 seeded runs and onto an empty branch. */
export async function seeded(work) {
  const template = await makeWorkspace(work, { rows: 10, seed: 3, turns: 2 });
  const big = await freshRepo(work, 'seeded');
  const t0 = performance.now();
  const seedTips = await seedRuns(big, template, { count: 10_000, days: 50 });
  const seedMs = performance.now() - t0;
  const empty = await freshRepo(work, 'empty');
  const emptyTips = await seedRuns(empty, template, { count: 0, days: 1 });
  // Runs of a typical size (~250 files) on the busiest day of the seeded branch (200 runs that day).
  const runs = [];
  for (let i = 0; i < RUNS + 1; i++) runs.push(await makeWorkspace(work, { rows: 40, seed: 50 + i, day: 49, minute: 600 + i, turns: 2 }));
  const onEmpty = [];
  const onSeeded = [];
  for (let i = 0; i < runs.length; i++) {
    await resetBranches(empty, emptyTips);
    await resetBranches(big, seedTips);
    const a = () => time(() => publish({ run: runs[i].dir, cwd: empty, push: false }));
    const b = () => time(() => publish({ run: runs[i].dir, cwd: big, push: false }));
    // Alternate the order; the first pair warms caches and is discarded.
    const [x, y] = i % 2 ? [await b(), await a()].reverse() : [await a(), await b()];
    if (i > 0) {
      onEmpty.push(x);
      onSeeded.push(y);
    }
  }
  // git's own share: the same files in one raw fast-import commit on each results tip. A commit
  // under a root of 10,000 entries rewrites that root tree whatever else it does.
  const gitEmpty = [];
  const gitSeeded = [];
  for (let i = 0; i < runs.length; i++) {
    const x = await time(() => rawFastImport(empty, runs[i].dir, 'floor-run', { from: emptyTips.results }));
    const y = await time(() => rawFastImport(big, runs[i].dir, 'floor-run', { from: seedTips.results }));
    if (i > 0) {
      gitEmpty.push(x);
      gitSeeded.push(y);
    }
  }
  log(
    `seeded 10,000 runs in ${fmtMs(seedMs)}; publish on empty ${fmtMs(median(onEmpty))}, on seeded ${fmtMs(median(onSeeded))}; raw fast-import ${fmtMs(median(gitEmpty))} / ${fmtMs(median(gitSeeded))}`,
  );
  return {
    seedMs,
    empty: median(onEmpty),
    seeded: median(onSeeded),
    gitEmpty: median(gitEmpty),
    gitSeeded: median(gitSeeded),
    files: (await listFiles(runs[0].dir)).length,
  };
}

/** 3. 1,000 publishes in a row. */
async function sequential(work) {
  const repo = await freshRepo(work, 'sequential');
  const times = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    // 50 runs a day, each a small real run (4 rows: ~30 files); the workspace is made untimed.
    const ws = await makeWorkspace(work, { rows: 4, seed: 1000 + i, day: Math.floor(i / 50), minute: i % 50, turns: 1 });
    times.push(await time(() => publish({ run: ws.dir, cwd: repo, push: false })));
    await rm(join(ws.dir, '..'), { recursive: true, force: true });
    if ((i + 1) % 100 === 0) log(`${i + 1} publishes, last ${fmtMs(times[i])}`);
  }
  const k = Math.min(50, Math.floor(SEQUENTIAL / 4));
  const first = median(times.slice(0, k));
  const last = median(times.slice(-k));
  const sorted = [...times].sort((a, b) => a - b);
  const packs = readdirSync(join(repo, '.git/objects/pack')).filter((f) => f.endsWith('.pack')).length;

  // The same comparison without the drift of a shared machine over minutes: the next publish onto
  // this repository (1,000 runs, its packs and reflogs) and onto one that has seen a single
  // publish, interleaved; both are reset to their state after every sample.
  const one = await freshRepo(work, 'sequential-one');
  const firstWs = await makeWorkspace(work, { rows: 4, seed: 1000, day: 0, minute: 0, turns: 1 });
  await publish({ run: firstWs.dir, cwd: one, push: false });
  const tipsOf = async (dir) => {
    const r = await git.openRepo(dir);
    return { results: await git.resolveRef(r, RESULTS_REF), artifacts: await git.resolveRef(r, ARTIFACTS_REF) };
  };
  const [manyTips, oneTips] = [await tipsOf(repo), await tipsOf(one)];
  const onMany = [];
  const onOne = [];
  for (let i = 0; i < RUNS * 2 + 1; i++) {
    const ws = await makeWorkspace(work, { rows: 4, seed: 5000 + i, day: 60, minute: i, turns: 1 });
    await resetBranches(repo, manyTips);
    await resetBranches(one, oneTips);
    const a = () => time(() => publish({ run: ws.dir, cwd: one, push: false }));
    const b = () => time(() => publish({ run: ws.dir, cwd: repo, push: false }));
    const [x, y] = i % 2 ? [await b(), await a()].reverse() : [await a(), await b()];
    if (i > 0) {
      onOne.push(x);
      onMany.push(y);
    }
  }
  return {
    n: SEQUENTIAL,
    k,
    first,
    last,
    p90: sorted[Math.floor(sorted.length * 0.9)],
    max: sorted[sorted.length - 1],
    packs,
    afterOne: median(onOne),
    afterMany: median(onMany),
  };
}

/** 4. list over 3,000 vs 10 runs, and vs the walk. */
export async function listing(work) {
  // Runs the size of part 1's smallest (~200 files: ~165 on the results branch).
  const template = await makeWorkspace(work, { rows: 40, seed: 4, turns: 1 });
  const many = await freshRepo(work, 'list-3000');
  await seedRuns(many, template, { count: 3000, days: 30 });
  const few = await freshRepo(work, 'list-10');
  await seedRuns(few, template, { count: 10, days: 1 });
  const l3000 = [];
  const l10 = [];
  const walk = [];
  let counts = null;
  for (let i = 0; i < RUNS * 3 + 1; i++) {
    const a = await time(async () => {
      const r = await listRuns({ cwd: many });
      counts ??= { many: r.runs.length };
    });
    const b = await time(() => listRuns({ cwd: few }));
    if (i > 0) {
      l3000.push(a);
      l10.push(b);
    }
  }
  for (let i = 0; i < RUNS + 1; i++) {
    const t = await time(() => agentvListing(many));
    if (i > 0) walk.push(t);
  }
  const cli = [];
  for (let i = 0; i < 3; i++) cli.push((await runMeasured(process.execPath, [CLI, 'list', '--json'], { cwd: many })).ms);
  const av = await agentvListing(many);
  return {
    l3000: median(l3000),
    l10: median(l10),
    walk: median(walk),
    runs: counts?.many ?? 0,
    cli: median(cli),
    files: (await git.runGit(['ls-tree', '-r', '--name-only', 'refs/heads/agentv/results/v1'], { cwd: many })).stdout.toString().split('\n').length - 1,
    listingBytes: av.bytes,
    agentvRuns: av.runs,
  };
}

export async function run() {
  isolateGitEnv();
  const work = await makeWorkDir();
  try {
    const s = await sizes(work);
    const o = await seeded(work);
    const q = SEQUENTIAL > 0 ? await sequential(work) : null;
    const l = await listing(work);
    const at2000 = s.rows.find((r) => r.target === 2000) ?? s.rows[0];
    const floorRatio = at2000.ours / at2000.floor;
    const perFileSpeedup = at2000.perFile / at2000.ours;
    const seededRatio = o.seeded / o.empty;
    const seqRatio = q ? q.last / q.first : NaN;
    const seqAB = q ? q.afterMany / q.afterOne : NaN;
    const cliFloor = s.cli / at2000.floor;
    const listRatio = l.l3000 / l.l10;
    const walkSpeedup = l.walk / l.l3000;
    const markdown = `## publish and list (issue 4)

Library calls in one process (\`publish({ push: false })\`, \`listRuns()\`); medians of ${RUNS} samples unless noted; git ${(await git.gitVersion()).raw}, Node ${process.version}.

### publish (local commit only) vs the floor and vs one git process per file

| run | files | (a) raw fast-import (floor) | \`publish\` | publish / floor | (b) one process per file | (b) / publish |
|---|---|---|---|---|---|---|
${s.rows.map((r) => `| ~${r.target.toLocaleString('en-US')} | ${r.files.toLocaleString('en-US')} | ${fmtMs(r.floor)} | ${fmtMs(r.ours)} | ${fmtRatio(r.ours / r.floor)} | ${fmtMs(r.perFile)} (${r.scaled ? `${r.scaled.toLocaleString('en-US')} files timed, scaled` : `${r.perFileSamples} run${r.perFileSamples > 1 ? 's' : ''}`}) | ${(r.perFile / r.ours).toFixed(0)}x |`).join('\n')}

At 2,000 files: publish is **${fmtRatio(floorRatio)}** the floor (target ≤ 1.5x) ${pass(floorRatio <= 1.5)} and **${perFileSpeedup.toFixed(0)}x** faster than one process per file (target ≥ 20x) ${pass(perFileSpeedup >= 20)}.
The floor streams the same files into a single commit with one \`git fast-import\`; \`publish\` also derives the split (metadata vs payloads, sha256 of every payload), writes two commits (one per branch, concurrently) plus the day's catalog, and moves both refs in one transaction. The whole command as a user runs it (\`agentv-results publish <run> --no-push\`, node start-up, config and lock included) took ${fmtMs(s.cli)} at 2,000 files: **${fmtRatio(cliFloor)}** the floor (target ≤ 1.5x) ${pass(cliFloor <= 1.5)}.

What the floor streams, exactly: one \`git fast-import --quiet --done\` process in a fresh repository, fed one \`commit refs/heads/floor\` with a fixed committer and message, then for every file of the run workspace (as \`find\` lists it, sorted) \`M 100644 inline "runs/bench/2026-01-01/x/<path>"\` followed by \`data <size>\` and the file's bytes, then \`done\`. Reading the files is inside the timing; no ref is read, no second branch, no split.

### publishing stays O(size of the run)

| branch before the publish | publish of a ${o.files}-file run |
|---|---|
| empty (only the root commits) | ${fmtMs(o.empty)} |
| 10,000 runs of one experiment over 50 days (seeded by one fast-import in ${fmtMs(o.seedMs)}; the run lands on a day that already has 200) | ${fmtMs(o.seeded)} |
| ratio | **${fmtRatio(seededRatio)}** (target ≤ 1.2x) ${pass(seededRatio <= 1.2)} |

${
  q
    ? `${q.n.toLocaleString('en-US')} real publishes in a row (small runs of ~30 files, 50 a day; after each publish \`git gc --auto\` runs when git's thresholds may be crossed, and repacks when packs pile up):

| first ${q.k} (median) | last ${q.k} (median) | last / first | p90 | max (a publish that triggered a repack) | packs at the end |
|---|---|---|---|---|---|
| ${fmtMs(q.first)} | ${fmtMs(q.last)} | **${fmtRatio(seqRatio)}** (target ≤ 1.2x) ${pass(seqRatio <= 1.2)} | ${fmtMs(q.p90)} | ${fmtMs(q.max)} | ${q.packs} |

The same question measured side by side: the next publish onto that repository after its ${q.n.toLocaleString('en-US')} publishes took ${fmtMs(q.afterMany)}, onto a repository that had seen one publish ${fmtMs(q.afterOne)}: **${fmtRatio(seqAB)}** (target ≤ 1.2x) ${pass(seqAB <= 1.2)}.
`
    : '(1,000 publishes in a row: not run this time, BENCH_SEQUENTIAL=0.)'
}

### list reads the catalog, not the runs

| measure | median |
|---|---|
| \`list\` over 10 runs | ${fmtMs(l.l10)} |
| \`list\` over ${l.runs.toLocaleString('en-US')} runs (30 days; runs of ~200 files, ${l.files.toLocaleString('en-US')} files on the results branch) | ${fmtMs(l.l3000)} |
| ratio | **${fmtRatio(listRatio)}** (target ≤ 2x) ${pass(listRatio <= 2)} |
| AgentV's own listing of the same branch (listGitRuns, behind the Dashboard's \`/api/runs\`: one \`ls-tree -r --name-only\` of the whole branch = ${(l.listingBytes / 1024).toFixed(0)} KB here, every \`*/summary.json\` and every run's index read and parsed; same git calls, timed in-process without its per-commit cache) | ${fmtMs(l.walk)} |
| AgentV's listing / \`list\` | **${walkSpeedup.toFixed(0)}x** (reported; \`list\` reads only the catalog for runs we published) |
| \`agentv-results list --json\` over 3,000 runs, whole command | ${fmtMs(l.cli)} |
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
