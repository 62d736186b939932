/**
 * Tests that cannot pass by luck or fail by load (issue 28, then issue 51): read every test file as text
 * and refuse the shapes that did: a duration compared against a bound (benchmarks measure time,
 * tests do not), a deadline or seed taken from the wall clock, a fixed sleep standing in for a
 * signal, and a conditional test that does not say why it skips. And every test file has exactly
 * one tier (test/tiers.mjs) that its contents do not contradict.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, sharedMissing } from './helpers/fixtures.js';
import { FAST, FULL_ONLY, PR, PR_CONFORMANCE, PR_ENV, PR_REPRESENTATIVES } from './tiers.mjs';

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

  it('no deadline, expectation or seed from the wall clock: a test waits on a signal or a clock it controls', () => {
    // `Date.now() + n` is a deadline, `x > Date.now()` a race with the clock, `?? Date.now()` or
    // `Date.now() % n` a seed no failure can be replayed from. An old mtime (`Date.now() - n`) and a
    // start time only reported are fine.
    const clock = /Date\.now\(\)\s*(\+|%|[<>])|[<>]=?\s*Date\.now\(\)|\(\s*Date\.now\(\)\s*\)|\?\?\s*Date\.now\(\)/;
    expect(offending(clock)).toEqual([]);
  });

  it('no fixed sleep standing in for a signal: a pause of a literal length is a bounded poll step or nothing', () => {
    // `await sleep(4_000)` is a guess at how long something takes, wrong on a loaded machine; a
    // poll (`for (…; i < n && busy(); …) await sleep(50)`) waits on the signal, bounded.
    const fixed = /\bsleep\(\s*[\d_]+\s*\)|setTimeout\(\s*\w+\s*,\s*[\d_]+\s*\)/;
    expect(offending(fixed, (line) => /\b(for|while)\s*\(/.test(line))).toEqual([]);
  });

  it('a wait for a signal is bounded for a loaded machine: no waitFor limit under 10 s', () => {
    // The limit is a hang guard: two suites side by side on two busy cores make a 1 s wait take 10.
    const short = /\bwaitFor\([^;]*?,\s*(\d[\d_]*)(\s*,\s*\d[\d_]*)?\s*\)/;
    expect(
      offending(short, (line) => {
        const limit = Number(short.exec(line)![1]!.replace(/_/g, ''));
        return limit >= 10_000;
      }),
    ).toEqual([]);
  });

  it('every conditional test says why it skips', () => {
    // ctx.skip() takes the reason; skipIf/runIf titles carry it (a `${…}` note or the word "skipped").
    expect(offending(/\bctx\.skip\(\s*\)/)).toEqual([]);
    expect(offending(/\.(skipIf|runIf)\(/, (line, next) => /\$\{|skipped/.test(line + next))).toEqual([]);
    // A bare it.skip / describe.skip outside the helpers that build a reason into the title.
    expect(offending(/\b(it|describe|test)\.skip\(\s*['"`]/, (line) => /\$\{|skipped/.test(line))).toEqual([]);
  });

  it('the conformance suites cannot skip in CI: a missing ../shared throws when CI is set, and .ci/run sets it before npm run test:all', () => {
    expect(sharedMissing('the real AgentV client', '/nowhere', 'set AGENTV_CLIENT_DIR', false)).toMatch(
      /^skipped: the real AgentV client was not found at \/nowhere/,
    );
    expect(() => sharedMissing('the real AgentV client', '/nowhere', 'set AGENTV_CLIENT_DIR', true)).toThrow(/CI is set but .* must run, not skip/);
    const ci = readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8');
    const setsCi = ci.search(/^export CI=true$/m);
    expect(setsCi).toBeGreaterThan(-1);
    expect(ci.search(/^npm run test:all$/m)).toBeGreaterThan(setsCi);
  });
});

describe('test tiers (test/tiers.mjs)', () => {
  const all = files.map((f) => `test/${f.name.split('\\').join('/')}`).concat('test/test-hygiene.test.ts');
  const text = new Map(files.map((f) => [`test/${f.name.split('\\').join('/')}`, f.lines.join('\n')]));
  const tiers = { FAST, PR, FULL_ONLY } as const;

  it('every test file is in exactly one tier, and every listed file exists', () => {
    const placed = new Map<string, string[]>();
    for (const [tier, list] of Object.entries(tiers)) for (const f of list) placed.set(f, [...(placed.get(f) ?? []), tier]);
    const unplaced = all.filter((f) => !placed.has(f)).map((f) => `${f}: in no tier; add it to FAST, PR or FULL_ONLY in test/tiers.mjs`);
    const twice = [...placed].filter(([, t]) => t.length > 1).map(([f, t]) => `${f}: in ${t.join(' and ')}`);
    const missing = [...placed.keys()].filter((f) => !all.includes(f)).map((f) => `${f}: listed in test/tiers.mjs but no such test file`);
    expect([...unplaced, ...twice, ...missing]).toEqual([]);
    // The CPU log names a file by its base name (test/helpers/cpu-report.ts; bench/tier-costs.mjs).
    const bases = all.map((f) => f.slice(f.lastIndexOf('/') + 1));
    expect(bases.filter((b, i) => bases.indexOf(b) !== i)).toEqual([]);
  });

  it('a fast file needs no build, no AgentV, no browser, no process of our CLI and no object-store server', () => {
    const heavy = /helpers\/(agentv-client|browser|s3)\.js|\b(cliProcess|startCli|spawnCli|startServing)\(/;
    const wrong = FAST.filter((f) => f.includes('/conformance/') || f.endsWith('.slow.test.ts') || heavy.test(text.get(f) ?? ''));
    expect(wrong).toEqual([]);
  });

  it('the pull-request tier holds one conformance file per AgentV line and only the slow suites sized for it', () => {
    const inPr = [...FAST, ...PR];
    expect(inPr.filter((f) => f.includes('/conformance/')).sort()).toEqual([...PR_CONFORMANCE].sort());
    const reps = Object.values(PR_REPRESENTATIVES);
    expect(inPr.filter((f) => f.endsWith('.slow.test.ts') && !reps.includes(f))).toEqual([]);
    // A slow suite in the PR tier is there at a small size that PR_ENV sets and the file reads.
    for (const f of inPr.filter((x) => x.endsWith('.slow.test.ts')))
      expect(
        Object.keys(PR_ENV).some((k) => text.get(f)?.includes(k)),
        `${f} reads one of ${Object.keys(PR_ENV).join(', ')}`,
      ).toBe(true);
  });

  it('every kind of check keeps a representative in the pull-request tier', () => {
    const inPr = new Set([...FAST, ...PR]);
    expect(Object.entries(PR_REPRESENTATIVES).filter(([, f]) => !inPr.has(f))).toEqual([]);
  });
});
