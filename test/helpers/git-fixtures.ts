/**
 * Reusable helpers for tests that need real git repositories, remotes and a git daemon.
 * Every git call goes through src/git (runGit / spawnGit); the only other process started here is
 * bash running fixtures-repos/user-repo.sh, the single source of the "user repository" fixture.
 *
 * Typical use:
 *   beforeAll(() => { restore = useIsolatedGitEnv(); });
 *   afterAll(async () => { restore(); await cleanupTempDirs(); });
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cp, lstat, mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { runGit, spawnGit, type RunGitOptions } from '../../src/git/index.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const USER_REPO_SCRIPT = join(REPO_ROOT, 'fixtures-repos/user-repo.sh');

/** Author of the commits the git-layer tests write directly. */
export const TEST_AUTHOR = { name: 'AgentV Bot', email: 'bot@agentv.invalid', date: '2026-03-01T10:00:00Z' } as const;

export const TEST_IDENT = { name: 'AgentV Test', email: 'agentv-test@example.invalid' } as const;

// ---------------------------------------------------------------------------------------------
// Temporary directories

const tempDirs = new Set<string>();

/** A fresh directory under os.tmpdir(); removed by cleanupTempDirs(). */
export async function makeTempDir(prefix = 'agentv-test'): Promise<string> {
  // realpath: git reports physical paths; tmpdir() may be a symlink (macOS /var -> /private/var).
  const dir = await realpath(await mkdtemp(join(tmpdir(), `${prefix}-`)));
  tempDirs.add(dir);
  return dir;
}

export async function cleanupTempDirs(): Promise<void> {
  const dirs = [...tempDirs];
  tempDirs.clear();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  if (testHome) {
    rmSync(testHome, { recursive: true, force: true });
    testHome = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Environment

let testHome: string | null = null;

/**
 * Identity plus an isolated configuration: no system config, an empty global config in a private
 * HOME, no prompts. CI machines have no git identity; developers' global config must not leak in.
 */
export function gitEnvForTests(): Record<string, string> {
  if (!testHome) {
    testHome = mkdtempSync(join(tmpdir(), 'agentv-test-home-'));
    mkdirSync(join(testHome, '.config', 'git'), { recursive: true });
    writeFileSync(join(testHome, '.gitconfig'), '');
  }
  return {
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: testHome,
    XDG_CONFIG_HOME: join(testHome, '.config'),
    GIT_CONFIG_GLOBAL: join(testHome, '.gitconfig'),
    GIT_AUTHOR_NAME: TEST_IDENT.name,
    GIT_AUTHOR_EMAIL: TEST_IDENT.email,
    GIT_COMMITTER_NAME: TEST_IDENT.name,
    GIT_COMMITTER_EMAIL: TEST_IDENT.email,
    GIT_TERMINAL_PROMPT: '0',
    // bench/test-accounting.mjs --git-trace: every git the suite starts writes its trace2 events
    // (argv, parent processes, time) into that directory, one file a process.
    ...(process.env.AGENTV_TEST_GIT_TRACE_DIR ? { GIT_TRACE2_EVENT: process.env.AGENTV_TEST_GIT_TRACE_DIR } : {}),
  };
}

/** Path of the isolated global config file (tests may write to it to simulate a user's config). */
export function testGlobalConfigPath(): string {
  return gitEnvForTests().GIT_CONFIG_GLOBAL as string;
}

// Variables that would let the surrounding session's git setup leak into tests.
const LEAKY_VARS =
  /^(GIT_ASKPASS|SSH_ASKPASS|GIT_CONFIG|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_TRACE2?(_EVENT)?)$/;

/** Applies gitEnvForTests() to process.env (the library inherits it); returns a restore function. */
export function useIsolatedGitEnv(): () => void {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (LEAKY_VARS.test(k)) delete process.env[k];
  Object.assign(process.env, gitEnvForTests());
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
}

/** The hooks a test file that runs git needs: the isolated environment for its tests, temp dirs removed after. */
export function isolateGitForSuite(): void {
  let restore: () => void = () => undefined;
  beforeAll(() => {
    restore = useIsolatedGitEnv();
  });
  afterAll(async () => {
    restore();
    await cleanupTempDirs();
  });
}

// ---------------------------------------------------------------------------------------------
// Repositories

/** git in `cwd` (discovery like a user would), stdout as trimmed text. */
export async function git(cwd: string, args: string[], opts: Omit<RunGitOptions, 'cwd'> = {}): Promise<string> {
  const r = await runGit(args, { ...opts, cwd });
  return r.stdout.toString('utf8').replace(/\n$/, '');
}

export async function initRepo(opts: { bare?: boolean; branch?: string; objectFormat?: 'sha1' | 'sha256' } = {}): Promise<string> {
  const dir = await makeTempDir(opts.bare ? 'agentv-bare' : 'agentv-repo');
  const args = ['init', '-q', ...(opts.bare ? ['--bare'] : []), '-b', opts.branch ?? 'main'];
  if (opts.objectFormat) args.push(`--object-format=${opts.objectFormat}`);
  await runGit([...args, dir]);
  return dir;
}

/** Writes files in a non-bare repo and commits them the ordinary way; returns the commit id. */
export async function commitFiles(dir: string, files: Record<string, string>, message = 'test commit'): Promise<string> {
  const { writeFile, mkdir } = await import('node:fs/promises');
  for (const [p, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, p)), { recursive: true });
    await writeFile(join(dir, p), content);
  }
  await git(dir, ['add', '--', ...Object.keys(files)]);
  await git(dir, ['commit', '-q', '--no-gpg-sign', '-m', message]);
  return git(dir, ['rev-parse', 'HEAD']);
}

export interface UserRepoFixture {
  /** Directory holding both repositories. */
  root: string;
  /** The user's non-bare repository (branch main, dirty, with a stash). */
  work: string;
  /** The bare remote ("origin"), receive.denyNonFastForwards=true. */
  remote: string;
}

/** Runs fixtures-repos/user-repo.sh into `root` (created). */
export function runUserRepoScript(root: string): Promise<void> {
  return new Promise<void>((resolvePromise, reject) => {
    const child = spawn('bash', [USER_REPO_SCRIPT, root], {
      env: { ...process.env, ...gitEnvForTests() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolvePromise() : reject(new Error(`user-repo.sh failed (${code}): ${stderr}`))));
  });
}

/**
 * Where the run's template of user-repo.sh is: made once per test run by the global setup
 * (test/helpers/fixture-templates.ts, AGENTV_TEST_USER_REPO_TEMPLATE), else once per test process.
 */
let ownTemplate: Promise<string> | null = null;
function userRepoTemplate(): Promise<string> {
  const given = process.env.AGENTV_TEST_USER_REPO_TEMPLATE;
  if (given && existsSync(join(given, 'user', '.git')) && existsSync(join(given, 'remote.git'))) return Promise.resolve(given);
  ownTemplate ??= (async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'agentv-user-template-')));
    await runUserRepoScript(root);
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    return root;
  })();
  return ownTemplate;
}

/**
 * fixtures-repos/user-repo.sh's repository pair in a fresh temp dir (see fixtures-repos/README.md):
 * a copy of the template the script made once (the script is deterministic: fixed identity, dates
 * and contents), with origin pointed at the copy's own remote and the index's file stats refreshed
 * for the copied files. Two git processes instead of the script's bash and a dozen gits.
 */
export async function makeUserRepoWithRemote(): Promise<UserRepoFixture> {
  const template = await userRepoTemplate();
  const root = await makeTempDir('agentv-user');
  await cp(template, root, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  const fixture = { root, work: join(root, 'user'), remote: join(root, 'remote.git') };
  const env = gitEnvForTests();
  await git(fixture.work, ['config', 'remote.origin.url', fixture.remote], { env });
  // `status` refreshes the index's stat data (inode and ctime changed with the copy) and writes it,
  // as the script's own last commands left it: the tests' "untouched" snapshots start from here.
  await git(fixture.work, ['status', '--porcelain'], { env });
  return fixture;
}

// ---------------------------------------------------------------------------------------------
// Snapshot of a user's checkout

export interface CheckoutSnapshot {
  /** Raw content of .git/HEAD (symbolic or detached). */
  head: string;
  headCommit: string;
  /** sha256 of the bytes of .git/index. */
  index: string;
  /** `git status --porcelain=v1 -z --untracked-files=all`. */
  status: string;
  /** Worktree files (outside .git): path -> "<mode> <sha256>" (or "link <target>"). */
  files: Record<string, string>;
  /** `git stash list` plus the refs/stash value. */
  stash: string;
  /** Every ref except our own namespaces (refs/heads/agentv/..., refs/remotes/<r>/agentv/...). */
  refs: string;
  /** sha256 of .git/config: user config is never rewritten. */
  config: string;
}

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** Everything about a checkout that agentv-results promises not to touch. Compare with toEqual. */
export async function snapshotCheckout(dir: string): Promise<CheckoutSnapshot> {
  const gitDir = join(dir, '.git');
  // The index bytes are read before `status`, and status runs with GIT_OPTIONAL_LOCKS=0 so it
  // does not refresh (rewrite) the index itself.
  const index = sha256(await readFile(join(gitDir, 'index')));
  const head = await readFile(join(gitDir, 'HEAD'), 'utf8');
  const status = await git(dir, ['status', '--porcelain=v1', '-z', '--untracked-files=all'], { env: { GIT_OPTIONAL_LOCKS: '0' } });
  // Every ref from one for-each-ref (HEAD's commit and the stash tip among them), the stash's
  // entries from its reflog: two git processes a snapshot instead of five.
  const allRefs = (await git(dir, ['for-each-ref', '--format=%(objectname) %(refname)'])).split('\n').filter(Boolean);
  const refOf = (name: string) => allRefs.find((l) => l.endsWith(` ${name}`))?.split(' ')[0] ?? '';
  const symbolic = /^ref: (\S+)/.exec(head);
  const headCommit = symbolic ? refOf(symbolic[1]!) : head.trim();
  const stashLog = await readFile(join(gitDir, 'logs', 'refs', 'stash'), 'utf8').catch(() => '');
  const stash = `${refOf('refs/stash')}\n${stashLog}`;
  const refs = allRefs.filter((l) => !/ refs\/(heads\/agentv\/|remotes\/[^ ]+\/agentv\/|agentv-tmp\/)/.test(l)).join('\n');
  const config = sha256(await readFile(join(gitDir, 'config')));
  const files: Record<string, string> = {};
  const walk = async (d: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      const p = join(d, name);
      const rel = relative(dir, p);
      if (rel === '.git') continue;
      const st = await lstat(p);
      if (st.isDirectory()) await walk(p);
      else if (st.isSymbolicLink()) files[rel] = `link ${await readlink(p)}`;
      else files[rel] = `${(st.mode & 0o777).toString(8)} ${sha256(await readFile(p))}`;
    }
  };
  await walk(dir);
  return { head, headCommit, index, status, files, stash, refs, config };
}

// ---------------------------------------------------------------------------------------------
// Counting git processes (proves "one process per operation")

/**
 * Runs `fn` with GIT_TRACE2_EVENT pointed at a private file and returns the argv of every git
 * process that started meanwhile (including any that git itself spawned).
 */
export async function traceGitProcesses<T>(fn: () => Promise<T>): Promise<{ result: T; argvs: string[][] }> {
  const dir = await makeTempDir('agentv-trace');
  const file = join(dir, 'trace.json');
  const prev = process.env.GIT_TRACE2_EVENT;
  process.env.GIT_TRACE2_EVENT = file;
  let result: T;
  try {
    result = await fn();
  } finally {
    if (prev === undefined) delete process.env.GIT_TRACE2_EVENT;
    else process.env.GIT_TRACE2_EVENT = prev;
  }
  const text = await readFile(file, 'utf8').catch(() => '');
  const argvs = text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { event: string; argv?: string[] })
    .filter((e) => e.event === 'start' && e.argv)
    .map((e) => e.argv as string[]);
  return { result, argvs };
}

/** The git subcommand of an argv from traceGitProcesses ("fast-import"), skipping global options. */
export function subcommand(argv: string[]): string {
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '-c' || a === '-C') i++;
    else if (!a.startsWith('-')) return a;
  }
  return '';
}

// ---------------------------------------------------------------------------------------------
// Network

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePromise(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:<port> (bounded: 500 ms). */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      sock.destroy();
      resolvePromise(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.setTimeout(500, () => done(false));
  });
}

export interface GitDaemon {
  port: number;
  /** git://127.0.0.1:<port>/<repoName> */
  url(repoName: string): string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A real `git daemon` serving every repository under `baseDir` (receive-pack enabled) on the given
 * loopback port, so a test can stop it and bring the same remote URL back later. Resolves once it
 * accepts connections (bounded: 200 x 50 ms); throws with git's stderr when it does not start.
 */
export async function startGitDaemonOn(baseDir: string, port: number): Promise<GitDaemon> {
  const proc = spawnGit(
    [
      'daemon',
      '--enable=receive-pack',
      '--export-all',
      `--base-path=${baseDir}`,
      '--reuseaddr',
      '--listen=127.0.0.1',
      `--port=${port}`,
      '--informative-errors',
      baseDir,
    ],
    { cwd: baseDir, env: gitEnvForTests(), okCodes: [0, 143] },
  );
  proc.stdout.resume();
  let exited = false;
  let stderr = '';
  proc.exited.then(
    () => (exited = true),
    (e: { stderr?: string }) => {
      exited = true;
      stderr = e.stderr ?? '';
    },
  );
  for (let i = 0; i < 200 && !exited; i++) {
    if (await canConnect(port)) {
      return {
        port,
        url: (name) => `git://127.0.0.1:${port}/${name}`,
        stop: async () => {
          if (exited) return;
          proc.kill('SIGTERM');
          const killer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
          await proc.exited.catch(() => undefined);
          clearTimeout(killer);
        },
      };
    }
    await sleep(50);
  }
  proc.kill('SIGKILL');
  await proc.exited.catch(() => undefined);
  throw new Error(`git daemon did not start on port ${port}: ${stderr || 'no connection within 10 s'}`);
}

/** startGitDaemonOn on a random free port, retried on another port if that one was taken meanwhile. */
export async function startGitDaemon(baseDir: string): Promise<GitDaemon> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await startGitDaemonOn(baseDir, await freePort());
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(`git daemon failed to start: ${(lastError as Error).message}`);
}

/**
 * The git processes still running in one of `dirs` (their working directory, from /proc): what a
 * killed command left behind, which finish or abort on their own once their stdin is gone.
 */
export function gitsRunningIn(dirs: string[]): number[] {
  const real = dirs.map((d) => realpathSync(d));
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('git')) continue;
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (real.some((d) => cwd === d || cwd.startsWith(`${d}/`))) out.push(Number(pid));
    } catch {
      // gone meanwhile, or a zombie (no cwd): not running
    }
  }
  return out;
}
