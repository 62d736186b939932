/**
 * Vitest global setup: the fixture repositories every suite copies, made once per test run
 * (issue 51: the script takes about a second, a copy a tenth of it). The template's place goes to
 * the test processes in AGENTV_TEST_USER_REPO_TEMPLATE; git-fixtures.ts copies it (and makes its
 * own once per process when the variable is missing, so a helper works outside this setup too).
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runUserRepoScript } from './git-fixtures.js';

export default async function setup(): Promise<() => void> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'agentv-user-template-')));
  await runUserRepoScript(root);
  process.env.AGENTV_TEST_USER_REPO_TEMPLATE = root;
  return () => rmSync(root, { recursive: true, force: true });
}
