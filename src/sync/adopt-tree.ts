/**
 * What a branch offered for adoption changes, read from its raw tree objects (sync/adopt-runs.ts):
 * the files it added, changed or deleted relative to a base tree, each tree it brings checked as
 * `git fsck` would check it before any of it can reach the results branch.
 *
 * The trees are parsed here from their raw bytes (one `cat-file --batch` per level of the walk),
 * never through `ls-tree` or `diff-tree`, which read a malformed tree leniently: an entry twice,
 * entries out of git's order, a name that is empty, `.`, `..`, `.git` or holds a `/`, a mode other
 * than a regular file, an executable or a directory (a link, a submodule, a zero-padded mode) each
 * refuse the branch. Only the subtrees that differ from the base are read, so the cost is that of
 * what the branch adds, never of the whole results branch; and bounded (entries, trees, depth).
 */
import { assertValidPath, readObjects, type Repo } from '../git/index.js';
import { InvalidPathError } from '../errors/git-errors.js';

/** One entry of a raw tree object. */
export interface RawTreeEntry {
  mode: '100644' | '100755' | '40000';
  name: string;
  sha: string;
}

/** A file the offered tree adds or changes (`baseSha` null: added), or deletes. */
export type OfferedChange =
  | { kind: 'write'; path: string; mode: '100644' | '100755'; sha: string; baseSha: string | null }
  | { kind: 'delete'; path: string; tree: boolean };

export interface OfferedDiff {
  changes: OfferedChange[];
  /** Directories the base does not have at all: their whole tree is new (and was checked entry by entry). */
  addedDirs: Map<string, string>;
}

/** Why the offered tree cannot be taken (malformed, too large). */
export class TreeRefusal {
  constructor(readonly reason: string) {}
}

/** Bounds of one walk: a results branch's run is thousands of files, not millions. */
export const MAX_OFFERED_ENTRIES = 500_000;
const MAX_TREES = 100_000;
const MAX_DEPTH = 32;

const MODES = new Set(['100644', '100755', '40000']);

/** git's tree order: names compared bytewise, a tree's name as if it ended in `/`. */
function sortKey(e: RawTreeEntry): Buffer {
  return Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name, 'utf8');
}

/**
 * The entries of a raw tree object (`<mode> <name>\0<binary id>`...), or a TreeRefusal naming the
 * first thing `git fsck` (or our own path rules) would object to.
 */
export function parseTreeStrict(data: Buffer, idBytes: number, at: string): RawTreeEntry[] | TreeRefusal {
  const where = at === '' ? 'the root tree' : `the tree at ${at}`;
  const out: RawTreeEntry[] = [];
  let prev: Buffer | null = null;
  const names = new Set<string>();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space === -1) return new TreeRefusal(`${where} is malformed (truncated entry)`);
    const nul = data.indexOf(0, space + 1);
    if (nul === -1 || nul + 1 + idBytes > data.length) return new TreeRefusal(`${where} is malformed (truncated entry)`);
    const mode = data.toString('latin1', i, space);
    const nameBytes = data.subarray(space + 1, nul);
    const name = nameBytes.toString('utf8');
    const sha = data.toString('hex', nul + 1, nul + 1 + idBytes);
    i = nul + 1 + idBytes;
    if (!MODES.has(mode)) {
      const what = mode === '120000' ? 'a symbolic link' : mode === '160000' ? 'a submodule' : `mode ${JSON.stringify(mode)}`;
      return new TreeRefusal(`${where} holds ${JSON.stringify(name)} as ${what} (only regular files and directories belong on the results branch)`);
    }
    if (!Buffer.from(name, 'utf8').equals(nameBytes)) return new TreeRefusal(`${where} holds an entry whose name is not UTF-8`);
    if (name === '' || name === '.' || name === '..' || name.includes('/')) return new TreeRefusal(`${where} holds an entry named ${JSON.stringify(name)}`);
    try {
      assertValidPath(at === '' ? name : `${at}/${name}`);
    } catch (err) {
      if (err instanceof InvalidPathError) return new TreeRefusal(`${where} holds ${JSON.stringify(name)}: ${err.message}`);
      throw err;
    }
    if (names.has(name)) return new TreeRefusal(`${where} holds ${JSON.stringify(name)} twice (duplicate entries)`);
    names.add(name);
    const entry: RawTreeEntry = { mode: mode as RawTreeEntry['mode'], name, sha };
    const key = sortKey(entry);
    if (prev !== null && Buffer.compare(prev, key) >= 0) return new TreeRefusal(`${where} is malformed (entries out of order at ${JSON.stringify(name)})`);
    prev = key;
    out.push(entry);
  }
  return out;
}

/**
 * The changes from `baseTree` (null: the empty tree) to `offeredTree`, reading only subtrees whose
 * ids differ. `within`: only these directories (and the path down to them) are looked at; every
 * other difference is ignored (a checkpoint branch: only its run counts).
 */
export async function offeredChanges(repo: Repo, baseTree: string | null, offeredTree: string, within?: readonly string[]): Promise<OfferedDiff | TreeRefusal> {
  const idBytes = offeredTree.length / 2;
  const changes: OfferedChange[] = [];
  const addedDirs = new Map<string, string>();
  const inScope = (path: string): boolean => within === undefined || within.some((d) => d === path || d.startsWith(`${path}/`) || path.startsWith(`${d}/`));
  let level: { path: string; offered: string; base: string | null }[] = [{ path: '', offered: offeredTree, base: baseTree }];
  let trees = 0;
  let entries = 0;
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > MAX_DEPTH) return new TreeRefusal(`its tree is deeper than ${MAX_DEPTH} levels`);
    trees += level.length;
    if (trees > MAX_TREES) return new TreeRefusal(`its tree has more than ${MAX_TREES} directories to check`);
    const ids = [...new Set(level.flatMap((l) => (l.base === null ? [l.offered] : [l.offered, l.base])))];
    const objects = await readObjects(repo, ids);
    const next: typeof level = [];
    for (const l of level) {
      const o = objects.get(l.offered);
      if (o?.type !== 'tree') return new TreeRefusal(`${l.path === '' ? 'its root tree' : l.path} is missing or not a tree`);
      const offered = parseTreeStrict(o.data, idBytes, l.path);
      if (offered instanceof TreeRefusal) return offered;
      entries += offered.length;
      if (entries > MAX_OFFERED_ENTRIES) return new TreeRefusal(`its tree has more than ${MAX_OFFERED_ENTRIES} entries to check`);
      let base: RawTreeEntry[] = [];
      if (l.base !== null) {
        const b = objects.get(l.base);
        // The base is the results branch's own history: read leniently (it was accepted long ago).
        const parsed = b && b.type === 'tree' ? parseTreeStrict(b.data, idBytes, l.path) : [];
        base = parsed instanceof TreeRefusal ? [] : parsed;
      }
      const baseByName = new Map(base.map((e) => [e.name, e]));
      for (const e of offered) {
        const path = l.path === '' ? e.name : `${l.path}/${e.name}`;
        if (!inScope(path)) continue;
        const b = baseByName.get(e.name);
        baseByName.delete(e.name);
        if (b && b.sha === e.sha && b.mode === e.mode) continue;
        const isTree = e.mode === '40000';
        if (b && (b.mode === '40000') !== isTree) return new TreeRefusal(`${path} turns a ${isTree ? 'file into a directory' : 'directory into a file'}`);
        if (isTree) {
          if (!b) addedDirs.set(path, e.sha);
          next.push({ path, offered: e.sha, base: b ? b.sha : null });
        } else {
          changes.push({ kind: 'write', path, mode: e.mode as '100644' | '100755', sha: e.sha, baseSha: b ? b.sha : null });
        }
      }
      for (const b of baseByName.values()) {
        const path = l.path === '' ? b.name : `${l.path}/${b.name}`;
        if (inScope(path)) changes.push({ kind: 'delete', path, tree: b.mode === '40000' });
      }
    }
    level = next;
  }
  return { changes, addedDirs };
}
