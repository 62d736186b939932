/**
 * Helpers for the WIP / exec / daemon tests: run workspaces written row by row, long-running CLI
 * processes (started, signalled and always reaped by the test), a git daemon that can be stopped
 * and restarted on the same port, and bounded waiting.
 */
import { canConnect } from './git-fixtures.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnGit } from '../../src/git/index.js';
import { CLI_PATH } from './cli.js';
import { REPO_ROOT } from './fixtures.js';
import { gitEnvForTests } from './git-fixtures.js';

export const WRITER = join(REPO_ROOT, 'test/helpers/slow-run-writer.mjs');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; throws after `timeoutMs` (bounded, always). */
export async function waitFor<T>(what: string, fn: () => Promise<T> | T, timeoutMs = 20_000, everyMs = 50): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

export function row(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    test_id: `t-${String(i).padStart(4, '0')}`,
    suite: 'wip-suite',
    target: 'model-a',
    score: 1,
    execution_status: 'ok',
    input: [{ role: 'user', content: `q${i}` }],
    output: [{ role: 'assistant', content: `a${i}` }],
    ...extra,
  };
}

/** Appends rows [from, to) to <dir>/index.jsonl (created with the directory when missing). */
export function appendRows(dir: string, from: number, to: number, opts: { sidecars?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true });
  let text = '';
  for (let i = from; i < to; i++) {
    const extra: Record<string, unknown> = {};
    if (opts.sidecars) {
      const rel = `raw/t-${String(i).padStart(4, '0')}`;
      mkdirSync(join(dir, rel), { recursive: true });
      writeFileSync(join(dir, rel, 'log.txt'), `log ${i}\n`);
      extra.artifacts_dir = rel;
    }
    text += `${JSON.stringify(row(i, extra))}\n`;
  }
  appendFileSync(join(dir, 'index.jsonl'), text);
}

export function testIds(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { test_id: string }).test_id);
}

export interface Proc {
  pid: number;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (128 + n for a signal). */
  exited: Promise<number>;
  done: boolean;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<number>;
}

const SIGNO: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGHUP: 1 };

/** Starts a process; the caller must stop() it (afterEach/finally). */
export function startProcess(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string | undefined>; detached?: boolean } = {}): Proc {
  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: '1', ...gitEnvForTests(), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.detached ?? false,
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const proc: Proc = {
    pid: child.pid as number,
    child,
    stdout: () => out,
    stderr: () => err,
    done: false,
    exited: new Promise<number>((resolvePromise) => {
      child.on('close', (code, signal) => {
        proc.done = true;
        resolvePromise(code ?? 128 + (SIGNO[signal ?? ''] ?? 1));
      });
    }),
    kill: (signal = 'SIGTERM') => {
      if (!proc.done) child.kill(signal);
    },
    stop: async (graceMs = 10_000) => {
      if (!proc.done) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await proc.exited;
      clearTimeout(timer);
      return code;
    },
  };
  return proc;
}

export function startCli(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Proc {
  return startProcess(process.execPath, [CLI_PATH, ...args], opts);
}

/** Kill a process we started by its pid (it may already be gone). */
export function killPid(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

export interface RestartableGitDaemon {
  port: number;
  url(name: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A `git daemon` on 127.0.0.1:<port> that can be stopped and started again on the same port (the
 * remote URL the repository has stays valid across the outage).
 */
export async function restartableGitDaemon(baseDir: string, port: number): Promise<RestartableGitDaemon> {
  let proc: ReturnType<typeof spawnGit> | null = null;
  const start = async (): Promise<void> => {
    for (let attempt = 0; attempt < 40; attempt++) {
      const p = spawnGit(
        ['daemon', '--enable=receive-pack', '--export-all', `--base-path=${baseDir}`, '--reuseaddr', '--listen=127.0.0.1', `--port=${port}`, baseDir],
        { cwd: baseDir, env: gitEnvForTests(), okCodes: [0, 143, 1] },
      );
      p.stdout.resume();
      let exited = false;
      p.exited.then(
        () => (exited = true),
        () => (exited = true),
      );
      for (let i = 0; i < 60 && !exited; i++) {
        if (await canConnect(port)) {
          proc = p;
          return;
        }
        await sleep(50);
      }
      p.kill('SIGKILL');
      await p.exited.catch(() => undefined);
      await sleep(100); // the port may still be held by the previous instance
    }
    throw new Error(`git daemon did not start on port ${port}`);
  };
  const stop = async (): Promise<void> => {
    const p = proc;
    proc = null;
    if (!p) return;
    p.kill('SIGTERM');
    const killer = setTimeout(() => p.kill('SIGKILL'), 5_000);
    await p.exited.catch(() => undefined);
    clearTimeout(killer);
    // git daemon forks a child per connection; give them a moment to finish with the port.
    for (let i = 0; i < 40 && (await canConnect(port)); i++) await sleep(50);
  };
  await start();
  return { port, url: (name) => `git://127.0.0.1:${port}/${name}`, stop, start };
}
