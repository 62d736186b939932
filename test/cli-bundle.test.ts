// What the shipped CLI bundle carries decides every command's start-up (BENCHMARKS.md, "CLI
// start-up"). `import { z } from 'zod'` hands esbuild zod's whole namespace object, so all of zod
// (its 50 locales, JSON-schema import, ...) lands in the bundle and is evaluated on every start;
// `import * as z` lets esbuild keep only what is used. This guards the difference.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BUNDLE = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');

describe('the CLI bundle', () => {
  it("keeps zod's English messages and none of its other locales", () => {
    const text = readFileSync(BUNDLE, 'utf8');
    expect(text).toContain('Invalid input: expected');
    // Spanish and German messages (esbuild writes non-ASCII as escapes, so ASCII words are probed).
    expect(text).not.toContain('se esperaba');
    expect(text).not.toContain('erwartet');
  });

  it('stays under 1.6 MB (it was 2.06 MB with the whole of zod)', () => {
    expect(statSync(BUNDLE).size).toBeLessThan(1.6 * 1024 * 1024);
  });
});
