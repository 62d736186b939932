/**
 * `autoresearch record` / `trajectory` through the built CLI, the library functions, and the page
 * in real headless Chromium (file://, every non-file request aborted and recorded): the seed's
 * fields and the keep/drop decisions from compare, hand-computed scores and costs, tolerance of
 * lines the skill's shell one-liner writes, hostile mutation text that stays text, and a page
 * that picks up a new cycle while it is open and stops reloading once final.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readIterations, recordCycle } from '../src/index.js';
import { trajectoryFragment } from '../src/autoresearch/index.js';
import { runCli } from './helpers/cli.js';
import { launchChromium } from './helpers/browser.js';

const XSS = `</script><script>alert(1)</script><img src=x onerror="alert(2)"><!-- & 'quote'`;

let tmp: string;
let browser: Browser;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'agentv-autoresearch-'));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

let n = 0;
/** A run directory with index.jsonl rows `{test: [scoreOfAssertionA, scoreOfAssertionB]}` and an optional timing.json cost. */
async function run(tests: Record<string, [number, number]>, cost?: number): Promise<string> {
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
  if (cost !== undefined) await writeFile(join(dir, 'timing.json'), JSON.stringify({ cost_usd: cost }));
  return dir;
}

async function record(project: string, runDir: string, extra: string[] = []) {
  const r = await runCli(['autoresearch', 'record', runDir, '--experiment', 'autoresearch-demo', '--json', ...extra], { cwd: project });
  return { code: r.code, stderr: r.stderr, json: r.code === 0 ? (JSON.parse(r.stdout) as Record<string, any>) : (undefined as never) };
}

describe('autoresearch record', () => {
  let project: string;
  let iterationsPath: string;
  const runs: string[] = [];

  it("cycle 1 is kept; its score, assertion rates and cost follow the seed's extraction", async () => {
    project = join(tmp, 'p1');
    await mkdir(project, { recursive: true });
    runs.push(await run({ t1: [1, 0], t2: [0, 0], t3: [1, 1], t4: [0, 0] }, 0.12));
    const { code, json } = await record(project, runs[0]!, ['--mutation', 'original']);
    expect(code).toBe(0);
    // all assertion scores: 1,0,0,0,1,1,0,0 -> 3/8; IDENTIFIES_BUG 2/4, SUGGESTS_FIX 1/4
    expect(json).toMatchObject({
      cycle: 1,
      score: 0.375,
      decision: 'keep',
      cost_usd: 0.12,
      assertions: { IDENTIFIES_BUG: 0.5, SUGGESTS_FIX: 0.25 },
      mutation: 'original',
      run_dir: '2026-04-15T10-00-00',
    });
    expect(json.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    iterationsPath = json.iterations_path;
    expect(iterationsPath).toBe(join(project, '.agentv/results/runs/autoresearch-demo/_autoresearch/iterations.jsonl'));
    const line = JSON.parse((await readFile(iterationsPath, 'utf8')).trim());
    expect(Object.keys(line).slice(0, 8)).toEqual(['cycle', 'score', 'decision', 'cost_usd', 'assertions', 'mutation', 'run_dir', 'timestamp']);
  });

  it('a better run is kept (decision from compare at threshold 0.1); a worse one dropped; the next compares with the last KEPT run', async () => {
    runs.push(await run({ t1: [1, 1], t2: [1, 1], t3: [1, 1], t4: [0, 0] }, 0.1)); // t1 +0.5, t2 +1: 2 wins
    let r = await record(project, runs[1]!, ['--mutation', 'added a null-check rule']);
    expect(r.json).toMatchObject({ cycle: 2, decision: 'keep', score: 0.75, baseline: runs[0], compare: { wins: 2, losses: 0, ties: 2, mean_delta: 0.375 } });
    runs.push(await run({ t1: [1, 1], t2: [0, 0], t3: [1, 1], t4: [0, 0] }, 0.1)); // against cycle 2: t2 -1: a loss
    r = await record(project, runs[2]!, ['--mutation', XSS]);
    expect(r.json).toMatchObject({ cycle: 3, decision: 'drop', baseline: runs[1], compare: { wins: 0, losses: 1, ties: 3 } });
    runs.push(await run({ t1: [1, 1], t2: [1, 1], t3: [1, 1], t4: [1, 0] }, 0.05)); // against cycle 2 (not 3): t4 +0.5
    r = await record(project, runs[3]!, ['--mutation', 'tightened the fix wording']);
    expect(r.json).toMatchObject({ cycle: 4, decision: 'keep', baseline: runs[1], compare: { wins: 1, losses: 0, ties: 3 } });
    const { iterations } = await readIterations(iterationsPath);
    expect(iterations.map((i) => [i.cycle, i.decision])).toEqual([
      [1, 'keep'],
      [2, 'keep'],
      [3, 'drop'],
      [4, 'keep'],
    ]);
  });

  it('equal scores: kept only when the candidate artifact is simpler (seed 004)', async () => {
    const p = join(tmp, 'p2');
    await mkdir(p, { recursive: true });
    const a = await run({ t1: [1, 0] });
    const b = await run({ t1: [1, 0] });
    await writeFile(join(tmp, 'long.md'), 'a\nb\nc\n');
    await writeFile(join(tmp, 'short.md'), 'a\n');
    expect((await record(p, a)).json.decision).toBe('keep');
    const dropped = await record(p, b);
    expect(dropped.json).toMatchObject({ decision: 'drop', compare: { mean_delta: 0 } });
    const kept = await record(p, b, ['--baseline-artifact', join(tmp, 'long.md'), '--candidate-artifact', join(tmp, 'short.md')]);
    expect(kept.json).toMatchObject({ cycle: 3, decision: 'keep', rationale: expect.stringContaining('simpler (1 < 3 lines)') });
  });

  it("reads lines the skill's echo wrote, skips a broken one with a warning, never glues a line to an unterminated one", async () => {
    const p = join(tmp, 'p3');
    const dir = join(p, '.agentv/results/runs/autoresearch-demo/_autoresearch');
    await mkdir(dir, { recursive: true });
    const kept = await run({ t1: [0, 0] });
    await writeFile(
      join(dir, 'iterations.jsonl'),
      '{"cycle":1,"score":0.65,"decision":"keep","cost_usd":0.12,"assertions":{"IDENTIFIES_BUG":0.8},"mutation":"seed line","run_dir":"x","timestamp":"2026-04-15T10:32:15Z"}\n{"cycle":2,"score":',
    );
    // The skill's lines carry no run_path: without --baseline there is nothing to compare with.
    const refused = await record(p, kept);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--baseline');
    const ok = await record(p, await run({ t1: [1, 1] }), ['--baseline', kept]);
    expect(ok.code).toBe(0);
    expect(ok.json).toMatchObject({ cycle: 2, decision: 'keep' });
    expect(ok.stderr).toMatch(/iterations\.jsonl:2: not valid JSON, line skipped/);
    const text = await readFile(join(dir, 'iterations.jsonl'), 'utf8');
    expect(text.split('\n').at(-2)).toMatch(/^\{"cycle":2,"score":1,"decision":"keep"/);
    expect((await readIterations(join(dir, 'iterations.jsonl'))).iterations.map((i) => i.cycle)).toEqual([1, 2]);
  });

  it('usage errors: no --experiment, a hostile experiment name, an unknown action', async () => {
    expect((await runCli(['autoresearch', 'record', runs[0]!], { cwd: project })).code).toBe(2);
    expect((await runCli(['autoresearch', 'record', runs[0]!, '--experiment', '../escape'], { cwd: project })).code).toBe(2);
    expect((await runCli(['autoresearch', 'nope', '--experiment', 'x'], { cwd: project })).code).toBe(2);
  });

  it('the library fragment gives the Dashboard the same numbers without a document around them', async () => {
    const { iterations } = await readIterations(iterationsPath);
    const { html, data } = trajectoryFragment(iterations);
    expect(html.startsWith('<section class="trajectory">')).toBe(true);
    expect(html).not.toContain('<html');
    expect(html).not.toContain('</script><script>');
    expect(data.summary).toMatchObject({
      cycles: 4,
      keeps: 3,
      drops: 1,
      original_score: 0.375,
      best_score: 0.875,
      best_cycle: 4,
      improvement: 0.5,
      total_cost_usd: 0.37,
    });
    expect(data.points.map((p) => p.cumulative_cost_usd)).toEqual([0.12, 0.22, 0.32, 0.37]);
    expect(data.rates.SUGGESTS_FIX).toEqual([0.25, 0.75, 0.5, 0.75]);
  });

  it('trajectory.html in Chromium: right numbers, hostile mutation text stays text, no request; it reloads with a new cycle, then stops once final', async () => {
    const page_path = join(project, '.agentv/results/runs/autoresearch-demo/_autoresearch/trajectory.html');
    const html = await readFile(page_path, 'utf8');
    expect(html).toContain('http-equiv="refresh"');
    expect(html).not.toMatch(/<script(?! type="application\/json")/);
    expect(html.replaceAll('xmlns="http://www.w3.org/2000/svg"', '')).not.toMatch(/https?:\/\//);

    const context = await browser.newContext();
    const requests: string[] = [];
    const blocked: string[] = [];
    const dialogs: string[] = [];
    const errors: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
      blocked.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(page_path).href);

    const stat = (k: string) => page.locator(`[data-stat="${k}"] .v`).textContent();
    expect(await stat('original')).toBe('0.375');
    expect(await stat('best')).toBe('0.875');
    expect(await stat('improvement')).toBe('+0.500');
    expect(await stat('cost')).toBe('$0.3700');
    expect(await page.locator('#chart-score circle.keep').count()).toBe(3);
    expect(await page.locator('#chart-score circle.drop').count()).toBe(1);
    expect(await page.locator('#chart-score circle[data-cycle="3"]').getAttribute('data-decision')).toBe('drop');
    expect(await page.locator('#cycles tr[data-cycle="4"] [data-k="cumulative"]').textContent()).toBe('$0.3700');
    expect(await page.locator('#assertions tr[data-assertion="SUGGESTS_FIX"] td[data-cycle="2"]').textContent()).toBe('75.0%');
    expect(await page.locator('#cycles tr[data-cycle="3"] [data-k="mutation"]').textContent()).toBe(XSS);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script:not([type="application/json"])').count()).toBe(0);
    const island = JSON.parse((await page.locator('#trajectory-data').textContent())!) as { points: { mutation: string }[] };
    expect(island.points[2]!.mutation).toBe(XSS);

    // While the page is open, the loop records cycle 5: the open tab shows it after its reload.
    const reloaded = page.waitForEvent('load', { timeout: 10_000 });
    expect((await record(project, await run({ t1: [1, 1], t2: [1, 1], t3: [1, 1], t4: [1, 1] }, 0.03), ['--mutation', 'final polish'])).json.cycle).toBe(5);
    await reloaded;
    await page.waitForSelector('#cycles tr[data-cycle="5"]', { timeout: 10_000 });
    expect(await stat('best')).toBe('1.000');

    // Final: no auto-refresh left in the page.
    const fin = await runCli(['autoresearch', 'trajectory', '--experiment', 'autoresearch-demo', '--final'], { cwd: project });
    expect(fin.code, fin.stderr).toBe(0);
    expect(await readFile(page_path, 'utf8')).not.toContain('http-equiv="refresh"');

    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
    expect(new Set(requests)).toEqual(new Set([pathToFileURL(page_path).href]));
    await context.close();
  }, 180_000);

  it('recordCycle as a library call appends too', async () => {
    const r = await recordCycle({ experiment: 'lib-demo', run: runs[0]!, cwd: project, mutation: 'x', now: new Date('2026-04-15T10:32:15.123Z') });
    expect(r.iteration).toMatchObject({ cycle: 1, decision: 'keep', timestamp: '2026-04-15T10:32:15Z' });
    await appendFile(r.paths.iterations, '');
    expect((await readIterations(r.paths.iterations)).iterations).toHaveLength(1);
  });
});
