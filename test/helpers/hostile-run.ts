/**
 * A small exported run to corrupt, for the hostile-input suites: exported once per test file, then
 * copied fresh for each case, beside files outside it (written by the suite) that hold a canary.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { makeTempDir } from './git-fixtures.js';
import { cli } from '../publish-helpers.js';

export const HOSTILE_ROW = {
  test_id: 'alpha',
  suite: 's',
  target: 'm1',
  score: 1,
  timestamp: '2026-03-01T10:00:00Z',
  assertions: [{ text: 'says hi', passed: true }],
  answer: 'hi there',
  file_changes: 'diff --git a/x b/x\n+ok\n',
};
/** The attempt folder of HOSTILE_ROW in the exported run. */
export const HOSTILE_ATTEMPT = 's/alpha/m1/attempt-0';

/**
 * `fresh()` gives a new copy of the run in its own temp folder; `outside(root)` runs once, on the
 * folder holding the first export, to write the files outside the run (returned by `root()`).
 */
export function hostileRuns(prefix: string, outside: (root: string) => Promise<void>) {
  let pristine: string | null = null;
  let first = '';
  return {
    root: () => first,
    async fresh(): Promise<string> {
      const root = await makeTempDir(prefix);
      if (pristine === null) {
        const src = join(root, 'r.jsonl');
        await writeFile(src, JSON.stringify(HOSTILE_ROW) + '\n');
        const r = await cli(['export', src, '--out', join(root, 'pristine'), '--experiment', 'hostile'], root);
        expect(r.code, r.stderr).toBe(0);
        pristine = join(root, 'pristine');
        first = root;
        await outside(root);
      }
      const dir = join(root, `run-${Math.random().toString(36).slice(2, 8)}`);
      await cp(pristine, dir, { recursive: true });
      return dir;
    },
  };
}
