/**
 * The static history site (`agentv-results site`) in real headless Chromium, served by a plain
 * static file server on 127.0.0.1 under a sub-path (`/team/site/`, as GitHub Pages serves a
 * project site): the runs list and its filters, a run and its report, a test's answer and
 * transcript, compare, trends, deep links opened fresh, a rebuild after one new run that rewrites
 * only the changed files, and hostile run data kept inert.
 */
import { createServer, type Server } from 'node:http';
import { lstat, mkdir, readdir, readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, relative, sep } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng, syntheticRow } from '../bench/synthetic.mjs';
import { siteFile } from '../src/model/site-paths.js';
import { exportRun } from '../src/runs/export/export.js';
import { publish } from '../src/publish/publish.js';
import { site } from '../src/site/index.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';
import { launchChromium, openWatched } from './helpers/browser.js';
import { runCli } from './helpers/cli.js';

const HOSTILE_TEST = '../../../escape</script><img src=x onerror=alert(1)>';
const HOSTILE_TARGET = '</script><script>alert(2)</script>';
const HOSTILE_TEXT = '</script><script>alert(3)</script> the answer';
const MOUNT = '/team/site/';

let restore: () => void;
let user: UserRepoFixture;
let browser: Browser;
let out: string;
let server: Server;
let base: string;
const requests: { path: string; status: number }[] = [];
const runs: RunWorkspace[] = [];
let hostile: RunWorkspace;

async function hostileRun(): Promise<RunWorkspace> {
  const dir = await makeTempDir('agentv-site-xss');
  const r = rng(13);
  const rows = [0, 1].map((i) => {
    const row = syntheticRow(r, i, { turns: 1 }) as Record<string, unknown>;
    row.test_id = `${HOSTILE_TEST}${i}`;
    row.target = i === 1 ? HOSTILE_TARGET : 'model-a';
    row.answer = HOSTILE_TEXT;
    (row.output as Record<string, unknown>[])[0]!.content = HOSTILE_TEXT;
    row.timestamp = new Date(Date.UTC(2026, 2, 20, 8, 0, i)).toISOString();
    return JSON.stringify(row);
  });
  await writeFile(join(dir, 'r.jsonl'), rows.join('\n') + '\n');
  const res = await exportRun({ source: join(dir, 'r.jsonl'), out: join(dir, 'run'), experiment: 'hostile', cwd: dir });
  return { dir: res.outDir ?? join(dir, 'run'), runId: res.runId };
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.js': 'text/javascript',
  '.css': 'text/css',
};

/** A static host: files of `out` under MOUNT, nothing else (no index fallback, no server logic). */
function startStatic(): Promise<Server> {
  const s = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const done = (status: number, body: Buffer | string, type = 'text/plain') => {
      requests.push({ path, status });
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (!path.startsWith(MOUNT)) return done(404, 'not found');
    const rel = normalize(path.slice(MOUNT.length) || 'index.html');
    if (rel.startsWith('..')) return done(404, 'not found');
    const file = join(out, rel.endsWith(sep) || rel === '.' ? join(rel, 'index.html') : rel);
    readFile(file).then(
      (b) => done(200, b, TYPES[extname(file)] ?? 'application/octet-stream'),
      () => done(404, 'not found'),
    );
  });
  return new Promise((ok) => s.listen(0, '127.0.0.1', () => ok(s)));
}

async function files(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else found.set(relative(out, p).split(sep).join('/'), (await stat(p)).ino);
    }
  };
  await walk(dir);
  return found;
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  await mkdir(join(user.work, '.agentv'), { recursive: true });
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 6, seed: 1 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 1, minute: 5, rows: 6, seed: 3 }));
  runs.push(await makeRunWorkspace({ experiment: 'smoke', day: 2, minute: 9, rows: 2, seed: 5 }));
  hostile = await hostileRun();
  for (const r of [...runs, hostile]) await publish({ run: r.dir, cwd: user.work });
  out = join(await makeTempDir('agentv-site-out'), 'public');
  const built = await runCli(['site', '--out', out, '--json'], { cwd: user.work });
  expect(built.code, built.stderr).toBe(0);
  const json = JSON.parse(built.stdout);
  expect(json.runs).toBe(4);
  expect(json.files_written).toBeGreaterThan(10);
  expect(json.warnings).toEqual([]);
  server = await startStatic();
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${MOUNT}`;
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok(null)));
  restore();
  await cleanupTempDirs();
});

const poll = <T>(fn: () => Promise<T>, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });
const site_ = async (rel: string) => JSON.parse(await readFile(join(out, rel), 'utf8'));

describe('the static site in Chromium, under a sub-path', () => {
  it('lists every run newest first and filters by experiment and target, reading only site files', async () => {
    const { page, errors, foreign } = await openWatched(browser, base);
    await page.waitForSelector('#runs-body tr');
    const ids = () => page.$$eval('#runs-body tr', (trs) => trs.map((tr) => tr.getAttribute('data-run')));
    expect(await ids()).toEqual([hostile, runs[2]!, runs[1]!, runs[0]!].map((r) => r.runId));
    expect(await page.textContent('#runs-count')).toContain('of 4 matching runs');
    await page.selectOption('#f-experiment', 'nightly');
    await poll(ids).toEqual([runs[1]!.runId, runs[0]!.runId]);
    await page.selectOption('#f-experiment', '');
    await page.selectOption('#f-target', HOSTILE_TARGET);
    await poll(ids).toEqual([hostile.runId]);
    // Read-only: no remote panel, no sync, tag or feedback controls on screen.
    for (const id of ['#remote', '#sync-btn', '#tag-add', '#fb-save']) expect(await page.isVisible(id)).toBe(false);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    // Every request stayed under the mount and found its file.
    expect(requests.filter((r) => !r.path.startsWith(MOUNT) || r.status !== 200)).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('opens a run by its link, fresh, with its figures, tests and report', async () => {
    const id = runs[1]!.runId;
    const { page, errors } = await openWatched(browser, `${base}#/runs/${encodeURIComponent(id)}`);
    await poll(() => page.textContent('#run-title')).toBe(id);
    const detail = await site_(siteFile(`/runs/${encodeURIComponent(id)}`));
    expect(await page.textContent('[data-stat="mean_score"] .v')).toBe(detail.summary.mean_score.toFixed(3));
    expect(await page.$$eval('#tests-body tr', (t) => t.length)).toBe(detail.tests.length);
    const report = await page.getAttribute('#run-report', 'href');
    const res = await fetch(new URL(report!, base));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(id);
    expect(errors).toEqual([]);
    await page.context().close();
    // The report's script and style are the site's shared files, not inline in each report: it still
    // fills its test table (the script ran under its policy) and is styled (the stylesheet applied).
    const shared = (await files(join(out, 'assets'))).size;
    expect(shared).toBe(2);
    expect(html).not.toMatch(/<script>|<style>/);
    expect(html).toMatch(/<script src="[^"]*assets\/report-[0-9a-f]{16}\.js" integrity="sha256-/);
    const opened = await openWatched(browser, new URL(report!, base).href);
    await poll(() => opened.page.$$eval('#tests-body tr', (t) => t.length)).toBe(detail.tests.length);
    expect(
      await opened.page.$eval(
        '.stat',
        (e) => (globalThis as unknown as { getComputedStyle(x: unknown): { borderRadius: string } }).getComputedStyle(e).borderRadius,
      ),
    ).toBe('8px');
    expect(opened.errors).toEqual([]);
    expect(opened.foreign).toEqual([]);
    await opened.page.context().close();
  }, 120_000);

  it('opens a test’s answer and transcript by their links', async () => {
    const id = runs[0]!.runId;
    const detail = await site_(siteFile(`/runs/${encodeURIComponent(id)}`));
    const t = detail.tests[0];
    const link = `${base}#/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(t.test_id)}?target=${encodeURIComponent(t.target)}&tab=transcript`;
    const { page, errors } = await openWatched(browser, link);
    await page.waitForSelector('#test-transcript .msg-turn');
    const test = await site_(siteFile(`/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(t.test_id)}?target=${encodeURIComponent(t.target)}`));
    expect(test.detail.messages.length).toBeGreaterThan(0);
    expect(await page.$$eval('#test-transcript .msg-turn', (m) => m.length)).toBe(test.detail.messages.length);
    await page.click('#test-tab-answer');
    await poll(() => page.isVisible('#test-answer')).toBe(true);
    expect((await page.textContent('#test-answer'))!.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('compares a run with the one before it, and says so for a pair it does not hold', async () => {
    const [a, b] = [runs[0]!.runId, runs[1]!.runId];
    const { page } = await openWatched(browser, `${base}#/compare?runs=${encodeURIComponent(b)},${encodeURIComponent(a)}`);
    await page.waitForSelector('#compare-body tr');
    const cmp = await site_(siteFile(`/compare?runs=${encodeURIComponent(a)},${encodeURIComponent(b)}`));
    expect(cmp.sources.baseline.source).toBe(a);
    expect(await page.textContent('[data-stat="wins"] .v')).toBe(String(cmp.summary.wins));
    expect(await page.$$eval('#compare-body tr', (t) => t.length)).toBe(cmp.matched.length);
    await page.goto(`${base}#/compare?runs=${encodeURIComponent(a)},${encodeURIComponent(runs[2]!.runId)}`);
    await poll(() => page.textContent('#compare-msg')).toContain('not compared on this site');
    await page.context().close();
  }, 120_000);

  it('lands on what a deep link names: a test’s transcript and a compare are in view once the page has loaded above them', async () => {
    // A short window: the listing and the run's tests above the linked element are taller than it.
    const viewport = { width: 1000, height: 360 };
    const inView = (page: import('playwright-core').Page, sel: string) =>
      page.$eval(sel, (e) => {
        const r = e.getBoundingClientRect();
        return r.top >= -1 && r.top < e.ownerDocument.documentElement.clientHeight && r.bottom > 0;
      });
    const id = runs[1]!.runId;
    const t = (await site_(siteFile(`/runs/${encodeURIComponent(id)}`))).tests.at(-1);
    const link = `${base}#/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(t.test_id)}?target=${encodeURIComponent(t.target)}&tab=transcript`;
    const test = await openWatched(browser, link, viewport);
    await test.page.waitForSelector('#test-transcript .msg-turn');
    await test.page.waitForSelector('#tests-body tr');
    await test.page.waitForSelector('#runs-body tr');
    await poll(() => inView(test.page, '#test-detail')).toBe(true);
    expect(await test.page.$eval('html', (h) => h.scrollTop)).toBeGreaterThan(0);
    expect(test.errors).toEqual([]);
    await test.page.context().close();
    const [a, b] = [runs[0]!.runId, runs[1]!.runId];
    const cmp = await openWatched(browser, `${base}#/compare?runs=${encodeURIComponent(a)},${encodeURIComponent(b)}`, viewport);
    await cmp.page.waitForSelector('#compare-body tr');
    await cmp.page.waitForSelector('#runs-body tr');
    await poll(() => inView(cmp.page, '#compare-view')).toBe(true);
    expect(cmp.errors).toEqual([]);
    await cmp.page.context().close();
  }, 120_000);

  it('has no "Where" column: every run of the site is a copy of the branch', async () => {
    const { page } = await openWatched(browser, base);
    await page.waitForSelector('#runs-body tr');
    expect(await page.isVisible('#runs-table th.where')).toBe(false);
    expect(
      await page.$$eval('#runs-body td.where', (cells) => cells.filter((c) => (c as unknown as { offsetParent: unknown }).offsetParent !== null).length),
    ).toBe(0);
    await page.context().close();
  }, 60_000);

  it('opens Trends with a series for every experiment, and explains an empty chart without command-line flags', async () => {
    const { page, errors } = await openWatched(browser, `${base}#/trends`);
    await page.waitForSelector('section.series');
    const perExperiment = await site_(siteFile('/trend?by=experiment'));
    expect(perExperiment.series.length).toBeGreaterThan(0);
    expect(await page.$$eval('section.series', (s) => s.map((x) => x.getAttribute('data-series')))).toEqual(
      perExperiment.series.map((x: { experiment: string }) => `${x.experiment} × all targets`),
    );
    expect(await page.inputValue('#t-by')).toBe('experiment');
    // Pooled over experiments that share no test: no chart, and why, in words.
    await page.selectOption('#t-by', 'none');
    await poll(async () => (await page.$$('section.series')).length > 0 || /No chart/.test((await page.textContent('#trend-charts')) ?? '')).toBe(true);
    expect(await page.textContent('#view-trends')).not.toMatch(/--[a-z]/);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('charts the trends per target', async () => {
    const { page, errors } = await openWatched(browser, `${base}#/trends?by=target`);
    await page.waitForSelector('section.series');
    const trend = await site_(siteFile('/trend?by=target'));
    expect(trend.series.length).toBeGreaterThan(0);
    expect(await page.$$eval('section.series', (s) => s.length)).toBe(trend.series.length);
    await page.selectOption('#t-experiment', 'nightly');
    await poll(() => page.$$eval('section.series', (s) => s.length)).toBe((await site_(siteFile('/trend?by=target&experiment=nightly'))).series.length);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('says a run it does not hold is not on the site', async () => {
    const { page } = await openWatched(browser, `${base}#/runs/no-such-run`);
    await poll(() => page.textContent('#view-runs')).toContain('run no-such-run is not on this site');
    await page.context().close();
  }, 60_000);

  it('keeps hostile test ids, targets and answers inert, and every file inside the site', async () => {
    const { page, dialogs, errors } = await openWatched(browser, `${base}#/runs/${encodeURIComponent(hostile.runId)}`);
    await page.waitForSelector('#tests-body tr');
    expect(await page.$$eval('#tests-body tr td:first-child', (t) => t.map((x) => x.textContent))).toContain(`${HOSTILE_TEST}0`);
    await page.click('#tests-body tr:first-child a');
    await page.waitForSelector('#test-grading, #test-transcript');
    await poll(() => page.textContent('#test-title')).toContain(HOSTILE_TEST);
    await page.click('#test-tab-transcript');
    await poll(() => page.textContent('#test-transcript')).toContain(HOSTILE_TEXT);
    expect(await page.$$('#test-detail img, #test-detail script, #tests-body img')).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    const root = await realpath(out);
    for (const f of (await files(out)).keys()) {
      expect((await realpath(join(out, f))).startsWith(root + sep)).toBe(true);
      expect(f.split('/').some((s) => s === '..' || s === '.')).toBe(false);
    }
    await page.context().close();
  }, 120_000);

  it('after one new run, a rebuild rewrites only the files that changed, and the page shows the run', async () => {
    const before = await files(out);
    const extra = await makeRunWorkspace({ experiment: 'nightly', day: 10, minute: 2, rows: 6, seed: 21 });
    await publish({ run: extra.dir, cwd: user.work });
    const res = await site({ cwd: user.work, out });
    expect(res.runs).toBe(5);
    expect(res.runsBuilt).toBe(1);
    expect(res.warnings).toEqual([]);
    const after = await files(out);
    const rewritten = [...after].filter(([f, ino]) => before.get(f) !== ino).map(([f]) => f);
    // The manifest is always written; every other rewritten file is counted.
    expect(rewritten.filter((f) => f !== '.agentv-site.json').length).toBe(res.filesWritten);
    const mine = `api/runs/${siteFile(`/runs/${encodeURIComponent(extra.runId)}`).split('/')[2]}/`;
    const expected = (f: string) =>
      f.startsWith(mine) ||
      f.startsWith('api/catalog/') ||
      f.startsWith('api/compare/') ||
      f.startsWith('api/trend/') ||
      f.startsWith('api/flaky/') ||
      f === '.agentv-site.json';
    expect(rewritten.filter((f) => !expected(f))).toEqual([]);
    expect(rewritten.some((f) => f.startsWith(mine))).toBe(true);
    // No file of an earlier run was touched.
    for (const r of [...runs, hostile]) {
      const dir = `api/runs/${siteFile(`/runs/${encodeURIComponent(r.runId)}`).split('/')[2]}/`;
      expect(rewritten.filter((f) => f.startsWith(dir))).toEqual([]);
    }
    expect(res.filesUnchanged).toBeGreaterThan(res.filesWritten);
    const again = await site({ cwd: user.work, out });
    expect([again.filesWritten, again.filesRemoved, again.runsBuilt]).toEqual([0, 0, 0]);
    const { page } = await openWatched(browser, base);
    await poll(() => page.getAttribute('#runs-body tr:first-child', 'data-run')).toBe(extra.runId);
    await page.context().close();
  }, 180_000);

  it('refuses an --out that is a file, a link, or a directory it did not build', async () => {
    const dir = await makeTempDir('agentv-site-refuse');
    await writeFile(join(dir, 'file'), 'keep me');
    await mkdir(join(dir, 'foreign'));
    await writeFile(join(dir, 'foreign', 'notes.txt'), 'keep me');
    await symlink(out, join(dir, 'link'));
    for (const target of ['file', 'foreign', 'link']) {
      const r = await runCli(['site', '--out', join(dir, target)], { cwd: user.work });
      expect(r.code, target).toBe(2);
    }
    expect(await readFile(join(dir, 'file'), 'utf8')).toBe('keep me');
    expect(await readdir(join(dir, 'foreign'))).toEqual(['notes.txt']);
    expect((await lstat(join(dir, 'link'))).isSymbolicLink()).toBe(true);
  }, 60_000);
});
