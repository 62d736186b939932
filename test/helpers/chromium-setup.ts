/** Vitest global setup: unpack the npm Chromium once, before any worker launches it. */
import { chromiumExecutable } from '../../scripts/chromium.mjs';

export default async function setup(): Promise<void> {
  await chromiumExecutable();
}
