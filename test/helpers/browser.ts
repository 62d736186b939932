/**
 * The one way tests start a browser: headless Chromium from the npm registry (see
 * scripts/chromium.mjs), driven by playwright-core. AGENTV_CHROMIUM=<path> uses another build.
 */
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumExecutable } from '../../scripts/chromium.mjs';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS });
}

/** A page and what it did that a test may assert on: dialogs, console errors, other origins. */
export interface WatchedPage {
  page: import('playwright-core').Page;
  /** Messages of the dialogs it opened (each dismissed). */
  dialogs: string[];
  /** Console errors and uncaught page errors. */
  errors: string[];
  /** Requests to any origin but the page's own (data: URLs aside). */
  foreign: string[];
}

/** Opens url in a fresh context, watching dialogs, errors and requests to other origins. */
export async function openWatched(browser: Browser, url: string, viewport?: { width: number; height: number }): Promise<WatchedPage> {
  const context = await browser.newContext(viewport ? { viewport } : {});
  const watched: WatchedPage = { page: await context.newPage(), dialogs: [], errors: [], foreign: [] };
  const origin = new URL(url).origin;
  watched.page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) watched.foreign.push(r.url());
  });
  watched.page.on('dialog', (d) => {
    watched.dialogs.push(d.message());
    void d.dismiss();
  });
  watched.page.on('console', (m) => {
    if (m.type() === 'error') watched.errors.push(m.text());
  });
  watched.page.on('pageerror', (e) => watched.errors.push(String(e)));
  await watched.page.goto(url);
  return watched;
}
