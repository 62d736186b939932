/**
 * The user documentation stays true:
 * - docs/commands.md is what the CLI's own --help says (scripts/commands-doc.mjs, `npm run docs`);
 * - docs/library.md's reference is what the package's types say (scripts/library-doc.mjs, `npm run docs`);
 * - every shell command in the README's fenced code blocks is run, in README order, against a
 *   throwaway project with a local bare remote, with `agentv-results` the built CLI — or is in the
 *   allow-list below, each entry saying why it is not run here and which test covers it;
 * - every relative link of the README, CONTRIBUTING.md and docs/*.md names a file of the repository;
 * - the README, CONTRIBUTING.md and docs/ name no internal document.
 */
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, runCli, startServing } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/fixtures.js';
import { git, gitEnvForTests, isolateGitForSuite, makeTempDir, makeUserRepoWithRemote } from './helpers/git-fixtures.js';

isolateGitForSuite();
const exec = promisify(execFile);
const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** Each line of the README's `sh` code blocks (a trailing `\` joins the next line), in order. */
function readmeShellCommands(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    let pending = '';
    for (const raw of m[1]!.split('\n')) {
      const line = pending + raw;
      if (line.endsWith('\\')) {
        pending = `${line.slice(0, -1)} `;
        continue;
      }
      pending = '';
      if (line.trim() && !line.trim().startsWith('#')) out.push(line.trim());
    }
  }
  return out;
}

/** Commands not run here, by their start, and why; each must still be in the README. */
const NOT_RUN_HERE: { startsWith: string; why: string }[] = [
  {
    startsWith: 'npm i -g "git+https://',
    why: 'installs from the hosted repository: test/package-install.test.ts installs a git clone of this one the same way (git URL at a ref, built through prepare)',
  },
  {
    startsWith: 'npm i -g ./agentv-results-',
    why: 'installs a release tarball: test/package-install.test.ts installs the packed tarball into an empty directory and runs its binary (--help, export, publish, serve)',
  },
  { startsWith: 'npm ci && npm run quickstart', why: 'the whole quick start in a bare environment: test/quickstart.test.ts' },
  { startsWith: 'npm test', why: 'the pull-request tier this test is part of (test/tiers.mjs)' },
  { startsWith: 'npm run test:fast', why: 'the fast tier (test/tiers.mjs): this suite is part of the tiers' },
  { startsWith: 'npm run test:all', why: 'the whole matrix this test is part of; .ci/run runs exactly this command (checked below)' },
];

const notRunReason = (cmd: string) => NOT_RUN_HERE.find((a) => cmd.startsWith(a.startsWith))?.why;

describe('docs/commands.md', () => {
  it("is exactly what the CLI's --help says (npm run docs rewrites it)", async () => {
    expect(existsSync(CLI_PATH), 'dist/ is built (npm run build)').toBe(true);
    const mod = (await import(join(REPO_ROOT, 'scripts', 'commands-doc.mjs'))) as {
      renderCommandsDoc: (helpOf?: (words: string[]) => Promise<string>) => Promise<string>;
      COMMANDS_DOC: string;
    };
    // The built commands run in this process (test/helpers/cli.ts), as a pipe sees their help;
    // `npm run docs` takes the same text from the binary, one process per command.
    const fresh = await mod.renderCommandsDoc(async (words) => {
      const r = await runCli([...words, '--help'], { env: { COLUMNS: '' } });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trimEnd();
    });
    // Every command of the overview has its section, subcommands of the groups included.
    for (const name of ['export', 'publish', 'list', 'serve', 'wip recover', 'drivers install', 'autoresearch record'])
      expect(fresh).toContain(`\n## ${name}\n`);
    expect(readFileSync(mod.COMMANDS_DOC, 'utf8'), 'docs/commands.md is stale: run `npm run docs`').toBe(fresh);
    // export's default output, as its help says it, is where the README's commands find the run (run below).
    expect(fresh).toContain('--out <dir>                  Output directory (default: .agentv/results/<run_id>, where AgentV lists runs');
  }, 120_000);
});

describe('docs/library.md', () => {
  it("is what scripts/library-doc.mjs reads from the package's types (npm run docs rewrites it)", async () => {
    const mod = (await import(join(REPO_ROOT, 'scripts', 'library-doc.mjs'))) as {
      renderLibraryDoc: (current?: string) => string;
      LIBRARY_DOC: string;
      MARKER: string;
    };
    const current = readFileSync(mod.LIBRARY_DOC, 'utf8');
    // From src/index.ts with the compiler, in this process: no build, no CLI.
    const fresh = mod.renderLibraryDoc(current);
    // The hand-written head is kept; the reference lists verbs with their options and results, error classes with their exit codes, types.
    expect(fresh.slice(0, fresh.indexOf(mod.MARKER))).toBe(current.slice(0, current.indexOf(mod.MARKER)));
    expect(fresh).toContain('| `publish(opts: PublishOptions)` | `Promise<PublishResult>` | Publish a run');
    expect(fresh).toContain('| `WipSession.start(opts: WipSessionOptions)` | `Promise<WipSession>` |');
    expect(fresh).toMatch(/\| `InvalidArgumentsError` \| `invalid-arguments` \(2\) \| \S/);
    expect(fresh).toMatch(/\| `PublishOptions` \| [^\n]*`run`, /);
    expect(current, 'docs/library.md is stale: run `npm run docs` (or node scripts/library-doc.mjs)').toBe(fresh);
  }, 60_000);
});

describe("the README's commands", () => {
  const commands = readmeShellCommands(README);
  let project = '';
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    // A user's repository (a commit, uncommitted work, a stash) with a bare remote as origin.
    const user = await makeUserRepoWithRemote();
    const root = user.root;
    project = user.work;
    // The README's results file: AgentV's results of the bundled example.
    copyFileSync(join(REPO_ROOT, 'examples', 'results', 'demo-agent.jsonl'), join(project, 'results.jsonl'));
    // `agentv-results` on PATH is the built CLI, as `npm i -g` would put it there.
    const bin = await makeTempDir('agentv-readme-bin');
    const shim = join(bin, 'agentv-results');
    writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
    chmodSync(shim, 0o755);
    env = {
      ...process.env,
      ...gitEnvForTests(),
      PATH: `${bin}${delimiter}${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
      GITHUB_STEP_SUMMARY: join(root, 'step-summary.md'),
      NO_COLOR: '1',
    };
  }, 60_000);

  it('has commands, and the allow-list names only commands it has', () => {
    expect(commands.length).toBeGreaterThan(8);
    for (const a of NOT_RUN_HERE)
      expect(
        commands.some((c) => c.startsWith(a.startsWith)),
        `${a.startsWith} is no longer in the README`,
      ).toBe(true);
  });

  it('the whole-matrix command is the one .ci/run runs', () => {
    const ci = readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8')
      .trimEnd()
      .split('\n');
    const readmeTest = commands.find((c) => c.startsWith('npm run test:all'))!.replace(/\s+#.*$/, '');
    expect(ci[ci.length - 1]).toBe(readmeTest);
  });

  it('each one runs and exits 0 in a throwaway project, in README order', async () => {
    const ran: string[] = [];
    for (const cmd of commands) {
      if (notRunReason(cmd)) continue;
      if (/^agentv-results serve\b/.test(cmd)) {
        // A long-running server: started, seen answering, stopped. --port 0 because a fixed port
        // may be taken on a shared machine; everything else is as written.
        const serving = await startServing(['sh', '-c', `exec ${cmd.replace(/\s+#.*$/, '')} --port 0`], { cwd: project, env });
        try {
          const res = await fetch(`${serving.url}/api/runs`);
          expect(res.status, cmd).toBe(200);
          const body = (await res.json()) as { runs: { run_id: string }[] };
          expect(body.runs.map((r) => r.run_id)).toContain('2026-11-20T09-00-00-000Z');
        } finally {
          await serving.stop();
        }
        ran.push(cmd);
        continue;
      }
      const r = await exec('bash', ['-c', cmd], { cwd: project, env, maxBuffer: 64 << 20 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect('code' in r && r.code ? `${cmd}\nexited ${r.code}\n${r.stderr}` : '', cmd).toBe('');
      ran.push(cmd);
    }
    expect(ran.length).toBe(commands.length - commands.filter((c) => notRunReason(c)).length);
    // What they did is there: the run published and pushed, the report written, the step summary.
    // export wrote where its help says (default .agentv/results/<run_id>), with no --out.
    expect(existsSync(join(project, '.agentv', 'results', '2026-11-20T09-00-00-000Z', 'summary.json'))).toBe(true);
    const remoteRuns = await git(project, ['ls-tree', '--name-only', 'origin/agentv/results/v1']);
    expect(remoteRuns.split('\n')).toContain('2026-11-20T09-00-00-000Z');
    expect(readFileSync(join(project, 'report.html'), 'utf8')).toContain('<html');
    expect(readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8')).toContain('<!-- agentv-results:gate -->');
  }, 300_000);
});

describe("the README's library example", () => {
  it('runs as written in a throwaway project with a bare remote, against the built package', async () => {
    const example = /## Library\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(README)?.[1];
    expect(example).toContain("from 'agentv-results'");
    const user = await makeUserRepoWithRemote();
    copyFileSync(join(REPO_ROOT, 'examples', 'results', 'demo-agent.jsonl'), join(user.work, 'results.jsonl'));
    // `agentv-results` resolves to this build, as an installed package would (test/package-install.test.ts installs the tarball).
    mkdirSync(join(user.work, 'node_modules'), { recursive: true });
    symlinkSync(REPO_ROOT, join(user.work, 'node_modules', 'agentv-results'), 'dir');
    const { transform } = await import('esbuild');
    const js = (await transform(example!, { loader: 'ts', format: 'esm', target: 'node20' })).code;
    writeFileSync(join(user.work, 'example.mjs'), js);
    const r = await exec(process.execPath, ['example.mjs'], { cwd: user.work, env: { ...process.env, ...gitEnvForTests(), NO_COLOR: '1' } });
    // Every (test, target) row of the two-target example compared: 8, not agentv compare's 4 test ids.
    expect(r.stdout).toMatch(/^8 compared: \d+ wins, \d+ losses, mean delta -?[\d.]+$/m);
    const remoteRuns = await git(user.work, ['ls-tree', '--name-only', 'origin/agentv/results/v1']);
    expect(remoteRuns.split('\n')).toContain('2026-11-20T09-00-00-000Z');
  }, 120_000);
});

describe('links and names', () => {
  const pages = [
    'README.md',
    'CONTRIBUTING.md',
    ...readdirSync(join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it('every relative link of the README, CONTRIBUTING.md and docs/ names a file of the repository', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(REPO_ROOT, page), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        const link = m[1]!;
        if (/^[a-z]+:/i.test(link)) continue;
        const target = posix.normalize(posix.join(posix.dirname(page), link));
        if (!existsSync(join(REPO_ROOT, target))) broken.push(`${page}: ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README, CONTRIBUTING.md and docs/ name no internal planning document', () => {
    for (const page of pages) expect(readFileSync(join(REPO_ROOT, page), 'utf8'), page).not.toMatch(/\bseed \d{3}\b|DESIGN\.md|\bissue \d+\b/i);
  });
});
