/**
 * Run the CLI the way a user does. `runCli` runs the built commands inside the test process
 * (cli-in-process.ts says what is swapped in and why); `spawnCli` starts dist/cli/main.js as a
 * real process, for tests whose subject is the process: the bundle, stdin, signals, kill -9, a
 * broken pipe, or commands running at the same time. AGENTV_TEST_CLI=process makes every runCli a
 * real process too (`npm run test:binary`).
 */
import { spawn } from 'node:child_process';
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
