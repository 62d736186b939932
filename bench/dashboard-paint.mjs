/**
 * What the Dashboard benchmarks measure in Chromium: a page's first contentful paint and the time
 * from navigation until a selector is in the DOM, medians over fresh browser contexts; and the
 * blank page every figure is a ratio of.
 */
import { createServer as createHttpServer } from 'node:http';
import { firstContentfulPaint, median } from './lib.mjs';

/** First contentful paint (and, with `selector`, ms from navigation until it is in the DOM): median of `runs` after `warmup` loads. */
export async function paint(browser, url, selector, runs, warmup = 1, timeoutMs = 600_000, onResponse = null) {
  const fcp = [];
  const ready = [];
  for (let i = 0; i < runs + warmup; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    if (onResponse) page.on('response', onResponse);
    const t0 = performance.now();
    await page.goto(url, { waitUntil: 'commit' });
    if (selector) await page.locator(selector).first().waitFor({ state: 'attached', timeout: timeoutMs });
    else await page.waitForLoadState('load');
    const readyMs = performance.now() - t0;
    const p = await page.evaluate(firstContentfulPaint);
    await context.close();
    if (i < warmup) continue;
    fcp.push(p);
    ready.push(readyMs);
  }
  return { fcp: median(fcp), ready: median(ready) };
}

/** A loopback server of one blank paragraph: what any page costs to show here. */
export async function blankServer() {
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>blank</title></head><body><p>blank</p></body></html>');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) };
}
