/**
 * The static site's size (docs/site.md "Size"): SITE_SIZE_RUNS runs (default 6) of SITE_SIZE_ROWS
 * tests each (default 100; synthetic rows with 4-turn transcripts, bench/publish-lib.mjs
 * makeWorkspace) published to one branch and built twice — every run with full detail
 * (`detailLast` = all), then every run as a summary (`detailLast: 0`) — and from the two, the bytes
 * a detailed run and a summary run cost, per run and per row, and what 20,000 such runs would take
 * with the default `detailLast` (200), against GitHub Pages' 1 GB. Sizes, not times: the load of
 * the machine does not change them. The report's script and style are the site's shared files
 * (`assets/`, written once), so a detailed run's report holds its data only.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { ROOT } from './lib.mjs';
import { freshRepo, isolateGitEnv, makeWorkspace, publish } from './publish-lib.mjs';

const { site, DEFAULT_DETAIL_LAST, PAGES_SITE_LIMIT } = await import(join(ROOT, 'dist/site/build.js'));
const { REPORT_ASSETS } = await import(join(ROOT, 'dist/report/template.js'));
const RUNS = Number(process.env.SITE_SIZE_RUNS ?? 6);
const ROWS = Number(process.env.SITE_SIZE_ROWS ?? 100);
const TARGET = 20_000;

const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;

/**
 * A built site's bytes: `shared` — what the site holds once whatever its runs (the page, the
 * report's shared script and style, the trends and flaky answers, bounded by their windows of the
 * newest runs) — and `perRuns`, everything else (each run's files, its comparison, its listing
 * line, the build's manifest naming them), which grows with the runs.
 */
async function split(out) {
  const SHARED = ['index.html', 'assets/', 'api/trend/', 'api/flaky/'];
  let shared = 0;
  let perRuns = 0;
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else {
        const rel = relative(out, p).split(sep).join('/');
        const size = (await stat(p)).size;
        if (SHARED.some((s) => rel === s || rel.startsWith(s))) shared += size;
        else perRuns += size;
      }
    }
  };
  await walk(out);
  return { shared, perRuns };
}

export async function run() {
  isolateGitEnv();
  const work = await mkdtemp(join(tmpdir(), 'agentv-site-size-'));
  try {
    const repo = await freshRepo(work, 'repo');
    for (let i = 0; i < RUNS; i++) {
      const ws = await makeWorkspace(work, { rows: ROWS, turns: 4, seed: 11 + i, minute: i, experiment: 'bench' });
      await publish({ run: ws.dir, cwd: repo });
    }
    const full = await site({ cwd: repo, out: join(work, 'full'), detailLast: RUNS });
    const summary = await site({ cwd: repo, out: join(work, 'summary'), detailLast: 0 });
    // What grows with the runs, per run; what the site holds once is counted once.
    const fullSplit = await split(join(work, 'full'));
    const summarySplit = await split(join(work, 'summary'));
    const detailedRun = fullSplit.perRuns / RUNS;
    const summaryRun = summarySplit.perRuns / RUNS;
    const projected = fullSplit.shared + DEFAULT_DETAIL_LAST * detailedRun + (TARGET - DEFAULT_DETAIL_LAST) * summaryRun;
    const allDetailed = fullSplit.shared + TARGET * detailedRun;
    const markdown = `## Static site size (\`site\`, bench/site-size.bench.mjs)

${RUNS} runs of ${ROWS} tests with transcripts (synthetic rows, 4 turns each), one branch, built with full detail for every run and
then as summaries only (\`--detail-last 0\`). \`SITE_SIZE_RUNS=<n> SITE_SIZE_ROWS=<n> npm run bench -- site-size\`. Sizes, not times: the
machine's load does not change them. The report's script and style are written once under \`assets/\` (${kb(
      REPORT_ASSETS.reduce((n, a) => n + Buffer.byteLength(a.text), 0),
    )} for the site, not in each run's report).

| | site | held once | a run | a row | largest file |
|---|---:|---:|---:|---:|---:|
| full detail (tests, transcripts, report, compare) | ${mb(full.bytes)} | ${kb(fullSplit.shared)} | ${kb(detailedRun)} | ${kb(detailedRun / ROWS)} | ${kb(full.budget.largest_file)} |
| summary (the run and its test table) | ${mb(summary.bytes)} | ${kb(summarySplit.shared)} | ${kb(summaryRun)} | ${kb(summaryRun / ROWS)} | ${kb(summary.budget.largest_file)} |

"Held once": the page, the report's shared script and style, the trends and flaky answers (over
the newest runs of each series: they do not grow with the history); "a run": every other byte (the
run's files, its comparison, its listing line, its entries in the build's manifest) over the runs.
Extrapolated to ${TARGET.toLocaleString('en')} such runs (held once, plus a run's bytes times the runs):
every run in full detail **${mb(allDetailed)}**; with the default \`--detail-last ${DEFAULT_DETAIL_LAST}\` **${mb(projected)}**, ${(
      (projected / PAGES_SITE_LIMIT) * 100
    ).toFixed(0)}% of GitHub Pages' 1 GB.
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export const optIn = true;
