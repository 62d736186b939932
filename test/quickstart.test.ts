/**
 * The README's quick start (`npm run quickstart` = build, then examples/quickstart.mjs) on a
 * machine that has Node.js and git and nothing else: PATH holds only those two, HOME is empty (no
 * git identity, no global config), the environment is nothing but that. npm test has built dist/.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';

isolateGitForSuite();
const exec = promisify(execFile);

/** The git the tests themselves run, found on PATH as a user's shell would. */
function gitOnPath(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'git');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error('git is not on PATH');
}

describe('the quick start', () => {
  it('runs with only node and git on PATH and an empty HOME, and leaves the checkout as it was', async () => {
    expect(existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')), 'dist/ is built (npm run build)').toBe(true);
    const bin = await makeTempDir('agentv-bin');
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync(gitOnPath(), join(bin, 'git'));
    const home = await makeTempDir('agentv-home');
    const tmp = await makeTempDir('agentv-tmp');
    const r = await exec(join(bin, 'node'), [join(REPO_ROOT, 'examples', 'quickstart.mjs')], {
      cwd: REPO_ROOT,
      env: { PATH: bin, HOME: home, TMPDIR: tmp, GIT_CONFIG_NOSYSTEM: '1', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(r.stdout).toContain('git status is exactly what it was before publishing.');
    expect(r.stdout).toMatch(/Published .*2026-11-20T09-00-00-000Z/);
    expect(r.stdout).toMatch(/pushed to origin/);
    // Everything it wrote is in its own temporary directory.
    const [work] = readdirSync(tmp);
    expect(work).toMatch(/^agentv-results-quickstart-/);
    expect(existsSync(join(tmp, work!, 'project', '.agentv', 'results', '2026-11-20T09-00-00-000Z', 'report.html'))).toBe(true);
  }, 120_000);
});

describe('the examples', () => {
  it("import only Node.js built-ins and the package's own exports (never dist/ internals)", () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
    const allowed = new Set(Object.keys(pkg.exports).map((k) => (k === '.' ? pkg.name : `${pkg.name}/${k.slice(2)}`)));
    const files = readdirSync(join(REPO_ROOT, 'examples'), { recursive: true, encoding: 'utf8' }).filter((f) => /\.(m?js|ts)$/.test(f));
    expect(files).toContain('quickstart.mjs');
    const bad: string[] = [];
    for (const f of files) {
      const text = readFileSync(join(REPO_ROOT, 'examples', f), 'utf8');
      for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)) {
        const spec = m[1]!;
        if (!spec.startsWith('node:') && !allowed.has(spec)) bad.push(`${f}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
