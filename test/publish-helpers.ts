/**
 * Fixtures shared by the publish-*.test.ts suites: user repositories in awkward states (built by
 * fixtures-repos/user-repo-variant.sh), small synthetic runs exported OUTSIDE the user's checkout,
 * the built CLI with an isolated git identity, and the checks every command must pass (checkout
 * untouched, `git fsck --strict` clean, pointers resolving with matching hashes).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { rng, syntheticRow } from '../bench/synthetic.mjs';
import { exportRun } from '../src/runs/export/export.js';
import { openRepo, readBlobs, resolveRef, runGit, lsTree } from '../src/git/index.js';
import { runCli, spawnCli, type CliResult } from './helpers/cli.js';
import {
  gitEnvForTests,
  makeTempDir,
  makeUserRepoWithRemote,
  snapshotCheckout,
  startGitDaemonOn,
  type GitDaemon,
  type UserRepoFixture,
} from './helpers/git-fixtures.js';

export const RESULTS_REF = 'refs/heads/agentv/results/v1';
export const ARTIFACTS_REF = 'refs/heads/agentv/artifacts/v1';
const VARIANT_SCRIPT = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'fixtures-repos/user-repo-variant.sh');
const USER_SCRIPT = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'fixtures-repos/user-repo.sh');

function runScript(args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', args, { env: { ...process.env, ...gitEnvForTests() }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolvePromise() : reject(new Error(`${args.join(' ')} failed (${code}): ${stderr}`))));
  });
}

/** The user repository of fixtures-repos/user-repo.sh, optionally in one of user-repo-variant.sh's states. */
export async function makeUserRepo(variant?: string, arg?: string): Promise<UserRepoFixture> {
  // The plain repository is user-repo.sh's, copied from the run's template (git-fixtures.ts).
  if (!variant) return makeUserRepoWithRemote();
  const root = await makeTempDir('agentv-user');
  await runScript(variant ? [VARIANT_SCRIPT, root, variant, ...(arg ? [arg] : [])] : [USER_SCRIPT, root]);
  return { root, work: join(root, 'user'), remote: join(root, 'remote.git') };
}

export interface RunSpec {
  experiment?: string;
  rows?: number;
  seed?: number;
  /** Day offset from 2026-03-14 and minute of the run: distinct run ids. */
  day?: number;
  minute?: number;
  /** Each row's transcript grown (by numbered copies of its assistant turn) to about this many characters. */
  transcriptChars?: number;
}

export interface RunWorkspace {
  dir: string;
  runId: string;
}

/** Exports a synthetic run (transcripts, answers, diffs: it has payloads) into a temp dir outside any repository. */
export async function makeRunWorkspace(spec: RunSpec = {}): Promise<RunWorkspace> {
  const parent = await makeTempDir('agentv-run');
  const r = rng(spec.seed ?? 7);
  const base = Date.UTC(2026, 2, 14 + (spec.day ?? 0), 10, spec.minute ?? 0);
  const lines: string[] = [];
  for (let i = 0; i < (spec.rows ?? 4); i++) {
    const row = syntheticRow(r, i, { turns: 1 });
    if (spec.transcriptChars) {
      const turn = (row.output as Record<string, unknown>[])[0]!;
      const turns: Record<string, unknown>[] = [];
      for (let n = 0, size = 0; size < spec.transcriptChars; n++) {
        const t = { ...turn, content: `${n}: ${turn.content} `.repeat(8) };
        size += JSON.stringify(t).length;
        turns.push(t);
      }
      row.output = turns;
    }
    row.timestamp = new Date(base + i * 1000).toISOString();
    lines.push(JSON.stringify(row));
  }
  const src = join(parent, 'results.jsonl');
  await writeFile(src, lines.join('\n') + '\n');
  const out = join(parent, 'run');
  const res = await exportRun({ source: src, out, experiment: spec.experiment ?? 'nightly', cwd: parent });
  return { dir: res.outDir ?? out, runId: res.runId };
}

type CliCallOptions = { env?: Record<string, string | undefined>; timeoutMs?: number };

/** The built CLI with the isolated git environment (identity, no user config). */
export function cli(args: string[], cwd: string, opts: CliCallOptions = {}): Promise<CliResult> {
  return runCli(args, { cwd, env: { ...gitEnvForTests(), ...opts.env }, timeoutMs: opts.timeoutMs ?? 90_000 });
}

/** `cli` as a real process, for commands that run at the same time as others. */
export function cliProcess(args: string[], cwd: string, opts: CliCallOptions = {}): Promise<CliResult> {
  return spawnCli(args, { cwd, env: { ...gitEnvForTests(), ...opts.env }, timeoutMs: opts.timeoutMs ?? 90_000 });
}

/** Runs `fn` and asserts the user's HEAD, index bytes, worktree files, status, stash, other refs and config did not change. */
export async function expectUntouched<T>(work: string, fn: () => Promise<T>): Promise<T> {
  const before = await snapshotCheckout(work);
  const result = await fn();
  expect(await snapshotCheckout(work)).toEqual(before);
  return result;
}

export async function expectFsckClean(dir: string): Promise<void> {
  const r = await runGit(['fsck', '--strict', '--no-dangling', '--no-progress'], { cwd: dir, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8] });
  const out = `${r.stdout.toString()}${r.stderr}`;
  expect(out.trim(), out).toBe('');
  expect(r.code).toBe(0);
}

/** The commit `ref` (a full ref name) points at, or null: one for-each-ref, no repository opened. */
export async function tip(dir: string, ref: string): Promise<string | null> {
  const r = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', ref], { cwd: dir });
  const line = r.stdout
    .toString('utf8')
    .split('\n')
    .find((l) => l.endsWith(` ${ref}`));
  return line ? line.split(' ')[0]! : null;
}

/**
 * Every artifact pointer in every index.jsonl on the results tip resolves on the artifacts tip
 * with the pointed size and sha256. Returns how many pointers were checked.
 */
export async function expectPointersResolve(dir: string): Promise<number> {
  const repo = await openRepo(dir);
  const results = await resolveRef(repo, RESULTS_REF);
  if (!results) return 0;
  const artifacts = await resolveRef(repo, ARTIFACTS_REF);
  // Runs sit at the branch root (AgentV's layout); the catalog under .indexes/ is not a run index.
  const indexes = (await lsTree(repo, results, { recursive: true })).filter((e) => e.path.endsWith('/index.jsonl') && !e.path.startsWith('.'));
  const blobs = await readBlobs(
    repo,
    indexes.map((e) => e.sha),
  );
  const pointers: { key: string; sha256: string; size: number }[] = [];
  for (const e of indexes) {
    for (const line of (blobs.get(e.sha) ?? Buffer.alloc(0)).toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      const raw = (JSON.parse(line) as { artifact_pointers?: unknown }).artifact_pointers;
      // AgentV's shape: an object ({transcript, <path>: ...}); older rows: a list.
      const list = (Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? Object.values(raw) : []) as { key: string; sha256: string; size: number }[];
      for (const p of list) pointers.push(p);
    }
  }
  if (pointers.length === 0) return 0;
  expect(artifacts, 'results point at payloads but there is no artifacts branch').not.toBeNull();
  const payloads = await readBlobs(
    repo,
    pointers.map((p) => `${artifacts}:${p.key}`),
  );
  for (const p of pointers) {
    const data = payloads.get(`${artifacts}:${p.key}`);
    expect(data, `payload ${p.key} missing on the artifacts tip`).toBeTruthy();
    expect(data!.length).toBe(p.size);
    expect(createHash('sha256').update(data!).digest('hex')).toBe(p.sha256);
  }
  return pointers.length;
}

/** Every regular file under `dir` (relative path -> bytes). */
export async function readTree(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.set(relative(dir, p), await readFile(p));
    }
  };
  await walk(dir);
  return out;
}

/** How many commits `ref` has (0 when absent). */
export async function commitCount(dir: string, ref: string): Promise<number> {
  const r = await runGit(['rev-list', '--count', ref], { cwd: dir, okCodes: [0, 128] });
  return r.code === 0 ? Number(r.stdout.toString().trim()) : 0;
}

export type Daemon = GitDaemon;

/** A git daemon on a given loopback port (so a test can stop it and bring the same URL back). */
export const startDaemonOn = startGitDaemonOn;
