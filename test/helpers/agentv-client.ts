/**
 * The real AgentV CLI (../shared/agentv-client) as a test peer: it is the judge of our wire
 * contract. Suites that need it use `describeWithAgentV`, which says plainly that it is skipped
 * and why when the client is not beside the clone (a user's fresh clone), like the fixture suites,
 * and fails the run instead when CI is set.
 *
 * AgentV keeps state under ~/.agentv, so every call gets a throwaway HOME. The wrapper script
 * caches Bun outside HOME, so a throwaway HOME costs no reinstall.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe } from 'vitest';
import { REPO_ROOT, sharedMissing } from './fixtures.js';
import { canConnect, freePort, git } from './git-fixtures.js';

export const AGENTV_CLIENT_DIR = process.env.AGENTV_CLIENT_DIR ?? resolve(REPO_ROOT, '../shared/agentv-client');
export const AGENTV_BIN = join(AGENTV_CLIENT_DIR, 'agentv');
export const AGENTV_SAMPLE_PROJECT = join(AGENTV_CLIENT_DIR, 'sample-project');
export const HAS_AGENTV = existsSync(AGENTV_BIN) && existsSync(join(AGENTV_CLIENT_DIR, 'agentv.js'));

/** Why a test that needs the client cannot run here (`skipped: …`); throws when CI is set (sharedMissing). */
export const agentvMissing = () =>
  sharedMissing('the real AgentV client', AGENTV_CLIENT_DIR, 'it ships beside the repository in ../shared, or set AGENTV_CLIENT_DIR');

export const describeWithAgentV: typeof describe = HAS_AGENTV
  ? describe
  : (((name: string, fn: () => void) => describe.skip(`${name} [${agentvMissing()}]`, fn)) as unknown as typeof describe);

export interface AgentVResult {
  code: number;
  stdout: string;
  stderr: string;
}

let sharedHome: string | null = null;

/** One throwaway HOME per test process: AgentV writes ~/.agentv there, never in the real home. */
export async function agentvHome(): Promise<string> {
  if (!sharedHome) sharedHome = await mkdtemp(join(tmpdir(), 'agentv-home-'));
  return sharedHome;
}

/** Run `agentv <args>` as a real process. */
export async function runAgentV(args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number }): Promise<AgentVResult> {
  const home = await agentvHome();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(AGENTV_BIN, args, {
      cwd: opts.cwd,
      env: { ...process.env, HOME: home, NO_COLOR: '1', CI: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/** A copy of the offline sample project in a fresh temp dir, as a git repository with one commit. */
export async function makeSampleProject(parent?: string): Promise<string> {
  const base = parent ?? (await mkdtemp(join(tmpdir(), 'agentv-sample-')));
  const dir = join(base, 'project');
  await mkdir(dir, { recursive: true });
  await cp(AGENTV_SAMPLE_PROJECT, dir, { recursive: true });
  await writeFile(join(dir, '.gitignore'), '.agentv/\n');
  await git(dir, ['init', '-q', '-b', 'main']);
  await git(dir, ['add', '-A']);
  await git(dir, ['-c', 'user.name=Sample', '-c', 'user.email=sample@example.invalid', 'commit', '-q', '-m', 'sample project']);
  return dir;
}

/** Names of the run directories AgentV keeps directly under `.agentv/results/`. */
export async function agentvRunIds(projectDir: string): Promise<string[]> {
  const root = join(projectDir, '.agentv', 'results');
  if (!existsSync(root)) return [];
  return (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

/**
 * `agentv eval evals/demo.eval.yaml --experiment <experiment>` in the sample project; returns the
 * new run's directory (`.agentv/results/<run_id>`).
 */
export async function agentvEval(
  projectDir: string,
  opts: { experiment?: string; extraArgs?: string[]; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  const before = new Set(await agentvRunIds(projectDir));
  const r = await runAgentV(['eval', 'evals/demo.eval.yaml', '--experiment', opts.experiment ?? 'demo', ...(opts.extraArgs ?? [])], {
    cwd: projectDir,
    env: opts.env,
  });
  if (r.code !== 0) throw new Error(`agentv eval exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const created = (await agentvRunIds(projectDir)).filter((id) => !before.has(id));
  if (created.length !== 1) throw new Error(`agentv eval made ${created.length} run directories: ${created.join(', ')}\n${r.stdout}`);
  return join(projectDir, '.agentv', 'results', created[0]!);
}

export interface AgentVServer {
  port: number;
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `agentv serve --single --read-only --dir <project>` on a free 127.0.0.1 port; stop() kills it by pid. */
export async function startAgentVServe(projectDir: string, extraArgs: string[] = []): Promise<AgentVServer> {
  const port = await freePort();
  const home = await agentvHome();
  const child = spawn(AGENTV_BIN, ['serve', '--single', '--read-only', '--dir', projectDir, '--port', String(port), ...extraArgs], {
    cwd: projectDir,
    env: { ...process.env, HOME: home, NO_COLOR: '1', CI: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
    await closed;
  };
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`agentv serve exited ${child.exitCode}: ${output}`);
    if (await canConnect(port)) return { port, url: `http://127.0.0.1:${port}`, child, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`agentv serve did not listen on ${port} within 30 s: ${output}`);
}
