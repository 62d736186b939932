/**
 * `report` end to end: results JSONL -> `export` (CLI) -> `report` (CLI) -> the HTML opened in
 * real headless Chromium, both from file:// and through page.setContent. One browser per file.
 *
 * The hostile run is written by the test itself, so the XSS checks run without ../shared; the
 * real AgentV fixtures are covered when they are present.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRun } from '../src/runs/export/export.js';
import { generateReport } from '../src/report/generate.js';
import { runCli } from './helpers/cli.js';
import { describeWithFixtures, fixtureFiles } from './helpers/fixtures.js';
import { launchChromium } from './helpers/browser.js';

let browser: Browser;
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'report-browser-'));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

interface Watch {
  dialogs: string[];
  requests: string[];
  blocked: string[];
  errors: string[];
}

interface Opened {
  page: Page;
  context: BrowserContext;
  watch: Watch;
}

/** Open a report and record every dialog, request, aborted remote load and console error. */
async function openReport(path: string, how: 'file' | 'content', transform: (html: string) => string = (h) => h): Promise<Opened> {
  const context = await browser.newContext();
  const watch: Watch = { dialogs: [], requests: [], blocked: [], errors: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (/^(file|data|about):/.test(url)) return route.continue();
    watch.blocked.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on('dialog', (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => watch.requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') watch.errors.push(m.text());
  });
  page.on('pageerror', (e) => watch.errors.push(e.message));
  if (how === 'file') await page.goto(pathToFileURL(path).href);
  else await page.setContent(transform(await readFile(path, 'utf8')), { waitUntil: 'load' });
  await page.waitForSelector('html[data-ready="true"]', { timeout: 15_000 });
  return { page, context, watch };
}

function expectQuiet(o: Opened, path: string, how: 'file' | 'content'): void {
  expect(o.watch.dialogs).toEqual([]);
  expect(o.watch.errors).toEqual([]);
  expect(o.watch.blocked).toEqual([]);
  // The document itself is the only request a file:// load makes; setContent makes none.
  expect(o.watch.requests).toEqual(how === 'file' ? [pathToFileURL(path).href] : []);
}

async function statText(page: Page, key: string): Promise<string> {
  return ((await page.locator(`[data-stat="${key}"] .v`).textContent()) ?? '').trim();
}

const asNumber = (text: string) => Number(text.replace(/[,%$]/g, ''));

/** The summary cards agree with summary.json, and the table holds every test. */
async function expectCountsMatch(page: Page, summary: Record<string, number>): Promise<void> {
  for (const key of ['total', 'passed', 'failed', 'errors'] as const) expect(asNumber(await statText(page, key)), key).toBe(summary[key]);
  expect(asNumber(await statText(page, 'pass_rate'))).toBeCloseTo(summary.pass_rate! * 100, 1);
  const info = (await page.locator('#page-info').textContent()) ?? '';
  expect(info).toContain(`of ${summary.total!.toLocaleString('en-US')}`);
  expect(await page.locator('tr.test-row').count()).toBe(Math.min(100, summary.total!));
}

async function exportAndReport(source: string, name: string, extra: string[] = []) {
  const runDir = join(tmp, name);
  const exported = await runCli(['export', source, '--out', runDir, '--json']);
  expect(exported.code, exported.stderr).toBe(0);
  const reported = await runCli(['report', runDir, '--json', ...extra]);
  expect(reported.code, reported.stderr).toBe(0);
  const result = JSON.parse(reported.stdout) as { out: string; tests: number; bytes: number; warnings: string[] };
  const summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')) as Record<string, number>;
  return { runDir, result, summary, stderr: reported.stderr };
}

/**
 * The same two steps through the library, for the fixture loop: the CLI path of export and report
 * is covered above and in export-e2e; here the subject is the page each real fixture gives.
 */
async function exportAndReportInProcess(source: string, name: string) {
  const runDir = join(tmp, name);
  await exportRun({ source, out: runDir });
  const result = await generateReport({ run: runDir });
  const summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')) as Record<string, number>;
  return { runDir, result, summary };
}

// ---- the hostile run -------------------------------------------------------------------

const PAYLOADS = [
  '<script>alert("script")</script>',
  '</script><script>alert("close")</script>',
  '"><img src=x onerror=alert("img")>',
  "'><svg onload=alert('svg')>",
  '<a href="javascript:alert(\'link\')">click me</a>',
  'javascript:alert("bare")',
  '<!-- <script>alert("comment")</script>',
  '<iframe src="https://example.com/frame"></iframe>',
  '<img src="https://example.com/pixel.png">',
  '<base href="https://evil.example/">',
  '<style>body{display:none}</style>',
  'separators\u2028line\u2029paragraph',
];
const ALL = PAYLOADS.join('\n');
const SECRET = 'sk-proj-TOPSECRETTOPSECRET1234';

function hostileRows(): object[] {
  const base = { timestamp: '2026-03-01T10:00:00.000Z', suite: 'security' };
  return [
    {
      ...base,
      test_id: 'xss-<img src=x onerror=alert("id")>',
      target: '"><img src=x onerror=alert("target")>',
      score: 0.4,
      execution_status: 'quality_failure',
      input: [{ role: 'user', content: `Please echo: ${ALL}` }],
      output: [
        {
          role: 'assistant',
          content: ALL,
          tool_calls: [{ tool: '<script>alert("tool")</script>', input: { cmd: PAYLOADS[1] }, output: PAYLOADS[2], duration_ms: 12 }],
        },
      ],
      assertions: [
        { text: PAYLOADS[0], passed: false, evidence: PAYLOADS[2] },
        { text: 'plain check', passed: true, evidence: PAYLOADS[4] },
      ],
      scores: [{ name: PAYLOADS[3], type: '<b>llm_grader</b>', score: 0.4, verdict: 'fail" onmouseover="alert(1)', reasoning: PAYLOADS[6] }],
      file_changes: `--- a/x.html\n+++ b/x.html\n@@ -1 +1 @@\n-${PAYLOADS[0]}\n+${PAYLOADS[2]}\n`,
    },
    {
      ...base,
      test_id: 'leaky-test',
      target: 'model-a',
      score: 1,
      input: 'What is in the config?',
      output: `Found ${SECRET} in /home/alice/project/.env`,
      assertions: [{ text: 'answers the question', passed: true }],
    },
    {
      ...base,
      test_id: 'huge-output',
      target: 'model-a',
      score: 0.9,
      input: 'Write a lot',
      output: 'A'.repeat(60_000),
      assertions: [{ text: 'writes a lot', passed: true, evidence: 'it did' }],
    },
    {
      ...base,
      test_id: 'crashed',
      target: 'model-a',
      score: 0,
      execution_status: 'execution_error',
      error: 'provider timeout <script>alert("error")</script>',
    },
  ];
}

describe('report of a hostile run (no ../shared needed)', () => {
  let run: Awaited<ReturnType<typeof exportAndReport>>;
  beforeAll(async () => {
    const src = join(tmp, 'hostile.jsonl');
    await writeFile(
      src,
      hostileRows()
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    run = await exportAndReport(src, 'hostile');
  });

  it('writes <run>/report.html atomically and prints { out, tests, bytes, warnings }', async () => {
    expect(run.result.out).toBe(join(run.runDir, 'report.html'));
    expect(run.result.tests).toBe(4);
    const html = await readFile(run.result.out);
    expect(run.result.bytes).toBe(html.length);
    expect((await readdir(run.runDir)).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('warns about secrets and local paths by test id, never printing the secret', () => {
    const text = run.result.warnings.join('\n');
    expect(text).toMatch(/API key.*1 test: leaky-test/);
    expect(text).toMatch(/local path.*leaky-test/);
    expect(text).toMatch(/truncated/);
    expect(run.stderr).toContain('warning: report data contains');
    expect(run.stderr + run.result.warnings.join('')).not.toContain('TOPSECRET');
    expect(run.stderr).not.toContain('alice');
  });

  for (const how of ['file', 'content'] as const) {
    it(`runs none of the payloads and shows them as text (${how === 'file' ? 'file://' : 'setContent'})`, async () => {
      const o = await openReport(run.result.out, how);
      try {
        const { page } = o;
        await expectCountsMatch(page, run.summary);
        const row = page.locator('tr.test-row', { hasText: 'xss-' });
        await row.click();
        const detail = page.locator('tr.detail-row');
        await detail.locator('details.io').first().waitFor();
        for (const summary of await detail.locator('details.io > summary').all()) await summary.click();
        await detail.locator('details.tool > summary').first().waitFor();
        // Tool calls are nested collapsibles: open those too, now that the output is built.
        for (const summary of await detail.locator('details.tool > summary').all()) await summary.click();
        await detail.locator('details.tool pre').first().waitFor();
        const text = (await detail.textContent()) ?? '';
        for (const p of PAYLOADS) expect(text, p).toContain(p);
        expect(await page.locator('tr.test-row td', { hasText: '"><img src=x onerror=alert("target")>' }).first().isVisible()).toBe(true);
        // Every assertion of the row, with its mark and evidence, though no grader owns either (the
        // grading.json tree holds the one grader alone); the grader is listed by name apart from them.
        const items = detail.locator('ul.asserts li');
        expect(await items.first().isVisible()).toBe(true);
        expect(await items.locator('.text').allTextContents()).toEqual([PAYLOADS[0], 'plain check']);
        expect(await items.locator('.mark').allTextContents()).toEqual(['✗', '✓']);
        expect(await items.locator('.evidence').allTextContents()).toEqual([PAYLOADS[2], PAYLOADS[4]]);
        expect(await detail.locator('ul.asserts li.fail .text').first().textContent()).toBe(PAYLOADS[0]);
        expect(await detail.locator('.badge.type').first().textContent()).toBe('<b>llm_grader</b>');
        expect(await detail.locator('ul.graders > li > strong').allTextContents()).toEqual([PAYLOADS[3]]);
        // Nothing was injected.
        for (const sel of ['img', 'iframe', 'base', 'b', '[onerror]', '[onload]', '[onmouseover]', 'a[href]', 'body style']) {
          expect(await page.locator(sel).count(), sel).toBe(0);
        }
        expect(await page.locator('script').count()).toBe(3);
        expect(await page.locator('meta[http-equiv]').count()).toBe(1);
        expect(await page.locator('body').isVisible()).toBe(true);
        await page.waitForTimeout(100); // give a late onerror/onload the chance to fire
        expectQuiet(o, run.result.out, how);
      } finally {
        await o.context.close();
      }
    });
  }

  it('stays inert even with the CSP removed: the escaping alone holds', async () => {
    const o = await openReport(run.result.out, 'content', (html) => html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, ''));
    try {
      expect(await o.page.locator('meta[http-equiv]').count()).toBe(0);
      await o.page.locator('tr.test-row', { hasText: 'xss-' }).click();
      for (const summary of await o.page.locator('tr.detail-row details.io > summary').all()) await summary.click();
      await o.page.locator('tr.detail-row details.tool > summary').first().waitFor();
      for (const summary of await o.page.locator('tr.detail-row details.tool > summary').all()) await summary.click();
      expect(await o.page.locator('img, iframe, base, [onerror], [onload]').count()).toBe(0);
      await o.page.waitForTimeout(100);
      expectQuiet(o, run.result.out, 'content');
    } finally {
      await o.context.close();
    }
  });

  it('shows errors, and a visible note with the original size for truncated text', async () => {
    const o = await openReport(run.result.out, 'file');
    try {
      const { page } = o;
      await page.locator('tr.test-row', { hasText: 'crashed' }).click();
      expect(await page.locator('tr.detail-row pre.error').textContent()).toBe('provider timeout <script>alert("error")</script>');
      expect(await page.locator('tr.test-row', { hasText: 'crashed' }).locator('.badge').textContent()).toBe('error');
      await page.locator('tr.test-row', { hasText: 'huge-output' }).click();
      const detail = page.locator('tr.detail-row', { hasText: 'writes a lot' });
      await detail.locator('details.io.output > summary').click();
      await detail.locator('.note').first().waitFor();
      expect(await detail.locator('.note').first().textContent()).toContain('truncated (60,000 bytes)');
      expect(((await detail.locator('.msg pre').first().textContent()) ?? '').length).toBe(20_000);
      expectQuiet(o, run.result.out, 'file');
    } finally {
      await o.context.close();
    }
  });

  it('filters, pages and collapses', async () => {
    const o = await openReport(run.result.out, 'file');
    try {
      const { page } = o;
      await page.selectOption('#f-verdict', 'pass');
      expect(await page.locator('tr.test-row').count()).toBe(2);
      await page.selectOption('#f-verdict', '');
      await page.fill('#f-q', 'leaky');
      // (waitForFunction with a string would need eval, which the report's CSP rightly refuses.)
      await expect.poll(() => page.locator('tr.test-row').count()).toBe(1);
      const row = page.locator('tr.test-row');
      await row.click();
      expect(await page.locator('tr.detail-row').count()).toBe(1);
      await row.click();
      expect(await page.locator('tr.detail-row').count()).toBe(0);
      expectQuiet(o, run.result.out, 'file');
    } finally {
      await o.context.close();
    }
  });
});

describe('report command errors and paths', () => {
  it('resolves the run and --out against --dir, accepts index.jsonl, and rejects non-workspaces', async () => {
    const src = join(tmp, 'small.jsonl');
    await writeFile(src, JSON.stringify({ test_id: 'one', score: 1, target: 'm' }) + '\n');
    const runDir = join(tmp, 'small-run');
    expect((await runCli(['export', src, '--out', runDir])).code).toBe(0);
    const r = await runCli(['report', 'index.jsonl', '-o', 'nested/dir/out.html', '-d', runDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(runDir, 'nested/dir/out.html'));
    expect((await readFile(join(runDir, 'nested/dir/out.html'), 'utf8')).startsWith('<!doctype html>')).toBe(true);
    // A results .jsonl names a run too (one resolver for every command): its report is written.
    const fromFile = await runCli(['report', src, '-o', join(tmp, 'from-file.html')]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect((await readFile(join(tmp, 'from-file.html'), 'utf8')).startsWith('<!doctype html>')).toBe(true);
    const empty = join(tmp, 'not-a-run');
    await mkdir(empty, { recursive: true });
    const notRun = await runCli(['report', empty]);
    expect(notRun.code).toBe(2);
    expect(notRun.stderr).toMatch(/not a run workspace/);
    const missing = await runCli(['report', join(tmp, 'nope')]);
    expect(missing.code).toBe(2);
  });
});

// ---- the real AgentV fixtures ------------------------------------------------------------

describeWithFixtures('report of every real AgentV fixture', () => {
  for (const file of fixtureFiles()) {
    const name = basename(file, '.jsonl');
    it(name, async () => {
      const run = await exportAndReportInProcess(file, `fx-${name}`);
      expect(run.result.tests).toBe(run.summary.total);
      const o = await openReport(run.result.out, 'file');
      try {
        const { page } = o;
        await expectCountsMatch(page, run.summary);
        // The first table row is the first manifest row: expanding it lists the row's own assertions
        // (result.json's expectations, what `failures` lists and assertions_summary counts), then its
        // graders by name with their scores (result.json's scores; grading.json: one component each).
        const first = JSON.parse((await readFile(join(run.runDir, 'index.jsonl'), 'utf8')).split('\n')[0]!) as { grading_path: string; result_path: string };
        type Expectation = { text: string; passed: boolean; evidence: string };
        type Grader = { name: string; type: string; score: number };
        const result = JSON.parse(await readFile(join(run.runDir, first.result_path), 'utf8')) as { expectations: Expectation[]; scores: Grader[] };
        const grading = JSON.parse(await readFile(join(run.runDir, first.grading_path), 'utf8')) as { component_results: { assertion: { name?: string } }[] };
        expect(result.expectations.length).toBeGreaterThan(0);
        if (result.scores.length > 0) expect(grading.component_results.map((c) => c.assertion.name)).toEqual(result.scores.map((g) => g.name));
        await page.locator('tr.test-row').first().click();
        const items = page.locator('tr.detail-row ul.asserts li');
        expect(await items.first().isVisible()).toBe(true);
        expect(await items.locator('.text').allTextContents()).toEqual(result.expectations.map((e) => e.text));
        expect(await items.locator('.mark').allTextContents()).toEqual(result.expectations.map((e) => (e.passed ? '✓' : '✗')));
        const graders = page.locator('tr.detail-row .detail > ul.graders > li');
        expect(await graders.locator(':scope > .badge.type').allTextContents()).toEqual(result.scores.map((e) => e.type));
        expect(await graders.locator(':scope > strong').allTextContents()).toEqual(result.scores.map((e) => e.name));
        expectQuiet(o, run.result.out, 'file');
      } finally {
        await o.context.close();
      }
    });
  }

  it('renders transcripts, tool calls and answers (setContent)', async () => {
    const file = fixtureFiles().find((f) => f.includes('trace-analysis'));
    expect(file).toBeDefined();
    const run = await exportAndReport(file!, 'fx-trace-setcontent');
    const o = await openReport(run.result.out, 'content');
    try {
      const { page } = o;
      await expectCountsMatch(page, run.summary);
      await page.locator('tr.test-row', { hasText: 'research-question' }).click();
      const detail = page.locator('tr.detail-row');
      await detail.locator('details.io.output > summary').click();
      await detail.locator('.msg').first().waitFor();
      expect(await detail.locator('.msg').count()).toBe(4);
      const tools = detail.locator('details.tool > summary');
      expect(await tools.first().textContent()).toBe('tool call: WebSearch (2.1 s)');
      await tools.first().click();
      await detail.locator('details.tool pre').first().waitFor();
      expect(await detail.locator('details.tool pre').first().textContent()).toContain('latest findings on topic');
      expect(await page.locator('#chart-targets .bar-row').count()).toBe(2);
      expect(await page.locator('#groups-table tbody tr').count()).toBe(1);
      expectQuiet(o, run.result.out, 'content');
    } finally {
      await o.context.close();
    }
  });
});
