/**
 * Tests test the source (issue 51): dist/ carries a hash of what it was built from
 * (scripts/build-stamp.mjs, the build's last step), and every vitest run that uses dist/ checks it
 * before any test starts (test/helpers/build-check.ts), failing with the fix in the message. Here a
 * copy of the tree with its build stamp is made deliberately stale, and is caught.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildInputs, STAMP_FILE, staleBuild } from '../scripts/build-stamp.mjs';
import { assertFreshBuild } from './helpers/build-check.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { cleanupTempDirs, makeTempDir } from './helpers/git-fixtures.js';

afterAll(cleanupTempDirs);

/** A copy of the build's inputs and of dist/'s stamp: what the check reads, nothing else. */
async function copyOfTree(): Promise<string> {
  const root = await makeTempDir('agentv-stamp');
  for (const f of buildInputs(REPO_ROOT)) {
    mkdirSync(join(root, f, '..'), { recursive: true });
    cpSync(join(REPO_ROOT, f), join(root, f));
  }
  mkdirSync(join(root, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, STAMP_FILE), join(root, STAMP_FILE));
  return root;
}

describe('a stale build is caught', () => {
  it('this run tests the current source: the build stamp matches src/', () => {
    expect(staleBuild(REPO_ROOT)).toBeNull();
  });

  it('an edit under src/ after the build fails the check, saying what to run', async () => {
    const root = await copyOfTree();
    expect(staleBuild(root)).toBeNull();
    const file = join(root, buildInputs(root).find((f) => f.startsWith('src/') && f.endsWith('.ts'))!);
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n// edited after the build\n`);
    expect(() => assertFreshBuild(root)).toThrow(/build is stale: src\/.*changed since dist\/ was built.*npm run build/s);
  });

  it('a new file under src/, or a changed package.json, is stale too', async () => {
    const added = await copyOfTree();
    writeFileSync(join(added, 'src', 'new-module.ts'), 'export const x = 1;\n');
    expect(staleBuild(added)).toMatch(/stale/);
    const pkg = await copyOfTree();
    writeFileSync(join(pkg, 'package.json'), readFileSync(join(pkg, 'package.json'), 'utf8').replace('"version"', '"description2": "x",\n  "version"'));
    expect(staleBuild(pkg)).toMatch(/stale/);
  });

  it('no stamp (never built, or a build that failed half way) is caught', async () => {
    const root = await copyOfTree();
    rmSync(join(root, STAMP_FILE));
    expect(() => assertFreshBuild(root)).toThrow(/missing or stale.*npm run build/s);
  });

  it('the build writes the stamp last, and the runs that use dist/ check it first', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toMatch(/&& node scripts\/build-stamp\.mjs write$/);
    const config = readFileSync(join(REPO_ROOT, 'vitest.config.ts'), 'utf8');
    expect(config).toMatch(/globalSetup: \['test\/helpers\/build-check\.ts'/);
  });
});
