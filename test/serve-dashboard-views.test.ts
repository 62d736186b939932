/**
 * The Dashboard's views opened by URL in real headless Chromium, against real repositories with a
 * bare remote: a run, a test's grading and transcript (its payloads read from the artifacts
 * branch on demand), a comparison of two runs with two targets each (target picker, swap, the
 * API's warnings), a trend; the back button; and the states a new user meets — an empty
 * repository, a filter that matches nothing, a run too large to show at once, a payload no branch
 * holds, an unreachable remote, and `serve` outside a git repository.
 *
 * Every figure the page shows is compared with the API's answer for the same view.
 * DASHBOARD_SCREENSHOTS=<dir> also writes one PNG per view (docs/images/ in the README).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/publish/publish.js';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';
import { launchChromium, openWatched, type WatchedPage } from './helpers/browser.js';

let restore: () => void;
let user: UserRepoFixture;
let server: RunningServer;
let browser: Browser;
const runs: RunWorkspace[] = [];
let big: RunWorkspace;
const SHOTS = process.env.DASHBOARD_SCREENSHOTS;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  await mkdir(join(user.work, '.agentv'), { recursive: true });
  // Rows alternate model-a / model-b: every run has two targets.
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 12, seed: 1 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 1, minute: 5, rows: 12, seed: 3 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 3, minute: 7, rows: 10, seed: 9 }));
  big = await makeRunWorkspace({ experiment: 'big', day: 2, minute: 1, rows: 250, seed: 4 });
  for (const r of [...runs, big]) await publish({ run: r.dir, cwd: user.work, push: true });
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

const open = (base: string, hash: string): Promise<Opened> => openWatched(browser, `${base}/${hash}`, { width: 1280, height: 900 });

const poll = <T>(fn: () => Promise<T>, timeout = 30_000) => expect.poll(fn, { timeout, interval: 100 });
const api = async (path: string, base = server.url) => (await (await fetch(base + path)).json()) as Record<string, any>;
const enc = encodeURIComponent;
const pct = (x: number) => `${(Math.round(x * 1000) / 10).toFixed(1)}%`;
const hashOf = async (page: Page) => new URL(page.url()).hash;
const text = (t: any) => (typeof t === 'string' ? t : t.head);

async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

describe('the Dashboard by URL', () => {
  it('opens a run, then a test: its assertions, answer and transcript come from the artifacts branch; back returns to the run', async () => {
    const id = runs[1]!.runId;
    const { page, errors, dialogs } = await open(server.url, `#/runs/${enc(id)}`);
    await poll(() => page.textContent('#run-title')).toBe(id);
    const detail = await api(`/api/runs/${enc(id)}`);
    expect(await page.textContent('[data-stat="pass_rate"] .v')).toBe(pct(detail.run.pass_rate));
    expect(await page.$$eval('#tests-body tr', (t) => t.length)).toBe(detail.tests.length);
    await shot(page, 'run');

    // The payloads are not in the server's copy of the run until the test is opened.
    const t = detail.tests.find((x: any) => x.target === 'model-b')!;
    await page.click(`#tests-body tr[data-test="${t.test_id}"][data-target="model-b"] a`);
    await poll(() => hashOf(page)).toBe(`#/runs/${enc(id)}/tests/${enc(t.test_id)}?target=model-b`);
    await page.waitForSelector('body[data-test-loaded]');
    const one = await api(`/api/runs/${enc(id)}/tests/${enc(t.test_id)}?target=model-b`);
    expect(one.missing).toEqual([]);
    expect(one.detail.messages.length).toBeGreaterThan(0);
    expect(one.detail.assertions.length).toBeGreaterThan(0);
    // Grading: one item per assertion, pass/fail as recorded, with its evidence.
    const items = await page.$$eval('#test-grading ul.assertions li', (li) => li.map((x) => ({ passed: x.getAttribute('data-passed'), text: x.textContent })));
    expect(items.map((x) => x.passed)).toEqual(one.detail.assertions.map((a: any) => String(a.passed)));
    for (const [i, a] of one.detail.assertions.entries()) expect(items[i]!.text).toContain(text(a.text));
    // The transcript tab, by its link: every message, in order.
    await page.click('#test-tab-transcript');
    await poll(() => hashOf(page)).toContain('tab=transcript');
    expect(await page.isVisible('#test-transcript')).toBe(true);
    expect(await page.isVisible('#test-grading')).toBe(false);
    const turns = await page.$$eval('#test-transcript .msg-turn', (m) => m.map((x) => x.getAttribute('data-role')));
    expect(turns).toEqual(one.detail.messages.map((m: any) => m.role));
    expect(await page.textContent('#test-transcript')).toContain(text(one.detail.messages[0].content).slice(0, 200));
    await shot(page, 'transcript');

    // Back: the grading tab, then the run without the test panel.
    await page.goBack();
    await poll(() => page.isVisible('#test-grading')).toBe(true);
    await page.goBack();
    await poll(() => page.isHidden('#test-detail')).toBe(true);
    expect(await page.textContent('#run-title')).toBe(id);
    // Reloading a test's URL opens the same test and tab.
    await page.goto(`${server.url}/#/runs/${enc(id)}/tests/${enc(t.test_id)}?target=model-b&tab=transcript`);
    await poll(() => page.$$eval('#test-transcript .msg-turn', (m) => m.length)).toBe(one.detail.messages.length);
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('the full report of a published run includes the transcripts, as the local report does', async () => {
    const id = runs[0]!.runId;
    const detail = await api(`/api/runs/${enc(id)}`);
    const t = detail.tests[0];
    const one = await api(`/api/runs/${enc(id)}/tests/${enc(t.test_id)}?target=${enc(t.target)}`);
    const html = await (await fetch(`${server.url}/api/runs/${enc(id)}/report`)).text();
    const first = text(one.detail.messages[0].content).slice(0, 120);
    expect(first.length).toBeGreaterThan(20);
    expect(html).toContain(JSON.stringify(first).slice(1, -1));
  }, 60_000);

  it('compares two runs with two targets: the older is the baseline, the target picker and swap are in the URL, the figures are the API’s', async () => {
    const [a, b] = [runs[0]!.runId, runs[2]!.runId];
    const { page, errors } = await open(server.url, `#/runs`);
    await page.waitForSelector('#runs-body tr');
    // Tick the newer run first: the page still makes the older one the baseline.
    await page.check(`#runs-body tr[data-run="${b}"] input[type=checkbox]`);
    await page.check(`#runs-body tr[data-run="${a}"] input[type=checkbox]`);
    await page.click('#compare-btn');
    await poll(() => hashOf(page)).toBe(`#/compare?runs=${enc(`${b},${a}`)}`);
    await page.waitForSelector('body[data-compare-loaded]');
    expect(await page.textContent('#compare-title')).toBe(`${a} (baseline) → ${b} (candidate)`);
    const stats = async () => ({
      wins: await page.textContent('[data-stat="wins"] .v'),
      losses: await page.textContent('[data-stat="losses"] .v'),
      rows: await page.$$eval('#compare-body tr', (t) => t.length),
    });
    const expected = (c: any) => ({ wins: String(c.summary.wins), losses: String(c.summary.losses), rows: c.matched.length });
    const all = await api(`/api/compare?runs=${enc(`${b},${a}`)}`);
    expect(all.sources.baseline.source).toBe(a);
    await poll(stats).toEqual(expected(all));
    for (const w of all.warnings) expect(await page.textContent('#compare-warnings')).toContain(w);
    // The rule line says which rule matched the rows, as the API words it.
    expect(all.match_note).toMatch(/^Matched per \(test id, target\)/);
    expect(await page.textContent('#compare-rule')).toBe(all.match_note);
    expect(await page.$$eval('#compare-target option', (o) => o.map((x) => x.textContent))).toEqual(['all targets', 'model-a', 'model-b']);
    // One target.
    await page.selectOption('#compare-target', 'model-b');
    await poll(() => hashOf(page)).toBe(`#/compare?runs=${enc(`${b},${a}`)}&target=model-b`);
    const onlyB = await api(`/api/compare?runs=${enc(`${b},${a}`)}&target=model-b`);
    await poll(stats).toEqual(expected(onlyB));
    await shot(page, 'compare');
    // Swap: the candidate becomes the baseline, the target stays.
    await page.click('#compare-swap');
    await poll(() => hashOf(page)).toBe(`#/compare?baseline=${enc(b)}&candidate=${enc(a)}&target=model-b`);
    const swapped = await api(`/api/compare?baseline=${enc(b)}&candidate=${enc(a)}&target=model-b`);
    await poll(stats).toEqual(expected(swapped));
    await poll(() => page.textContent('#compare-title')).toBe(`${b} (baseline) → ${a} (candidate)`);
    // Back: the comparison before the swap.
    await page.goBack();
    await poll(stats).toEqual(expected(onlyB));
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('opens a trend by URL: one chart row per series, dates on the x axis, red marks exactly where the API flags a regression', async () => {
    const { page, errors } = await open(server.url, '#/trends?experiment=nightly&by=target');
    await page.waitForSelector('body[data-trend-loaded]');
    const trend = await api('/api/trend?experiment=nightly&by=target');
    const name = (s: any) => `${s.experiment ?? 'all experiments'} × ${s.target ?? 'all targets'}`;
    const sections = await page.$$eval('#trend-charts section.series', (s) => s.map((x) => x.getAttribute('data-series')));
    // The API's series, in the API's order (most recent first, then the longer).
    expect(sections).toEqual(trend.series.map(name));
    expect(trend.series.map((s: any) => s.target).sort()).toEqual(['model-a', 'model-b']);
    for (const s of trend.series) {
      const sel = `#trend-charts section.series[data-series="${name(s)}"]`;
      expect(await page.$$eval(`${sel} [data-metric="pass_rate"] circle`, (c) => c.length)).toBe(s.runs.length);
      const flagged = s.runs.filter((p: any) => p.regression === true).map((p: any) => p.run_id);
      expect(await page.$$eval(`${sel} [data-metric="mean_score"] circle.regression`, (c) => c.map((x) => x.getAttribute('data-run')))).toEqual(flagged);
      // Cost and duration carry no regression mark: the rule judges scores.
      expect(
        await page.$$eval(`${sel} [data-metric="cost_usd"] circle.regression, ${sel} [data-metric="duration_ms"] circle.regression`, (c) => c.length),
      ).toBe(0);
      const dates = await page.$$eval(`${sel} [data-metric="pass_rate"] text.date`, (t) => t.map((x) => x.textContent));
      expect(dates[0]).toBe(s.runs[0].timestamp.slice(0, 10));
      expect(dates.at(-1)).toBe(s.runs.at(-1).timestamp.slice(0, 10));
      expect(await page.getAttribute(sel, 'data-direction')).toBe(s.summary.direction);
    }
    expect(await page.inputValue('#t-by')).toBe('target');
    expect(await page.inputValue('#t-experiment')).toBe('nightly');
    await shot(page, 'trend');
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('pages a run too large to show at once, and says when a filter matches nothing', async () => {
    const { page } = await open(server.url, `#/runs/${enc(big.runId)}`);
    await poll(() => page.textContent('#run-title')).toBe(big.runId);
    expect(await page.$$eval('#tests-body tr', (t) => t.length)).toBe(100);
    expect(await page.textContent('#tests-pager')).toContain('page 1 of 3');
    await page.click('#tests-pager a:last-child');
    await poll(() => hashOf(page)).toBe(`#/runs/${enc(big.runId)}?page=2`);
    await poll(() => page.textContent('#tests-pager')).toContain('tests 101–200 of 250');
    await page.goto(`${server.url}/#/runs/${enc(big.runId)}?page=3`);
    await poll(() => page.$$eval('#tests-body tr', (t) => t.length)).toBe(50);
    // A comparison of 250 (test, target) pairs: 200 rows a page.
    const self = `#/compare?baseline=${enc(big.runId)}&candidate=${enc(big.runId)}`;
    await page.goto(`${server.url}/${self}`);
    await poll(() => page.$$eval('#compare-body tr', (t) => t.length)).toBe(200);
    expect(await page.textContent('#compare-pager')).toContain('page 1 of 2');
    await page.click('#compare-pager a:last-child');
    await poll(() => hashOf(page)).toBe(`${self}&page=2`);
    await poll(() => page.$$eval('#compare-body tr', (t) => t.length)).toBe(50);
    expect(await page.textContent('[data-stat="matched"] .v')).toBe('250');
    await page.goto(`${server.url}/#/runs?experiment=nightly&tag=no-such-tag`);
    await poll(() => page.textContent('#runs-empty')).toContain('No run matches these filters');
    expect(await page.$$eval('#runs-body tr', (t) => t.length)).toBe(0);
    expect(await page.inputValue('#f-tag')).toBe('no-such-tag');
    await page.context().close();
  }, 120_000);

  it('fetches a test’s payloads from the remote when this clone does not have them', async () => {
    const id = runs[2]!.runId;
    // As on a machine that fetched the results branch only: no artifacts branch here, the remote has it.
    const onRemote = (await git(user.remote, ['rev-parse', 'refs/heads/agentv/artifacts/v1'])).trim();
    await git(user.work, ['update-ref', '-d', 'refs/heads/agentv/artifacts/v1']);
    await git(user.work, ['update-ref', '-d', 'refs/remotes/origin/agentv/artifacts/v1']).catch(() => '');
    const detail = await api(`/api/runs/${enc(id)}`);
    const t = detail.tests[0];
    const { page, errors } = await open(server.url, `#/runs/${enc(id)}/tests/${enc(t.test_id)}?target=${enc(t.target)}&tab=transcript`);
    await poll(() => page.textContent('#test-msg')).toBe('payloads fetched from the remote');
    expect(await page.$$eval('#test-transcript .msg-turn', (m) => m.length)).toBeGreaterThan(0);
    expect((await git(user.work, ['rev-parse', 'refs/remotes/origin/agentv/artifacts/v1'])).trim()).toBe(onRemote);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('says which payload is missing when no artifacts branch holds it', async () => {
    const id = runs[2]!.runId;
    // Another machine's run whose artifacts never reached the remote: drop the branch everywhere.
    await git(user.remote, ['update-ref', '-d', 'refs/heads/agentv/artifacts/v1']);
    await git(user.work, ['update-ref', '-d', 'refs/heads/agentv/artifacts/v1']);
    await git(user.work, ['update-ref', '-d', 'refs/remotes/origin/agentv/artifacts/v1']).catch(() => '');
    const detail = await api(`/api/runs/${enc(id)}`);
    const t = detail.tests[1];
    const { page, errors } = await open(server.url, `#/runs/${enc(id)}/tests/${enc(t.test_id)}?target=${enc(t.target)}&tab=transcript`);
    await poll(() => page.textContent('#test-msg')).toMatch(/not on the artifacts branch/);
    const one = await api(`/api/runs/${enc(id)}/tests/${enc(t.test_id)}?target=${enc(t.target)}`);
    expect(one.missing.length).toBeGreaterThan(0);
    for (const m of one.missing) expect(await page.textContent('#test-msg')).toContain(m.path);
    // The grading is metadata: still shown.
    expect(await page.$$eval('#test-grading ul.assertions li', (li) => li.length)).toBe(one.detail.assertions.length);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 120_000);
});

describe('the Dashboard on a new repository', () => {
  it('shows an empty repository as such, with Sync off when there is no remote', async () => {
    const repo = await makeTempDir('agentv-empty');
    await git(repo, ['init', '-q', '-b', 'main']);
    await git(repo, ['commit', '-q', '--allow-empty', '-m', 'init']);
    const empty = await startServer({ cwd: repo });
    try {
      const { page, errors } = await open(empty.url, '');
      await poll(() => page.textContent('#runs-empty')).toContain('No runs on agentv/results/v1 yet');
      expect(await page.textContent('#runs-empty')).toContain('no remote to sync with');
      await poll(() => page.isDisabled('#sync-btn')).toBe(true);
      expect(errors).toEqual([]);
      await page.context().close();
    } finally {
      await empty.close();
    }
  }, 120_000);

  it('shows an unreachable remote on Sync and keeps listing the local runs', async () => {
    const other = await makeUserRepo();
    const run = await makeRunWorkspace({ experiment: 'offline', rows: 4, seed: 2 });
    await publish({ run: run.dir, cwd: other.work, push: false });
    // A port nothing listens on (bound, then closed): connection refused.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    await git(other.work, ['remote', 'set-url', 'origin', `git://127.0.0.1:${port}/remote.git`]);
    const srv = await startServer({ cwd: other.work });
    try {
      const { page } = await open(srv.url, '');
      await page.waitForSelector(`#runs-body tr[data-run="${run.runId}"]`);
      await poll(() => page.isEnabled('#sync-btn')).toBe(true);
      await page.click('#sync-btn');
      await poll(() => page.textContent('#remote-msg'), 60_000).toMatch(/sync blocked/);
      expect(await page.$$eval('#runs-body tr', (t) => t.length)).toBe(1);
      await page.context().close();
    } finally {
      await srv.close();
    }
  }, 120_000);

  it('serve refuses to start outside a git repository, with one line', async () => {
    const dir = await makeTempDir('agentv-nogit');
    const err = await startServer({ cwd: dir, env: { ...process.env, GIT_CEILING_DIRECTORIES: join(dir, '..') } }).then(
      () => null,
      (e: Error & { cliExitCode?: number }) => e,
    );
    expect(err).not.toBeNull();
    expect(err!.message).toMatch(/^not a git repository: /);
    expect(err!.message).not.toContain('\n');
    expect(err!.cliExitCode).toBe(2);
  }, 60_000);
});
