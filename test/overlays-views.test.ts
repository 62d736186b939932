/**
 * Tags and reviewers' notes pulled down with a run (tags.json, feedback.json in the run folder)
 * show up where people read results: `show`, `failures` (text and --json) and the HTML report,
 * where hostile note text stays text. A malformed or symlinked overlay is a warning, not a crash.
 */
import { rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { makeTempDir } from './helpers/git-fixtures.js';
import { launchChromium } from './helpers/browser.js';

const XSS = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';

describe('overlays in show, failures and report', () => {
  let dir: string;
  let run: string;
  let browser: Browser | null = null;
  beforeAll(async () => {
    dir = await makeTempDir('agentv-overlay-views');
    const rows = [
      { timestamp: '2026-11-20T09:00:00.000Z', test_id: 'passes', suite: 's', target: 'x', score: 1, execution_status: 'ok' },
      { timestamp: '2026-11-20T09:00:00.000Z', test_id: 'fails', suite: 's', target: 'x', score: 0, execution_status: 'ok' },
    ];
    await writeFile(join(dir, 'r.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const r = await runCli(['export', 'r.jsonl', '--out', 'run'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    run = join(dir, 'run');
    await writeFile(join(run, 'tags.json'), JSON.stringify({ tags: ['baseline', 'release-2.1'], updated_at: '2026-11-21T00:00:00.000Z', tag_revision: 'abc' }));
    await writeFile(
      join(run, 'feedback.json'),
      JSON.stringify({
        entries: {
          fails: {
            ana: { feedback: 'grader too strict\nsecond line', reviewer: 'ana', updated_at: '2026-11-21T10:00:00.000Z', revision: 'r1' },
            bo: { feedback: XSS, reviewer: 'bo', updated_at: '2026-11-21T11:00:00.000Z', revision: 'r2' },
          },
        },
        updated_at: '2026-11-21T11:00:00.000Z',
      }),
    );
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('show --json carries the tags and each case its notes; the text output prints them', async () => {
    const json = await runCli(['show', 'run', '--json'], { cwd: dir });
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.tags).toEqual(['baseline', 'release-2.1']);
    const fails = report.cases.find((c: { test_id: string }) => c.test_id === 'fails');
    expect(fails.feedback.map((n: { reviewer: string }) => n.reviewer)).toEqual(['ana', 'bo']);
    expect(report.cases.find((c: { test_id: string }) => c.test_id === 'passes').feedback).toEqual([]);
    const text = await runCli(['show', 'run'], { cwd: dir });
    expect(text.stdout).toContain('tags: baseline release-2.1');
    expect(text.stdout).toMatch(/feedback {4}ana \(2026-11-21\): grader too strict\n {14}second line/);
  });

  it('failures prints the notes under the failing case', async () => {
    const text = await runCli(['failures', 'run'], { cwd: dir });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('(tags: baseline release-2.1)');
    expect(text.stdout).toContain('feedback    ana (2026-11-21): grader too strict');
    const json = JSON.parse((await runCli(['failures', 'run', '--json'], { cwd: dir })).stdout);
    expect(json.failures[0].feedback).toHaveLength(2);
  });

  it('the report shows tags and notes as text in Chromium', async () => {
    const out = join(dir, 'report.html');
    const r = await runCli(['report', 'run', '--out', out], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`file://${out}`);
    await page.waitForSelector('html[data-ready="true"]');
    expect(await page.locator('header code.tag').allTextContents()).toEqual(['baseline', 'release-2.1']);
    await page.locator('tr.test-row', { hasText: 'fails' }).click();
    const notes = page.locator('tr.detail-row ul.feedback li');
    expect(await notes.count()).toBe(2);
    expect(await notes.nth(1).locator('.text').textContent()).toBe(XSS);
    expect(await page.evaluate('typeof (globalThis).__pwned')).toBe('undefined');
  });

  it('a malformed feedback.json is a warning; a symlinked tags.json refuses the run (the one safety check) and --skip-unsafe reads the rest', async () => {
    await writeFile(join(run, 'feedback.json'), '{ not json');
    await rm(join(run, 'tags.json'));
    await symlink('/etc/hostname', join(run, 'tags.json'));
    const refused = await runCli(['show', 'run', '--json'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/tags\.json is a symbolic link leading out of the run/);
    const r = await runCli(['show', 'run', '--json', '--skip-unsafe'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).tags).toEqual([]);
    expect(r.stderr).toMatch(/feedback\.json is not a JSON object/);
    expect(r.stderr).toMatch(/tags\.json is not a regular file/);
  });
});
