/**
 * Running the user's eval command for `exec`: argv only (no shell), stdio inherited, signals
 * forwarded, exit status reported like a shell would (128 + signal number). This module never runs
 * git (ARCHITECTURE.md rule 6: only src/git does) — it exists for the user's own command.
 *
 * Process groups: with a terminal, Ctrl-C already reaches the whole foreground group, child
 * included, so SIGINT is not forwarded a second time (a second SIGINT means "abort now" to many
 * tools). Without a terminal (CI, a supervisor, `kill`), the child gets its own process group and
 * every signal exec receives is forwarded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { CommandError } from '../errors/daemon-errors.js';

export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Shell convention: the exit code, or 128 + signal number. */
  status: number;
}

export interface RunningChild {
  pid: number;
  exited: Promise<ChildExit>;
  /** Deliver a signal as exec received it (see the process-group note above). */
  forward(signal: NodeJS.Signals): void;
  kill(signal?: NodeJS.Signals): void;
}

export function statusOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? (constants.signals as Record<string, number>)[signal] : undefined;
  return 128 + (n ?? 1);
}

export function startCommand(argv: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; interactive?: boolean } = {}): Promise<RunningChild> {
  const [command, ...args] = argv;
  if (!command) throw new CommandError('no command given: put it after "--", e.g. agentv-results exec -- agentv eval evals/');
  const interactive = opts.interactive ?? Boolean(process.stdin.isTTY);
  const child: ChildProcess = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: 'inherit',
    detached: !interactive,
  });
  return new Promise((resolvePromise, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        new CommandError(err.code === 'ENOENT' ? `command not found: ${command}` : `could not start ${command}: ${err.message}`, {
          data: { command, ...(err.code !== undefined ? { errno: err.code } : {}) },
        }),
      );
    });
    child.once('spawn', () => {
      const exited = new Promise<ChildExit>((res) => {
        child.once('exit', (code, signal) => res({ code, signal, status: statusOf(code, signal) }));
      });
      const send = (signal: NodeJS.Signals): void => {
        try {
          // Detached: signal the child's whole group, so its own children hear it too.
          if (!interactive && child.pid) process.kill(-child.pid, signal);
          else child.kill(signal);
        } catch {
          // any failure here is fine: a group that already exited (ESRCH) has nobody left to hear it
        }
      };
      resolvePromise({
        pid: child.pid as number,
        exited,
        forward: (signal) => {
          if (interactive && signal === 'SIGINT') return;
          send(signal);
        },
        kill: (signal = 'SIGTERM') => send(signal),
      });
    });
  });
}
