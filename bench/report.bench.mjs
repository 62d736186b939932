/**
 * `report` figures on a 10,000-test run (synthetic, 1 assistant turn per test, exported first):
 * - generation time of `agentv-results report` (a fresh process, median of 5) as a ratio of a
 *   fresh process that only reads index.jsonl and JSON.parses each row (the floor for any
 *   command that looks at every test);
 * - the HTML size, against index.jsonl and the source results file;
 * - in headless Chromium (median of 5, fresh context each): first contentful paint (target
 *   under 2 s), time until the first table rows exist, and the first expansion of a test (which
 *   parses the lazily read details island).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CHROMIUM_ARGS, chromiumExecutable } from '../scripts/chromium.mjs';
import { CLI, firstContentfulPaint, fmtMs, fmtRatio, median, runMeasured } from './lib.mjs';
import { writeSyntheticResults } from './synthetic.mjs';

const ROWS = 10_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LAUNCH = { executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS };

const BASELINE = `
import { readFileSync } from 'node:fs';
let n = 0;
for (const line of readFileSync(process.argv[2], 'utf8').split('\\n')) if (line.trim()) { JSON.parse(line); n++; }
if (n === 0) process.exit(1);
`;

const mb = (bytes) => `${(bytes / 1048576).toFixed(1)} MB`;

async function browserFigures(file) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch(LAUNCH);
  const fcp = [];
  const rows = [];
  const expand = [];
  try {
    for (let i = 0; i < RUNS + 1; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const t0 = performance.now();
      await page.goto(pathToFileURL(file).href, { waitUntil: 'commit' });
      await page.locator('tr.test-row').first().waitFor({ timeout: 60_000 });
      const rowsMs = performance.now() - t0;
      // Evaluated over CDP, which the report's CSP (no eval) does not apply to.
      const paint = await page.evaluate(firstContentfulPaint);
      await page.waitForLoadState('load');
      const t1 = performance.now();
      await page.locator('tr.test-row').first().click();
      await page.locator('tr.detail-row ul.asserts li').first().waitFor();
      const expandMs = performance.now() - t1;
      await context.close();
      if (i === 0) continue; // warm-up: the first launch pays for disk cache and compilation
      fcp.push(paint);
      rows.push(rowsMs);
      expand.push(expandMs);
    }
  } finally {
    await browser.close();
  }
  return { fcp: median(fcp), rows: median(rows), expand: median(expand), fcpSamples: fcp };
}

export async function run() {
  const work = await mkdtemp(join(tmpdir(), 'bench-report-'));
  try {
    const source = join(work, 'results.jsonl');
    await writeSyntheticResults(source, { rows: ROWS, turns: 1, seed: 7 });
    const runDir = join(work, 'run');
    await runMeasured(process.execPath, [CLI, 'export', source, '--out', runDir]);
    const indexPath = join(runDir, 'index.jsonl');
    const baselineScript = join(work, 'parse-index.mjs');
    await writeFile(baselineScript, BASELINE);
    const out = join(work, 'report.html');

    // Interleave baseline and report runs so that load on the shared machine hits both alike.
    const baseMs = [];
    const reportMs = [];
    const rss = [];
    for (let i = 0; i < RUNS + 1; i++) {
      const b = await runMeasured(process.execPath, [baselineScript, indexPath]);
      const r = await runMeasured(process.execPath, [CLI, 'report', runDir, '--out', out]);
      if (i === 0) continue;
      baseMs.push(b.ms);
      reportMs.push(r.ms);
      rss.push(r.peakRssMb);
    }
    const [html, index, src] = await Promise.all([stat(out), stat(indexPath), stat(source)]);
    const b = await browserFigures(out);

    const ratio = median(reportMs) / median(baseMs);
    const markdown = `## report

A ${ROWS.toLocaleString('en-US')}-test run (synthetic: 2 targets, 1 assistant turn with tool calls per test, exported first).
Times are medians of ${RUNS} runs after one warm-up; each CLI run is a fresh process, each browser run a fresh context.

| measure | median | ratio | target |
|---|---|---|---|
| baseline: fresh process reads index.jsonl and JSON.parses every row | ${fmtMs(median(baseMs))} | 1.00x | |
| \`agentv-results report\` (reads ${ROWS.toLocaleString('en-US')} × grading/transcript/answer sidecars, writes the HTML) | ${fmtMs(median(reportMs))} | **${fmtRatio(ratio)}** | |
| peak RSS of \`report\` | ${median(rss)?.toFixed(0)} MB | | |
| HTML size | ${mb(html.size)} | ${fmtRatio(html.size / index.size)} of index.jsonl (${mb(index.size)}), ${fmtRatio(html.size / src.size)} of the results file (${mb(src.size)}) | |
| Chromium: first contentful paint | ${fmtMs(b.fcp)} | | < 2 s ${b.fcp < 2000 ? '✓' : '✗'} |
| Chromium: first table rows in the DOM (from navigation) | ${fmtMs(b.rows)} | | |
| Chromium: first expansion of a test (parses the details island) | ${fmtMs(b.expand)} | | |
`;
    return { markdown };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
