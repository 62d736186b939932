// Small object-level operations: commit an existing tree, list a tree, housekeeping.
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { normalizeIdent, normalizeMessage, identEnv, type Ident } from './ident.js';
import { assertNotOption, gitIn, text, type Repo } from './repo.js';
import { processAlive } from '../util/process-alive.js';
import { spawnGit } from './runner.js';
import { GitOutputError } from '../errors/git-errors.js';
import { absentAs } from '../errors/errors.js';

export interface CommitTreeOptions {
  tree: string;
  /** In order: the first parent is what first-parent history follows. */
  parents: string[];
  message: string;
  author: Ident;
  /** Defaults to the author. */
  committer?: Ident;
}

/**
 * Commits `tree` with explicit identities and dates, so the id is deterministic and identical to
 * what writeCommit produces for the same content.
 */
export async function commitTree(repo: Repo, opts: CommitTreeOptions): Promise<string> {
  assertNotOption(opts.tree, 'tree');
  const author = normalizeIdent(opts.author, 'author');
  const committer = normalizeIdent(opts.committer ?? opts.author, 'committer');
  const args = ['commit-tree', '--no-gpg-sign'];
  for (const p of opts.parents) {
    assertNotOption(p, 'parent');
    args.push('-p', p);
  }
  args.push('-F', '-', opts.tree);
  const r = await gitIn(repo, args, {
    input: normalizeMessage(opts.message),
    env: identEnv(author, committer),
    // A user's i18n.commitEncoding would add an "encoding" header (and change the id); a user's
    // commit.gpgSign is countered by --no-gpg-sign above. fast-import honours neither.
    config: { 'i18n.commitEncoding': 'UTF-8' },
  });
  return text(r.stdout);
}

export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  /** Full path from the root of the tree. */
  path: string;
  /** Blob size in bytes, only with `long: true` (undefined for trees and submodules). */
  size?: number;
}

export interface LsTreeOptions {
  /**
   * Restrict to this path, taken literally (no globbing). As with git: "dir" lists the entry "dir"
   * itself, "dir/" lists its children (recursively with `recursive`).
   */
  path?: string;
  /** Several such paths in one listing (each taken as `path` is; with `path`, both). */
  paths?: readonly string[];
  recursive?: boolean;
  /** Also report blob sizes (costs one object header lookup per blob). */
  long?: boolean;
}

export async function lsTree(repo: Repo, treeish: string, opts: LsTreeOptions = {}): Promise<TreeEntry[]> {
  assertNotOption(treeish, 'tree-ish');
  // --literal-pathspecs: a data-derived path containing "*" or "[" must not act as a glob.
  const args = ['--literal-pathspecs', 'ls-tree', '-z', '--full-tree'];
  if (opts.recursive) args.push('-r');
  if (opts.long) args.push('-l');
  args.push('--end-of-options', treeish);
  const paths = [...(opts.path === undefined ? [] : [opts.path]), ...(opts.paths ?? [])];
  if (paths.length > 0) args.push('--', ...paths);
  const r = await gitIn(repo, args);
  const entries: TreeEntry[] = [];
  for (const rec of r.stdout.toString('utf8').split('\0')) {
    if (rec.length === 0) continue;
    const tab = rec.indexOf('\t');
    // "<mode> <type> <id>" (and with -l " <size>", padded): a regex split per entry cost a listing of 100,000 entries ~1 s.
    const s1 = rec.indexOf(' ');
    const s2 = rec.indexOf(' ', s1 + 1);
    const [mode, type, sha, size] = opts.long ? rec.slice(0, tab).split(/ +/) : [rec.slice(0, s1), rec.slice(s1 + 1, s2), rec.slice(s2 + 1, tab), undefined];
    if (!mode || !type || !sha) throw new GitOutputError(`unexpected ls-tree record ${JSON.stringify(rec)}`);
    const entry: TreeEntry = { mode, type: type as TreeEntry['type'], sha, path: rec.slice(tab + 1) };
    if (size !== undefined && size !== '-') entry.size = Number(size);
    entries.push(entry);
  }
  return entries;
}

/** gc.auto and gc.autoPackLimit as configured (raw config strings; absent = git's defaults). */
export interface GcConfig {
  auto?: string;
  autoPackLimit?: string;
}

/**
 * `git gc --auto`: packs loose objects and many small packs (each publish adds one) when git's own
 * thresholds say so; a no-op otherwise. Runs in the foreground (gc.autoDetach=false) so no
 * background process outlives the call or holds gc's lock while we publish.
 *
 * With `config` (the two thresholds, read by the caller along with other keys), git is only started
 * when its own estimate could say yes: more entries in objects/17 than gc.auto/256, or more packs
 * than gc.autoPackLimit. Both counts are taken generously (any file there), so this never skips a
 * gc that git would have run; it saves a process on the ~49 of 50 publishes where git would not.
 */
export async function gcAuto(repo: Repo, opts: { config?: GcConfig } = {}): Promise<void> {
  await sweepOurCrashReports(repo);
  if (opts.config && !(await mayNeedGc(repo, opts.config))) return;
  await gitIn(repo, ['gc', '--auto', '--quiet'], { config: { 'gc.autoDetach': 'false' } });
}

/** git's integer config syntax (an optional k/m/g suffix); null for anything else. */
function gitInt(value: string | undefined, fallback: number): number | null {
  if (value === undefined) return fallback;
  const m = /^\s*(-?\d+)\s*([kmg]?)\s*$/i.exec(value);
  if (!m) return null;
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(m[1]) * scale;
}

async function mayNeedGc(repo: Repo, config: GcConfig): Promise<boolean> {
  const auto = gitInt(config.auto, 6700);
  const packLimit = gitInt(config.autoPackLimit, 50);
  if (auto === null || packLimit === null) return true; // a value we cannot read: let git decide
  if (auto <= 0) return false; // gc.auto=0 turns automatic gc off entirely
  const objects = join(repo.commonDir, 'objects');
  // absent: no loose objects directory, nothing to count; anything else propagates
  const loose = await readdir(join(objects, '17')).catch(absentAs([] as string[]));
  if (loose.length > Math.ceil(auto / 256)) return true;
  if (packLimit <= 0) return false;
  // absent: no pack directory, nothing to count; anything else propagates
  const packs = (await readdir(join(objects, 'pack')).catch(absentAs([] as string[]))).filter((f) => f.endsWith('.pack'));
  return packs.length > packLimit;
}

/**
 * A writeCommit whose process was killed mid-stream (kill -9, OOM) leaves fast-import's crash
 * report `fast_import_crash_<pid>` in the git directory: git dumps it when its input ends early.
 * Ours are recognizable (they name our scratch refs/agentv-tmp/ branch) and useless once their
 * process is gone; anyone else's is left alone.
 */
async function sweepOurCrashReports(repo: Repo): Promise<void> {
  for (const dir of new Set([repo.gitDir, repo.commonDir])) {
    // absent: no such git directory, no report; anything else propagates
    const names = await readdir(dir).catch(absentAs([] as string[]));
    for (const name of names) {
      const m = /^fast_import_crash_(\d+)$/.exec(name);
      if (!m || processAlive(Number(m[1]))) continue;
      const file = join(dir, name);
      // absent: a report removed meanwhile; anything else propagates
      const report = await readFile(file, 'utf8').catch(absentAs(''));
      // best effort: a stale gc report, removed by the next gc too
      if (report.includes('refs/agentv-tmp/')) await unlink(file).catch(() => undefined);
    }
  }
}

/**
 * Bytes of `git ls-tree -r --name-only <tip>` (each path and its newline: what AgentV's Dashboard
 * reads), streamed and counted without keeping the paths; reading stops (git is killed) once the
 * count passes `stopAfter`, so checking a budget costs at most the budget's worth of output.
 */
export async function listingBytes(repo: Repo, tip: string, opts: { stopAfter?: number } = {}): Promise<{ bytes: number; complete: boolean }> {
  assertNotOption(tip, 'tree-ish');
  const proc = spawnGit(['ls-tree', '-r', '-z', '--name-only', '--full-tree', '--end-of-options', tip], { gitDir: repo.gitDir });
  proc.stdin.end();
  let bytes = 0;
  let stopped = false;
  const stopAfter = opts.stopAfter ?? Number.POSITIVE_INFINITY;
  for await (const chunk of proc.stdout as AsyncIterable<Buffer>) {
    bytes += chunk.length; // -z: each path ends in NUL, the same byte count as a newline
    if (bytes > stopAfter) {
      stopped = true;
      proc.kill('SIGKILL');
      break;
    }
  }
  try {
    await proc.exited;
  } catch (err) {
    if (!stopped) throw err;
  }
  return { bytes, complete: !stopped };
}
