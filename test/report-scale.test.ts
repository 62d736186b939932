/**
 * A large run: synthetic results (bench/synthetic.mjs) -> `export` -> `report`, opened in headless
 * Chromium. The page must show its first rows and the right counts quickly, render only one page
 * of rows, and build a test's details only when it is expanded.
 *
 * Size: AGENTV_REPORT_SCALE_ROWS (default 500 in `npm test`: five pages of 100, more than the two
 * this test turns and a filter that must find one test among hundreds; 10,000 reproduces the report
 * bench's size, whose timings are in BENCHMARKS.md).
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { launchChromium } from './helpers/browser.js';

const ROWS = Number(process.env.AGENTV_REPORT_SCALE_ROWS || 500);
const fmt = (n: number): string => n.toLocaleString('en-US');
// Exporting 10,000 results writes ~60,000 files: give the shared, 2-core machine room.
const SETUP_MS = 300_000;

type SyntheticModule = { writeSyntheticResults: (path: string, opts: { rows: number; turns: number }) => Promise<number> };

let browser: Browser;
let tmp: string;
let runDir: string;
let report: { out: string; tests: number; bytes: number; warnings: string[] };
let summary: { total: number; passed: number; failed: number; errors: number };
let index: string[];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'report-scale-'));
  const synthetic = (await import(pathToFileURL(join(REPO_ROOT, 'bench/synthetic.mjs')).href)) as SyntheticModule;
  const src = join(tmp, 'results.jsonl');
  expect(await synthetic.writeSyntheticResults(src, { rows: ROWS, turns: 1 })).toBe(ROWS);
  runDir = join(tmp, 'run');
  const exported = await runCli(['export', src, '--out', runDir], { timeoutMs: SETUP_MS });
  expect(exported.code, exported.stderr).toBe(0);
  const reported = await runCli(['report', runDir, '--json'], { timeoutMs: SETUP_MS });
  expect(reported.code, reported.stderr).toBe(0);
  report = JSON.parse(reported.stdout);
  summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8'));
  index = (await readFile(join(runDir, 'index.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { test_id: string }).test_id);
  browser = await launchChromium();
}, SETUP_MS * 2);

afterAll(async () => {
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe(`report of a ${fmt(ROWS)}-test run`, () => {
  it('writes every test, at a size proportional to the data', async () => {
    expect(report.tests).toBe(ROWS);
    expect(report.warnings).toEqual([]);
    expect((await stat(report.out)).size).toBe(report.bytes);
    // About the size of the source results (transcripts included, answer.md not duplicated).
    const source = (await stat(join(tmp, 'results.jsonl'))).size;
    expect(report.bytes).toBeLessThan(source * 1.25);
  });

  it('shows the first rows and the counts, one page at a time, details on demand', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('request', (r) => requests.push(r.url()));
      // How soon the rows appear is measured by bench/report.bench.mjs (BENCHMARKS.md), not asserted here.
      await page.goto(pathToFileURL(report.out).href, { waitUntil: 'commit' });
      const first = page.locator('tr.test-row').first();
      await first.waitFor({ timeout: 20_000 });
      expect(await first.isVisible()).toBe(true);
      expect(await first.locator('td.id').textContent()).toContain('test-0');

      const stat = async (k: string) => Number(((await page.locator(`[data-stat="${k}"] .v`).textContent()) ?? '').replace(/,/g, ''));
      expect(await stat('total')).toBe(summary.total);
      expect(await stat('passed')).toBe(summary.passed);
      expect(await stat('failed')).toBe(summary.failed);
      expect(await stat('errors')).toBe(summary.errors);
      expect(await page.locator('tr.test-row').count()).toBe(100);
      expect(await page.locator('#page-info').textContent()).toBe(`Showing 1–100 of ${fmt(ROWS)}`);
      const firstOfPage1 = await page.locator('tr.test-row td.id').first().textContent();
      // Nothing of the details exists until a row is expanded.
      expect(await page.locator('tr.detail-row').count()).toBe(0);

      await page.locator('#page-next').click();
      await expect.poll(() => page.locator('#page-info').textContent()).toBe(`Showing 101–200 of ${fmt(ROWS)}`);
      expect(await page.locator('tr.test-row').count()).toBe(100);
      expect(await page.locator('tr.test-row td.id').first().textContent()).not.toBe(firstOfPage1);

      await page.locator('tr.test-row').first().click();
      const items = page.locator('tr.detail-row ul.asserts li');
      await items.first().waitFor();
      expect(await items.count()).toBeGreaterThan(1);

      // The last test's id: the rows that carry it (one per target) and nothing else.
      const query = index[index.length - 1]!;
      const matching = index.filter((id) => id === query).length;
      expect(matching).toBeGreaterThan(0);
      await page.fill('#f-q', query);
      await expect.poll(() => page.locator('#page-info').textContent()).toBe(`Showing 1–${matching} of ${fmt(matching)} (filtered from ${fmt(ROWS)})`);
      expect(errors).toEqual([]);
      expect(requests).toEqual([pathToFileURL(report.out).href]);
    } finally {
      await context.close();
    }
  });
});
