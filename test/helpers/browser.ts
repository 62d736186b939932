/**
 * The one way tests start a browser: headless Chromium from the npm registry (see
 * scripts/chromium.mjs), driven by playwright-core. AGENTV_CHROMIUM=<path> uses another build.
 */
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumExecutable } from '../../scripts/chromium.mjs';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS });
}
