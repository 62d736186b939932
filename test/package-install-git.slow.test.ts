// `npm i -g "git+https://…/agentv-results.git#<tag>"`, the README's install line, as npm runs it:
// npm clones the repository, installs its dependencies and devDependencies, runs `prepare` (which
// builds dist/), packs the result and installs that tarball. Here, offline: a clone of this
// repository's committed HEAD (no dist/, nothing built), `npm ci` in it from this machine's npm
// cache (prepare builds), `npm pack` of the clone, the tarball installed into an empty consumer
// (test/helpers/npm-consumer.ts), and its binary run. Slow (every devDependency installed, one
// full build): the full matrix runs it, the pull-request tier does not.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/fixtures.js';
import { git, makeTempDir } from './helpers/git-fixtures.js';
import { exec, installConsumer, npm, pkg } from './helpers/npm-consumer.js';

describe('installed from a git clone, as npm i -g <git URL> does', () => {
  it('a fresh clone has no dist/; npm ci builds it through prepare; its packed tarball installs and runs', async () => {
    const root = await makeTempDir('agentv-git-install');
    const clone = join(root, 'agentv-results');
    await git(root, ['clone', '-q', '--no-local', '--depth', '1', `file://${REPO_ROOT}`, clone]);
    expect(existsSync(join(clone, 'dist')), 'dist/ is not in git').toBe(false);
    const ci = await npm(['ci', '--offline', '--no-audit', '--no-fund', '--foreground-scripts'], clone, 480_000);
    expect(ci.stdout + ci.stderr).toMatch(/> agentv-results@[\d.]+ prepare\n> npm run build/);
    expect(existsSync(join(clone, 'dist', 'cli', 'main.js'))).toBe(true);
    const out = await makeTempDir('agentv-git-pack');
    const { stdout } = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', out], clone);
    const [info] = JSON.parse(stdout) as [{ filename: string }];
    const { dir } = await installConsumer(join(out, info.filename));
    const bin = join(dir, 'node_modules', '.bin', Object.keys(pkg.bin)[0]!);
    const version = await exec(bin, ['--version'], { cwd: dir });
    expect(version.stdout.trim()).toBe(pkg.version);
    const help = await exec(bin, ['--help'], { cwd: dir });
    for (const c of ['export', 'publish', 'gate', 'combine']) expect(help.stdout).toContain(`  ${c} `);
    expect(JSON.parse(readFileSync(join(dir, 'node_modules', pkg.name, 'package.json'), 'utf8')).version).toBe(pkg.version);
  }, 600_000);
});
