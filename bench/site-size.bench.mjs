/**
 * The static site's size (docs/site.md "Size"): SITE_SIZE_RUNS runs (default 6) of SITE_SIZE_ROWS
 * tests each (default 100; synthetic rows with 4-turn transcripts, bench/publish-lib.mjs
 * makeWorkspace) published to one branch and built twice — every run with full detail
 * (`detailLast` = all), then every run as a summary (`detailLast: 0`) — and from the two, the bytes
 * a detailed run and a summary run cost, per run and per row, and what 20,000 such runs would take
 * with the default `detailLast` (200), against GitHub Pages' 1 GB. Sizes, not times: the load of
 * the machine does not change them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';
import { freshRepo, isolateGitEnv, makeWorkspace, publish } from './publish-lib.mjs';

const { site, DEFAULT_DETAIL_LAST, PAGES_SITE_LIMIT } = await import(join(ROOT, 'dist/site/build.js'));
const RUNS = Number(process.env.SITE_SIZE_RUNS ?? 6);
const ROWS = Number(process.env.SITE_SIZE_ROWS ?? 100);
const TARGET = 20_000;

const mb = (b) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;

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
    // Both sites share index.html, the listing and the trends: the difference is what detail costs.
    const detailedRun = full.bytes / RUNS;
    const summaryRun = summary.bytes / RUNS;
    const projected = DEFAULT_DETAIL_LAST * detailedRun + (TARGET - DEFAULT_DETAIL_LAST) * summaryRun;
    const allDetailed = TARGET * detailedRun;
    const markdown = `## Static site size (\`site\`, bench/site-size.bench.mjs)

${RUNS} runs of ${ROWS} tests with transcripts (synthetic rows, 4 turns each), one branch, built with full detail for every run and
then as summaries only (\`--detail-last 0\`). \`SITE_SIZE_RUNS=<n> SITE_SIZE_ROWS=<n> npm run bench -- site-size\`. Sizes, not times: the
machine's load does not change them.

| | site | a run | a row | largest file |
|---|---:|---:|---:|---:|
| full detail (tests, transcripts, report, compare) | ${mb(full.bytes)} | ${kb(detailedRun)} | ${kb(detailedRun / ROWS)} | ${kb(full.budget.largest_file)} |
| summary (the run and its test table) | ${mb(summary.bytes)} | ${kb(summaryRun)} | ${kb(summaryRun / ROWS)} | ${kb(summary.budget.largest_file)} |

Extrapolated to ${TARGET.toLocaleString('en')} such runs (a run's bytes times the runs; the listing, index and trends add little):
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
