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
import { cp, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'vitest';
import { REPO_ROOT, sharedMissing } from './fixtures.js';
import { canConnect, freePort, git, makeTempDir } from './git-fixtures.js';

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

/** `it` for one test that needs the 5.x client inside a suite that does not (skips saying why; fails in CI). */
export const itWithAgentV: typeof it = HAS_AGENTV
  ? it
  : (((name: string, fn: () => void, timeout?: number) => it.skip(`${name} [${agentvMissing()}]`, fn, timeout)) as unknown as typeof it);

/**
 * What every AgentV process gets besides its HOME. AgentV skips its update check only when
 * `AGENTV_NO_UPDATE_CHECK=1` or `CI=true` (not `CI=1`): without it each call started a detached
 * second process asking the npm registry for a newer version, a network request from the tests and
 * CPU the suite paid for nothing.
 */
const AGENTV_ENV = { NO_COLOR: '1', CI: '1', AGENTV_NO_UPDATE_CHECK: '1' } as const;

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

/** Run `agentv <args>` (or another client's binary, `bin`) as a real process. */
export async function runAgentV(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number; bin?: string },
): Promise<AgentVResult> {
  const home = await agentvHome();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(opts.bin ?? AGENTV_BIN, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...AGENTV_ENV, HOME: home, ...opts.env },
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

const answers = new Map<string, Promise<AgentVResult>>();

/**
 * `runAgentV` for a question that writes nothing, asked once per test process: the same client,
 * directory and arguments get the first answer again instead of another start of AgentV (~1
 * CPU-s). Only for inputs that are not changed after they are first asked about.
 */
export function askAgentVOnce(args: string[], opts: { cwd: string; bin?: string }): Promise<AgentVResult> {
  const key = JSON.stringify([opts.bin ?? AGENTV_BIN, opts.cwd, args]);
  const asked = answers.get(key);
  if (asked) return asked;
  const answer = runAgentV(args, opts);
  answers.set(key, answer);
  return answer;
}

/** A copy of the offline sample project (or another, `sample`) in a fresh temp dir, as a git repository with one commit. */
export async function makeSampleProject(parent?: string, sample = AGENTV_SAMPLE_PROJECT): Promise<string> {
  const base = parent ?? (await mkdtemp(join(tmpdir(), 'agentv-sample-')));
  const dir = join(base, 'project');
  await mkdir(dir, { recursive: true });
  await cp(sample, dir, { recursive: true });
  await writeFile(join(dir, '.gitignore'), '.agentv/\n');
  await git(dir, ['init', '-q', '-b', 'main']);
  await git(dir, ['add', '-A']);
  await git(dir, ['-c', 'user.name=Sample', '-c', 'user.email=sample@example.invalid', 'commit', '-q', '-m', 'sample project']);
  return dir;
}

/** Points a sample project's AgentV config at the results branch (AgentV's Dashboard reads one only when configured). */
export async function configureResults(project: string, autoPush: boolean, branch = 'agentv/results/v1'): Promise<void> {
  const cfgPath = join(project, '.agentv', 'config.yaml');
  const cfg = await readFile(cfgPath, 'utf8');
  await writeFile(cfgPath, `${cfg.trimEnd()}\nresults:\n  path: .\n  branch: ${branch}\n  auto_push: ${autoPush}\n`);
}

/** A sample project whose origin is a fresh bare remote that refuses non-fast-forward pushes, its results branch configured. */
export async function projectWithRemote(autoPush: boolean): Promise<{ project: string; remote: string }> {
  const project = await makeSampleProject();
  const remote = join(await makeTempDir('agentv-remote'), 'results.git');
  await git(project, ['init', '-q', '--bare', remote]);
  await git(remote, ['config', 'receive.denyNonFastForwards', 'true']);
  await git(project, ['remote', 'add', 'origin', remote]);
  await git(project, ['push', '-q', 'origin', 'main']);
  await configureResults(project, autoPush);
  return { project, remote };
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

/**
 * `agentv serve --single --read-only --dir <project>` on a free 127.0.0.1 port; stop() kills it by
 * pid. `bin` picks the client (agentv-stable, say); `home` gives this server a HOME of its own
 * (AgentV keeps sync status per repository there, so two servers compared side by side must not
 * share one).
 */
export async function startAgentVServe(projectDir: string, extraArgs: string[] = [], opts: { bin?: string; home?: string } = {}): Promise<AgentVServer> {
  const port = await freePort();
  const home = opts.home ?? (await agentvHome());
  const child = spawn(opts.bin ?? AGENTV_BIN, ['serve', '--single', '--read-only', '--dir', projectDir, '--port', String(port), ...extraArgs], {
    cwd: projectDir,
    env: { ...process.env, ...AGENTV_ENV, HOME: home },
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

/**
 * AgentV's stable release (4.42.4, `agentv-stable`: what `npm i -g agentv` installs) beside the
 * 5.x line above. Its runs live in `.agentv/results/runs/<experiment>/<timestamp>/`; it publishes
 * `runs/<experiment>/<timestamp>/` on the results branch and its Dashboard lists only those.
 */
export const AGENTV_STABLE_BIN = join(AGENTV_CLIENT_DIR, 'agentv-stable');
export const AGENTV_STABLE_SAMPLE_PROJECT = join(AGENTV_CLIENT_DIR, 'sample-project-stable');
export const HAS_AGENTV_STABLE = existsSync(AGENTV_STABLE_BIN) && existsSync(AGENTV_STABLE_SAMPLE_PROJECT);

/** Why a test that needs the stable client cannot run here; throws when CI is set (sharedMissing). */
export const agentvStableMissing = () =>
  sharedMissing("AgentV's stable client (agentv-stable)", AGENTV_CLIENT_DIR, 'it ships beside the repository in ../shared, or set AGENTV_CLIENT_DIR');

export const describeWithAgentVStable: typeof describe = HAS_AGENTV_STABLE
  ? describe
  : (((name: string, fn: () => void) => describe.skip(`${name} [${agentvStableMissing()}]`, fn)) as unknown as typeof describe);

/** `agentv-stable <args>` as a real process (throwaway HOME, like `runAgentV`). */
export function runAgentVStable(args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number }): Promise<AgentVResult> {
  return runAgentV(args, { ...opts, bin: AGENTV_STABLE_BIN });
}

/** A copy of the stable sample project as a git repository with one commit. */
export function makeStableSampleProject(parent?: string): Promise<string> {
  return makeSampleProject(parent, AGENTV_STABLE_SAMPLE_PROJECT);
}

async function stableRunDirs(projectDir: string, experiment: string): Promise<string[]> {
  const root = join(projectDir, '.agentv', 'results', 'runs', experiment);
  if (!existsSync(root)) return [];
  return (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => join(root, e.name));
}

/** `agentv-stable eval evals/demo.eval.yaml --experiment <experiment>`; returns `.agentv/results/runs/<experiment>/<timestamp>`. */
export async function agentvStableEval(projectDir: string, opts: { experiment?: string; env?: Record<string, string | undefined> } = {}): Promise<string> {
  const experiment = opts.experiment ?? 'demo';
  const before = new Set(await stableRunDirs(projectDir, experiment));
  const r = await runAgentVStable(['eval', 'evals/demo.eval.yaml', '--experiment', experiment], { cwd: projectDir, env: opts.env });
  if (r.code !== 0) throw new Error(`agentv-stable eval exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const created = (await stableRunDirs(projectDir, experiment)).filter((d) => !before.has(d));
  if (created.length !== 1) throw new Error(`agentv-stable eval made ${created.length} run directories\n${r.stdout}`);
  return created[0]!;
}

/**
 * The conformance matrix: each client a case can run against. A suite written once over
 * `AGENTV_CLIENTS` runs for both the 5.x line and the stable release, each skipped (and saying
 * why) when its client is not beside the clone.
 */
export interface AgentVClientCase {
  name: 'agentv' | 'agentv-stable';
  /** Its binary (`runAgentV`'s and `askAgentVOnce`'s `bin`). */
  bin: string;
  available: boolean;
  run(args: string[], opts: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number }): Promise<AgentVResult>;
  makeProject(parent?: string): Promise<string>;
  /** One eval of the sample suite; returns the run directory. */
  evalRun(projectDir: string, opts?: { experiment?: string; env?: Record<string, string | undefined> }): Promise<string>;
}

export const AGENTV_CLIENTS: AgentVClientCase[] = [
  { name: 'agentv', bin: AGENTV_BIN, available: HAS_AGENTV, run: runAgentV, makeProject: (p) => makeSampleProject(p), evalRun: agentvEval },
  {
    name: 'agentv-stable',
    bin: AGENTV_STABLE_BIN,
    available: HAS_AGENTV_STABLE,
    run: runAgentVStable,
    makeProject: makeStableSampleProject,
    evalRun: agentvStableEval,
  },
];

/** `describe` once per client of the matrix; a missing one is skipped saying why (and fails the run in CI). */
export function describeEachClient(name: string, fn: (client: AgentVClientCase) => void): void {
  for (const client of AGENTV_CLIENTS) {
    const title = `${name} [${client.name}]`;
    if (client.available) describe(title, () => fn(client));
    else describe.skip(`${title} [${client.name === 'agentv' ? agentvMissing() : agentvStableMissing()}]`, () => fn(client));
  }
}
