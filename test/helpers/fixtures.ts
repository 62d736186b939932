/**
 * The real AgentV result files live in ../shared/fixtures/agentv (CI has them beside the clone;
 * a user's fresh clone does not). Suites that need them use `describeWithFixtures`, which says
 * plainly that it is skipped and why instead of failing or silently passing — and which fails
 * the run when CI is set (sharedMissing).
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES_DIR = process.env.AGENTV_FIXTURES_DIR ?? resolve(REPO_ROOT, '../shared/fixtures/agentv');
export const HAS_FIXTURES = existsSync(FIXTURES_DIR);

export function fixtureFiles(): string[] {
  if (!HAS_FIXTURES) return [];
  return readdirSync(FIXTURES_DIR)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => join(FIXTURES_DIR, f));
}

export function fixture(name: string): string {
  return join(FIXTURES_DIR, name);
}

/** CI is set (CI=true, as CI services and .ci/run set it; "false" and "0" do not count). */
export const IN_CI = !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';

/**
 * The skip note of a suite whose peer in ../shared is missing, e.g. `skipped: real AgentV fixtures
 * not found at …`. In CI the same absence throws instead: the conformance suites must fail the run
 * rather than pass by not running.
 */
export function sharedMissing(what: string, path: string, how: string, inCi: boolean = IN_CI): string {
  const reason = `${what} was not found at ${path}; ${how}`;
  if (inCi) throw new Error(`CI is set but ${reason} — in CI the conformance suites must run, not skip`);
  return `skipped: ${reason}`;
}

const fixturesMissing = () => sharedMissing('real AgentV fixtures', FIXTURES_DIR, 'they ship beside the repository in ../shared, or set AGENTV_FIXTURES_DIR');

export const describeWithFixtures: typeof describe = HAS_FIXTURES
  ? describe
  : (((name: string, fn: () => void) => describe.skip(`${name} [${fixturesMissing()}]`, fn)) as unknown as typeof describe);

/** `it` for one test that needs the fixtures inside a suite that does not (skips saying why; fails in CI). */
export const itWithFixtures: typeof it = HAS_FIXTURES
  ? it
  : (((name: string, fn: () => void, timeout?: number) => it.skip(`${name} [${fixturesMissing()}]`, fn, timeout)) as unknown as typeof it);
