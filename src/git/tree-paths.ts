// Validation of tree paths and of the change lists that feed writeCommit / writeTree. Paths come from
// untrusted data (ARCHITECTURE.md rule 7), so anything git or a checkout could misread is refused here,
// before a single object is written.
import { InvalidPathError } from '../errors/git-errors.js';

export type FileMode = '100644' | '100755';

/** One change to a tree: write a file (regular or executable), or delete a file or directory. */
export type FileChange = { path: string; data: Buffer | string; mode?: FileMode } | { path: string; delete: true };

/** A validated change with its bytes resolved. */
export type NormalizedChange = { kind: 'write'; path: string; data: Buffer; mode: FileMode } | { kind: 'delete'; path: string };

// Names a checkout would treat as the repository itself: ".git" in any case, and the NTFS aliases
// (trailing dots/spaces, 8.3 short name) that `git fsck --strict` also rejects.
const DOT_GIT = /^\.git[. ]*$/i;
const GIT_SHORT_NAME = /^git~\d+$/i;
// HFS+ ignores these code points when comparing names, so ".g\u200cit" is ".git" on a Mac.
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
const HFS_IGNORABLE_ANY = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/;

const FORBIDDEN_CHARS = /[\0\n\r\\]/;

export function assertValidPath(path: string): void {
  if (typeof path !== 'string' || path.length === 0) throw new InvalidPathError(String(path), 'empty path');
  if (FORBIDDEN_CHARS.test(path)) {
    if (path.includes('\0')) throw new InvalidPathError(path, 'contains NUL');
    if (path.includes('\\')) throw new InvalidPathError(path, 'contains a backslash (a separator on Windows)');
    throw new InvalidPathError(path, 'contains a line break');
  }
  if (path.startsWith('/')) throw new InvalidPathError(path, 'absolute path');
  if (/^[A-Za-z]:/.test(path)) throw new InvalidPathError(path, 'drive-letter path');
  for (const seg of path.split('/')) {
    if (seg === '') throw new InvalidPathError(path, 'empty segment (leading, trailing or double slash)');
    if (seg === '.' || seg === '..') throw new InvalidPathError(path, `"${seg}" segment`);
    // Cheap pre-filter: only segments that could spell ".git" (or "git~1") go through the regexes.
    const first = seg[0] as string;
    if (first === '.' || first === 'g' || first === 'G' || HFS_IGNORABLE_ANY.test(seg)) {
      const folded = seg.replace(HFS_IGNORABLE, '');
      if (DOT_GIT.test(folded) || GIT_SHORT_NAME.test(folded)) throw new InvalidPathError(path, '".git" segment');
    }
  }
}

const isDelete = (c: FileChange): c is { path: string; delete: true } => (c as { delete?: unknown }).delete === true;

/**
 * Validates every path, rejects a path given twice and two files where one would have to be a
 * directory of the other (fast-import and the index would silently keep only one). Deletes are
 * ordered first, so "delete dir, write dir/x" means the same thing in writeCommit and writeTree.
 */
export function normalizeChanges(changes: Iterable<FileChange>): NormalizedChange[] {
  const deletes: NormalizedChange[] = [];
  const writes: NormalizedChange[] = [];
  const seen = new Set<string>();
  const writtenFiles = new Set<string>();
  const writtenDirs = new Set<string>();
  for (const c of changes) {
    assertValidPath(c.path);
    if (seen.has(c.path)) throw new InvalidPathError(c.path, 'given more than once in one change set');
    seen.add(c.path);
    if (isDelete(c)) {
      deletes.push({ kind: 'delete', path: c.path });
      continue;
    }
    const mode = c.mode ?? '100644';
    if (mode !== '100644' && mode !== '100755') throw new InvalidPathError(c.path, `unsupported mode ${String(mode)}`);
    if (writtenDirs.has(c.path)) throw new InvalidPathError(c.path, 'is also used as a directory in this change set');
    // Register parent directories from the deepest up; a directory seen before had its own
    // parents registered (and checked) already.
    for (let i = c.path.lastIndexOf('/'); i > 0; i = c.path.lastIndexOf('/', i - 1)) {
      const dir = c.path.slice(0, i);
      if (writtenDirs.has(dir)) break;
      if (writtenFiles.has(dir)) throw new InvalidPathError(c.path, `its parent ${dir} is also written as a file`);
      writtenDirs.add(dir);
    }
    writtenFiles.add(c.path);
    const data = typeof c.data === 'string' ? Buffer.from(c.data, 'utf8') : c.data;
    if (!Buffer.isBuffer(data)) throw new InvalidPathError(c.path, 'data must be a Buffer or a string');
    writes.push({ kind: 'write', path: c.path, data, mode });
  }
  return [...deletes, ...writes];
}

/** Drains a sync or async iterable so validation can finish before any process starts. */
export async function collect<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items as AsyncIterable<T>) out.push(item);
  return out;
}

const NEEDS_ESCAPE = /["\\\x00-\x1f\x7f]/;

/**
 * C-style quoting understood by fast-import. Always quoting means no path is ever misparsed
 * (a leading quote, or a space-separated field): only `"` and `\` and control bytes need escapes.
 */
export function quotePath(path: string): string {
  if (!NEEDS_ESCAPE.test(path)) return `"${path}"`;
  let out = '"';
  for (const ch of path) {
    const code = ch.charCodeAt(0);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
