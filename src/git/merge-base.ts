// Merge plumbing beyond plain merge-tree: the merge bases of two commits, and merge-tree with an
// attributes file of our own (the sync layer marks the files it merges itself `merge=binary`).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMergeTreeOutput, type MergeTreeResult } from './merge-tree.js';
import type { Repo } from './repo.js';
import { runGit } from './runner.js';
import { assertGitVersion } from './version.js';
import { GitArgumentError } from '../errors/git-errors.js';

const OID = /^[0-9a-f]{40,64}$/;

/** Every best common ancestor of `a` and `b` (several in a criss-cross history, none if unrelated). */
export async function mergeBases(repo: Repo, a: string, b: string): Promise<string[]> {
  for (const c of [a, b]) if (!OID.test(c)) throw new GitArgumentError(`mergeBases needs object ids, got ${JSON.stringify(c)}`);
  const r = await runGit(['merge-base', '--all', a, b], { gitDir: repo.gitDir, okCodes: [0, 1] });
  return r.stdout
    .toString('utf8')
    .split('\n')
    .filter((l) => OID.test(l));
}

/** How commit `a` stands to commit `b`: `ancestor` when a is an ancestor of b, `descendant` when b is one of a. */
export type CommitRelation = 'same' | 'ancestor' | 'descendant' | 'diverged';

/**
 * The relation of two commits with ONE process (two `merge-base --is-ancestor` asked it with two):
 * when one is an ancestor of the other, it is their only best common ancestor.
 */
export async function commitRelation(repo: Repo, a: string, b: string): Promise<CommitRelation> {
  if (a === b) return 'same';
  const bases = await mergeBases(repo, a, b);
  if (bases.length === 1 && bases[0] === a) return 'ancestor';
  if (bases.length === 1 && bases[0] === b) return 'descendant';
  return 'diverged';
}

/**
 * `git merge-tree --write-tree` like src/git's mergeTree (empty cwd, no system attributes, the
 * user's core.attributesFile replaced), but with `attributes` as the attributes file instead of
 * none. Used to mark the files we merge ourselves `merge=binary`: git then skips its text merge
 * of them (the costly part on a large index.jsonl) and reports them conflicted with their three
 * stages, which our resolver decides exactly as the installed drivers would.
 */
export async function mergeTreeWithAttributes(repo: Repo, ours: string, theirs: string, attributes: string): Promise<MergeTreeResult> {
  for (const c of [ours, theirs]) if (!OID.test(c)) throw new GitArgumentError(`mergeTreeWithAttributes needs object ids, got ${JSON.stringify(c)}`);
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
