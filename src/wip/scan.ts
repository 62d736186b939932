/**
 * Reading a run workspace for a checkpoint, in time proportional to what changed:
 *
 *  - index.jsonl is read from the offset the last checkpoint captured (plus a small tail before it,
 *    to notice a rewritten file), and cut after its last newline: a half-written last line is
 *    never captured;
 *  - sidecars are found through the new rows themselves (every `*_path` / `*_dir` field that points
 *    inside the workspace), not by walking the whole tree;
 *  - top-level files (benchmark.json, timing.json, ...) are few: they are stat'ed every time and
 *    re-read only when their size or mtime moved.
 *
 * `walkWorkspace` is the exhaustive walk, used only for an explicit full checkpoint.
 *
 * Entries that are not regular files or directories (links, named pipes, sockets, devices) are never
 * opened, so a pipe in a running eval's folder never blocks a checkpoint; each walk hands them to
 * its caller (`irregular`), which says so: what publish would refuse, a checkpoint does not store.
 */
import { jsonlObjects } from '../util/jsonl-objects.js';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { safeRelativePath } from '../runs/read/run-files.js';
import { TAIL_BYTES } from './checkpoint-layout.js';
import { openRegularFile, readRegularFileSync } from '../util/safe-open.js';
import { UnsafeFileError } from '../errors/input-error.js';
import { irregularName, type IrregularEntry } from '../runs/read/run-tree.js';
import { absentAs, isAbsent } from '../errors/errors.js';

export const INDEX_FILE = 'index.jsonl';

export interface IndexDelta {
  /** The captured bytes no longer match the file (it shrank or was rewritten): start over from 0. */
  rewrite: boolean;
  /** Offset the new bytes start at (0 after a rewrite). */
  start: number;
  /** Complete, newline-terminated lines from `start` on. */
  complete: Buffer;
  /** start + complete.length */
  end: number;
  /** Non-blank lines in `complete`. */
  rows: number;
  tailSha256: string;
  /** File size when read (bytes after `end` are an unfinished line). */
  size: number;
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  if (to <= from) return Buffer.alloc(0);
  const { handle: fh } = await openRegularFile(path, { kind: 'run-file', limit: Number.MAX_SAFE_INTEGER });
  try {
    const buf = Buffer.alloc(to - from);
    let got = 0;
    // A short read means the file shrank meanwhile: keep what was read.
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, from + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === buf.length ? buf : buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

export function countRows(buf: Buffer): number {
  let rows = 0;
  let start = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, start);
    if (nl === -1) break;
    for (let i = start; i < nl; i++) {
      const c = buf[i] as number;
      if (c !== 0x20 && c !== 0x09 && c !== 0x0d) {
        rows++;
        break;
      }
    }
    start = nl + 1;
  }
  return rows;
}

/**
 * The complete lines added to index.jsonl since `captured` (null: nothing captured yet).
 * Reads TAIL_BYTES + the new bytes, never the whole file (except after a rewrite).
 */
export async function readIndexDelta(indexPath: string, captured: { bytes: number; tailSha256: string } | null): Promise<IndexDelta> {
  const { size } = await lstat(indexPath);
  let start = captured?.bytes ?? 0;
  let rewrite = false;
  const tailFrom = Math.max(0, start - TAIL_BYTES);
  let buf = await readRange(indexPath, tailFrom, Math.max(size, start));
  if (start > 0 && (size < start || buf.length < start - tailFrom || sha256(buf.subarray(0, start - tailFrom)) !== captured?.tailSha256)) {
    rewrite = true;
    start = 0;
    buf = await readRange(indexPath, 0, size);
  }
  // `buf` holds the file from `base` on.
  const base = rewrite ? 0 : tailFrom;
  const fresh = buf.subarray(start - base);
  const lastNl = fresh.lastIndexOf(0x0a);
  const complete = lastNl === -1 ? Buffer.alloc(0) : fresh.subarray(0, lastNl + 1);
  const end = start + complete.length;
  // The TAIL_BYTES before `end` are inside `buf`: max(0, end - TAIL_BYTES) >= base.
  const tail = buf.subarray(Math.max(0, end - TAIL_BYTES) - base, end - base);
  return { rewrite, start, complete, end, rows: countRows(complete), tailSha256: sha256(tail), size: base + buf.length };
}

/**
 * Complete rows after `offset` without parsing them (for the "every N rows" trigger); `end` is the
 * offset just past the last complete line, so a later call continues without recounting.
 */
export async function countRowsSince(indexPath: string, offset: number): Promise<{ rows: number; end: number; size: number }> {
  const { size } = await lstat(indexPath);
  if (size <= offset) return { rows: 0, end: offset, size };
  const buf = await readRange(indexPath, offset, size);
  const nl = buf.lastIndexOf(0x0a);
  return { rows: countRows(buf), end: nl === -1 ? offset : offset + nl + 1, size };
}

const PATH_FIELD = /(_path|_dir)$/;

/**
 * Workspace-relative files and directories the rows point at: every string field named `*_path`
 * or `*_dir`, and `artifact_pointers[].path`. Unsafe paths (absolute, `..`, `.git`) are dropped;
 * paths outside the workspace (eval_path points at the eval source) simply do not exist in it.
 */
export function rowReferencedPaths(lines: Buffer): Set<string> {
  const out = new Set<string>();
  for (const row of jsonlObjects(lines.toString('utf8'))) {
    for (const [key, value] of Object.entries(row)) {
      if (typeof value === 'string' && PATH_FIELD.test(key)) {
        const safe = safeRelativePath(value);
        if (safe !== null) out.add(safe);
      }
    }
    const pointers = (row as { artifact_pointers?: unknown }).artifact_pointers;
    if (Array.isArray(pointers)) {
      for (const p of pointers) {
        const path = (p as { path?: unknown } | null)?.path;
        const safe = typeof path === 'string' ? safeRelativePath(path) : null;
        if (safe !== null) out.add(safe);
      }
    }
  }
  return out;
}

/** Hidden entries are never captured: staging folders, our recovery marker, editor droppings. */
const hidden = (name: string): boolean => name.startsWith('.');

/**
 * Files under `rel` (a file or a directory) in the workspace; missing paths yield nothing.
 * Synchronous on purpose: a checkpoint touches hundreds of small files, and each trip through
 * libuv's thread pool costs more than the syscall itself (the same finding as runs/export/atomic-dir.ts).
 */
function filesUnder(runDir: string, rel: string, out: Set<string>, irregular: IrregularEntry[]): void {
  let st: Stats;
  try {
    st = lstatSync(join(runDir, rel));
  } catch (err) {
    // absent: removed meanwhile; anything else propagates
    if (isAbsent(err)) return;
    throw err;
  }
  if (st.isFile()) {
    if (!rel.split('/').some(hidden)) out.add(rel);
    return;
  }
  if (!st.isDirectory()) {
    if (!rel.split('/').some(hidden)) irregular.push({ path: rel, what: irregularName(st) });
    return;
  }
  let entries: Dirent[] = [];
  try {
    entries = readdirSync(join(runDir, rel), { withFileTypes: true });
  } catch (err) {
    // absent: removed meanwhile; anything else propagates
    if (isAbsent(err)) return;
    throw err;
  }
  for (const e of entries) {
    if (hidden(e.name)) continue;
    if (e.isFile()) out.add(`${rel}/${e.name}`);
    else filesUnder(runDir, `${rel}/${e.name}`, out, irregular);
  }
}

/** Every file the given row paths reach (directories expanded), excluding index.jsonl itself; other entries into `irregular`. */
export async function filesOfRows(runDir: string, refs: Iterable<string>, irregular: IrregularEntry[] = []): Promise<string[]> {
  const all = new Set([...refs].filter((rel) => !rel.split('/').some(hidden)));
  const out = new Set<string>();
  for (const rel of all) {
    // A sidecar inside a folder another field names (result_path inside result_dir) is walked once.
    let covered = false;
    for (let up = rel.lastIndexOf('/'); up > 0 && !covered; up = rel.lastIndexOf('/', up - 1)) covered = all.has(rel.slice(0, up));
    if (!covered) filesUnder(runDir, rel, out, irregular);
  }
  out.delete(INDEX_FILE);
  return [...out].sort();
}

export interface StatKey {
  size: number;
  mtimeMs: number;
}

/** Top-level regular files (not index.jsonl, not hidden) with their stat keys; other entries (not directories) into `irregular`. */
export async function topLevelFiles(runDir: string, irregular: IrregularEntry[] = []): Promise<Map<string, StatKey>> {
  const out = new Map<string, StatKey>();
  for (const e of await readdir(runDir, { withFileTypes: true })) {
    if (hidden(e.name) || e.isDirectory()) continue;
    if (!e.isFile()) {
      // absent: removed meanwhile; anything else propagates
      const st = await lstat(join(runDir, e.name)).catch(absentAs(null));
      if (st && !st.isFile() && !st.isDirectory()) irregular.push({ path: e.name, what: irregularName(st) });
      continue;
    }
    if (e.name === INDEX_FILE) continue;
    // absent: removed meanwhile; anything else propagates
    const st = await lstat(join(runDir, e.name)).catch(absentAs(null));
    if (st?.isFile()) out.set(e.name, { size: st.size, mtimeMs: st.mtimeMs });
  }
  return out;
}

/** Every file of the workspace except index.jsonl (the exhaustive walk of a full checkpoint); other entries into `irregular`. */
export async function walkWorkspace(runDir: string, irregular: IrregularEntry[] = []): Promise<string[]> {
  const out = new Set<string>();
  for (const e of await readdir(runDir, { withFileTypes: true })) {
    if (hidden(e.name)) continue;
    filesUnder(runDir, e.name, out, irregular);
  }
  out.delete(INDEX_FILE);
  return [...out].sort();
}

/**
 * A file of the workspace, or null when it went away since it was listed; `{ refused }` when it is
 * no longer a regular file (replaced by a pipe or a link meanwhile: never opened for reading).
 */
export async function readWorkspaceFile(runDir: string, rel: string): Promise<Buffer | null | { refused: string }> {
  try {
    return readRegularFileSync(join(runDir, rel), { kind: 'run-file', label: rel });
  } catch (err) {
    // Deleted between listing and reading (a runner cleaning up): simply not captured this time.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (err instanceof UnsafeFileError) return { refused: err.message };
    throw err;
  }
}
