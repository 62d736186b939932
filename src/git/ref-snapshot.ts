// One read of the refs a command asks about, shared by the modules it calls (a command opens its
// repository once). A snapshot is only ever a read: every ref update stays a compare-and-swap against
// the value its operation read, and any git command of ours that may move a ref (anything but the
// reads below) drops every snapshot of that repository, so a lost race re-reads fresh. Nothing is kept
// across commands: a snapshot lives on the handle a verb made for itself (withRefSnapshot), never on
// the Repo a long-lived process (daemon, Dashboard) holds.
import { GitArgumentError } from '../errors/git-errors.js';
import type { RefEntry, Repo } from './repo-types.js';
import { runGit } from './runner.js';

/** git subcommands that move no ref: running one leaves the snapshots of its repository standing. */
const READS = new Set([
  'cat-file',
  'config',
  'for-each-ref',
  'ls-remote',
  'ls-tree',
  'merge-base',
  'remote',
  'rev-list',
  'rev-parse',
  'symbolic-ref',
  'version',
  'worktree',
]);

interface Snapshot {
  /** Ref name patterns read (for-each-ref's: the name itself or below it as a directory). */
  patterns: string[];
  /** Sorted by name, as for-each-ref prints them. */
  entries: RefEntry[];
  byRef: Map<string, string>;
  /** writes[commonDir] when taken; any later write makes it stale. */
  generation: number;
}

const snapshots = new WeakMap<Repo, Snapshot>();
const writes = new Map<string, number>();

/**
 * Whether git `args` only read refs. gitIn calls noteRefWrite around every other command: the
 * snapshots of the whole repository (all worktrees share its refs) drop, whether or not it succeeds.
 */
export function movesNoRef(args: readonly string[]): boolean {
  const at = args.findIndex((a) => !a.startsWith('-'));
  const sub = args[at];
  const next = args[at + 1];
  // `worktree list`, `remote`, `remote -v`, `remote get-url` read; `worktree add`, `remote rename` write.
  return (
    sub !== undefined &&
    READS.has(sub) &&
    (sub !== 'worktree' || next === 'list') &&
    (sub !== 'remote' || next === undefined || next === '-v' || next === 'get-url')
  );
}

/** Drops every snapshot of `repo`'s refs (a ref moved, or may have). */
export function noteRefWrite(repo: Repo): void {
  writes.set(repo.commonDir, (writes.get(repo.commonDir) ?? 0) + 1);
}

function covers(patterns: readonly string[], name: string): boolean {
  return patterns.some((p) => name === p || name.startsWith(`${p}/`));
}

/**
 * A handle on the same repository whose ref reads (resolveRef of a full ref name, readRefs, listRefs)
 * answer from ONE for-each-ref of `patterns` while nothing of ours has moved a ref since; names
 * outside the patterns, revision expressions and reads after a write go to git as before. Made by a
 * verb for the length of one command; drop it with the command.
 */
export async function withRefSnapshot(repo: Repo, patterns: readonly string[]): Promise<Repo> {
  const wanted = [...new Set(patterns.map((p) => p.replace(/\/+$/, '')))];
  for (const p of wanted)
    if (!/^refs\/[^\0\n\s*]+$/.test(p)) throw new GitArgumentError(`ref snapshot patterns are ref names under refs/, got ${JSON.stringify(p)}`);
  const handle: Repo = { ...repo };
  if (wanted.length === 0) return handle;
  const generation = writes.get(repo.commonDir) ?? 0;
  const r = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', ...wanted], { gitDir: repo.gitDir });
  const entries: RefEntry[] = [];
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) entries.push({ sha: line.slice(0, sp), ref: line.slice(sp + 1) });
  }
  snapshots.set(handle, { patterns: wanted, entries, byRef: new Map(entries.map((e) => [e.ref, e.sha])), generation });
  return handle;
}

function live(repo: Repo): Snapshot | null {
  const s = snapshots.get(repo);
  if (!s) return null;
  if (s.generation !== (writes.get(repo.commonDir) ?? 0)) {
    snapshots.delete(repo);
    return null;
  }
  return s;
}

/** The snapshot's answer for one full ref name: its id, null when absent; undefined when it cannot say. */
export function snapshotRef(repo: Repo, ref: string): string | null | undefined {
  const s = live(repo);
  if (!s || !/^refs\/[^\0\n\s]+$/.test(ref) || /[\^~:@*?[\\]/.test(ref) || !covers(s.patterns, ref)) return undefined;
  return s.byRef.get(ref) ?? null;
}

/** The snapshot's refs equal to `prefix` or below it, sorted by name; undefined when it cannot say. */
export function snapshotList(repo: Repo, prefix: string): RefEntry[] | undefined {
  const s = live(repo);
  const p = prefix.replace(/\/+$/, '');
  if (!s || /[*?[\\]/.test(p) || !covers(s.patterns, p)) return undefined;
  return s.entries.filter((e) => e.ref === p || e.ref.startsWith(`${p}/`));
}
