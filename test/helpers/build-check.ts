/**
 * Vitest global setup of the runs that use dist/ (`npm test`, `npm run test:all`, `npx vitest run
 * <file>`): refuse to start on a stale build. dist/ carries a hash of what it was built from
 * (scripts/build-stamp.mjs); a tree that no longer matches would test the previous code silently.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuild } from '../../scripts/build-stamp.mjs';

// Not from ./fixtures.js: a global setup runs outside the test workers, where vitest's test API is not loaded.
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Throws, with the fix in the message, when `root`'s dist/ was not built from its src/. */
export function assertFreshBuild(root: string): void {
  const why = staleBuild(root);
  if (why) throw new Error(why);
}

export default function setup(): void {
  assertFreshBuild(REPO_ROOT);
}
