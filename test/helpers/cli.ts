/** Run the built CLI (dist/cli/main.js) as a real process, the way a user does. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './fixtures.js';

export const CLI_PATH = join(REPO_ROOT, 'dist/cli/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  opts: { cwd?: string; input?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliResult> {
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
