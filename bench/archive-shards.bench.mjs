/**
 * Day-sharded archives (issue 29 item 3): a rollover of the 200 live runs into a month archive
 * that already holds 90,000 runs (5,000 a day; 4,800 of them on the day the 200 are from), against
 * the same rollover into an empty archive. Every state has the same live branch and the same
 * catalog (90,200 rows, the 90,000 marked archived), seeded by bench/archive-lib.mjs; they differ
 * only in the month branch:
 *   day    the archive as the rollover now writes it (`<YYYY-MM-DD>/<run>`)
 *   flat   the archive as it was written before the sharding (90,000 runs at the month root)
 *   empty  no archive branch at all (the baseline)
 *   fresh  200 live runs and nothing archived (no catalog rows of archived runs either)
 * Medians of BENCH_RUNS samples (default 3), the states interleaved, each sample from the same
 * seeded tips.
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { join } from 'node:path';
import { ROOT, fmtMs, fmtRatio, median } from './lib.mjs';
import { ARTIFACTS_REF, RESULTS_REF, freshRepo, git, isolateGitEnv, makeWorkDir, makeWorkspace } from './publish-lib.mjs';
import { ARCHIVE_PREFIXES, seedArchivedState } from './archive-lib.mjs';
import { rm } from 'node:fs/promises';

const { rollover } = await import(join(ROOT, 'dist', 'archive/rollover.js'));

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LAST_DAY = 49; // 2026-02-19
const MONTH = '2026-02';
const NOW = new Date('2026-03-01T00:00:00Z');
const AUTHOR = { name: 'Bench', email: 'bench@example.invalid', date: NOW };
const log = (m) => process.stderr.write(`  ${m}\n`);
const n = (x) => x.toLocaleString('en-US');

async function refsOf(dir) {
  const r = await git.openRepo(dir);
  const refs = [RESULTS_REF, ARTIFACTS_REF, ARCHIVE_PREFIXES.results + MONTH, ARCHIVE_PREFIXES.artifacts + MONTH];
  return new Map(await Promise.all(refs.map(async (ref) => [ref, await git.resolveRef(r, ref)])));
}

/** Puts every ref back where seeding left it (a ref that did not exist is deleted). */
async function restore(dir, refs) {
  for (const [ref, sha] of refs) {
    if (sha) await git.runGit(['update-ref', ref, sha], { cwd: dir });
    else await git.runGit(['update-ref', '-d', ref], { cwd: dir, okCodes: [0, 1] }).catch(() => {});
  }
}

/** Runs on the month branch, in either layout: entries of the root, or of each day folder. */
async function monthSize(dir) {
  const ref = ARCHIVE_PREFIXES.results + MONTH;
  const root = (await git.runGit(['ls-tree', '--name-only', ref], { cwd: dir, okCodes: [0, 128] })).stdout.toString().split('\n').filter(Boolean);
  let total = 0;
  for (const name of root) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(name)) total++;
    else total += (await git.runGit(['ls-tree', '--name-only', `${ref}:${name}`], { cwd: dir })).stdout.toString().split('\n').filter(Boolean).length;
  }
  return total;
}

export async function run() {
  isolateGitEnv();
  const work = await makeWorkDir();
  try {
    const load = os.loadavg()[0];
    const template = await makeWorkspace(work, { rows: 2, seed: 3, turns: 1 });
    const big = { archived: 90_000, live: 200, perDay: 5000, lastDay: LAST_DAY, sameDayArchived: 4800 };
    const states = [];
    const add = async (name, label, seed) => {
      const dir = await freshRepo(work, name);
      await seed(dir);
      states.push({ name, label, dir, refs: await refsOf(dir), size: await monthSize(dir), ms: [], dry: [], archived: 0 });
      log(`seeded ${label}`);
    };
    await add('day', 'into 90,000 archived runs, day-sharded (`<day>/<run>`, what the rollover writes)', (d) =>
      seedArchivedState(d, template, { ...big, archiveLayout: 'day' }),
    );
    await add('flat', 'into 90,000 archived runs, unsharded (archives from before the sharding)', (d) =>
      seedArchivedState(d, template, { ...big, archiveLayout: 'flat' }),
    );
    await add('empty', 'into an empty archive (same live branch and catalog: the baseline)', async (d) => {
      await seedArchivedState(d, template, { ...big, archiveLayout: 'day' });
      for (const p of [ARCHIVE_PREFIXES.results, ARCHIVE_PREFIXES.artifacts]) await git.runGit(['update-ref', '-d', p + MONTH], { cwd: d });
    });
    await add('fresh', 'into an empty archive, nothing archived before (200 catalog rows)', (d) =>
      seedArchivedState(d, template, { archived: 0, live: 200, perDay: 1, lastDay: LAST_DAY }),
    );
    for (let i = 0; i < RUNS; i++)
      for (const st of states) {
        await restore(st.dir, st.refs);
        const t0 = performance.now();
        const r = await rollover({ cwd: st.dir, keepDays: 100_000, keepRuns: 0, maxListingBytes: 0, now: NOW, author: AUTHOR });
        st.ms.push(performance.now() - t0);
        st.archived = r.archived.length;
        if (r.archived.length !== 200) throw new Error(`${st.name}: rolled ${r.archived.length} runs, not 200`);
        await restore(st.dir, st.refs);
        const d0 = performance.now();
        await rollover({ cwd: st.dir, keepDays: 100_000, keepRuns: 0, maxListingBytes: 0, now: NOW, dryRun: true });
        st.dry.push(performance.now() - d0);
      }
    // After a rollover into the day-sharded month: the other days' folders are the trees they were.
    const day = states.find((s) => s.name === 'day');
    await restore(day.dir, day.refs);
    const before = day.refs.get(ARCHIVE_PREFIXES.results + MONTH);
    const dayFolders = (await git.runGit(['ls-tree', '--name-only', before], { cwd: day.dir })).stdout.toString().split('\n').filter(Boolean).length;
    await rollover({ cwd: day.dir, keepDays: 100_000, keepRuns: 0, maxListingBytes: 0, now: NOW, author: AUTHOR });
    const diff = (await git.runGit(['diff-tree', '--name-only', before, ARCHIVE_PREFIXES.results + MONTH], { cwd: day.dir })).stdout
      .toString()
      .split('\n')
      .filter(Boolean);
    await restore(day.dir, day.refs);
    for (const st of states) log(`${st.name}: ${fmtMs(median(st.ms))} (dry run ${fmtMs(median(st.dry))})`);
    const at = (name) => states.find((s) => s.name === name);
    const base = median(at('empty').ms);
    const ratio = median(at('day').ms) / base;
    const rows = states
      .map((st) => `| ${st.label} | ${n(st.size)} | ${fmtMs(median(st.ms))} | ${fmtMs(median(st.dry))} | **${fmtRatio(median(st.ms) / base)}** |`)
      .join('\n');
    const markdown = `## Day-sharded archives (issue 29)

\`rollover()\` of the 200 live runs of 2026-02-19 into the month branch \`agentv/results-archive/v1/${MONTH}\`; every state has the same live branch and the same catalog (90,200 rows, 90,000 of them marked archived: 5,000 a day, 4,800 on 2026-02-19 itself) and differs only in the archive; the last row has no archived runs at all. Medians of ${RUNS} samples, the states interleaved, each sample from the same seeded tips; the dry run is the same call with \`dryRun\` (reading the catalog and planning, writing nothing). git ${(await git.gitVersion()).raw}, Node ${process.version}; load average ${load.toFixed(1)} on ${os.cpus().length} cores at the start (the machine is shared: read the ratios). Reproduce: \`npm run bench -- archive-shards\` (BENCH_RUNS=n).

| rollover of 200 runs | runs already in the month | time | its dry run | vs empty archive |
|---|---:|---:|---:|---:|
${rows}

Target: a rollover into a month already holding 90,000 runs ≤ 2x one into an empty archive: **${fmtRatio(ratio)}** ${ratio <= 2 ? '✅' : '❌'}. With the runs in day folders the commit rewrites the day's tree (here 4,800 runs, the most a day at 5,000 runs a day holds) and a root of ${n(dayFolders)} day folders, instead of one 90,000-entry directory; the rollover into the sharded month changed ${diff.length} entr${diff.length === 1 ? 'y' : 'ies'} of the month root (${diff.join(', ')}). What stays is O(catalogued runs), not O(archive): the dry run, reading 90,200 catalog rows, is most of the time of the first three rows; against the last row (a catalog of 200 rows, nothing archived) the rollover into the 90,000-run month is ${fmtRatio(median(at('day').ms) / median(at('fresh').ms))}, and that difference is the catalog, which \`expire\` bounds.
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
