/**
 * Issue 25's Dashboard figures, in headless Chromium (scripts/chromium.mjs), each a ratio of a
 * blank page's first contentful paint measured in the same run (a one-paragraph page from a
 * loopback server: what any page costs to show here):
 *
 *  - first contentful paint and first run rows, 3,000 runs on the live branch (target < 1 s);
 *  - the same on 100,000 runs after the archive policy (200 live, 100,000 in month archives;
 *    bench/archive-lib.mjs seedArchivedState), and the time to open an archived run by its URL
 *    (target < 2 s);
 *  - compare of two 3,000-test runs (two targets each) opened by URL, until the table is in the
 *    DOM: warm (the server has both runs) and cold (first request, pulls both) (target < 1 s);
 *  - opening a test whose transcript is 1 MB on the local artifacts branch, from the run's page:
 *    click to the transcript on screen, payload read, checked and projected on first open
 *    (a fresh server each sample) (target < 300 ms).
 *
 * Medians of BENCH_RUNS fresh browser contexts (default 5) after one warm-up.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blankServer, paint as paintMedian } from './dashboard-paint.mjs';
import { fmtMs, fmtRatio, median, ROOT } from './lib.mjs';
import { exportRun, freshRepo, isolateGitEnv, makeWorkspace, publish, seedRuns } from './publish-lib.mjs';
import { seedArchivedState } from './archive-lib.mjs';
import { rng, syntheticRow } from './synthetic.mjs';
import { CHROMIUM_ARGS, chromiumExecutable } from '../scripts/chromium.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LAUNCH = { executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS };

async function withConfig(dir) {
  await mkdir(join(dir, '.agentv'), { recursive: true });
  await writeFile(join(dir, '.agentv', 'config.yaml'), 'results:\n  path: .\n  branch: agentv/results/v1\n');
  return dir;
}

/** First contentful paint (and ready time), median of RUNS after one warm-up (bench/dashboard-paint.mjs). */
const paint = (browser, url, selector) => paintMedian(browser, url, selector, RUNS);

/** A run of one test whose transcript is about `bytes` (many assistant turns with tool calls). */
async function bigTranscriptRun(parent, bytes) {
  const dir = await mkdtemp(join(parent, 'ws-big-'));
  const r = rng(5);
  const row = syntheticRow(r, 0, { turns: 1, targets: ['model-a'] });
  const turn = row.output[0];
  const turns = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const t = { ...turn, content: `${i}: ${turn.content} `.repeat(8) };
    size += JSON.stringify(t).length;
    turns.push(t);
  }
  row.output = turns;
  row.timestamp = new Date(Date.UTC(2026, 1, 1, 9)).toISOString();
  await writeFile(join(dir, 'results.jsonl'), `${JSON.stringify(row)}\n`);
  const res = await exportRun({ source: join(dir, 'results.jsonl'), out: join(dir, 'run'), experiment: 'transcript', cwd: dir });
  return { dir: res.outDir, runId: res.runId, testId: row.test_id, target: row.target, size, turns: turns.length };
}

export async function run() {
  isolateGitEnv();
  const { startServer } = await import(join(ROOT, 'dist/serve/index.js'));
  const { chromium } = await import('playwright-core');
  const work = await mkdtemp(join(tmpdir(), 'bench-dashboard-'));
  const browser = await chromium.launch(LAUNCH);
  const out = {};
  try {
    const blank = await blankServer();
    try {
      out.blank = await paint(browser, blank.url, null);
    } finally {
      await blank.close();
    }
    const template = await makeWorkspace(work, { rows: 6, seed: 3, turns: 1 });

    // 3,000 runs live.
    const live = await withConfig(await freshRepo(work, 'live'));
    await seedRuns(live, template, { count: 3000, days: 30, experiment: 'bench' });
    let s = await startServer({ cwd: live });
    try {
      out.live = await paint(browser, `${s.url}/`, '#runs-body tr');
      out.liveTotal = (await (await fetch(`${s.url}/api/runs?limit=1`)).json()).total;
    } finally {
      await s.close();
    }

    // 100,000 runs archived by the policy, 200 live.
    const arch = await withConfig(await freshRepo(work, 'archived'));
    const state = await seedArchivedState(arch, template, { archived: 100_000, live: 200, perDay: 250, lastDay: 500 });
    s = await startServer({ cwd: arch });
    try {
      out.archived = await paint(browser, `${s.url}/`, '#runs-body tr');
      const listing = await (await fetch(`${s.url}/api/runs?limit=1`)).json();
      out.archivedTotal = listing.total;
      // An archived run, opened by its URL: the oldest day's first run.
      const oldest = await (await fetch(`${s.url}/api/runs?limit=1&offset=${listing.total - 1}`)).json();
      const id = oldest.runs[0]?.run_id;
      out.archivedRun = id ? await paint(browser, `${s.url}/#/runs/${encodeURIComponent(id)}`, 'body[data-run-loaded]') : null;
      out.archivedWhere = oldest.runs[0]?.where ?? null;
      out.months = state.months;
    } finally {
      await s.close();
    }

    // Compare of two 3,000-test runs with two targets each.
    const cmp = await withConfig(await freshRepo(work, 'compare'));
    const a = await makeWorkspace(work, { rows: 6000, seed: 11, day: 40, turns: 1 });
    const b = await makeWorkspace(work, { rows: 6000, seed: 12, day: 41, turns: 1 });
    for (const ws of [a, b]) await publish({ run: ws.dir, cwd: cmp, push: false });
    s = await startServer({ cwd: cmp });
    try {
      const url = `${s.url}/#/compare?baseline=${encodeURIComponent(a.runId)}&candidate=${encodeURIComponent(b.runId)}`;
      const t0 = performance.now();
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(url, { waitUntil: 'commit' });
      await page.locator('body[data-compare-loaded]').waitFor({ state: 'attached', timeout: 300_000 });
      out.compareCold = performance.now() - t0;
      out.compareRows = await page.locator('#compare-body tr').count();
      out.compareMatched = Number(await page.locator('[data-stat="matched"] .v').textContent());
      await ctx.close();
      out.compare = await paint(browser, url, 'body[data-compare-loaded]');
    } finally {
      await s.close();
    }

    // A 1 MB transcript on the local artifacts branch.
    const tr = await withConfig(await freshRepo(work, 'transcript'));
    const big = await bigTranscriptRun(work, 1024 * 1024);
    await publish({ run: big.dir, cwd: tr, push: false });
    const opens = [];
    const mores = [];
    let turns = 0;
    let moreTurns = 0;
    for (let i = 0; i < RUNS + 1; i++) {
      s = await startServer({ cwd: tr });
      const ctx = await browser.newContext();
      try {
        const page = await ctx.newPage();
        await page.goto(`${s.url}/#/runs/${encodeURIComponent(big.runId)}`);
        await page.locator('body[data-run-loaded]').waitFor({ state: 'attached', timeout: 60_000 });
        const link = page.locator(`#tests-body tr[data-test="${big.testId}"] a`);
        const t0 = performance.now();
        await link.click();
        await page.locator('body[data-test-loaded]').waitFor({ state: 'attached', timeout: 60_000 });
        const ms = performance.now() - t0;
        turns = await page.locator('#test-transcript .msg-turn').count();
        if (i > 0) opens.push(ms);
        // The next part of the transcript, by its button (payloads already read: projection only).
        await page.click('#test-tab-transcript');
        await page.locator('#test-more').waitFor({ state: 'visible', timeout: 60_000 });
        const t1 = performance.now();
        await page.click('#test-more');
        await page.locator('body[data-test-more-loaded]').waitFor({ state: 'attached', timeout: 60_000 });
        if (i > 0) mores.push(performance.now() - t1);
        moreTurns = (await page.locator('#test-transcript .msg-turn').count()) - turns;
      } finally {
        await ctx.close();
        await s.close();
      }
    }
    out.transcript = median(opens);
    out.transcriptBytes = big.size;
    out.transcriptTurns = turns;
    out.transcriptMore = median(mores);
    out.transcriptMoreTurns = moreTurns;
    out.transcriptTotalTurns = big.turns;
  } finally {
    await browser.close();
    await rm(work, { recursive: true, force: true });
  }

  const base = out.blank.fcp;
  const ok = (v, limit) => (v < limit ? '✓' : '✗');
  const rows = [
    `| blank page (baseline): first contentful paint | ${fmtMs(base)} | 1.00x | |`,
    `| ${out.liveTotal.toLocaleString('en-US')} live runs: first contentful paint | ${fmtMs(out.live.fcp)} | ${fmtRatio(out.live.fcp / base)} | < 1 s ${ok(out.live.fcp, 1000)} |`,
    `| ${out.liveTotal.toLocaleString('en-US')} live runs: first run rows in the DOM | ${fmtMs(out.live.ready)} | ${fmtRatio(out.live.ready / base)} | |`,
    `| ${out.archivedTotal.toLocaleString('en-US')} runs, archive policy applied (200 live, ${out.months} month archives): first contentful paint | ${fmtMs(out.archived.fcp)} | ${fmtRatio(out.archived.fcp / base)} | < 2 s ${ok(out.archived.fcp, 2000)} |`,
    `| the same: first run rows in the DOM | ${fmtMs(out.archived.ready)} | ${fmtRatio(out.archived.ready / base)} | |`,
    out.archivedRun
      ? `| the same: an archived run (${out.archivedWhere}) opened by its URL, until its tests are shown | ${fmtMs(out.archivedRun.ready)} | ${fmtRatio(out.archivedRun.ready / base)} | |`
      : '| the same: no archived run was listed | | | ✗ |',
    `| compare of two 3,000-test runs (2 targets: ${out.compareMatched.toLocaleString('en-US')} matched pairs, the first ${out.compareRows} rows shown) by URL, warm: table in the DOM | ${fmtMs(out.compare.ready)} | ${fmtRatio(out.compare.ready / base)} | < 1 s ${ok(out.compare.ready, 1000)} |`,
    `| the same, cold (first request: both runs pulled from the branch) | ${fmtMs(out.compareCold)} | ${fmtRatio(out.compareCold / base)} | |`,
    `| open a test with a ${(out.transcriptBytes / 1024 / 1024).toFixed(1)} MB transcript (local artifacts branch, first open): click to transcript shown (its first part: ${out.transcriptTurns} of ${out.transcriptTotalTurns} turns, the page's size cap) | ${fmtMs(out.transcript)} | ${fmtRatio(out.transcript / base)} | < 300 ms ${ok(out.transcript, 300)} |`,
    `| the same test: "Show more messages" to the next part shown (${out.transcriptMoreTurns} more turns) | ${fmtMs(out.transcriptMore)} | ${fmtRatio(out.transcriptMore / base)} | |`,
  ];
  const markdown = `## Dashboard views (issue 25)

Headless Chromium against \`serve\` on loopback. Baseline: the first contentful paint of a blank one-paragraph page from a loopback server, measured in the same run.
Medians of ${RUNS} fresh browser contexts after one warm-up (the cold compare is one sample). Branches seeded with one fast-import (bench/publish-lib.mjs, bench/archive-lib.mjs); the compare and transcript runs are published with \`publish\`.

| measure | median | ratio to blank | target |
|---|---|---|---|
${rows.join('\n')}
`;
  return { markdown };
}
