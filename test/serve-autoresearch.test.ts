/**
 * The Dashboard's autoresearch trajectory (issue 14, point 4): cycles recorded with the real
 * `autoresearch record` CLI in a real repository, read back through the real server on a random
 * loopback port (`/api/autoresearch`, `/api/autoresearch/:experiment`, its trajectory.html), and
 * the Autoresearch tab in headless Chromium showing the same numbers as the standalone page —
 * with a hostile mutation text staying text and the view following a cycle recorded while open.
 */
import { appendFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRAJECTORY_CSP } from '../src/autoresearch/index.js';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeUserRepo } from './publish-helpers.js';
import { launchChromium } from './helpers/browser.js';

const XSS = `</script><script>alert(1)</script><img src=x onerror="alert(2)"><!-- & 'quote'`;
const EXP = 'autoresearch-demo';

// Only inside page.evaluate (the browser's document); the test tsconfig has no DOM lib.
declare const document: any;

let restore: () => void;
let user: UserRepoFixture;
let tmp: string;
let server: RunningServer;
let browser: Browser;

let n = 0;
/** A run directory whose rows are `{test: [IDENTIFIES_BUG score, SUGGESTS_FIX score]}`, with its cost in timing.json. */
async function run(tests: Record<string, [number, number]>, cost: number): Promise<string> {
  const dir = join(tmp, 'runs', `2026-04-15T10-${String(n++).padStart(2, '0')}-00`);
  await mkdir(dir, { recursive: true });
  const rows = Object.entries(tests).map(([test_id, [a, b]]) => ({
    test_id,
    target: 'm',
    score: (a + b) / 2,
    scores: [
      { name: 'bug', type: 'IDENTIFIES_BUG', score: a },
      { name: 'fix', type: 'SUGGESTS_FIX', score: b },
    ],
  }));
  await writeFile(join(dir, 'index.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await writeFile(join(dir, 'timing.json'), JSON.stringify({ cost_usd: cost }));
  return dir;
}

async function record(runDir: string, mutation: string): Promise<Record<string, any>> {
  const r = await runCli(['autoresearch', 'record', runDir, '--experiment', EXP, '--mutation', mutation, '--json'], { cwd: user.work });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, any>;
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  tmp = await makeTempDir('agentv-serve-ar');
  // Four cycles: 0.25 (kept, first), 0.75 (kept: two wins), 0 with a hostile mutation (dropped), 1.0 (kept).
  expect((await record(await run({ t1: [1, 0], t2: [0, 0] }, 0.01), 'original')).decision).toBe('keep');
  expect((await record(await run({ t1: [1, 1], t2: [1, 0] }, 0.02), 'added a null-check rule')).decision).toBe('keep');
  expect((await record(await run({ t1: [0, 0], t2: [0, 0] }, 0.03), XSS)).decision).toBe('drop');
  expect((await record(await run({ t1: [1, 1], t2: [1, 1] }, 0.04), 'tightened the fix wording')).decision).toBe('keep');
  // A shell `echo >>` gone wrong: skipped with a warning, the rest still shows.
  await appendFile(join(user.work, '.agentv', 'results', 'runs', EXP, '_autoresearch', 'iterations.jsonl'), '{"cycle": oops\n');
  // A planted link to a log outside the project must not be served.
  const outside = join(tmp, 'outside', '_autoresearch');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'iterations.jsonl'), JSON.stringify({ cycle: 1, score: 0.5, decision: 'keep' }) + '\n');
  await mkdir(join(user.work, '.agentv', 'results', 'runs', 'linked'), { recursive: true });
  await symlink(outside, join(user.work, '.agentv', 'results', 'runs', 'linked', '_autoresearch'));
  server = await startServer({ cwd: user.work });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  restore?.();
  await cleanupTempDirs();
});

const get = async (path: string) => {
  const res = await fetch(server.url + path);
  return { status: res.status, headers: res.headers, text: await res.text() };
};
const json = async (path: string) => {
  const r = await get(path);
  return { status: r.status, body: JSON.parse(r.text) as Record<string, any> };
};

describe('GET /api/autoresearch', () => {
  it('lists the experiments of this directory that have a log, not a symlinked one', async () => {
    const { status, body } = await json('/api/autoresearch');
    expect(status).toBe(200);
    expect(body.experiments).toEqual([{ experiment: EXP, cycles: 4, best_score: 1, original_score: 0.25, last_timestamp: expect.any(String) }]);
  });

  it('returns one experiment trajectory with the numbers the CLI recorded', async () => {
    const { status, body } = await json(`/api/autoresearch/${EXP}`);
    expect(status).toBe(200);
    const t = body.trajectory;
    expect(t.points.map((p: any) => [p.cycle, p.score, p.decision, p.cumulative_cost_usd, p.best_score])).toEqual([
      [1, 0.25, 'keep', 0.01, 0.25],
      [2, 0.75, 'keep', 0.03, 0.75],
      [3, 0, 'drop', 0.06, 0.75],
      [4, 1, 'keep', 0.1, 1],
    ]);
    expect(t.points[2].mutation).toBe(XSS);
    expect(t.rates).toEqual({ IDENTIFIES_BUG: [0.5, 1, 0, 1], SUGGESTS_FIX: [0, 0.5, 0, 1] });
    expect(t.summary).toMatchObject({
      cycles: 4,
      keeps: 3,
      drops: 1,
      original_score: 0.25,
      best_score: 1,
      best_cycle: 4,
      improvement: 0.75,
      total_cost_usd: 0.1,
    });
    expect(body.iterations).toHaveLength(4);
    expect(body.warnings).toEqual([expect.stringMatching(/:5: not valid JSON/)]);
  });

  it('serves the standalone trajectory.html under its own CSP, the mutation escaped', async () => {
    const r = await get(`/api/autoresearch/${EXP}/trajectory.html`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toBe(TRAJECTORY_CSP);
    expect(r.text).not.toContain('<img src=x');
    expect(r.text).toContain('&lt;/script&gt;&lt;script&gt;alert(1)');
    expect(r.text).not.toContain('http-equiv="refresh"');
  });

  it('refuses bad names, a symlinked log and unknown experiments', async () => {
    // (a bare `..` segment is resolved away by the URL parser before it is sent)
    expect((await json('/api/autoresearch/bad%20name')).status).toBe(400);
    expect((await json('/api/autoresearch/a%2F..%2F..%2Fx')).status).toBe(400);
    expect((await json('/api/autoresearch/linked')).status).toBe(400);
    const missing = await json('/api/autoresearch/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/autoresearch record/);
  });
});

describe('the Autoresearch tab in Chromium', () => {
  it('shows the same trajectory as trajectory.html, hostile text as text, and follows a new cycle', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const dialogs: string[] = [];
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    await page.goto(server.url + '/');
    await page.click('#tab-autoresearch');
    await page.waitForSelector('#ar-cycles tbody tr');
    expect(await page.isHidden('#view-runs')).toBe(true);

    const view = () =>
      page.evaluate(() => {
        const q = (s: string) => [...document.querySelectorAll(s)];
        return {
          stats: Object.fromEntries(q('#ar-view .stat').map((s) => [s.getAttribute('data-stat'), s.querySelector('.v')!.textContent])),
          marks: q('#ar-chart-score circle').map((c) => [c.getAttribute('data-cycle'), c.getAttribute('data-score'), c.getAttribute('class')]),
          cumulative: q('#ar-chart-cost circle').map((c) => c.getAttribute('data-cumulative')),
          assertions: q('#ar-assertions tbody tr').map((tr) => [...tr.children].map((td) => td.textContent)),
          cycles: q('#ar-cycles tbody tr').map((tr) => [...tr.children].slice(0, 6).map((td) => td.textContent)),
        };
      });
    const shown = await view();
    expect(shown.stats).toEqual({ original: '0.250', best: '1.000', improvement: '+0.750', cycles: '4', keeps: '3', drops: '1', cost: '$0.1000' });
    expect(shown.marks).toEqual([
      ['1', '0.25', 'keep'],
      ['2', '0.75', 'keep'],
      ['3', '0', 'drop'],
      ['4', '1', 'keep'],
    ]);
    expect(shown.cumulative).toEqual(['0.01', '0.03', '0.06', '0.1']);
    expect(shown.assertions).toEqual([
      ['IDENTIFIES_BUG', '50.0%', '100.0%', '0.0%', '100.0%'],
      ['SUGGESTS_FIX', '0.0%', '50.0%', '0.0%', '100.0%'],
    ]);
    expect(shown.cycles[2]).toEqual(['3', '0.000', 'DROP', '$0.0300', '$0.0600', XSS]);
    expect(await page.textContent('#ar-msg')).toBe('1 malformed line(s) skipped');

    // The hostile mutation stayed text: no element, no handler, no dialog.
    expect(await page.locator('#ar-view img, #ar-view script').count()).toBe(0);
    expect(await page.evaluate(() => document.querySelectorAll('script').length)).toBe(1);

    // The same views as the standalone page, cell for cell.
    const standalone = await context.newPage();
    await standalone.goto(`${server.url}/api/autoresearch/${EXP}/trajectory.html`);
    const alone = await standalone.evaluate(() => {
      const q = (s: string) => [...document.querySelectorAll(s)];
      return {
        stats: Object.fromEntries(q('.stat').map((s) => [s.getAttribute('data-stat'), s.querySelector('.v')!.textContent])),
        marks: q('#chart-score circle').map((c) => [c.getAttribute('data-cycle'), c.getAttribute('data-score'), c.getAttribute('class')]),
        cumulative: q('#chart-cost circle').map((c) => c.getAttribute('data-cumulative')),
        assertions: q('#assertions tbody tr').map((tr) => [...tr.children].map((td) => td.textContent)),
        cycles: q('#cycles tbody tr').map((tr) => [...tr.children].slice(0, 6).map((td) => td.textContent)),
      };
    });
    expect(shown).toEqual(alone);
    await standalone.close();

    // A cycle recorded while the tab is open appears without a reload.
    expect((await record(await run({ t1: [1, 1], t2: [1, 1] }, 0.05), 'final polish')).cycle).toBe(5);
    await expect.poll(async () => (await view()).cycles.length, { timeout: 30_000, interval: 250 }).toBe(5);
    expect((await view()).stats.cost).toBe('$0.1500');

    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);
});
