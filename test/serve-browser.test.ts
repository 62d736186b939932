/**
 * The Dashboard in real headless Chromium against a real repository and bare remote: it renders
 * the numbers the catalog and summaries hold, its filters narrow the table, Sync from the page
 * moves the remote, hostile run data (test ids, target names, feedback) stays text, it fetches
 * nothing but its own API, and a page on another origin cannot make it write. Runs of the real
 * AgentV client chart with a mark on every chart drawn (a sentence where the runs carry no value).
 */
import { createServer, type Server } from 'node:http';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng, syntheticRow } from '../bench/synthetic.mjs';
import { exportRun } from '../src/runs/export/export.js';
import { publish } from '../src/publish/publish.js';
import { startServer, TOKEN_HEADER, type RunningServer } from '../src/serve/index.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';
import { launchChromium, openWatched, type WatchedPage } from './helpers/browser.js';
import { agentvEval, describeWithAgentV, projectWithRemote } from './helpers/agentv-client.js';
import { runCli } from './helpers/cli.js';
import { siteFile } from '../src/model/site-paths.js';
import { site } from '../src/site/index.js';
import type { TrendSeries } from '../src/serve/api-types.js';

const XSS_ID = '<img src=x onerror=alert(1)>';
const XSS_TARGET = '</script><script>alert(2)</script>';
const XSS_FEEDBACK = '<script>alert(3)</script><b onmouseover=alert(4)>bold</b>';

let restore: () => void;
let user: UserRepoFixture;
let server: RunningServer;
let browser: Browser;
const runs: RunWorkspace[] = [];
let hostile: RunWorkspace;

async function hostileRun(): Promise<RunWorkspace> {
  const dir = await makeTempDir('agentv-xss');
  const r = rng(11);
  const rows = [0, 1, 2].map((i) => {
    const row = syntheticRow(r, i, { turns: 1 }) as Record<string, unknown>;
    row.test_id = `${XSS_ID}${i}`;
    row.target = i === 1 ? XSS_TARGET : 'model-a';
    row.timestamp = new Date(Date.UTC(2026, 2, 20, 8, 0, i)).toISOString();
    return JSON.stringify(row);
  });
  await writeFile(join(dir, 'r.jsonl'), rows.join('\n') + '\n');
  const res = await exportRun({ source: join(dir, 'r.jsonl'), out: join(dir, 'run'), experiment: 'hostile', cwd: dir });
  return { dir: res.outDir ?? join(dir, 'run'), runId: res.runId };
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  await mkdir(join(user.work, '.agentv'), { recursive: true });
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 8, seed: 1 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 1, minute: 5, rows: 8, seed: 3 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 2, minute: 7, rows: 8, seed: 9 }));
  runs.push(await makeRunWorkspace({ experiment: 'smoke', day: 2, minute: 9, rows: 2, seed: 5 }));
  hostile = await hostileRun();
  for (const r of [...runs, hostile]) await publish({ run: r.dir, cwd: user.work, push: true });
  server = await startServer({ cwd: user.work });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  restore();
  await cleanupTempDirs();
});

type Opened = WatchedPage;

async function open(url = server.url + '/'): Promise<Opened> {
  const opened = await openWatched(browser, url);
  await opened.page.waitForSelector('#runs-body tr');
  return opened;
}

/** Waits on the page's state (a function: the page's CSP refuses the eval of a string predicate). */
const poll = <T>(fn: () => Promise<T>, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });

const api = async (path: string) => (await (await fetch(server.url + path)).json()) as Record<string, any>;

describe('the Dashboard in Chromium', () => {
  it('renders every run with the catalog numbers and the remote status', async () => {
    const { page, foreign, errors } = await open();
    const listed = await api('/api/runs');
    const rows = await page.$$eval('#runs-body tr', (trs) =>
      trs.map((tr) => ({ id: tr.getAttribute('data-run'), rate: tr.querySelector('.pass-rate')?.textContent, passed: tr.children[5]?.textContent })),
    );
    expect(rows.map((r) => r.id)).toEqual(listed.runs.map((r: any) => r.run_id));
    for (const [i, r] of listed.runs.entries()) {
      expect(rows[i]!.rate).toBe(`${(Math.round(r.pass_rate * 1000) / 10).toFixed(1)}%`);
      expect(rows[i]!.passed).toBe(`${r.passed}/${r.total}`);
    }
    await poll(() => page.textContent('[data-field="run_count"]')).toBe('5');
    expect(await page.textContent('[data-field="sync_status"]')).toBe('clean');
    expect(await page.textContent('#runs-count')).toContain('of 5 matching runs');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('filters by experiment, target, tag and date', async () => {
    const { page } = await open();
    const ids = () => page.$$eval('#runs-body tr', (trs) => trs.map((tr) => tr.getAttribute('data-run')));
    const count = () => page.locator('#runs-body tr').count();
    await page.selectOption('#f-experiment', 'smoke');
    await poll(ids).toEqual([runs[3]!.runId]);
    await page.selectOption('#f-experiment', '');
    await page.selectOption('#f-target', XSS_TARGET);
    await poll(ids).toEqual([hostile.runId]);
    await page.selectOption('#f-target', '');
    await poll(count).toBe(5);
    await page.fill('#f-since', '2026-03-15');
    await page.fill('#f-until', '2026-03-15');
    await page.dispatchEvent('#f-until', 'change');
    await poll(ids).toEqual([runs[1]!.runId]);
    await page.fill('#f-since', '');
    await page.fill('#f-until', '');
    await page.dispatchEvent('#f-until', 'change');
    await poll(count).toBe(5);
    // Tag a run from its detail view, then filter by that tag.
    await page.click(`#runs-body tr[data-run="${runs[0]!.runId}"] a`);
    await poll(() => page.textContent('#run-title')).toBe(runs[0]!.runId);
    await page.fill('#tag-input', 'release-candidate');
    await page.click('#tag-add');
    await poll(() => page.textContent('#tag-msg')).toBe('saved');
    await page.fill('#f-tag', 'release-candidate');
    await page.dispatchEvent('#f-tag', 'change');
    await poll(ids).toEqual([runs[0]!.runId]);
    const onBranch = await git(user.work, ['show', `refs/heads/agentv/results/v1:${(await api('/api/runs?tag=release-candidate')).runs[0].path}/tags.json`]);
    expect(JSON.parse(onBranch).tags).toEqual(['release-candidate']);
    await page.context().close();
  }, 120_000);

  it('shows a run, compares two, and charts the trend with the right figures', async () => {
    const { page } = await open();
    const id = runs[2]!.runId;
    await page.click(`#runs-body tr[data-run="${id}"] a`);
    await poll(() => page.textContent('#run-title')).toBe(id);
    const detail = await api(`/api/runs/${encodeURIComponent(id)}`);
    expect(await page.textContent('[data-stat="mean_score"] .v')).toBe(detail.summary.mean_score.toFixed(3));
    expect(await page.textContent('[data-stat="pass_rate"] .v')).toBe(`${(Math.round(detail.run.pass_rate * 1000) / 10).toFixed(1)}%`);
    expect(await page.$$eval('#tests-body tr', (t) => t.length)).toBe(8);
    // Leave a note from the page: it lands on the branch and shows beside the test.
    await page.fill('#fb-reviewer', 'ana');
    await page.fill('#fb-text', 'checked by hand');
    await page.click('#fb-save');
    await poll(() => page.textContent('#fb-msg')).toBe('saved');
    await poll(() => page.textContent('#tests-body')).toContain('checked by hand — ana');
    // Compare the first and third nightly runs.
    await page.check(`#runs-body tr[data-run="${runs[0]!.runId}"] input[type=checkbox]`);
    await page.check(`#runs-body tr[data-run="${id}"] input[type=checkbox]`);
    await page.click('#compare-btn');
    await page.waitForSelector('#compare-body tr');
    const cmp = await api(`/api/compare?baseline=${encodeURIComponent(runs[0]!.runId)}&candidate=${encodeURIComponent(id)}`);
    expect(await page.textContent('[data-stat="wins"] .v')).toBe(String(cmp.summary.wins));
    expect(await page.textContent('[data-stat="losses"] .v')).toBe(String(cmp.summary.losses));
    expect(await page.$$eval('#compare-body tr', (t) => t.length)).toBe(cmp.matched.length);
    // Trends.
    await page.click('#tab-trends');
    await page.selectOption('#t-experiment', 'nightly');
    await page.selectOption('#t-by', 'experiment,target');
    await page.waitForSelector('section.series[data-series="nightly × model-a"]');
    const trend = await api('/api/trend?experiment=nightly&by=experiment,target');
    const a = trend.series.find((s: any) => s.target === 'model-a');
    const chartPoints = await page.$$eval('section.series[data-series="nightly × model-a"] [data-metric="pass_rate"] circle', (c) => c.length);
    expect(chartPoints).toBe(a.runs.length);
    const marked = await page.$$eval('section.series [data-metric="mean_score"] circle.regression', (c) => c.length);
    const expected = trend.series.reduce((n: number, s: any) => n + s.runs.filter((p: any) => p.regression).length, 0);
    expect(marked).toBe(expected);
    await page.context().close();
  }, 120_000);

  it('lands on a test’s transcript named by a deep link, in view once the listing and the run’s tests have loaded above it', async () => {
    const id = runs[2]!.runId;
    const detail = await api(`/api/runs/${encodeURIComponent(id)}`);
    const t = detail.tests.at(-1) as { test_id: string; target: string };
    const link = `${server.url}/#/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(t.test_id)}?target=${encodeURIComponent(t.target)}&tab=transcript`;
    const { page, errors } = await openWatched(browser, link, { width: 1000, height: 360 });
    await page.waitForSelector('#test-transcript .msg-turn');
    await page.waitForSelector('#tests-body tr');
    await page.waitForSelector('#runs-body tr');
    const inView = () =>
      page.$eval('#test-detail', (e) => {
        const r = e.getBoundingClientRect();
        return r.top >= -1 && r.top < e.ownerDocument.documentElement.clientHeight && r.bottom > 0;
      });
    await poll(inView).toBe(true);
    expect(await page.$eval('html', (h) => h.scrollTop)).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('keeps hostile test ids, target names and feedback as text', async () => {
    const res = await fetch(`${server.url}/api/runs/${encodeURIComponent(hostile.runId)}/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TOKEN_HEADER]: server.token },
      body: JSON.stringify({ test_id: `${XSS_ID}0`, text: XSS_FEEDBACK, reviewer: '<i>eve</i>', expect_revision: '' }),
    });
    expect(res.status).toBe(200);
    const { page, dialogs, foreign } = await open();
    expect(await page.textContent(`#runs-body tr[data-run="${hostile.runId}"] td:nth-child(5)`)).toContain(XSS_TARGET);
    await page.click(`#runs-body tr[data-run="${hostile.runId}"] a`);
    await page.waitForSelector('#tests-body tr');
    const cells = await page.$$eval('#tests-body tr td:first-child', (t) => t.map((x) => x.textContent));
    expect(cells).toContain(`${XSS_ID}0`);
    expect(await page.textContent('#tests-body')).toContain(XSS_FEEDBACK);
    expect(await page.$$('#tests-body img, #tests-body b, #tests-body script, #runs-body script')).toEqual([]);
    await page.waitForTimeout(200);
    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('syncs from the page: the Sync button pushes a run committed here to the bare remote', async () => {
    const extra = await makeRunWorkspace({ experiment: 'smoke', day: 3, minute: 1, rows: 2, seed: 21 });
    await publish({ run: extra.dir, cwd: user.work, push: false });
    const { page } = await open();
    await poll(() => page.textContent('[data-field="sync_status"]')).toBe('ahead');
    const before = (await git(user.remote, ['rev-parse', 'refs/heads/agentv/results/v1'])).trim();
    await page.click('#sync-btn');
    await poll(() => page.textContent('#remote-msg'), 60_000).toBe('pushed');
    const after = (await git(user.remote, ['rev-parse', 'refs/heads/agentv/results/v1'])).trim();
    expect(after).not.toBe(before);
    expect(after).toBe((await git(user.work, ['rev-parse', 'refs/heads/agentv/results/v1'])).trim());
    expect(await page.textContent('[data-field="sync_status"]')).toBe('clean');
    // The table reloads after the sync: the run is now on both sides.
    await poll(() => page.textContent(`#runs-body tr[data-run="${extra.runId}"] td:last-child`)).toBe('both');
    await page.screenshot({ path: process.env.DASHBOARD_SCREENSHOT ?? join(await makeTempDir('shot'), 'dashboard.png'), fullPage: false });
    await page.context().close();
  }, 120_000);

  it('refuses a POST from a page on another origin', async () => {
    // A second server on another port plays the attacker's site.
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>evil</title>');
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
    const evilPort = (evil.address() as { port: number }).port;
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`http://localhost:${evilPort}/`);
      const target = `${server.url}/api/runs/${encodeURIComponent(runs[1]!.runId)}/tags`;
      const before = await git(user.work, ['rev-parse', 'refs/heads/agentv/results/v1']);
      const outcome = await page.evaluate(async (url) => {
        const simple = await fetch(url, {
          method: 'POST',
          mode: 'no-cors',
          headers: { 'content-type': 'text/plain' },
          body: '{"add":["pwned"],"expect_revision":"x"}',
        }).then(
          () => 'sent',
          (e) => String(e),
        );
        const withToken = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-agentv-results-token': 'guess' },
          body: '{}',
        }).then(
          (r) => `status ${r.status}`,
          () => 'blocked',
        );
        return { simple, withToken };
      }, target);
      expect(outcome.withToken).toBe('blocked'); // the preflight gets no CORS grant
      expect(await git(user.work, ['rev-parse', 'refs/heads/agentv/results/v1'])).toBe(before);
      // And what the server answers such a request directly:
      const direct = await fetch(target, { method: 'POST', headers: { origin: `http://localhost:${evilPort}`, 'content-type': 'text/plain' }, body: '{}' });
      expect(direct.status).toBe(403);
      await page.context().close();
    } finally {
      await new Promise<void>((r) => evil.close(() => r()));
    }
  }, 120_000);
});

/**
 * Runs of the real AgentV 5.x client (its offline sample project, two evals) published with our
 * CLI: AgentV writes no verdict on a test run once and its sample agents report no cost. Every
 * chart the Trends view draws must have marks, and a chart with no value says so in a sentence
 * instead of drawing empty axes — in the Dashboard, and in the static site's data from the same path.
 */
describeWithAgentV('the charts of real AgentV runs', () => {
  let project: string;
  let served: RunningServer;
  let dirs: string[] = [];

  beforeAll(async () => {
    ({ project } = await projectWithRemote(false));
    dirs = [await agentvEval(project, { experiment: 'agentv-demo' }), await agentvEval(project, { experiment: 'agentv-demo' })];
    for (const dir of dirs) {
      const r = await runCli(['publish', dir], { cwd: project });
      expect(r.code, r.stderr).toBe(0);
    }
    served = await startServer({ cwd: project });
  }, 180_000);

  afterAll(async () => {
    await served?.close();
  });

  it('draws marks on every Trends chart per target, and a sentence where the runs carry no such value', async () => {
    const trend = (await (await fetch(`${served.url}/api/trend?by=target`)).json()) as { series: TrendSeries[] };
    expect(trend.series.length).toBe(2);
    const { page, errors } = await openWatched(browser, `${served.url}/#/trends?by=target`);
    await page.waitForSelector('section.series .trend-chart');
    const charts = await page.$$eval('section.series', (secs) =>
      secs.flatMap((sec) =>
        [...sec.querySelectorAll('.trend-chart')].map((c) => ({
          series: sec.getAttribute('data-series'),
          metric: c.getAttribute('data-metric'),
          axes: c.querySelectorAll('svg').length,
          marks: c.querySelectorAll('svg circle.pt').length,
          sentence: c.querySelector('.chart-empty')?.textContent ?? null,
        })),
      ),
    );
    expect(charts.length).toBe(trend.series.length * 4);
    for (const c of charts) {
      const series = trend.series.find((s) => `${s.experiment ?? 'all experiments'} × ${s.target}` === c.series)!;
      const values = series.runs.filter((p) => typeof p[c.metric as 'pass_rate'] === 'number').length;
      // Axes only with a mark per value; no value, no axes but words.
      if (values > 0) expect(c, JSON.stringify(c)).toMatchObject({ axes: 1, marks: values, sentence: null });
      else expect(c, JSON.stringify(c)).toMatchObject({ axes: 0, marks: 0, sentence: expect.stringMatching(/^No /) });
    }
    // A real run's pass rate is there (AgentV's verdict from the score), whatever the cost.
    for (const s of trend.series) for (const p of s.runs) expect(p.pass_rate, s.target ?? '').toEqual(expect.any(Number));
    expect(charts.filter((c) => c.metric === 'pass_rate').every((c) => c.marks === 2)).toBe(true);
    expect(errors).toEqual([]);
    await page.context().close();
    // The static site charts the same points: its trend file is made by the same path.
    const out = join(await makeTempDir('agentv-site-real'), 'public');
    await site({ cwd: project, out });
    const onSite = JSON.parse(await readFile(join(out, siteFile('/trend?by=target')), 'utf8')) as { series: TrendSeries[] };
    expect(onSite.series.map((s) => s.runs.map((p) => p.pass_rate))).toEqual(trend.series.map((s) => s.runs.map((p) => p.pass_rate)));
  }, 120_000);

  it('counts a test’s passes over the runs as AgentV’s own summaries do (flaky, the test page’s history)', async () => {
    // AgentV's verdicts: each run's summary.json, per test and target, passed of total samples.
    const want = new Map<string, { passed: number; total: number }>();
    for (const dir of dirs) {
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as {
        tests: { test_id: string; target: string; passed_samples: number; total_samples: number }[];
      };
      for (const t of summary.tests) {
        const k = `${t.test_id} ${t.target}`;
        const w = want.get(k) ?? { passed: 0, total: 0 };
        want.set(k, { passed: w.passed + t.passed_samples, total: w.total + t.total_samples });
      }
    }
    const flaky = (await (await fetch(`${served.url}/api/flaky?experiment=agentv-demo`)).json()) as {
      tests: { test_id: string; target: string; passed: number; total: number }[];
    };
    expect(new Map(flaky.tests.map((t) => [`${t.test_id} ${t.target}`, { passed: t.passed, total: t.total }]))).toEqual(want);
    // A test can pass in these runs: not every history is a stable fail.
    expect([...want.values()].some((w) => w.passed > 0)).toBe(true);
  });
});
