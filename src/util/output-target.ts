/**
 * The output-target rule: what a command may do to the path it writes (README, "Where output goes").
 * Every command that writes a file or a run directory asks this module first, so `--out` can never
 * replace something it was not asked to create — a device like /dev/null, a FIFO, a user's file.
 *
 * File outputs (`report --out`, trajectory.html): `writeOutputFile`.
 *   - nothing there, or a regular file: written to a hidden temporary sibling, flushed, renamed into
 *     place (atomic: a reader never sees half a file; an interrupted write leaves the old one);
 *   - a character device or FIFO that the user named: written through (opened and written, never
 *     renamed over), so `--out /dev/stdout` or `--out some.fifo` work; at a default path (one the
 *     user did not name) it is refused: a downloaded run must not make us block on a pipe;
 *   - a socket, a block device, anything else: refused.
 *   - a symbolic link the user named is followed and the rule applies to what it points at (a
 *     regular file there is replaced in its own directory; the link stays); a link at a default
 *     path is not followed: the link itself is replaced and what it points at is never touched.
 *     A dangling link is refused either way.
 *
 * Directory outputs (export, combine, pull, wip recover): `checkOutputDir` before writing, and
 * runs/export/atomic-dir.ts re-checks right before its rename.
 *   - nothing there, or an empty directory: created;
 *   - a run workspace (a directory holding index.jsonl or benchmark.json, the files every layout
 *     we write has): the command's own rule decides (export updates the same run, pull needs
 *     --force, combine refuses);
 *   - anything else — a file, a device, a FIFO, a socket, a symbolic link, a directory that is not
 *     a run workspace — is refused with exit 2. Nothing is ever renamed over it.
 *
 * Lives in src/util (layer 1) so runs/, report/, publish/, wip/ and autoresearch/ share it.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { OutputTargetError } from '../errors/input-error.js';

/** "a character device", "a FIFO", …: what lstat/stat found, in words. */
export function describeKind(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

const isStream = (st: Stats) => st.isCharacterDevice() || st.isFIFO();

export interface OutputFileOptions {
  /** True when the user named this path (`--out`); false for a default path inside a directory. */
  named: boolean;
  /** How the path was given, for messages: `--out`, or e.g. `trajectory.html`. */
  label?: string;
  /** When the path (after following a named link) is a directory, write this file name inside it. */
  inDirectory?: string;
  /**
   * False: the temporary file is not flushed to disk before the rename (still atomic for readers).
   * For a writer of many files that flushes them together before its own commit point (site/writer.ts);
   * an fsync per file cost ~40 ms of a site's ~7 files a run on a loaded disk.
   */
  sync?: boolean;
}

export interface OutputFileResult {
  /** Where the bytes went: the path written (a named link resolved), or the device/FIFO's path. */
  path: string;
  bytes: number;
  /** `replaced`: atomic temporary-and-rename; `through`: opened and written (device, FIFO). */
  mode: 'replaced' | 'through';
}

/** Decide how `path` is written, following the rule above. */
async function planFile(path: string, o: OutputFileOptions): Promise<{ path: string; mode: 'replaced' | 'through' }> {
  const label = o.label ?? '--out';
  const st = await lstatOrNull(path);
  if (!st) return { path, mode: 'replaced' };
  if (st.isFile()) return { path, mode: 'replaced' };
  if (st.isSymbolicLink()) {
    // Not named: the link belongs to the directory we write into; replacing it touches nothing else.
    if (!o.named) return { path, mode: 'replaced' };
    let target: Stats;
    try {
      target = await stat(path);
    } catch {
      throw new OutputTargetError(`${label} ${path} is a symbolic link to nothing; name the file to write instead`, path);
    }
    if (isStream(target)) return { path, mode: 'through' };
    if (target.isFile()) return { path: await realpath(path), mode: 'replaced' };
    if (target.isDirectory() && o.inDirectory) return planFile(join(await realpath(path), o.inDirectory), { ...o, named: false });
    throw new OutputTargetError(`${label} ${path} is a symbolic link to ${describeKind(target)}; only a file, a character device or a FIFO is written`, path);
  }
  if (st.isDirectory() && o.inDirectory) return planFile(join(path, o.inDirectory), { ...o, named: false });
  if (isStream(st) && o.named) return { path, mode: 'through' };
  const why = isStream(st)
    ? 'it is written through only when you name it with --out'
    : 'only a regular file is replaced, and only a character device or FIFO you name is written through';
  throw new OutputTargetError(`${label} ${path} is ${describeKind(st)}; ${why} — remove it or choose another path`, path);
}

/** Chunks are batched into writes of about this many UTF-16 units. */
const BATCH = 1 << 20;

async function writeChunks(fh: import('node:fs/promises').FileHandle, chunks: Iterable<string>): Promise<number> {
  let bytes = 0;
  const writeAll = async (text: string) => {
    const buf = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < buf.length) {
      try {
        offset += (await fh.write(buf, offset, buf.length - offset)).bytesWritten;
      } catch (err) {
        // A FIFO opened non-blocking whose reader is behind: wait for it to drain, then go on.
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    bytes += buf.length;
  };
  let pending: string[] = [];
  let size = 0;
  for (const chunk of chunks) {
    pending.push(chunk);
    size += chunk.length;
    if (size >= BATCH) {
      await writeAll(pending.join(''));
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) await writeAll(pending.join(''));
  return bytes;
}

/**
 * Write a file output by the rule above. The temporary name of an atomic write follows the
 * `.name.tmp-<pid>-<hex>` convention of runs/export/atomic-dir.ts, whose stale-staging cleanup
 * recognises it.
 */
export async function writeOutputFile(path: string, chunks: Iterable<string>, o: OutputFileOptions): Promise<OutputFileResult> {
  const plan = await planFile(path, o);
  if (plan.mode === 'through') {
    // No O_CREAT, no O_TRUNC: what was checked must still be a device or FIFO once open. A FIFO is
    // opened non-blocking: with no reader the open fails at once (ENXIO) instead of waiting forever.
    const fifo = (await stat(plan.path)).isFIFO();
    let fh: import('node:fs/promises').FileHandle;
    try {
      fh = await open(plan.path, constants.O_WRONLY | constants.O_NOCTTY | (fifo ? constants.O_NONBLOCK : 0));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
      throw new OutputTargetError(
        `${o.label ?? '--out'} ${path} is a FIFO (named pipe) with no reader; nothing would ever read what is written — start its reader first or choose another path`,
        path,
      );
    }
    try {
      const st = await fh.stat();
      if (!isStream(st)) throw new OutputTargetError(`${o.label ?? '--out'} ${path} changed while being opened; nothing was written`, path);
      return { path: plan.path, bytes: await writeChunks(fh, chunks), mode: 'through' };
    } finally {
      await fh.close();
    }
  }
  const dir = dirname(plan.path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(plan.path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o644);
  let bytes: number;
  try {
    bytes = await writeChunks(fh, chunks);
    if (o.sync !== false) await fh.sync();
    await fh.close();
    // Checked again right before the rename: the rename replaces whatever is there now.
    const now = await lstatOrNull(plan.path);
    if (now && !now.isFile() && !(now.isSymbolicLink() && !o.named)) {
      throw new OutputTargetError(`${o.label ?? '--out'} ${plan.path} became ${describeKind(now)} while writing; nothing was replaced`, plan.path);
    }
    await rename(tmp, plan.path);
  } catch (err) {
    // best effort: closing before the temp file is removed; the write's own error is what counts
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  return { path: plan.path, bytes, mode: 'replaced' };
}

/** The files whose presence makes a directory a run workspace (every layout we write has one). */
const WORKSPACE_MARKERS = ['index.jsonl', 'benchmark.json', join('iteration-1', 'benchmark.json'), join('.internal', 'index.jsonl')];

/** True when `dir` holds a run workspace's index or benchmark as a regular file. */
export async function isRunWorkspace(dir: string): Promise<boolean> {
  for (const marker of WORKSPACE_MARKERS) {
    const st = await lstatOrNull(join(dir, marker));
    if (st?.isFile()) return true;
  }
  return false;
}

export type OutputDirState = 'absent' | 'empty' | 'workspace' | 'other';

export interface OutputDirOptions {
  /** The command, for messages (`export`, `pull`, …). */
  command: string;
  /** How the path was given, for messages: `--out` (default). */
  label?: string;
  /** What to tell the user when a non-workspace directory is in the way; default: choose another --out. */
  hint?: string;
  /**
   * `caller`: a non-empty directory that is not a run workspace comes back as `other` for the
   * caller to judge (wip recover merges only its own run into a directory and never drops a file).
   * Default `refuse`.
   */
  foreign?: 'refuse' | 'caller';
}

/**
 * What is at a directory output's path, refusing every kind the rule does not allow (exit 2). The
 * caller decides what to do with a `workspace` (update, replace with --force, or refuse).
 * Never follows a link: a symbolic link at `path` is refused, whatever it points at.
 */
export async function checkOutputDir(path: string, o: OutputDirOptions): Promise<OutputDirState> {
  const label = o.label ?? '--out';
  const st = await lstatOrNull(path);
  if (!st) return 'absent';
  if (st.isSymbolicLink()) {
    // any failure here is fine: the link is refused just below either way; where it points is said only when it resolves
    const to = await realpath(path).catch(() => null);
    throw new OutputTargetError(
      `${label} ${path} is a symbolic link${to ? ` to ${to}` : ' to nothing'}; ${o.command} never writes a run directory through a link — pass ${to ? 'the directory it points at' : 'a new directory'} instead`,
      path,
    );
  }
  if (!st.isDirectory()) {
    throw new OutputTargetError(
      `${label} ${path} is ${describeKind(st)}; ${o.command} writes a run directory and never replaces anything else — remove it or choose another ${label}`,
      path,
    );
  }
  if ((await readdir(path)).length === 0) return 'empty';
  if (await isRunWorkspace(path)) return 'workspace';
  if (o.foreign === 'caller') return 'other';
  throw new OutputTargetError(
    `${label} ${path} is a directory that is not a run workspace (no index.jsonl or benchmark.json in it); ${o.command} never replaces it — ${o.hint ?? `choose a new or empty directory for ${label}`}`,
    path,
  );
}

/**
 * The last check before a staged directory is renamed to `path` (runs/export/atomic-dir.ts): only
 * nothing or a real directory may be there. Cheap, and it also covers a default destination.
 */
export async function assertReplaceableDir(path: string): Promise<void> {
  const st = await lstatOrNull(path);
  if (st && !st.isDirectory()) throw notReplaceable(path, st);
}

/** The refusal for a non-directory found where a run directory was to be renamed. */
export function notReplaceable(path: string, st: Stats): OutputTargetError {
  return new OutputTargetError(`${path} is ${describeKind(st)}; a run directory never replaces it — remove it or choose another --out`, path);
}
