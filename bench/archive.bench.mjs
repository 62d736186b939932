/**
 * Issue 16's figures: what years of history cost once the archive policy has moved old runs off
 * the live branch, and what a rollover and a retention write.
 *
 *  (a) `publish` (library call, local commit) onto a repository holding 100,000 runs that were
 *      archived by the policy (seeded by one fast-import: a small live branch, 14 month archives,
 *      every run's catalog row) vs onto an empty branch: target <= 1.2x. The same publish onto
 *      1,000 and 10,000 runs at the live root, and onto 100,000 archived at 5,000 runs a day (the
 *      day's catalog file then holds 5,000 rows), for the cost model; `list` and a sync merge
 *      (`mergeCommits` of two publishes made on the same tip) on each of these states.
 *  (b) a rollover of 10,000 runs (10,200 at the root, the 200 newest stay): one commit per ref,
 *      its time, the objects it wrote by type, and the proof that no blob was rewritten (the only
 *      new blobs are the catalog files it edited; every archived run's tree is the live one). Then
 *      the retention of those 10,000 archived runs (`expire`), measured the same way.
 *
 * Medians of BENCH_RUNS samples (default 5; 3 for the rollover); the states of (a) are sampled
 * interleaved, every sample from the same seeded tips.
 */
import { performance } from 'node:perf_hooks';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import os from 'node:os';
import { ROOT, fmtMs, fmtRatio, median } from './lib.mjs';
import {
  ARTIFACTS_REF,
  RESULTS_REF,
  freshRepo,
  git,
  isolateGitEnv,
  listRuns,
  makeWorkDir,
  makeWorkspace,
  publish,
  resetBranches,
  seedRuns,
} from './publish-lib.mjs';
import { ARCHIVE_PREFIXES, allObjects, rootEntries, seedArchivedState } from './archive-lib.mjs';

const dist = (p) => join(ROOT, 'dist', p);
const { rollover } = await import(dist('archive/rollover.js'));
const { expireRuns } = await import(dist('archive/retention.js'));
const { mergeCommits } = await import(dist('sync/merge-commits.js'));

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LAST_DAY = 49; // 2026-02-19: the newest day of every seeded state, and the day of the runs published onto them
const log = (m) => process.stderr.write(`  ${m}\n`);
const pass = (ok) => (ok ? '✅' : '❌');
const n = (x) => x.toLocaleString('en-US');

async function time(fn) {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function tipsOf(dir) {
  const r = await git.openRepo(dir);
  return { results: await git.resolveRef(r, RESULTS_REF), artifacts: await git.resolveRef(r, ARTIFACTS_REF) };
}

async function archiveTips(dir) {
  const out = (await git.runGit(['for-each-ref', '--format=%(refname) %(objectname)', ARCHIVE_PREFIXES.results, ARCHIVE_PREFIXES.artifacts], { cwd: dir }))
    .stdout;
  return new Map(
    out
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );
}

/** Puts the live branches and every archive ref back to `live` / `archives` (archive refs not in it are deleted). */
async function restore(dir, live, archives) {
  const r = await git.openRepo(dir);
  await resetBranches(dir, live);
  for (const [ref, sha] of await archiveTips(dir)) if (!archives.has(ref)) await git.deleteRef(r, ref, sha);
  for (const [ref, sha] of archives) {
    const cur = await git.resolveRef(r, ref);
    if (cur !== sha) await git.updateRefs(r, [{ ref, new: sha, old: cur }]);
  }
}

/** Packed bytes of what `tip` adds over `base` (objects reachable from tip, not from base). */
async function packedBytes(dir, base, tip) {
  const objects = (await git.runGit(['rev-list', '--objects', tip, `^${base}`], { cwd: dir })).stdout;
  const pack = await git.runGit(['pack-objects', '--stdout', '-q'], { cwd: dir, input: objects });
  return pack.stdout.length;
}

/** (a) The states, seeded once each. */
async function seedStates(work) {
  const template = await makeWorkspace(work, { rows: 2, seed: 3, turns: 1 });
  const states = [];
  const add = async (name, label, seed) => {
    const dir = await freshRepo(work, name);
    const { ms, value } = await time(() => seed(dir));
    states.push({ name, label, dir, tips: await tipsOf(dir), seedMs: ms, info: value });
    log(`seeded ${label} in ${fmtMs(ms)}`);
  };
  await add('empty', 'empty branch', (d) => seedRuns(d, template, { count: 0, days: 1 }));
  // 200 runs a day at the root: what a branch without the archive policy holds after 5 and 50 days.
  await add('live-1k', '1,000 runs at the live root', (d) =>
    seedArchivedState(d, template, { archived: 0, live: 1000, livePerDay: 200, perDay: 1, lastDay: LAST_DAY }),
  );
  await add('live-10k', '10,000 runs at the live root', (d) =>
    seedArchivedState(d, template, { archived: 0, live: 10_000, livePerDay: 200, perDay: 1, lastDay: LAST_DAY }),
  );
  await add('archived-100k', '100,000 archived (250 a day) + 200 live', (d) =>
    seedArchivedState(d, template, { archived: 100_000, live: 200, perDay: 250, lastDay: LAST_DAY }),
  );
  await add('archived-100k-5k', '100,000 archived (5,000 a day) + 200 live', (d) =>
    seedArchivedState(d, template, { archived: 100_000, live: 200, perDay: 5000, lastDay: LAST_DAY, sameDayArchived: 4800 }),
  );
  return states;
}

/** (a) publish, list and merge on every state, interleaved. */
async function measureStates(work, states) {
  const runs = [];
  for (let i = 0; i < RUNS + 1; i++) runs.push(await makeWorkspace(work, { rows: 40, seed: 70 + i, day: LAST_DAY, minute: 600 + i, turns: 2 }));
  const other = await makeWorkspace(work, { rows: 40, seed: 99, day: LAST_DAY, minute: 700, turns: 2 });
  // The day the states' newest rows are on: the publish rewrites that day's catalog file.
  for (const w of [...runs, other]) if (!w.runId.includes('2026-02-19')) throw new Error(`run ${w.runId} is not on 2026-02-19`);
  const s = new Map(states.map((st) => [st.name, { publish: [], list: [], merge: [], listed: 0 }]));
  const author = { name: 'Bench', email: 'bench@example.invalid', date: new Date('2026-02-20T00:00:00Z') };
  for (let i = 0; i < runs.length; i++) {
    const order = i % 2 ? [...states].reverse() : states;
    for (const st of order) {
      const m = s.get(st.name);
      await resetBranches(st.dir, st.tips);
      const p = await time(() => publish({ run: runs[i].dir, cwd: st.dir, push: false }));
      const ours = (await tipsOf(st.dir)).results;
      await resetBranches(st.dir, st.tips);
      await publish({ run: other.dir, cwd: st.dir, push: false });
      const theirs = (await tipsOf(st.dir)).results;
      const r = await git.openRepo(st.dir);
      const mg = await time(() => mergeCommits(r, { first: theirs, second: ours, message: 'bench merge\n', author }));
      if (mg.value.kind !== 'merged') throw new Error(`${st.name}: expected a merge, got ${mg.value.kind}`);
      await resetBranches(st.dir, st.tips);
      const l = await time(() => listRuns({ cwd: st.dir }));
      m.listed = l.value.runs.length;
      if (i > 0) {
        m.publish.push(p.ms);
        m.merge.push(mg.ms);
        m.list.push(l.ms);
      }
    }
  }
  // What one published run weighs on each branch, packed (for the cost model's repository size).
  const empty = states[0];
  await resetBranches(empty.dir, empty.tips);
  await publish({ run: runs[0].dir, cwd: empty.dir, push: false });
  const after = await tipsOf(empty.dir);
  const weight = {
    results: await packedBytes(empty.dir, empty.tips.results, after.results),
    artifacts: await packedBytes(empty.dir, empty.tips.artifacts, after.artifacts),
    // The run is on LAST_DAY (2026-02-19): the empty branch's only catalog line is its own.
    catalogLine: (await git.runGit(['cat-file', 'blob', `${after.results}:.indexes/agentv-results.2026-02-19.jsonl`], { cwd: empty.dir })).stdout.length,
  };
  await resetBranches(empty.dir, empty.tips);
  const out = states.map((st) => {
    const m = s.get(st.name);
    return { ...st, publish: median(m.publish), list: median(m.list), merge: median(m.merge), listed: m.listed };
  });
  out.weight = weight;
  return out;
}

/** (b) rollover of 10,000 runs, then retention of them: time, commits per ref, objects written. */
async function rolloverAndRetention(work) {
  const template = await makeWorkspace(work, { rows: 2, seed: 5, turns: 1 });
  const dir = await freshRepo(work, 'rollover');
  await seedRuns(dir, template, { count: 10_200, days: 51, startDay: LAST_DAY - 50 });
  const seeded = await tipsOf(dir);
  const samples = Math.min(RUNS, 3);
  const NOW = new Date('2026-03-01T00:00:00Z');
  const author = { name: 'Bench', email: 'bench@example.invalid', date: NOW };
  /** Runs `fn` `samples` times from the same refs; what the first one wrote (objects by id -> type). */
  const measure = async (live, archives, fn) => {
    const ms = [];
    let value = null;
    let written = null;
    for (let i = 0; i < samples; i++) {
      await restore(dir, live, archives);
      const before = i === 0 ? await allObjects(dir) : null;
      const t = await time(fn);
      ms.push(t.ms);
      if (i === 0) {
        value = t.value;
        written = [...(await allObjects(dir))].filter(([id]) => !before.has(id));
      }
    }
    return { ms: median(ms), value, written };
  };
  // keepDays that keeps every day: only the count rule (the 200 newest stay) decides.
  const roll = await measure(seeded, new Map(), () => rollover({ cwd: dir, keepDays: 100_000, keepRuns: 200, now: NOW, author }));
  const rolled = roll.value;
  const byType = (list) => Object.fromEntries(['commit', 'tree', 'blob'].map((t) => [t, list.filter(([, ty]) => ty === t).length]));
  // No blob rewritten: the only new blobs are the catalog files the rollover edited.
  const liveAfter = rolled.refs.find((x) => x.ref === RESULTS_REF).after;
  const catalogBlobs = new Set((await rootEntries(dir, `${liveAfter}:.indexes`)).values());
  const newBlobs = roll.written.filter(([, t]) => t === 'blob').map(([id]) => id);
  const oldRoot = await rootEntries(dir, seeded.results);
  const archives = await archiveTips(dir);
  let sameTrees = 0;
  let checked = 0;
  for (const ref of [...archives.keys()].filter((x) => x.startsWith(ARCHIVE_PREFIXES.results)))
    for (const [path, sha] of await rootEntries(dir, ref)) {
      checked++;
      if (oldRoot.get(path) === sha) sameTrees++;
    }
  let oneEach = true;
  for (const x of rolled.refs)
    if (x.before && (await git.runGit(['rev-list', '--count', `${x.before}..${x.after}`], { cwd: dir })).stdout.toString().trim() !== '1') oneEach = false;
  // Retention of the 10,000 archived runs (keep the 200 newest, no keep tag), from that state.
  const afterRoll = await tipsOf(dir);
  const exp = await measure(afterRoll, archives, () => expireRuns({ cwd: dir, keepRuns: 200, keepTags: [], now: NOW, author }));
  let expOneEach = true;
  for (const x of exp.value.refs)
    if (!x.before || (await git.runGit(['rev-list', '--count', `${x.before}..${x.after}`], { cwd: dir })).stdout.toString().trim() !== '1') expOneEach = false;
  log(`rollover of ${n(rolled.archived.length)} runs: ${fmtMs(roll.ms)}; retention of ${n(exp.value.expired.length)}: ${fmtMs(exp.ms)}`);
  await rm(dir, { recursive: true, force: true });
  return {
    archived: rolled.archived.length,
    refs: rolled.refs.length,
    oneEach,
    ms: roll.ms,
    wrote: byType(roll.written),
    onlyCatalog: newBlobs.every((id) => catalogBlobs.has(id)),
    newBlobs: newBlobs.length,
    sameTrees,
    checked,
    expired: exp.value.expired.length,
    expRefs: exp.value.refs.length,
    expOneEach,
    expMs: exp.ms,
    expWrote: byType(exp.written),
  };
}

/**
 * (c) At 5,000 runs a day a month archive holds ~150,000 runs in one directory: a rollover into
 * it and a retention out of it, on the 100,000-archived state (February's archive holds 95,000).
 */
async function bigMonth(state) {
  const samples = Math.min(RUNS, 3);
  const NOW = new Date('2026-03-01T00:00:00Z');
  const author = { name: 'Bench', email: 'bench@example.invalid', date: NOW };
  const archives = await archiveTips(state.dir);
  const monthSize = (await rootEntries(state.dir, `${ARCHIVE_PREFIXES.results}2026-02`)).size;
  const go = async (fn) => {
    const ms = [];
    let value = null;
    for (let i = 0; i < samples; i++) {
      await restore(state.dir, state.tips, archives);
      const t = await time(fn);
      ms.push(t.ms);
      value ??= t.value;
    }
    return { ms: median(ms), value };
  };
  const roll = await go(() => rollover({ cwd: state.dir, keepDays: 100_000, keepRuns: 0, now: NOW, author }));
  const exp = await go(() => expireRuns({ cwd: state.dir, keepRuns: 100_200 - 15_000, keepTags: [], now: NOW, author }));
  // The same calls as dry runs: reading the catalog and planning, without writing anything.
  const rollDry = await go(() => rollover({ cwd: state.dir, keepDays: 100_000, keepRuns: 0, now: NOW, dryRun: true }));
  const expDry = await go(() => expireRuns({ cwd: state.dir, keepRuns: 100_200 - 15_000, keepTags: [], now: NOW, dryRun: true }));
  await restore(state.dir, state.tips, archives);
  const fromBig = exp.value.expired.filter((e) => e.archived === '2026-02').length;
  log(`big month (${n(monthSize)}): rollover of ${roll.value.archived.length} ${fmtMs(roll.ms)}; retention of ${exp.value.expired.length} ${fmtMs(exp.ms)}`);
  return {
    monthSize,
    rolled: roll.value.archived.length,
    rollMs: roll.ms,
    rollDryMs: rollDry.ms,
    expired: exp.value.expired.length,
    fromBig,
    expMs: exp.ms,
    expDryMs: expDry.ms,
  };
}

export async function run() {
  isolateGitEnv();
  const work = await makeWorkDir();
  try {
    const load = os.loadavg()[0];
    const states = await measureStates(work, await seedStates(work));
    const big = await bigMonth(states.find((st) => st.name === 'archived-100k-5k'));
    const roll = await rolloverAndRetention(work);
    const base = states[0];
    const at = (name) => states.find((s) => s.name === name);
    const a100 = at('archived-100k');
    const k1 = at('live-1k');
    const ratio100 = a100.publish / base.publish;
    const { costModel } = await import('./archive-cost.mjs');
    const markdown = `## Archive and retention (issue 16)

Library calls in one process (\`publish({ push: false })\`, \`listRuns()\`, \`mergeCommits()\`, \`rollover()\`, \`expireRuns()\`); medians of ${RUNS} samples (${Math.min(RUNS, 3)} for rollover and retention), the states of (a) sampled interleaved, each sample from the same seeded tips; git ${(await git.gitVersion()).raw}, Node ${process.version}; load average ${load.toFixed(1)} on ${os.cpus().length} cores at the start (the machine is shared: read the ratios). Reproduce: \`npm run bench -- archive\` (BENCH_RUNS=n for the sample count; about ${RUNS <= 3 ? 3 : 4} minutes here).

**(a) Publishing onto years of history.** Every state is seeded by one \`git fast-import\` (the month archives by one \`git mktree\` each); its newest day is the day of the published run, a 40-row run of ~250 files. \`list\` is the whole catalog (no \`--since\`); the merge is \`mergeCommits()\` of two publishes made on the same tip (what a sync does when two machines published at once).

| state of the repository | seeded in | publish | vs empty | vs 1,000 live | \`list\` (runs listed) | merge |
|---|---|---|---|---|---|---|
${states
  .map(
    (s) =>
      `| ${s.label}${s.info?.catalogDays ? ` (${s.info.months} month archives, ${n(s.info.catalogDays)} catalog days, ${n(s.info.lastDayRows)} rows on the day published to)` : ''} | ${fmtMs(s.seedMs)} | ${fmtMs(s.publish)} | ${s === base ? '1.00x' : `**${fmtRatio(s.publish / base.publish)}**`} | ${fmtRatio(s.publish / k1.publish)} | ${fmtMs(s.list)} (${n(s.listed)}) | ${fmtMs(s.merge)} |`,
  )
  .join('\n')}

Target: publish onto 100,000 archived runs ≤ 1.2x onto an empty branch: **${fmtRatio(ratio100)}** ${pass(ratio100 <= 1.2)}; against a branch of 1,000 live runs it is ${fmtRatio(a100.publish / k1.publish)}. ${base.publish > k1.publish ? `Publishing onto the empty branch measured slower than onto populated ones, in this run as in the "publish and list (issue 4)" section (0.71x there): a ratio under 1 is that baseline, not a speed-up from history; the column against 1,000 live runs is the comparison to read.` : ''}

**(b) Rollover and retention of 10,000 runs** (10,200 runs of ${n(51)} days at the live root, distinct files per run; the 200 newest stay):

| operation | time | refs moved | commits per ref | objects written |
|---|---|---|---|---|
| rollover: ${n(roll.archived)} runs to their month archives | ${fmtMs(roll.ms)} | ${roll.refs} | ${roll.oneEach ? 'one ✅' : 'more than one ❌'} | ${roll.wrote.commit} commits, ${roll.wrote.tree} trees, ${roll.wrote.blob} blobs |
| retention: the same ${n(roll.expired)} archived runs removed (\`expire --keep-runs 200\`, no keep tag) | ${fmtMs(roll.expMs)} | ${roll.expRefs} | ${roll.expOneEach ? 'one ✅' : 'more than one ❌'} | ${roll.expWrote.commit} commits, ${roll.expWrote.tree} trees, ${roll.expWrote.blob} blobs |
| rollover of the ${big.rolled} live runs into a month archive already holding ${n(big.monthSize)} runs (100,200 catalog rows; its dry run: ${fmtMs(big.rollDryMs)}) | ${fmtMs(big.rollMs)} | | | |
| retention of ${n(big.expired)} archived runs, ${n(big.fromBig)} of them out of that ${n(big.monthSize)}-run month (its dry run: ${fmtMs(big.expDryMs)}) | ${fmtMs(big.expMs)} | | | |

No blob is rewritten by the rollover: its ${roll.newBlobs} new blobs are all catalog files it edited (each archived run's row gains \`"archived"\`) ${pass(roll.onlyCatalog)}, and ${n(roll.sameTrees)} of the ${n(roll.checked)} run directories on the archive branches are the very tree objects the live branch had ${pass(roll.sameTrees === roll.checked)}; the new trees are the roots of the branches it changed and their \`.indexes/\`. The retention writes no blob of any run either: its new objects are those roots, its commits, and (as blobs) the catalog files it shortened and the retention log.

${costModel({ states, base, k1, roll, big, weight: states.weight })}
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
