/**
 * Run the CLI the way a user does. `runCli` runs the built commands inside the test process
 * (cli-in-process.ts says what is swapped in and why); `spawnCli` starts dist/cli/main.js as a
 * real process, for tests whose subject is the process: the bundle, stdin, signals, kill -9, a
 * broken pipe, or commands running at the same time. AGENTV_TEST_CLI=process makes every runCli a
 * real process too (`npm run test:binary`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCliInProcess } from './cli-in-process.js';
import { REPO_ROOT } from './fixtures.js';

export const CLI_PATH = join(REPO_ROOT, 'dist/cli/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  /** Standard input; a command given input runs as a process. */
  input?: string;
  env?: Record<string, string | undefined>;
  /** Only for a process: killed (SIGKILL) after this long. */
  timeoutMs?: number;
}

const ALWAYS_SPAWN = process.env.AGENTV_TEST_CLI === 'process';

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  if (ALWAYS_SPAWN || opts.input !== undefined) return spawnCli(args, opts);
  return runCliInProcess(args, opts);
}

export function spawnCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export interface ServingProcess {
  /** `http://127.0.0.1:<port>`, from the "Dashboard: <url>/" line. */
  url: string;
  /** SIGTERM to the process (by its pid); resolves with its exit code. */
  stop: () => Promise<number | null>;
  stderr: () => string;
}

/**
 * Starts a command that serves the Dashboard (`serve`, `daemon --http`) and waits for its
 * "Dashboard: <url>/" line on stderr. `argv` is the whole command: the built CLI
 * (`[process.execPath, CLI_PATH, 'serve', …]`) or an installed binary. Killed if the line never comes.
 */
export async function startServing(argv: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<ServingProcess> {
  const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no Dashboard line within 60 s: ${err}`));
    }, 60_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /Dashboard: (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (m) {
        clearTimeout(timer);
        resolvePromise(m[1]!);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${err}`));
    });
  });
  const stop = () =>
    new Promise<number | null>((resolvePromise) => {
      child.removeAllListeners('close');
      child.on('close', (code) => resolvePromise(code));
      process.kill(child.pid!, 'SIGTERM');
    });
  return { url, stop, stderr: () => err };
}

/** util-linux `script` gives a command a pseudo-terminal (stdin, stdout and stderr); macOS has another one. */
export const HAS_SCRIPT = existsSync('/usr/bin/script');
/** What a terminal suite's name says when it is skipped. */
export const NO_SCRIPT = HAS_SCRIPT ? '' : ' [skipped: /usr/bin/script (util-linux) gives the test its terminal and is not installed]';

/**
 * Runs the built CLI on a pseudo-terminal (util-linux `script`), typing `input` at it; everything
 * it printed, stdout and stderr in the order the terminal got them. Killed after 90 s.
 */
export function runInTerminal(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<{ code: number; output: string }> {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CLI_PATH, ...args].map(quote).join(' ');
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: opts.cwd, env: opts.env ?? { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, output });
    });
    child.stdin.end(opts.input ?? '');
  });
}
