// The package as an npm user gets it: `npm pack` the built tree (npm test builds first), install
// the tarball into an empty directory with npm itself, offline (a lockfile for the consumer is
// written from this project's own, so npm takes every dependency from its cache), then compile a
// TypeScript consumer against the shipped types and run the installed binary: --help, export,
// publish to a local bare remote, and serve on 127.0.0.1.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { startServing } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { git, gitEnvForTests, initRepo, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';

const exec = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  dependencies: Record<string, string>;
  bin: Record<string, string>;
  engines: Record<string, string>;
  scripts: Record<string, string>;
};

// Taken before the suite isolates git (a private HOME would hide npm's cache).
const USER_ENV = { ...process.env };

/** npm with this machine's own npm configuration and cache. */
async function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return exec('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...USER_ENV, npm_config_update_notifier: 'false' } });
}

/** The consumer's lockfile: the tarball, and this project's locked runtime dependencies (not the dev ones). */
function consumerLock(tarball: string): unknown {
  const own = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { [pkg.name]: `file:${tarball}` } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: `file:${tarball}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(own.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

describe('the packed tarball', () => {
  isolateGitForSuite();
  let packed: string[] = [];
  let consumer = '';
  let installed = '';
  let installLog = '';
  const bin = () => join(consumer, 'node_modules', '.bin', Object.keys(pkg.bin)[0]!);
  const run = (args: string[], cwd: string) =>
    exec(bin(), args, { cwd, env: { ...process.env, ...gitEnvForTests(), NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 });

  beforeAll(async () => {
    expect(existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js')), 'dist/ is built (npm run build)').toBe(true);
    const out = await makeTempDir('agentv-pack');
    // --ignore-scripts: pack what is built (prepack would rebuild it; npm test has just built).
    const { stdout } = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', out], REPO_ROOT);
    const [info] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    packed = info.files.map((f) => f.path);
    consumer = await makeTempDir('agentv-consumer');
    await writeFile(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { [pkg.name]: `file:${join(out, info.filename)}` } }),
    );
    await writeFile(join(consumer, 'package-lock.json'), JSON.stringify(consumerLock(join(out, info.filename))));
    const r = await npm(['ci', '--offline', '--no-audit', '--no-fund'], consumer);
    installLog = r.stdout + r.stderr;
    installed = join(consumer, 'node_modules', pkg.name);
  }, 180_000);

  it('holds LICENSE, README, package.json and dist, and no sources, tests or source maps', () => {
    for (const f of ['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js']) expect(packed).toContain(f);
    expect(packed.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(packed.filter((f) => /^(src|test|bench|scripts|node_modules)\//.test(f))).toEqual([]);
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} agentv-results contributors\n/);
    expect(pkg.license).toBe('MIT');
  });

  it('points nowhere outside itself: no sourceMappingURL, the links of the README and its docs resolve inside the package', () => {
    const js = packed.filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(50);
    expect(js.filter((f) => readFileSync(join(installed, f), 'utf8').includes('sourceMappingURL'))).toEqual([]);
    // The README and every page it leads to (docs/, CONTRIBUTING.md): links resolve in the package.
    const pages = packed.filter((f) => f.endsWith('.md'));
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/commands.md', 'docs/guide.md']));
    const relative = pages.flatMap((page) =>
      [...readFileSync(join(installed, page), 'utf8').matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)]
        .map((m) => m[1]!)
        .filter((l) => !/^[a-z]+:/i.test(l))
        .map((l) => posix.normalize(posix.join(posix.dirname(page), l))),
    );
    expect(relative.length).toBeGreaterThan(10);
    expect(relative.filter((l) => !packed.includes(l) && !packed.some((f) => f.startsWith(`${l}/`)))).toEqual([]);
  });

  it('installs offline without a warning and runs no install-time script', () => {
    expect(installLog).not.toMatch(/npm warn/i);
    const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) expect(shipped.scripts?.[s], s).toBeUndefined();
    expect(statSync(bin()).isFile()).toBe(true);
  });

  it("the README's library example compiles in a consumer with skipLibCheck off and only the package's declared dependencies", async () => {
    // The README's library example, as a user would paste it, plus the two subpath entries.
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const example = /## Library\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from 'agentv-results'");
    await writeFile(
      join(consumer, 'consumer.ts'),
      [
        example,
        "import * as schemas from 'agentv-results/schemas';",
        "import { mergeJsonl } from 'agentv-results/merge';",
        'export const used = [published, schemas, mergeJsonl];',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: [] },
        files: ['consumer.ts'],
      }),
    );
    // Only what the tarball's dependencies brought: no @types/node the consumer added itself.
    expect(readdirSync(join(consumer, 'node_modules', '@types'))).toEqual(
      Object.keys(pkg.dependencies)
        .filter((d) => d.startsWith('@types/'))
        .map((d) => d.slice(7)),
    );
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = await exec(process.execPath, [tsc, '-p', consumer], { cwd: consumer }).catch((e: { stdout: string; code: number }) => e);
    expect(r.stdout).toBe('');
  }, 120_000);

  it('runs --help, export, publish to a bare remote and serve', async () => {
    const help = await run(['--help'], consumer);
    for (const c of ['export', 'publish', 'serve', 'list']) expect(help.stdout).toContain(`  ${c} `);

    const remote = await initRepo({ bare: true });
    const project = await initRepo();
    await git(project, ['commit', '-q', '--allow-empty', '-m', 'init']);
    await git(project, ['remote', 'add', 'origin', remote]);
    const exported = await run(['export', join(REPO_ROOT, 'examples/results/demo-agent.jsonl'), '--json'], project);
    const { out } = JSON.parse(exported.stdout) as { out: string };
    expect(existsSync(join(out, 'index.jsonl'))).toBe(true);

    const published = await run(['publish', out, '--push', '--require-push', '--json'], project);
    expect((JSON.parse(published.stdout) as { push: { landed: boolean } }).push.landed).toBe(true);
    const heads = await git(remote, ['for-each-ref', '--format=%(refname)']);
    expect(heads.split('\n')).toEqual(expect.arrayContaining(['refs/heads/agentv/results/v1', 'refs/heads/agentv/artifacts/v1']));

    const server = await startServing([bin(), 'serve', '--port', '0', '--host', '127.0.0.1', '--read-only'], {
      cwd: project,
      env: { ...process.env, ...gitEnvForTests(), NO_COLOR: '1' },
    });
    try {
      const page = await fetch(`${server.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<html/i);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 180_000);
});
