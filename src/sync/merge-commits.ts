/**
 * Tree-level merge of two commits without any worktree or index of the user's (ARCHITECTURE.md: rule 6, merge semantics):
 *
 *   git merge-tree --write-tree -z (empty cwd; only our own attributes: the files we merge are
 *     `merge=binary`, so git leaves every one changed on both sides to us)  ->  merged tree +
 *     conflicted paths with their stages
 *   each conflicted path -> a resolver (jsonl-union / json-union / whole-file rules): the same
 *     functions the installed merge drivers run, so a human's `git merge` gives the same tree
 *   (an owned file git still merged as text, e.g. the user's info/attributes overriding ours, is
 *     re-merged by the resolver too)
 *   resolved tree (fast-import, see treeWith) -> commit with `first` as FIRST parent
 *
 * `first` is the remote tip when syncing, so first-parent history of the shared branch stays the
 * sequence of what the remote accepted. Nothing here moves a ref: the caller CASes the result.
 *
 * Decided explicitly: modify/delete and add/add (identical: clean; different: owned files merge,
 * others conflict) go through the resolver; binary and text conflicts likewise. Conflict kinds the
 * resolver cannot see as three blobs at one path (renames, file/directory, submodules, symlinks,
 * mode changes) are genuine conflicts: git would have to invent paths like `file~HEAD`.
 */
import {
  commitTree,
  type FileChange,
  type FileMode,
  type Ident,
  mergeBases,
  mergeTreeWithAttributes,
  readBlobs,
  type Repo,
  type StageEntry,
  writeCommit,
} from '../git/index.js';
import { ownedMergeKind, resolveConflictedPath, type ConflictedPathInput, type TreeResolution } from '../merge/index.js';
import { appendCandidate, appendRowsUnique } from './append-merge.js';
import { Rederive, type PathResolver } from './recompute-derived.js';

export type { PathResolver };

export interface MergeCommitsInput {
  /** First parent: the remote tip (sync) or the main branch (resolving a sync branch). */
  first: string;
  /** Second parent: the local tip (sync) or the sync branch. */
  second: string;
  message: string;
  author: Ident;
  /** Defaults to resolveConflictedPath (ARCHITECTURE.md, merge semantics). */
  resolve?: PathResolver;
}

export interface PathConflict {
  path: string;
  reason: string;
}

export type MergeCommitsResult =
  /** `second` is already contained in `first`: nothing to merge, `commit` = first. */
  | { kind: 'up-to-date'; commit: string }
  /** `first` is contained in `second`: `commit` = second, no merge commit needed. */
  | { kind: 'fast-forward'; commit: string }
  | { kind: 'merged'; commit: string; tree: string; resolvedPaths: string[] }
  | { kind: 'conflict'; conflicts: PathConflict[] };

/**
 * The files we merge ourselves (ownedMergeKind's layout) are `merge=binary` for merge-tree: git
 * does not text-merge them (the costly part on a big index.jsonl, and a result the drivers would
 * not give), it reports them conflicted with their three stages for the resolver.
 */
const OWNED_BINARY = [
  '.indexes/agentv-results.*.jsonl',
  '*/index.jsonl',
  '*/.internal/index.jsonl',
  '*/tags.json',
  '*/feedback.json',
  // the older layout, still merged when a branch has it
  'catalog/*.jsonl',
  'runs/**/index.jsonl',
  'runs/**/tags.json',
  'runs/**/feedback.json',
]
  .map((p) => `${p} merge=binary\n`)
  .join('');

/** merge-tree message types whose paths are decided by the resolver; any other CONFLICT is for a human. */
const RESOLVABLE = new Set(['CONFLICT (contents)', 'CONFLICT (add/add)', 'CONFLICT (modify/delete)', 'CONFLICT (binary)']);
const REGULAR: ReadonlySet<string> = new Set(['100644', '100755']);

export async function mergeCommits(repo: Repo, input: MergeCommitsInput): Promise<MergeCommitsResult> {
  const { first, second } = input;
  if (first === second) return { kind: 'up-to-date', commit: first };
  // One merge-base process answers both ancestry questions and gives the base for step 2 below;
  // it runs beside merge-tree (whose result is simply dropped for a fast-forward). Roots are
  // deterministic (commit-run.ts), so our branches share history; a branch created by something
  // else still merges, from an empty base.
  const merging = mergeTreeWithAttributes(repo, first, second, OWNED_BINARY);
  // observed: `merging` is awaited below; this only keeps an early rejection from being unhandled
  merging.catch(() => {});
  const bases = await mergeBases(repo, first, second);
  if (bases.includes(second)) return { kind: 'up-to-date', commit: first };
  if (bases.includes(first)) return { kind: 'fast-forward', commit: second };
  const rederive = new Rederive();
  const resolve = rederive.resolver(input.resolve ?? resolveConflictedPath);
  const mt = await merging;
  const conflicts: PathConflict[] = [];
  for (const d of mt.details) {
    if (d.type.startsWith('CONFLICT') && !RESOLVABLE.has(d.type)) conflicts.push({ path: d.paths.join(', '), reason: `${d.message} — resolve it by hand` });
  }
  if (conflicts.length > 0) return { kind: 'conflict', conflicts };

  const changes: FileChange[] = [];
  const resolvedPaths: string[] = [];
  const apply = (path: string, resolution: TreeResolution, mode: FileMode, current: Buffer | null): void => {
    if (resolution.action !== 'conflict') rederive.noteResolved(path);
    if (resolution.action === 'conflict') conflicts.push({ path, reason: resolution.reason });
    else if (resolution.action === 'delete') {
      if (current !== null) changes.push({ path, delete: true });
      resolvedPaths.push(path);
    } else {
      if (current === null || !current.equals(resolution.data)) changes.push({ path, data: resolution.data, mode });
      resolvedPaths.push(path);
    }
  };

  // 1. Paths merge-tree left conflicted: the three stages are blobs we can read by id.
  const stageBlobs = await readBlobs(repo, [...new Set(mt.conflicts.flatMap((c) => Object.values(c.stages).map((s: StageEntry) => s.sha)))]);
  const blob = (s: StageEntry | undefined): Buffer | null => (s ? (stageBlobs.get(s.sha) ?? null) : null);
  const entries: { sides: ConflictedPathInput; mode: FileMode }[] = [];
  for (const c of mt.conflicts) {
    const odd = [c.stages.base, c.stages.ours, c.stages.theirs].find((s) => s !== undefined && !REGULAR.has(s.mode));
    if (odd) conflicts.push({ path: c.path, reason: `${c.path}: not a regular file on one side (mode ${odd.mode}) — resolve it by hand` });
    else
      entries.push({
        sides: { path: c.path, base: blob(c.stages.base), ours: blob(c.stages.ours), theirs: blob(c.stages.theirs) },
        mode: pickMode(c.stages.ours, c.stages.theirs),
      });
  }
  if (conflicts.length > 0) return { kind: 'conflict', conflicts };

  // Pure appends on both sides (the common case) have a cheap exact answer (append-merge.ts) whose
  // bytes are known before its rows are checked: when every conflicted path is one, fast-import
  // starts writing the tree now, on the other core, while the rows are parsed here.
  const candidates = entries.map((e) => appendCandidate(e.sides));
  const speculative =
    entries.length > 0 && candidates.every((x) => x !== null)
      ? writeMerge(
          repo,
          input,
          mt.tree,
          entries.map((e, i) => ({ path: e.sides.path, data: candidates[i]!, mode: e.mode })),
        )
      : null;
  // observed: awaited below when used; this only keeps an early rejection from being unhandled
  speculative?.catch(() => {});
  let allAppends = speculative !== null;
  entries.forEach((e, i) => {
    const candidate = candidates[i];
    const fast = candidate != null && appendRowsUnique(e.sides);
    if (!fast) allAppends = false;
    // merge-tree leaves marker text (or the modified side) at the path; the resolution replaces it.
    apply(e.sides.path, fast ? { action: 'write', data: candidate } : resolve(e.sides), e.mode, Buffer.alloc(0));
  });
  if (conflicts.length > 0) return { kind: 'conflict', conflicts };

  // 2. Owned files git merged as plain text: re-merge them structurally (see the header).
  const resolvedChanges = changes.length;
  const conflicted = new Set(mt.conflicts.map((c) => c.path));
  const textMerged = mt.details
    .filter((d) => d.type === 'Auto-merging')
    .flatMap((d) => d.paths)
    .filter((p) => !conflicted.has(p) && ownedMergeKind(p) !== null);
  // Criss-cross (several bases): git merged against a virtual base we cannot reproduce; keep its text.
  if (textMerged.length > 0 && bases.length === 1) await remergeOwned(repo, input, bases[0] as string, mt.tree, textMerged, resolve, apply);
  if (conflicts.length > 0) return { kind: 'conflict', conflicts };

  // 3. What is derived from the rows of the runs this merge touched, recomputed (rederive-runs.ts).
  const derived = await rederive.recompute(repo, { tree: mt.tree, first, second }, changes);
  if (derived.conflicts.length > 0) return { kind: 'conflict', conflicts: derived.conflicts };
  for (const d of derived.changes) {
    const at = changes.findIndex((c) => c.path === d.path);
    if (at >= 0) changes[at] = d;
    else changes.push(d);
  }

  if (allAppends && changes.length === resolvedChanges && derived.changes.length === 0) return { kind: 'merged', ...(await speculative!), resolvedPaths };
  if (changes.length > 0) return { kind: 'merged', ...(await writeMerge(repo, input, mt.tree, changes)), resolvedPaths };
  const commit = await commitTree(repo, { tree: mt.tree, parents: [first, second], message: input.message, author: input.author });
  return { kind: 'merged', commit, tree: mt.tree, resolvedPaths };
}

/**
 * The merge commit, written by one fast-import: merge-tree's tree is the starting point, only the
 * resolved paths are streamed, and both parents are set, so no scratch commit and no separate
 * commit-tree are needed. (A temporary index would cost four git processes and a copy of every
 * changed file on disk.) Same id as commit-tree would give for the same tree.
 */
function writeMerge(repo: Repo, input: MergeCommitsInput, tree: string, changes: FileChange[]): Promise<{ commit: string; tree: string }> {
  return writeCommit(repo, { parent: input.first, mergeParents: [input.second], baseTree: tree, files: changes, message: input.message, author: input.author });
}

function pickMode(ours: StageEntry | undefined, theirs: StageEntry | undefined): FileMode {
  const mode = ours?.mode ?? theirs?.mode;
  return mode === '100755' ? '100755' : '100644';
}

async function remergeOwned(
  repo: Repo,
  input: MergeCommitsInput,
  base: string,
  mergedTree: string,
  paths: string[],
  resolve: PathResolver,
  apply: (path: string, r: TreeResolution, mode: FileMode, current: Buffer | null) => void,
): Promise<void> {
  const specs = paths.flatMap((p) => [`${base}:${p}`, `${input.first}:${p}`, `${input.second}:${p}`, `${mergedTree}:${p}`]);
  const blobs = await readBlobs(repo, specs);
  for (const p of paths) {
    const resolution = resolve({
      path: p,
      base: blobs.get(`${base}:${p}`) ?? null,
      ours: blobs.get(`${input.first}:${p}`) ?? null,
      theirs: blobs.get(`${input.second}:${p}`) ?? null,
    });
    // Owned files (index.jsonl, catalog, overlays) are always written as regular files.
    apply(p, resolution, '100644', blobs.get(`${mergedTree}:${p}`) ?? null);
  }
}
