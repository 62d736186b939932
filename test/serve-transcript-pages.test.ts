/**
 * A long transcript in the Dashboard's drill-down: the API pages it by the page's size cap
 * (`?from=`, `next_message`), the pages joined are the whole transcript in order, and the page
 * says how many messages are not shown yet and shows them, part by part, with "Show more
 * messages" (real headless Chromium, a real repository; the payloads read from the artifacts
 * branch on first open).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/publish/publish.js';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { cleanupTempDirs, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';
import { launchChromium, openWatched } from './helpers/browser.js';

let restore: () => void;
let user: UserRepoFixture;
let server: RunningServer;
let browser: Browser;
let run: RunWorkspace;
let testId: string;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  await mkdir(join(user.work, '.agentv'), { recursive: true });
  // One test whose transcript (~300 KB) is three times the page's size cap.
  run = await makeRunWorkspace({ experiment: 'long', rows: 1, seed: 5, transcriptChars: 300_000 });
  await publish({ run: run.dir, cwd: user.work, push: false });
  server = await startServer({ cwd: user.work });
  browser = await launchChromium();
  testId = ((await (await fetch(`${server.url}/api/runs/${encodeURIComponent(run.runId)}`)).json()) as any).tests[0].test_id;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  restore();
  await cleanupTempDirs();
});

const enc = encodeURIComponent;
const text = (t: any) => (typeof t === 'string' ? t : t.head);
const get = async (query = '') => {
  const r = await fetch(`${server.url}/api/runs/${enc(run.runId)}/tests/${enc(testId)}${query}`);
  return { status: r.status, body: (await r.json()) as Record<string, any> };
};

/** Every page of the test's transcript, following next_message from the first. */
async function allPages(): Promise<Record<string, any>[]> {
  const pages = [(await get()).body];
  for (let i = 0; i < 50 && pages.at(-1)!.next_message !== null; i++) pages.push((await get(`?from=${pages.at(-1)!.next_message}`)).body);
  return pages;
}

describe('a transcript over the size cap', () => {
  it('the API pages it: the pages joined are every message once, in order; a bad from is refused', async () => {
    const pages = await allPages();
    expect(pages.length).toBeGreaterThan(2);
    const first = pages[0]!;
    expect(first.messages_from).toBe(0);
    expect(first.detail.omitted_messages).toBeGreaterThan(0);
    const joined = pages.flatMap((p) => p.detail.messages);
    expect(joined.length).toBe(first.message_count);
    // The grown turns are numbered by their position in the source ("<n>: ..."): all there, once, in order.
    const numbered = joined.map((m: any) => /^(\d+): /.exec(text(m.content))?.[1]).filter((n: string | undefined) => n !== undefined);
    expect(numbered.length).toBeGreaterThan(20);
    expect(numbered.map(Number)).toEqual(numbered.map((_: unknown, k: number) => k));
    for (const [i, p] of pages.entries()) {
      expect(p.messages_from + p.detail.messages.length + p.detail.omitted_messages).toBe(first.message_count);
      if (i > 0) expect(p.messages_from).toBe(pages[i - 1]!.next_message);
    }
    expect(pages.at(-1)!.detail.omitted_messages).toBe(0);
    for (const bad of ['-1', '1.5', 'x']) {
      const r = await get(`?from=${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toContain('from=');
    }
  }, 60_000);

  it('the page says how many messages are not shown yet and shows them with "Show more messages"', async () => {
    const pages = await allPages();
    const first = pages[0]!;
    const { page, errors, dialogs, foreign } = await openWatched(browser, `${server.url}/#/runs/${enc(run.runId)}/tests/${enc(testId)}?tab=transcript`, {
      width: 1280,
      height: 900,
    });
    await page.waitForSelector('body[data-test-loaded]');
    const count = () => page.$$eval('#test-transcript .msg-turn', (m) => m.length);
    expect(await count()).toBe(first.detail.messages.length);
    expect(await page.textContent('#test-transcript .more-messages')).toContain(`${first.detail.omitted_messages} more not shown yet`);
    for (const [i, p] of pages.slice(1).entries()) {
      await page.click('#test-more');
      await expect.poll(count, { timeout: 30_000 }).toBe(p.messages_from + p.detail.messages.length);
      expect(await page.locator('#test-more').count()).toBe(i + 2 < pages.length ? 1 : 0);
    }
    // Every message is on the page now, the last one included, and no note says otherwise.
    expect(await count()).toBe(first.message_count);
    const last = pages.at(-1)!.detail.messages.at(-1);
    expect(await page.textContent('#test-transcript .msg-turn:last-of-type')).toContain(text(last.content).slice(0, 100));
    expect(await page.locator('#test-transcript .more-messages').count()).toBe(0);
    expect(errors).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(foreign).toEqual([]);
    await page.context().close();
  }, 120_000);
});
