/**
 * The Dashboard's states in headless Chromium, against a real repository with a bare remote: a run
 * that does not exist (a typo, an archived run, an expired one — each in its own words, found by
 * the server asking the branch and the archive, with nothing of a previous run left on screen and
 * no report link, tags or feedback form), a test's Answer tab when the answer is also the
 * transcript's last message, the feedback form following the open test, trend axes within the
 * metric's range with regression marks only where the trend rule puts them, and compare naming the
 * (test, target) pairs only one side has.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireRuns } from '../src/archive/retention.js';
import { rollover } from '../src/archive/rollover.js';
import { publish } from '../src/publish/publish.js';
import { exportRun } from '../src/runs/export/export.js';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { launchChromium, openWatched } from './helpers/browser.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

const NOW = new Date('2026-03-20T12:00:00Z');
const AUTHOR = { name: 'Test', email: 'test@example.invalid', date: NOW };

let restore: () => void;
let user: UserRepoFixture;
let server: RunningServer;
let browser: Browser;
const runs: RunWorkspace[] = [];
/** Runs of the `flat` experiment: a constant pass rate while the score falls, and a constant score. */
const flat: string[] = [];
const enc = encodeURIComponent;
const poll = <T>(fn: () => Promise<T>, timeout = 30_000) => expect.poll(fn, { timeout, interval: 100 });
const api = async (path: string): Promise<Record<string, any>> => (await (await fetch(server.url + path)).json()) as Record<string, any>;
const open = (hash: string) => openWatched(browser, `${server.url}/${hash}`, { width: 1280, height: 900 });

/** One run of `flat` from rows given as (test, target, score, verdict), a minute apart from `minute`. */
async function flatRun(day: number, rows: [string, string, number, string][]): Promise<string> {
  const dir = await makeTempDir('agentv-flat');
  const base = Date.UTC(2026, 2, 14 + day, 11, 0);
  const lines = rows.map(([test_id, target, score, verdict], i) =>
    JSON.stringify({
      test_id,
      target,
      score,
      execution_status: verdict === 'pass' ? 'ok' : 'quality_failure',
      timestamp: new Date(base + i * 1000).toISOString(),
      input: [{ role: 'user', content: `question of ${test_id}` }],
      output: [{ role: 'assistant', content: `the answer of ${test_id} on ${target}` }],
      assertions: [{ text: 'answers', passed: verdict === 'pass' }],
    }),
  );
  await writeFile(join(dir, 'results.jsonl'), `${lines.join('\n')}\n`);
  const res = await exportRun({ source: join(dir, 'results.jsonl'), out: join(dir, 'run'), experiment: 'flat', cwd: dir });
  await publish({ run: res.outDir!, cwd: user.work, push: false });
  return res.runId;
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // 2026-03-14 … 03-18, one run a day; the two oldest leave the live branch below.
  for (let d = 0; d < 5; d++) runs.push(await makeRunWorkspace({ experiment: 'nightly', day: d, minute: d, rows: 6, seed: 31 + d }));
  for (const r of runs) await publish({ run: r.dir, cwd: user.work, push: false });
  // Rollover moves the two oldest to their month's archive; retention then removes the oldest.
  await rollover({ cwd: user.work, keepDays: 100_000, keepRuns: 3, now: NOW, author: AUTHOR });
  await expireRuns({ cwd: user.work, keepDays: 5, now: NOW, author: AUTHOR });
  // On target a half the tests pass in every run (a flat 50% pass rate) while the passing ones
  // score lower each time; on target b every run scores a constant 0.917.
  for (const [day, s] of [
    [5, 0.95],
    [6, 0.9],
    [7, 0.85],
  ] as const)
    flat.push(
      await flatRun(day, [
        ['t1', 'a', s, 'pass'],
        ['t2', 'a', 0.2, 'fail'],
        ['t3', 'a', s, 'pass'],
        ['t4', 'a', 0.2, 'fail'],
        ['t1', 'b', 0.917, 'pass'],
        ['t2', 'b', 0.917, 'pass'],
      ]),
    );
  // The newest run drops t3 and t4 on a and adds t5 on b: pairs only one side of a compare has.
  flat.push(
    await flatRun(8, [
      ['t1', 'a', 0.917, 'pass'],
      ['t2', 'a', 0.917, 'pass'],
      ['t1', 'b', 0.917, 'pass'],
      ['t2', 'b', 0.917, 'pass'],
      ['t5', 'b', 0.917, 'pass'],
    ]),
  );
  server = await startServer({ cwd: user.work });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  restore();
  await cleanupTempDirs();
});

/** DASHBOARD_SCREENSHOTS=<dir> also writes a PNG of each state. */
async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (dir) await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

const missingState = (page: Page) => page.getAttribute('#run-missing', 'data-state');
const visible = (page: Page, sel: string) => page.isVisible(sel);

describe('a run that does not exist', () => {
  it('the API says why: a typo and an expired run answer 404 with their own run_state; an archived run is found in the archive', async () => {
    const typo = await api(`/api/runs/${enc('nope-2')}`);
    expect(typo.run_state).toBe('unknown');
    expect(typo.error).toContain('no run nope-2');
    const expired = await api(`/api/runs/${enc(runs[0]!.runId)}`);
    expect(expired.run_state).toBe('expired');
    expect(expired.expired_at).toBe('2026-03-20');
    expect(expired.policy).toBe('keep 5 days, keep tag baseline');
    // A run id that is well formed but was never published here is a typo too.
    const never = await api(`/api/runs/${enc(runs[4]!.runId.replace('2026-03-18', '2026-03-28'))}`);
    expect(never.run_state).toBe('unknown');
    const archived = await api(`/api/runs/${enc(runs[1]!.runId)}`);
    expect(archived.run.archived).toBe('2026-03');
  });

  it('after a run is open, #/runs/nope-2 shows the one "no such run" page: nothing of the previous run, no report link, tags or feedback', async () => {
    const id = runs[4]!.runId;
    const { page, errors } = await open(`#/runs/${enc(id)}`);
    await poll(() => page.textContent('#run-title')).toBe(id);
    await poll(() => page.$$eval('#tests-body tr', (t) => t.length)).toBe(6);
    expect(await visible(page, '#run-report')).toBe(true);

    await page.evaluate("location.hash = '#/runs/nope-2'");
    await poll(() => missingState(page)).toBe('unknown');
    expect(await page.textContent('#run-title')).toBe('nope-2');
    expect(await page.textContent('#run-missing')).toContain('No run nope-2 on agentv/results/v1');
    expect(await page.textContent('#run-missing')).not.toContain('archived');
    await shot(page, 'state-typo');
    // Nothing of the run opened before survives, hidden or not.
    expect(await page.$$eval('#tests-body tr', (t) => t.length)).toBe(0);
    expect(await page.$$eval('#run-stats .stat', (t) => t.length)).toBe(0);
    for (const sel of ['#run-report', '#tag-add', '#fb-save', '#run-stats', '#test-detail']) expect(await visible(page, sel), sel).toBe(false);
    // The browser logs the 404 answer itself; the page threw nothing.
    expect(errors.filter((e) => !e.includes('status of 404'))).toEqual([]);
    await page.close();
  });

  it('opened fresh, an expired run says so in its own words, not a typo’s; an archived run opens in full', async () => {
    const { page } = await open(`#/runs/${enc(runs[0]!.runId)}`);
    await poll(() => missingState(page)).toBe('expired');
    const expiredText = await page.textContent('#run-missing');
    expect(expiredText).toContain('This run was removed by retention on 2026-03-20');
    expect(expiredText).toContain(`agentv-results pull ${runs[0]!.runId}`);
    expect(expiredText).not.toContain('No run');
    await shot(page, 'state-expired');
    for (const sel of ['#run-report', '#tag-add', '#fb-save', '#run-stats']) expect(await visible(page, sel), sel).toBe(false);

    await page.evaluate(`location.hash = '#/runs/${enc(runs[1]!.runId)}'`);
    await poll(() => page.$$eval('#tests-body tr', (t) => t.length)).toBe(6);
    expect(await visible(page, '#run-missing')).toBe(false);
    expect(await visible(page, '#fb-save')).toBe(true);
    await page.close();
  });
});

describe('one test of a run', () => {
  it('the Answer tab shows the answer text even when it is the transcript’s last message', async () => {
    const id = flat[0]!;
    const detail = await api(`/api/runs/${enc(id)}/tests/t1?target=a`);
    expect(detail.detail.answer).toBe('the answer of t1 on a');
    const { page } = await open(`#/runs/${enc(id)}/tests/t1?target=a&tab=answer`);
    await poll(() => page.textContent('#test-answer .pre')).toBe('the answer of t1 on a');
    await poll(() => visible(page, '#test-answer')).toBe(true);
    await shot(page, 'state-answer');
    expect(await visible(page, '#test-grading')).toBe(false);
    await page.close();
  });

  it('the feedback form is about the open test, not the run’s first one', async () => {
    const id = flat[0]!;
    const { page } = await open(`#/runs/${enc(id)}/tests/t3?target=a`);
    await poll(() => page.inputValue('#fb-test')).toBe('t3');
    // Another test opened from the table: the form follows it.
    await page.click('#tests-body tr[data-test="t2"] a');
    await poll(() => page.inputValue('#fb-test')).toBe('t2');
    await page.fill('#fb-reviewer', 'rev');
    await page.fill('#fb-text', 'looks off');
    await page.click('#fb-save');
    await poll(() => page.textContent('#fb-msg')).toBe('saved');
    const run = await api(`/api/runs/${enc(id)}`);
    expect(Object.keys(run.feedback.entries)).toEqual(['t2']);
    await page.close();
  });
});

describe('trends and compare', () => {
  it('trend axes stay within the metric’s range, and a flat pass rate carries no regression mark', async () => {
    const { page } = await open('#/trends?experiment=flat&by=target');
    const a = 'section[data-series="flat × a"]';
    const b = 'section[data-series="flat × b"]';
    await poll(() => page.$$eval(`${a} [data-metric="pass_rate"] circle`, (c) => c.length)).toBe(4);
    const t = await api('/api/trend?experiment=flat&by=target');
    const seriesA = t.series.find((x: { target: string }) => x.target === 'a');
    expect(seriesA.runs.slice(0, 3).map((p: { pass_rate: number }) => p.pass_rate)).toEqual([0.5, 0.5, 0.5]);
    const flagged = seriesA.runs.filter((p: { regression: boolean }) => p.regression).length;
    expect(flagged).toBe(2);
    // The rule judges mean score: its marks are on that chart, none on the flat pass-rate line.
    expect(await page.$$eval(`${a} [data-metric="pass_rate"] circle.regression`, (c) => c.length)).toBe(0);
    expect(await page.$$eval(`${a} [data-metric="mean_score"] circle.regression`, (c) => c.length)).toBe(flagged);
    const ticks = async (sel: string) =>
      (await page.$$eval(`${sel} text.tick:not(.date)`, (ts) => ts.map((x) => x.textContent ?? ''))).map((x) => Number(x.replace('%', '')));
    expect(await ticks(`${a} [data-metric="pass_rate"]`)).toEqual([0, 50, 100]);
    for (const v of await ticks(`${a} [data-metric="mean_score"]`)) expect(v).toBeLessThanOrEqual(1);

    // A constant score of 0.917: an axis that holds it inside, within 0..1, and no mark.
    await shot(page, 'state-trends');
    const score = `${b} [data-metric="mean_score"]`;
    expect(await page.$$eval(`${score} circle`, (c) => c.length)).toBe(4);
    expect(await page.$$eval(`${b} circle.regression`, (c) => c.length)).toBe(0);
    const labels = await ticks(score);
    expect(Math.max(...labels)).toBeLessThanOrEqual(1);
    expect(Math.min(...labels)).toBeLessThan(0.917);
    const cys = await page.$$eval(`${score} circle`, (cs) => cs.map((c) => Number(c.getAttribute('cy'))));
    const lineY = await page.$$eval(`${score} line.grid`, (ls) => ls.map((l) => Number(l.getAttribute('y1'))));
    // Inside the plot: strictly between the top and the bottom grid lines.
    for (const cy of cys) {
      expect(cy).toBeGreaterThan(Math.min(...lineY));
      expect(cy).toBeLessThan(Math.max(...lineY));
    }
    await page.close();
  });

  it('compare names the (test, target) pairs only one side has', async () => {
    const { page } = await open(`#/compare?runs=${enc(flat[2]!)},${enc(flat[3]!)}`);
    const named = (side: string) => page.$$eval(`#compare-warnings li[data-only="${side}"] code.only-pair`, (c) => c.map((x) => x.textContent));
    await poll(() => named('candidate')).toEqual(['t5 · b']);
    await shot(page, 'state-compare');
    const c = await api(`/api/compare?runs=${enc(flat[2]!)},${enc(flat[3]!)}`);
    expect(c.unmatched.candidate_only_pairs).toEqual([{ test_id: 't5', target: 'b' }]);
    expect(await page.textContent('#compare-warnings li[data-only="candidate"]')).toContain('1 (test, target) pair(s) only in the candidate');
    expect(await named('baseline')).toEqual(['t3 · a', 't4 · a']);
    await page.close();
  });
});

describe('a repository with no results branch yet', () => {
  it('says so where the status shows, not "unavailable" (the API keeps AgentV’s value)', async () => {
    const empty = await makeUserRepo();
    const bare = await startServer({ cwd: empty.work });
    try {
      const status = (await (await fetch(`${bare.url}/api/remote/status`)).json()) as { sync_status: string; agentv_results?: { results?: { state: string } } };
      expect(status.agentv_results?.results?.state).toBe('missing');
      const { page, errors } = await openWatched(browser, `${bare.url}/`, { width: 1280, height: 900 });
      await expect.poll(() => page.textContent('[data-field="sync_status"]'), { timeout: 20_000, interval: 100 }).toBe('no results branch yet');
      expect(await page.getAttribute('#remote', 'data-sync-status')).toBe(status.sync_status);
      expect(errors).toEqual([]);
      await page.context().close();
    } finally {
      await bare.close();
    }
  }, 120_000);
});
