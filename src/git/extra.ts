/**
 * Less common plumbing the sync layer needs: the merge bases of two commits, several refs read
 * at once, merge-tree with attributes of our own (for the drivers' equivalence tests), and
 * writing/removing keys in a repository's LOCAL config (`drivers install` is the one command that
 * writes config). Same runner, same environment policy and argv-only rule as the rest of src/git.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertGitVersion, parseMergeTreeOutput, runGit, type MergeTreeResult, type Repo } from './index.js';

const OID = /^[0-9a-f]{40,64}$/;

/** Every best common ancestor of `a` and `b` (several in a criss-cross history, none if unrelated). */
export async function mergeBases(repo: Repo, a: string, b: string): Promise<string[]> {
  for (const c of [a, b]) if (!OID.test(c)) throw new Error(`mergeBases needs object ids, got ${JSON.stringify(c)}`);
  const r = await runGit(['merge-base', '--all', a, b], { gitDir: repo.gitDir, okCodes: [0, 1] });
  return r.stdout
    .toString('utf8')
    .split('\n')
    .filter((l) => OID.test(l));
}

/**
 * Current values of several full ref names with ONE process (listRefs takes a single prefix); a
 * ref that does not exist is absent from the map. The sync loop reads four refs per attempt.
 */
export async function readRefs(repo: Repo, refs: string[]): Promise<Map<string, string>> {
  const wanted = new Set(refs);
  for (const r of wanted) if (!/^refs\/[^\0\n\s]+$/.test(r) || r.includes('*')) throw new Error(`readRefs needs full ref names, got ${JSON.stringify(r)}`);
  const out = new Map<string, string>();
  if (wanted.size === 0) return out;
  const r = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', ...wanted], { gitDir: repo.gitDir });
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const sp = line.indexOf(' ');
    const ref = line.slice(sp + 1);
    // for-each-ref patterns also match refs BELOW a name; keep exact names only.
    if (sp > 0 && wanted.has(ref)) out.set(ref, line.slice(0, sp));
  }
  return out;
}

/**
 * `git merge-tree --write-tree` like src/git's mergeTree (empty cwd, no system attributes, the
 * user's core.attributesFile replaced), but with `attributes` as the attributes file instead of
 * none. Used to mark the files we merge ourselves `merge=binary`: git then skips its text merge
 * of them (the costly part on a large index.jsonl) and reports them conflicted with their three
 * stages, which our resolver decides exactly as the installed drivers would.
 */
export async function mergeTreeWithAttributes(repo: Repo, ours: string, theirs: string, attributes: string): Promise<MergeTreeResult> {
  for (const c of [ours, theirs]) if (!OID.test(c)) throw new Error(`mergeTreeWithAttributes needs object ids, got ${JSON.stringify(c)}`);
  await assertGitVersion();
  // Synchronous: three tiny operations, which through the thread pool of a busy process cost a sync
  // round more latency than they take.
  const dir = mkdtempSync(join(tmpdir(), 'agentv-merge-'));
  try {
    // Not named .gitattributes: the cwd (this directory) itself must not provide attributes.
    const file = join(dir, 'attributes');
    writeFileSync(file, attributes);
    const r = await runGit(['merge-tree', '--write-tree', '-z', '--messages', '--allow-unrelated-histories', ours, theirs], {
      gitDir: repo.gitDir,
      cwd: dir,
      okCodes: [0, 1],
      env: { GIT_ATTR_NOSYSTEM: '1' },
      config: { 'core.attributesFile': file },
    });
    return parseMergeTreeOutput(r.stdout.toString('utf8'), r.code === 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const KEY = /^[A-Za-z0-9-]+(\.[^\0\n]+)?\.[A-Za-z0-9-]+$/;

function assertKey(key: string): void {
  if (!KEY.test(key) || key.startsWith('-')) throw new Error(`invalid config key ${JSON.stringify(key)}`);
}

/** Value of `key` in the repository's local config file only (never global/system), or null. */
export async function localConfigGet(repo: Repo, key: string): Promise<string | null> {
  assertKey(key);
  const r = await runGit(['config', '--local', '--null', '--get', key], { gitDir: repo.gitDir, okCodes: [0, 1] });
  return r.code === 0 ? r.stdout.toString('utf8').replace(/\0$/, '') : null;
}

/** Set `key` in the local config file (git writes it atomically under config.lock). */
export async function localConfigSet(repo: Repo, key: string, value: string): Promise<void> {
  assertKey(key);
  if (/[\0\n]/.test(value)) throw new Error(`config value for ${key} must be one line`);
  await runGit(['config', '--local', '--replace-all', key, value], { gitDir: repo.gitDir });
}

/** Remove every value of `key` from the local config file; false when it was not set. */
export async function localConfigUnset(repo: Repo, key: string): Promise<boolean> {
  assertKey(key);
  // Exit 5: the key was not set; nothing to do.
  const r = await runGit(['config', '--local', '--unset-all', key], { gitDir: repo.gitDir, okCodes: [0, 5] });
  return r.code === 0;
}

/** Names of all keys of a config section (e.g. "merge.agentv-json") present in the local file. */
export async function localConfigKeys(repo: Repo, section: string): Promise<string[]> {
  const escaped = section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const r = await runGit(['config', '--local', '--null', '--name-only', '--get-regexp', `^${escaped}\\.`], { gitDir: repo.gitDir, okCodes: [0, 1] });
  return r.stdout
    .toString('utf8')
    .split('\0')
    .filter((k) => k.length > 0);
}

/** Remove a now-empty section header (`[merge "agentv-json"]`) that `--unset` leaves behind. */
export async function localConfigRemoveSection(repo: Repo, section: string): Promise<void> {
  // Exit 128: no such section (already gone). Only called when no key of the section is left.
  await runGit(['config', '--local', '--remove-section', section], { gitDir: repo.gitDir, okCodes: [0, 128] });
}
