// The package as an npm user gets it: `npm pack` the built tree (npm test builds first), install
// the tarball into an empty directory with npm itself, offline (a lockfile for the consumer is
// written from this project's own, so npm takes every dependency from its cache), then compile a
// TypeScript consumer against the shipped types and run the installed binary: --help, export,
// publish to a local bare remote, and serve on 127.0.0.1. The same from a git clone, as `npm i -g
// <git URL>` builds it through prepare: test/package-install-git.slow.test.ts.
import { copyFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { delimiter, join, posix } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startServing } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { git, gitEnvForTests, initRepo, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { exec, installConsumer, npm, pkg } from './helpers/npm-consumer.js';

/** The bytes of every file under `dir`. */
function du(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += du(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

describe('the packed tarball', () => {
  isolateGitForSuite();
  let packed: string[] = [];
  let consumer = '';
  let installed = '';
  let installLog = '';
  let tarball = '';
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
    tarball = join(out, info.filename);
    ({ dir: consumer, log: installLog } = await installConsumer(tarball));
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

  it('is lean: the CLI once (the bundle, not tsc’s per-file output), the README’s example data, no S3 client, no @types but node’s (its public types need them), at most 15 MB installed', () => {
    expect(packed).toContain('dist/cli/main.js');
    expect(packed.filter((f) => /^dist\/cli\/[^/]+$/.test(f)).sort()).toEqual(['dist/cli/agentv-results.cjs', 'dist/cli/main.js']);
    expect(packed.filter((f) => f.startsWith('dist/cli/') && !/^dist\/cli\/[^/]+$/.test(f))).toEqual([]);
    expect(packed).toContain('examples/results/demo-agent.jsonl');
    const modules = readdirSync(join(consumer, 'node_modules'));
    for (const absent of ['@aws-sdk', '@smithy']) expect(modules, absent).not.toContain(absent);
    expect(readdirSync(join(consumer, 'node_modules', '@types'))).toEqual(['node']);
    const bytes = du(join(consumer, 'node_modules'));
    expect(bytes).toBeLessThanOrEqual(15 * 1024 * 1024);
  });

  it('installs offline without a warning and runs no install-time script (prepare builds only an install from the repository)', () => {
    expect(installLog).not.toMatch(/npm warn/i);
    const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const s of ['preinstall', 'install', 'postinstall']) expect(shipped.scripts?.[s], s).toBeUndefined();
    // npm runs prepare when it installs from a git URL or a folder (it builds dist/ there), never from a tarball.
    expect(shipped.scripts?.prepare).toBe('npm run build');
    expect(installLog).not.toMatch(/prepare|npm run build/);
    expect(statSync(bin()).isFile()).toBe(true);
  });

  it("the README's library example compiles in a consumer with skipLibCheck off, with nothing but the package (its @types/node comes with it)", async () => {
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
    // The public types name Node's (Buffer, streams, NodeJS.ProcessEnv): @types/node is a dependency,
    // so a consumer that installs nothing else compiles; the S3 client stays an optional peer.
    const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    expect(Object.keys(shipped.peerDependencies)).toEqual(['@aws-sdk/client-s3']);
    expect(shipped.dependencies['@types/node']).toBeDefined();
    const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = await exec(process.execPath, [tsc, '-p', consumer], { cwd: consumer }).catch((e: { stdout: string; code: number }) => e);
    expect(r.stdout).toBe('');
  }, 120_000);

  it('runs --help, the README’s first three commands on the example data it ships, serve, and refuses hybrid mode without the S3 client', async () => {
    const help = await run(['--help'], consumer);
    for (const c of ['export', 'publish', 'serve', 'list']) expect(help.stdout).toContain(`  ${c} `);

    const remote = await initRepo({ bare: true });
    const project = await initRepo();
    await git(project, ['commit', '-q', '--allow-empty', '-m', 'init']);
    await git(project, ['remote', 'add', 'origin', remote]);
    // The README's first three commands, as written, on the example data the package ships.
    copyFileSync(join(installed, 'examples', 'results', 'demo-agent.jsonl'), join(project, 'results.jsonl'));
    const readme = readFileSync(join(installed, 'README.md'), 'utf8');
    const first = /## The first three commands\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = first.split('\n').filter((l) => l.trim());
    expect(commands.map((c) => c.split(/\s+/)[1])).toEqual(['export', 'publish', 'list']);
    const path = `${join(consumer, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`;
    const outputs: string[] = [];
    for (const cmd of commands) {
      const r = await exec('bash', ['-c', cmd], { cwd: project, env: { ...process.env, ...gitEnvForTests(), PATH: path, NO_COLOR: '1' } });
      outputs.push(r.stdout);
    }
    expect(existsSync(join(project, '.agentv', 'results', '2026-11-20T09-00-00-000Z', 'index.jsonl'))).toBe(true);
    expect(outputs[2]).toContain('2026-11-20T09-00-00-000Z');
    const heads = await git(remote, ['for-each-ref', '--format=%(refname)']);
    expect(heads.split('\n')).toEqual(expect.arrayContaining(['refs/heads/agentv/results/v1', 'refs/heads/agentv/artifacts/v1']));

    // Hybrid mode without the S3 client installed: one clear instruction, and nothing published.
    const hybrid = await initRepo();
    await git(hybrid, ['commit', '-q', '--allow-empty', '-m', 'init']);
    const ws = await run(['export', join(project, 'results.jsonl'), '--json'], hybrid);
    const { out } = JSON.parse(ws.stdout) as { out: string };
    const s3env = {
      AGENTV_RESULTS_STORAGE_MODE: 'hybrid',
      AGENTV_RESULTS_S3_BUCKET: 'bucket',
      AGENTV_RESULTS_S3_ENDPOINT: 'http://127.0.0.1:9',
      AGENTV_RESULTS_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'id',
      AWS_SECRET_ACCESS_KEY: 'secret',
    };
    const refused = await exec(bin(), ['publish', out], { cwd: hybrid, env: { ...process.env, ...gitEnvForTests(), ...s3env, NO_COLOR: '1' } }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect('code' in refused ? refused.code : 0, refused.stderr).toBe(3);
    expect(refused.stderr).toContain('npm i @aws-sdk/client-s3@~3.1175.0');
    expect(await git(hybrid, ['for-each-ref', 'refs/heads/agentv'])).toBe('');

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
