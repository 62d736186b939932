/**
 * The real AgentV result files live in ../shared/fixtures/agentv (CI has them beside the clone;
 * a user's fresh clone does not). Suites that need them use `describeWithFixtures`, which says
 * plainly that it is skipped and why instead of failing or silently passing.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';

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

export const describeWithFixtures: typeof describe = HAS_FIXTURES
  ? describe
  : (((name: string, fn: () => void) =>
      describe.skip(
        `${name} [skipped: real AgentV fixtures not found at ${FIXTURES_DIR}; they ship beside the repository in ../shared, or set AGENTV_FIXTURES_DIR]`,
        fn,
      )) as unknown as typeof describe);
