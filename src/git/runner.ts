// The single place in the project that spawns git. Everything else in src/git goes through here so
// that the environment policy (ARCHITECTURE.md rule 6) is applied to every process, and argv arrays
// are the only way to express a command (never a shell string).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { GitError } from '../errors/git-errors.js';
import { networkLimits } from '../util/network-limits.js';

/**
 * Variables that would silently redirect git to another repository, index or object store. They are
 * set when we run inside a git hook or under a tool that exported them; inheriting them would make
 * "--git-dir=<repo>" lie. Credentials and transport variables (GIT_SSH*, GIT_ASKPASS, SSH_AUTH_SOCK,
 * GIT_CONFIG_*, credential helpers) are deliberately kept: pushes must authenticate like the user.
 */
export const SCRUBBED_ENV_VARS: readonly string[] = [
  'GIT_DIR',
  'GIT_INDEX_FILE',
  'GIT_WORK_TREE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_COMMON_DIR',
];

export interface GitSpawnOptions {
  /** Working directory. Defaults to `gitDir` when given (never the user's worktree), else process.cwd(). */
  cwd?: string;
  /** Passed as `--git-dir=<gitDir>` before the subcommand. */
  gitDir?: string;
  /** Extra environment, applied after scrubbing (so GIT_INDEX_FILE etc. can be set on purpose). */
  env?: Record<string, string>;
  /** One-shot configuration, passed as `-c key=value` (never written to any config file). */
  config?: Record<string, string>;
  /** Exit codes that are not failures. Default [0]. */
  okCodes?: number[];
  /** Kills the process (SIGTERM) when aborted; the call then rejects with a GitError. */
  signal?: AbortSignal;
}

export interface RunGitOptions extends GitSpawnOptions {
  input?: string | Buffer | NodeJS.ReadableStream;
}

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** The environment every git child gets: inherited, scrubbed, made non-interactive and parseable. */
export function buildGitEnv(extra?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !SCRUBBED_ENV_VARS.includes(k)) env[k] = v;
  }
  // A prompt would hang a daemon or CI job forever; failing fast lets us classify it as "auth".
  env.GIT_TERMINAL_PROMPT = '0';
  // Messages we parse (porcelain reasons, "cannot lock ref ...") must not be translated.
  env.LC_ALL = 'C';
  // A silent http(s) server ends the transfer (util/network-limits.ts): every process, since a
  // blob-less clone's reads fetch missing blobs too. The user's own values, when set, win.
  const limits = networkLimits();
  env.GIT_HTTP_LOW_SPEED_LIMIT ??= String(limits.lowSpeedLimit);
  env.GIT_HTTP_LOW_SPEED_TIME ??= String(limits.lowSpeedTimeS);
  if (extra) Object.assign(env, extra);
  return env;
}

function fullArgv(args: readonly string[], opts: GitSpawnOptions): string[] {
  const argv: string[] = [];
  for (const [k, v] of Object.entries(opts.config ?? {})) argv.push('-c', `${k}=${v}`);
  if (opts.gitDir !== undefined) argv.push(`--git-dir=${opts.gitDir}`);
  argv.push(...args);
  return argv;
}

function startChild(argv: string[], opts: GitSpawnOptions): ChildProcessWithoutNullStreams {
  return spawn('git', argv, {
    cwd: cwdOf(opts),
    env: buildGitEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
}

interface ExitWatch {
  /** Settles once the process is gone and its stdio is closed. */
  done: Promise<{ code: number; stderr: string }>;
  /** What git has written to stderr so far. */
  stderrSoFar(): string;
  /** The directory git runs in (kept in every GitError's data). */
  cwd: string;
}

/** Where git runs: the caller's cwd, else its git directory (never the user's worktree), else ours. */
function cwdOf(opts: GitSpawnOptions): string {
  return opts.cwd ?? opts.gitDir ?? process.cwd();
}

/**
 * Common exit handling: collects stderr, maps spawn errors, abort and bad exit codes to GitError.
 * Unhandled-rejection safe: a caller that never awaits `done` does not crash the process.
 */
function watchExit(child: ChildProcessWithoutNullStreams, argv: string[], opts: GitSpawnOptions): ExitWatch {
  const okCodes = opts.okCodes ?? [0];
  const stderrChunks: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => stderrChunks.push(c));
  // EPIPE when git exits before reading all its input: the exit code tells the real story.
  child.stdin.on('error', () => undefined);
  const shownArgv = ['git', ...argv];
  const cwd = cwdOf(opts);
  let aborted = false;
  const onAbort = (): void => {
    aborted = true;
    child.kill('SIGTERM');
  };
  if (opts.signal) {
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener('abort', onAbort, { once: true });
  }
  const done = new Promise<{ code: number; stderr: string }>((resolve, reject) => {
    let spawnError: Error | null = null;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      const stderr = Buffer.concat(stderrChunks).toString('utf8');
      if (spawnError) {
        const msg =
          (spawnError as NodeJS.ErrnoException).code === 'ENOENT'
            ? `could not run git: ${spawnError.message} (is git installed and on PATH, and does the working directory exist?)`
            : `could not run git: ${spawnError.message}`;
        reject(new GitError(shownArgv, null, stderr, msg, { cwd, how: 'spawn' }));
      } else if (aborted) {
        reject(
          new GitError(shownArgv, code, stderr, `${shownArgv.slice(0, 3).join(' ')} … aborted (${String(opts.signal?.reason ?? 'signal')})`, {
            cwd,
            how: 'aborted',
          }),
        );
      } else if (code === null || !okCodes.includes(code)) {
        reject(new GitError(shownArgv, code, stderr, undefined, { cwd, how: 'exit' }));
      } else {
        resolve({ code, stderr });
      }
    });
  });
  // observed: `done` is returned and awaited by the caller; this only keeps it from being unhandled early
  done.catch(() => undefined);
  return { done, stderrSoFar: () => Buffer.concat(stderrChunks).toString('utf8'), cwd };
}

/**
 * Run git to completion. stdout is returned as bytes (object contents are binary); stderr as text.
 * A non-zero exit code not listed in `okCodes` rejects with GitError.
 */
export async function runGit(args: string[], opts: RunGitOptions = {}): Promise<GitResult> {
  const argv = fullArgv(args, opts);
  const child = startChild(argv, opts);
  const { done } = watchExit(child, argv, opts);
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));

  const input = opts.input;
  if (input === undefined) {
    child.stdin.end();
  } else if (typeof input === 'string' || Buffer.isBuffer(input)) {
    child.stdin.end(input);
  } else {
    input.on('error', () => child.kill('SIGTERM'));
    input.pipe(child.stdin);
  }
  const { code, stderr } = await done;
  return { code, stdout: Buffer.concat(out), stderr };
}

/** A long-lived git process (fast-import, cat-file --batch) with its pipes exposed. */
export interface GitProcess {
  readonly argv: readonly string[];
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Resolves when git exits with an ok code, rejects with GitError otherwise. Always await it. */
  readonly exited: Promise<{ code: number; stderr: string }>;
  /** Write honouring backpressure; rejects if git has gone away. */
  write(chunk: Buffer | string): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnGit(args: string[], opts: GitSpawnOptions = {}): GitProcess {
  const argv = fullArgv(args, opts);
  const child = startChild(argv, opts);
  const watch = watchExit(child, argv, opts);
  const { done } = watch;
  let closed = false;
  child.stdin.on('close', () => {
    closed = true;
  });
  // git stopped reading what it was given (it exited, or was killed, mid-stream): a git failure
  // (exit 3) with what it said so far, never a plain Error (exit 70, "a bug").
  const died = (when: string): GitError => {
    const shown = ['git', ...argv];
    const said = watch.stderrSoFar().trim().split('\n').slice(-2).join(' | ');
    const how = child.signalCode ? `the git process ended on ${child.signalCode}` : 'the git process has exited';
    const message = `${shown.slice(0, 3).join(' ')} stopped reading its input ${when} (${how})${said ? `: ${said}` : ''}`;
    return new GitError(shown, child.exitCode, watch.stderrSoFar(), message, { cwd: watch.cwd, how: 'died' });
  };
  const write = (chunk: Buffer | string): Promise<void> => {
    if (closed || child.stdin.destroyed || child.stdin.writableEnded) {
      return Promise.reject(died('before this write'));
    }
    if (child.stdin.write(chunk)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const cleanup = (): void => {
        child.stdin.off('drain', onDrain);
        child.stdin.off('close', onClose);
      };
      const onDrain = (): void => {
        cleanup();
        resolve();
      };
      const onClose = (): void => {
        cleanup();
        reject(died('before the data was consumed'));
      };
      child.stdin.on('drain', onDrain);
      child.stdin.on('close', onClose);
    });
  };
  return {
    argv: ['git', ...argv],
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    exited: done,
    write,
    kill: (signal: NodeJS.Signals = 'SIGTERM') => {
      child.kill(signal);
    },
  };
}
