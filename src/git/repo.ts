// Locating a repository once, then addressing it only by explicit --git-dir. Nothing here needs or
// touches the user's worktree: after openRepo, commands run with cwd = the git directory (transport
// commands: the worktree's top, where git resolves relative remote URLs; see transportCwd).
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { GitArgumentError, GitError, GitOutputError, NotARepositoryError } from '../errors/git-errors.js';
import { runGit, type RunGitOptions } from './runner.js';
import { assertGitVersion } from './version.js';
import { absentAs } from '../errors/errors.js';
import { movesNoRef, noteRefWrite, snapshotList, snapshotRef } from './ref-snapshot.js';

export type { RefEntry, Repo } from './repo-types.js';
import type { RefEntry, Repo } from './repo-types.js';

/** Run git against `repo` (explicit --git-dir, cwd = the git dir). */
export function gitIn(repo: Repo, args: string[], opts: Omit<RunGitOptions, 'gitDir'> = {}) {
  // A command that may move a ref drops the repository's ref snapshots (ref-snapshot.ts) when it
  // starts and again when it ends: a snapshot read while it ran is not trusted either.
  if (movesNoRef(args)) return runGit(args, { ...opts, gitDir: repo.gitDir });
  noteRefWrite(repo);
  return runGit(args, { ...opts, gitDir: repo.gitDir }).finally(() => noteRefWrite(repo));
}

/**
 * Where git resolves a remote's relative URL (`url = ../results.git`): git itself runs from the top
 * of the worktree (the git dir of a bare repository), so transport commands run there too, not in
 * the git dir. They read and write nothing in the worktree.
 */
export function transportCwd(repo: Repo): string {
  return repo.workTree ?? repo.gitDir;
}

/** stdout as trimmed text, for commands whose output is a single line or a short list. */
export function text(buf: Buffer): string {
  return buf.toString('utf8').replace(/\n$/, '');
}

/** Rejects values that git would parse as an option instead of a revision or name. */
export function assertNotOption(value: string, what: string): void {
  if (value.length === 0) throw new GitArgumentError(`${what} must not be empty`);
  if (value.startsWith('-')) throw new GitArgumentError(`${what} must not start with "-": ${JSON.stringify(value)}`);
  if (/[\0\n]/.test(value)) throw new GitArgumentError(`${what} must not contain NUL or newline: ${JSON.stringify(value)}`);
}

export function zeroId(repo: Repo): string {
  return '0'.repeat(repo.objectFormat === 'sha256' ? 64 : 40);
}

/**
 * Finds the repository containing `path` (like git itself: `path` may be a subdirectory).
 * Throws NotARepositoryError when there is none, GitVersionError when git is too old.
 */
export async function openRepo(path: string): Promise<Repo> {
  const abs = resolve(path);
  // absent: reported as "no such directory" just below; anything else propagates
  const st = await stat(abs).catch(absentAs(null));
  if (!st) throw new NotARepositoryError(abs, 'no such directory');
  if (!st.isDirectory()) throw new NotARepositoryError(abs, 'not a directory');
  await assertGitVersion();

  const probe = await runGit(
    // --show-toplevel last: rev-parse answers its arguments in order, and outside a worktree (a bare
    // repository, the git dir) it fails on that one alone, after printing the others. One process.
    [
      'rev-parse',
      '--path-format=absolute',
      '--absolute-git-dir',
      '--git-common-dir',
      '--is-bare-repository',
      '--is-inside-work-tree',
      '--show-object-format',
      '--show-toplevel',
    ],
    { cwd: abs, okCodes: [0, 128] },
  );
  const noWorkTree = probe.code === 128 && /must be run in a work tree/i.test(probe.stderr);
  if (probe.code !== 0 && !noWorkTree) {
    if (/not a git repository/i.test(probe.stderr)) throw new NotARepositoryError(abs);
    // e.g. "detected dubious ownership": git's own message says what to do.
    throw new GitError(['git', 'rev-parse'], probe.code, probe.stderr);
  }
  const [gitDir, commonDir, bare, inside, format, top] = text(probe.stdout).split('\n');
  if (!gitDir || !commonDir || !bare || !inside || !format) {
    throw new GitOutputError(`unexpected output from git rev-parse in ${abs}: ${JSON.stringify(probe.stdout.toString())}`);
  }
  if (inside === 'true' && !top) throw new GitOutputError(`git rev-parse --show-toplevel printed nothing inside the worktree ${abs}`);
  const workTree = inside === 'true' ? (top as string) : null;
  return {
    gitDir,
    commonDir,
    workTree,
    bare: bare === 'true',
    objectFormat: format === 'sha256' ? 'sha256' : 'sha1',
  };
}

/** The object id `ref` (any revision expression) names, or null when it does not resolve. */
export async function resolveRef(repo: Repo, ref: string): Promise<string | null> {
  assertNotOption(ref, 'ref');
  const known = snapshotRef(repo, ref);
  if (known !== undefined) return known;
  const r = await gitIn(repo, ['rev-parse', '-q', '--verify', '--end-of-options', ref], { okCodes: [0, 1] });
  return r.code === 0 ? text(r.stdout) : null;
}

/** Full name of the branch HEAD points at ("refs/heads/main"), or null when HEAD is detached. */
export async function currentBranch(repo: Repo): Promise<string | null> {
  const r = await gitIn(repo, ['symbolic-ref', '-q', 'HEAD'], { okCodes: [0, 1] });
  return r.code === 0 ? text(r.stdout) : null;
}

/** True when commit `a` is an ancestor of (or equal to) commit `b`. */
export async function isAncestor(repo: Repo, a: string, b: string): Promise<boolean> {
  assertNotOption(a, 'commit');
  assertNotOption(b, 'commit');
  const r = await gitIn(repo, ['merge-base', '--is-ancestor', a, b], { okCodes: [0, 1] });
  return r.code === 0;
}

/**
 * Refs equal to `prefix` or below it as a directory ("refs/heads/agentv" lists
 * "refs/heads/agentv/results/v1" but not "refs/heads/agentvx"). Sorted by name.
 */
export async function listRefs(repo: Repo, prefix: string): Promise<RefEntry[]> {
  assertNotOption(prefix, 'ref prefix');
  const known = snapshotList(repo, prefix);
  if (known !== undefined) return known;
  const r = await gitIn(repo, ['for-each-ref', '--format=%(objectname) %(refname)', prefix]);
  return text(r.stdout)
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const sp = l.indexOf(' ');
      return { sha: l.slice(0, sp), ref: l.slice(sp + 1) };
    });
}

/** The (last) value of a config key as git resolves it for this repo, or null when unset. */
export async function configGet(repo: Repo, key: string): Promise<string | null> {
  assertNotOption(key, 'config key');
  const r = await gitIn(repo, ['config', '--null', '--get', key], { okCodes: [0, 1] });
  if (r.code !== 0) return null;
  return r.stdout.toString('utf8').replace(/\0$/, '');
}

/**
 * The (last) value of each of several plain keys ("section.name", no subsection) with ONE process;
 * unset keys are absent from the map, which is keyed by the names as given. Publish reads the
 * author identity and gc thresholds together: every git process is latency on a busy CI machine.
 */
export async function configGetMany(repo: Repo, keys: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (keys.length === 0) return out;
  // git prints these keys lower-cased; matching is case-insensitive like git's own.
  const byCanonical = new Map(keys.map((k) => [k.toLowerCase(), k]));
  for (const k of byCanonical.keys())
    if (!/^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$/.test(k)) throw new GitArgumentError(`configGetMany takes plain section.name keys, got ${JSON.stringify(k)}`);
  const pattern = `^(${[...byCanonical.keys()].map((k) => k.replace('.', '\\.')).join('|')})$`;
  // Exit 1: none of them is set.
  const r = await gitIn(repo, ['config', '--null', '--get-regexp', pattern], { okCodes: [0, 1] });
  // Entries are "<key>\n<value>\0", in the order git reads its files: a later one wins, as with --get.
  for (const entry of r.stdout.toString('utf8').split('\0')) {
    const nl = entry.indexOf('\n');
    const key = byCanonical.get((nl < 0 ? entry : entry.slice(0, nl)).toLowerCase());
    if (key !== undefined) out.set(key, nl < 0 ? '' : entry.slice(nl + 1));
  }
  return out;
}

export async function listRemotes(repo: Repo): Promise<string[]> {
  return [...(await readRemotes(repo)).keys()];
}

/** A remote's URLs as git uses them (insteadOf / pushInsteadOf rules applied); see readRemotes. */
export interface RemoteUrls {
  fetch: string;
  push: string;
}

/**
 * Every remote with its fetch and push URL, from ONE process (`git remote -v`: the names `git remote`
 * lists, each with what `git remote get-url [--push]` prints). A remote with no URL is its own
 * name, as get-url says.
 */
export async function readRemotes(repo: Repo): Promise<Map<string, RemoteUrls>> {
  const r = await gitIn(repo, ['remote', '-v']);
  const out = new Map<string, RemoteUrls>();
  for (const line of text(r.stdout).split('\n')) {
    const tab = line.indexOf('\t');
    if (tab <= 0) continue;
    const name = line.slice(0, tab);
    const m = /^(.*) \((fetch|push)\)$/.exec(line.slice(tab + 1));
    const entry = out.get(name) ?? { fetch: '', push: '' };
    // -v prints the first fetch URL and every push URL: get-url's answers are the first of each.
    if (m?.[2] === 'fetch' && !entry.fetch) entry.fetch = m[1] as string;
    if (m?.[2] === 'push' && !entry.push) entry.push = m[1] as string;
    out.set(name, entry);
  }
  for (const [name, e] of out) {
    e.fetch ||= name;
    e.push ||= e.fetch;
  }
  remotesSeen.set(repo.commonDir, out);
  return out;
}

/** The remotes each repository had when readRemotes last read them (git/network.ts asks which transport a remote uses). */
const remotesSeen = new Map<string, Map<string, RemoteUrls>>();

/** The last reading of the repository's remotes in this process (an object that a new reading replaces), or undefined. */
export function remotesReading(repo: Repo): object | undefined {
  return remotesSeen.get(repo.commonDir);
}

/** The URL of remote `name` as readRemotes last read it in this process; undefined when not read. */
export function knownRemoteUrl(repo: Repo, name: string, opts: { push?: boolean } = {}): string | undefined {
  const urls = remotesSeen.get(repo.commonDir)?.get(name);
  return opts.push ? urls?.push : urls?.fetch;
}

/** URL of remote `name` (insteadOf rules applied, as git would use it), or null if no such remote. */
export async function remoteUrl(repo: Repo, name: string, opts: { push?: boolean } = {}): Promise<string | null> {
  assertNotOption(name, 'remote name');
  const args = ['remote', 'get-url', ...(opts.push ? ['--push'] : []), name];
  const r = await gitIn(repo, args, { okCodes: [0, 2] });
  return r.code === 0 ? text(r.stdout) : null;
}

/**
 * Full names of the branches checked out in any worktree of the repository (main and linked).
 * Our branches must never be among them: moving a checked-out branch would desync that worktree.
 */
export async function worktreeBranches(repo: Repo): Promise<string[]> {
  const r = await gitIn(repo, ['worktree', 'list', '--porcelain', '-z']);
  const branches = new Set<string>();
  for (const field of r.stdout.toString('utf8').split('\0')) {
    if (field.startsWith('branch ')) branches.add(field.slice('branch '.length));
  }
  return [...branches];
}
