/**
 * One answer per question (issue 25, item 1): on the same published runs, the CLI's `--json`, the
 * Dashboard's API and — for trend — the real `agentv trend` must agree.
 *
 * - trend: `trend --published` = `GET /api/trend` = `agentv trend <the same runs>`, pooled over
 *   targets (the default, as agentv trend without --target) and per target (`--by-target` /
 *   `?by=target` = `agentv trend --target <t>` for each target);
 * - compare: `compare <a> <b> --older-baseline --all-targets` = `GET /api/compare?runs=<b>,<a>`
 *   (the API given the newer run first: the older one is still the baseline), and `--target t` =
 *   `?target=t`;
 * - summary: `summary <run> --json` .summary = `GET /api/runs/<run>` .summary;
 * - list: `list --json` = `GET /api/runs` (the fields both show).
 *
 * The runs: the three real trend fixtures from ../shared exported as they are (each export's
 * experiment is its file name, so only the pooled series forms AgentV's), and runs the real AgentV
 * client made in its sample project (two targets), published with our `publish`. The page leg:
 * the same views opened by URL in headless Chromium, the figures read from the DOM, equal the
 * API's (trend pooled and per target, compare, a run's summary, the run list).
 *
 * CLI keys are compared through `snakeKeys`, so the comparison holds whether `--json` prints
 * snake_case or camelCase keys.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { agentvEval, HAS_AGENTV, agentvMissing, makeSampleProject, runAgentV } from './helpers/agentv-client.js';
import { describeWithFixtures, fixture } from './helpers/fixtures.js';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import { cli, makeUserRepo } from './publish-helpers.js';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './helpers/browser.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every object key in snake_case (camelCase keys converted), recursively. */
function snakeKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeKeys(x)]));
  return v;
}

async function cliJson(args: string[], cwd: string, okCodes = [0, 1]): Promise<Record<string, any>> {
  const r = await cli([...args, '--json'], cwd);
  expect(okCodes, `${args.join(' ')}: ${r.stderr}`).toContain(r.code);
  return snakeKeys(JSON.parse(r.stdout) as Json) as Record<string, any>;
}

async function apiJson(server: RunningServer, path: string): Promise<Record<string, any>> {
  const res = await fetch(server.url + path);
  const body = (await res.json()) as Record<string, any>;
  expect(res.status, `${path}: ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
  return body;
}

async function agentvTrend(args: string[], cwd: string): Promise<Record<string, any>> {
  const r = await runAgentV(['trend', ...args, '--json'], { cwd });
  expect(r.code, r.stderr).toBeLessThanOrEqual(1);
  return JSON.parse(r.stdout) as Record<string, any>;
}

/** What agentv trend says of a series (its `runs` without the path each tool names its own way). */
const agentvView = (s: { runs: Record<string, unknown>[]; summary: unknown }) => ({
  summary: s.summary,
  runs: s.runs.map(({ label, timestamp, matched_test_count, mean_score }) => ({ label, timestamp, matched_test_count, mean_score })),
});

/** Our series as agentv trend prints one (only AgentV's fields). */
const ourView = (s: Record<string, any>) => {
  const { run_count, matched_test_count, date_range, slope, intercept, r_squared, direction } = s.summary;
  return {
    summary: { run_count, matched_test_count, date_range, slope, intercept, r_squared, direction },
    runs: (s.runs as Record<string, unknown>[]).map(({ label, timestamp, matched_test_count, mean_score }) => ({
      label,
      timestamp,
      matched_test_count,
      mean_score,
    })),
  };
};

interface Published {
  work: string;
  server: RunningServer;
  /** Published run ids, oldest first. */
  runIds: string[];
  /** Each run pulled to a directory (what agentv trend is given), oldest first. */
  pulled: string[];
}

async function publishAndServe(runDirs: string[], scratch: string): Promise<Published> {
  const user = await makeUserRepo();
  const runIds: string[] = [];
  for (const dir of runDirs) {
    const p = await cli(['publish', dir, '--push', '--json'], user.work);
    expect(p.code, p.stderr).toBe(0);
    runIds.push((snakeKeys(JSON.parse(p.stdout) as Json) as { run_id: string }).run_id);
  }
  const pulled: string[] = [];
  for (const [i, id] of runIds.entries()) {
    const out = join(scratch, `pulled-${i}`);
    const r = await cli(['pull', id, '--out', out], user.work);
    expect(r.code, r.stderr).toBe(0);
    pulled.push(out);
  }
  return { work: user.work, server: await startServer({ cwd: user.work }), runIds, pulled };
}

let browser: Browser;

/** The Dashboard at `hash`, once the view has painted (`loaded`: the body attribute it sets). */
async function openPage(server: RunningServer, hash: string, loaded: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/${hash}`);
  await page.waitForSelector(`body[data-${loaded}-loaded]`, { state: 'attached', timeout: 60_000 });
  return page;
}

// The page's number formats (src/serve/client/dom.ts), applied to the API's numbers.
const pct = (x: number | null) => (typeof x === 'number' ? `${(Math.round(x * 1000) / 10).toFixed(1)}%` : '—');
const score3 = (x: number | null) => (typeof x === 'number' ? x.toFixed(3) : '—');
const signed = (x: number) => `${x > 0 ? '+' : ''}${x.toFixed(3)}`;
const seriesName = (s: any) => `${s.experiment ?? 'all experiments'} × ${s.target ?? 'all targets'}`;

/** What the trend charts show: per series, each mean-score point (run, value) and the flagged runs. */
async function trendOnPage(page: Page) {
  return page.$$eval('#trend-charts section.series', (secs) =>
    secs.map((sec) => ({
      name: sec.getAttribute('data-series'),
      direction: sec.getAttribute('data-direction'),
      points: [...sec.querySelectorAll('[data-metric="mean_score"] circle')].map((c) => [c.getAttribute('data-run'), Number(c.getAttribute('data-value'))]),
      flagged: [...sec.querySelectorAll('[data-metric="mean_score"] circle.regression')].map((c) => c.getAttribute('data-run')),
    })),
  );
}
const trendOfApi = (api: Record<string, any>) =>
  api.series.map((s: any) => ({
    name: seriesName(s),
    direction: s.summary.direction,
    points: s.runs.filter((p: any) => typeof p.mean_score === 'number').map((p: any) => [p.run_id, p.mean_score]),
    flagged: s.runs.filter((p: any) => p.regression === true).map((p: any) => p.run_id),
  }));

/** The checks every set of runs must pass. */
function sameAnswers(get: () => Published, targets: () => string[], expectPooled?: { slope: number; direction: string }) {
  it('trend, pooled (the default): CLI = API = agentv trend', async () => {
    const { work, server, pulled } = get();
    const ours = await cliJson(['trend', '--published'], work);
    const api = await apiJson(server, '/api/trend');
    expect(api.series).toEqual(ours.series);
    expect(api.skipped).toEqual(ours.skipped);
    expect(ours.series).toHaveLength(1);
    expect(ours.series[0]).toMatchObject({ experiment: null, target: null, targets: targets() });
    const theirs = await agentvTrend(pulled, tmp);
    expect(ourView(ours.series[0])).toEqual(agentvView(theirs as never));
    if (expectPooled) expect(ours.series[0].summary).toMatchObject(expectPooled);
    // The regression marks follow the rule: none unless the series up to the point is degrading.
    for (const p of ours.series[0].runs) if (p.regression) expect(ours.series[0].runs.indexOf(p)).toBeGreaterThan(0);
  }, 120_000);

  it('trend, per target: CLI --by-target = API ?by=target = agentv trend --target <t>', async () => {
    const { work, server, pulled } = get();
    const ours = await cliJson(['trend', '--published', '--by-target'], work);
    const api = await apiJson(server, '/api/trend?by=target');
    expect(api.series).toEqual(ours.series);
    expect(ours.series.map((s: any) => s.target).sort()).toEqual(targets());
    for (const s of ours.series) {
      const theirs = await agentvTrend([...pulled, '--target', s.target], tmp);
      expect(ourView(s), s.target).toEqual(agentvView(theirs as never));
    }
    // One target, asked by filter, is the same series.
    const one = await apiJson(server, `/api/trend?target=${encodeURIComponent(targets()[0]!)}`);
    expect(one.series).toEqual(ours.series.filter((s: any) => s.target === targets()[0]));
  }, 180_000);

  it('compare: CLI = API, older run the baseline whatever the order, every target matched', async () => {
    const { work, server, runIds } = get();
    const [older, newer] = [runIds[0]!, runIds.at(-1)!];
    const ours = await cliJson(['compare', newer, older, '--older-baseline', '--all-targets'], work);
    const api = await apiJson(server, `/api/compare?runs=${encodeURIComponent(newer)},${encodeURIComponent(older)}`);
    for (const k of ['matched', 'unmatched', 'summary', 'threshold', 'match', 'order', 'decision'] as const) expect(api[k], k).toEqual(ours[k]);
    expect(api.order).toEqual({ rule: 'older-first', swapped: true });
    for (const side of ['baseline', 'candidate'] as const) {
      const { source, rows, targets: t } = ours.sources[side];
      expect({ source: api.sources[side].source, rows: api.sources[side].rows, targets: api.sources[side].targets }).toEqual({ source, rows, targets: t });
    }
    expect(api.sources.baseline.source).toBe(older);
    expect(api.warnings.length).toBe(ours.warnings.length);
    if (targets().length > 1) {
      expect(ours.match).toBe('test+target');
      expect(new Set(ours.matched.map((m: any) => m.target))).toEqual(new Set(targets()));
    }
    // One target on both sides.
    const t = targets()[0]!;
    const oneCli = await cliJson(['compare', older, newer, '--target', t], work);
    const oneApi = await apiJson(
      server,
      `/api/compare?baseline=${encodeURIComponent(older)}&candidate=${encodeURIComponent(newer)}&target=${encodeURIComponent(t)}`,
    );
    for (const k of ['matched', 'unmatched', 'summary', 'match'] as const) expect(oneApi[k], k).toEqual(oneCli[k]);
  }, 120_000);

  it('summary: CLI = API for every run', async () => {
    const { work, server, runIds } = get();
    for (const id of runIds) {
      const ours = await cliJson(['summary', id], work);
      const api = await apiJson(server, `/api/runs/${encodeURIComponent(id)}`);
      expect(api.summary, id).toEqual(ours.summary);
    }
  }, 120_000);

  it('list: CLI = API, filters and pages included', async () => {
    const { work, server, runIds } = get();
    const ours = await cliJson(['list'], work);
    const api = await apiJson(server, '/api/runs?limit=500');
    // The API's page carries every field list --json prints, tags included (its own: offset, facets).
    expect(api.runs).toEqual(ours.runs);
    expect(api.matched).toBe(ours.matched);
    expect(ours.runs.map((r: any) => r.run_id).sort()).toEqual([...runIds].sort());
    const t = targets()[0]!;
    const page = await cliJson(['list', '--target', t, '--offset', '1', '--limit', '1'], work);
    const apiPage = await apiJson(server, `/api/runs?target=${encodeURIComponent(t)}&offset=1&limit=1`);
    expect(apiPage.runs).toEqual(page.runs);
    expect(page.runs.map((r: any) => r.run_id)).toEqual([ours.runs[1].run_id]);
    expect(apiPage.matched).toBe(page.matched);
  }, 60_000);

  it('page: the trend charts (pooled, per target) show the API’s series, points and regression marks', async () => {
    const { server } = get();
    // `by=none`: one pooled series; no choice (the default view): one series per experiment.
    for (const [hash, by] of [
      ['?by=none', ''],
      ['?by=target', 'target'],
      ['', 'experiment'],
    ] as const) {
      const api = await apiJson(server, `/api/trend${by ? `?by=${by}` : ''}`);
      const page = await openPage(server, `#/trends${hash}`, 'trend');
      expect(await trendOnPage(page), by || 'pooled').toEqual(trendOfApi(api));
      await page.context().close();
    }
  }, 120_000);

  it('page: a comparison shows the API’s figures and rows (older run the baseline, every target)', async () => {
    const { server, runIds } = get();
    const [older, newer] = [runIds[0]!, runIds.at(-1)!];
    const runs = `${encodeURIComponent(newer)},${encodeURIComponent(older)}`;
    const api = await apiJson(server, `/api/compare?runs=${runs}`);
    const page = await openPage(server, `#/compare?runs=${runs}`, 'compare');
    const stat = (k: string) => page.textContent(`[data-stat="${k}"] .v`);
    expect({ wins: await stat('wins'), losses: await stat('losses'), ties: await stat('ties'), delta: await stat('mean_delta') }).toEqual({
      wins: String(api.summary.wins),
      losses: String(api.summary.losses),
      ties: String(api.summary.ties),
      delta: signed(api.summary.mean_delta),
    });
    expect(await page.textContent('#compare-title')).toBe(`${older} (baseline) → ${newer} (candidate)`);
    const rows = await page.$$eval('#compare-body tr', (trs) =>
      trs.map((tr) => [...tr.children].filter((c) => !c.hasAttribute('hidden')).map((c) => c.textContent)),
    );
    const perTarget = api.match === 'test+target';
    expect(rows).toEqual(
      api.matched.map((m: any) => [m.test_id, ...(perTarget ? [m.target] : []), score3(m.score1), score3(m.score2), signed(m.delta), m.outcome]),
    );
    await page.context().close();
  }, 120_000);

  it('page: each run’s figures and the run list are the API’s', async () => {
    const { server, runIds } = get();
    for (const id of runIds) {
      const api = await apiJson(server, `/api/runs/${encodeURIComponent(id)}`);
      const page = await openPage(server, `#/runs/${encodeURIComponent(id)}`, 'run');
      const stat = (k: string) => page.textContent(`[data-stat="${k}"] .v`);
      expect({ total: await stat('total'), passed: await stat('passed'), rate: await stat('pass_rate'), mean: await stat('mean_score') }, id).toEqual({
        total: String(api.run.total),
        passed: String(api.run.passed),
        rate: pct(api.run.pass_rate),
        mean: score3(api.summary?.mean_score ?? null),
      });
      expect(await page.$$eval('#tests-body tr', (t) => t.length)).toBe(Math.min(100, api.tests.length));
      await page.context().close();
    }
    const list = await apiJson(server, '/api/runs?limit=50');
    const page = await openPage(server, '#/runs', 'runs');
    const shown = await page.$$eval('#runs-body tr', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-run'), tr.children[5]?.textContent, tr.children[6]?.textContent]),
    );
    expect(shown).toEqual(list.runs.map((r: any) => [r.run_id, `${r.passed}/${r.total}`, pct(r.pass_rate)]));
    await page.context().close();
  }, 120_000);
}

isolateGitForSuite();
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'agentv-answers-'));
  browser = await launchChromium();
}, 120_000);
afterAll(() => browser?.close());

describeWithFixtures('the same answers on the three real trend fixtures, exported as they are', () => {
  let pub: Published;
  beforeAll(async () => {
    const dirs: string[] = [];
    for (const d of ['2026-03-01T10-00-00-000Z', '2026-03-08T10-00-00-000Z', '2026-03-15T10-00-00-000Z']) {
      const out = join(tmp, `export-${d}`);
      // No --experiment: each export's experiment is its file name.
      const e = await cli(['export', fixture(`trend--${d}--index.jsonl`), '--out', out], tmp);
      expect(e.code, e.stderr).toBe(0);
      dirs.push(out);
    }
    pub = await publishAndServe(dirs, await mkdtemp(join(tmp, 'fx-')));
  }, 240_000);
  afterAll(() => pub?.server.close());

  it('each export has its own experiment, yet the runs form one series (as agentv trend forms it)', async () => {
    const listed = await cliJson(['list'], pub.work);
    expect(new Set(listed.runs.map((r: any) => r.experiment)).size).toBe(3);
    const split = await apiJson(pub.server, '/api/trend?by=experiment');
    expect(split.series).toEqual([]);
    expect(split.skipped).toHaveLength(3);
  });

  // AgentV on these three runs: slope -0.035, degrading (claude-sonnet falls, gpt-5 rises).
  sameAnswers(
    () => pub,
    () => ['claude-sonnet', 'gpt-5'],
    { slope: -0.035, direction: 'degrading' },
  );
});

(HAS_AGENTV ? describe : describe.skip)(`the same answers on runs the real AgentV client made${HAS_AGENTV ? '' : ` [${agentvMissing()}]`}`, () => {
  let pub: Published;
  beforeAll(async () => {
    const project = await makeSampleProject();
    const runs: string[] = [];
    for (let i = 0; i < 3; i++) runs.push(await agentvEval(project, { experiment: 'answers' }));
    // AgentV's run directories as they are, published by us.
    pub = await publishAndServe(runs, await mkdtemp(join(tmp, 'av-')));
    expect((await git(pub.work, ['rev-parse', '--verify', 'refs/heads/agentv/results/v1'])).length).toBeGreaterThan(0);
  }, 600_000);
  afterAll(() => pub?.server.close());

  sameAnswers(
    () => pub,
    () => ['flaky-agent', 'steady-agent'],
  );
});
