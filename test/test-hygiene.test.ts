/**
 * Tests that cannot pass by luck or fail by load (issue 28): read every test file as text and
 * refuse the shapes that did: a duration compared against a bound (benchmarks measure time, tests
 * do not), and a conditional test that does not say why it skips.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, sharedMissing } from './helpers/fixtures.js';

const TEST_DIR = import.meta.dirname;
const files = readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => /\.test\.ts$/.test(f) && f !== 'test-hygiene.test.ts')
  .map((f) => ({ name: f, lines: readFileSync(join(TEST_DIR, f), 'utf8').split('\n') }));

/** Every `file:line` whose text matches `bad` (with the line before and after as context for `ok`). */
function offending(bad: RegExp, ok: (line: string, next: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const f of files)
    f.lines.forEach((line, i) => {
      if (bad.test(line) && !ok(line, f.lines[i + 1] ?? '')) out.push(`${f.name}:${i + 1}: ${line.trim()}`);
    });
  return out;
}

describe('test hygiene', () => {
  it('reads the test files', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it('no test bounds a duration: no elapsed time, performance.now() or Date.now() difference compared with a limit', () => {
    const timed = /(performance\.now\(\)|Date\.now\(\)\s*-|\belapsed\w*|\btook\w*|\bduration\w*Ms\b)/;
    const bound = /\.(toBeLessThan|toBeLessThanOrEqual|toBeGreaterThan|toBeGreaterThanOrEqual)\(/;
    expect(offending(bound, (line) => !timed.test(line))).toEqual([]);
  });

  it('every conditional test says why it skips', () => {
    // ctx.skip() takes the reason; skipIf/runIf titles carry it (a `${…}` note or the word "skipped").
    expect(offending(/\bctx\.skip\(\s*\)/)).toEqual([]);
    expect(offending(/\.(skipIf|runIf)\(/, (line, next) => /\$\{|skipped/.test(line + next))).toEqual([]);
    // A bare it.skip / describe.skip outside the helpers that build a reason into the title.
    expect(offending(/\b(it|describe|test)\.skip\(\s*['"`]/, (line) => /\$\{|skipped/.test(line))).toEqual([]);
  });

  it('the conformance suites cannot skip in CI: a missing ../shared throws when CI is set, and .ci/run sets it before npm test', () => {
    expect(sharedMissing('the real AgentV client', '/nowhere', 'set AGENTV_CLIENT_DIR', false)).toMatch(
      /^skipped: the real AgentV client was not found at \/nowhere/,
    );
    expect(() => sharedMissing('the real AgentV client', '/nowhere', 'set AGENTV_CLIENT_DIR', true)).toThrow(/CI is set but .* must run, not skip/);
    const ci = readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8');
    const setsCi = ci.search(/^export CI=true$/m);
    expect(setsCi).toBeGreaterThan(-1);
    expect(ci.search(/^npm test$/m)).toBeGreaterThan(setsCi);
  });
});
