/**
 * The one opener: every file the tool reads whole (a config, a results file, a run's files, a
 * merge driver's inputs, an autoresearch log, our own state files) is opened here.
 *
 *   - opened with O_NONBLOCK, so a named pipe with no writer never blocks the open (a pipe, socket
 *     or device is then refused, not read: it would block or never end);
 *   - checked with fstat on the open descriptor (a link is followed to what it names: a link to
 *     /dev/zero is a device), so what was checked is what is read;
 *   - bounded: a file larger than its kind allows is refused before a byte is read, and a file that
 *     grows while read stops at the bound.
 *
 * Refusals are `UnsafeFileError` (code `input`, exit 2) naming the file, and so is a file the
 * system will not let us open (EACCES, EPERM, EIO, a loop of links: reason `unreadable`, with the
 * errno); absence (ENOENT, ENOTDIR) and the machine's own trouble (EMFILE, ENOMEM) are passed
 * through unchanged for the caller to judge.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { UnsafeFileError } from '../errors/input-error.js';
import { isAbsent } from '../errors/errors.js';

const MiB = 1024 * 1024;

/** The most the tool reads of each kind of file. */
export const READ_LIMITS = {
  /** `.agentv/config.yaml`, `--config`. */
  config: 1 * MiB,
  /** A log we append to and read back: `_autoresearch/iterations.jsonl`, the outbox, journals. */
  log: 64 * MiB,
  /** Our own small state files (a lock owner, a marker, a cache). */
  state: 256 * MiB,
  /** What git hands the merge driver: one file of a results branch. */
  'merge-input': 512 * MiB,
  /** A file of a run (index.jsonl, summary.json, a payload) or a results file the user names. */
  'run-file': 1024 * MiB,
} as const;
export type ReadKind = keyof typeof READ_LIMITS;

export interface SafeOpenOptions {
  kind: ReadKind;
  /** How to name the file in a message (default: its path), e.g. `--config /tmp/x`. */
  label?: string;
  /** Override the kind's bound (bytes). */
  limit?: number;
  /** Refuse a symbolic link at `path` itself (O_NOFOLLOW) instead of reading what it names. */
  noFollow?: boolean;
  /**
   * Refuse a file this user does not own or that others may write: for what is run, not only read
   * (the CLI's compiled code cache), which another user of the machine must not be able to plant.
   */
  ownOnly?: boolean;
}

/** "a named pipe", "a device", …: a non-regular file in words. */
export function fileTypeName(st: Pick<Stats, 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice' | 'isDirectory'>): string {
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isDirectory()) return 'a directory';
  return 'not a regular file';
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

function limitOf(o: SafeOpenOptions): number {
  return o.limit ?? READ_LIMITS[o.kind];
}

function notRegular(path: string, o: SafeOpenOptions, what: string): UnsafeFileError {
  return new UnsafeFileError(
    `${o.label ?? path} is ${what}, not a regular file — refusing to read it (it could block or never end); pass a regular file`,
    path,
    'not-regular',
  );
}

function tooLarge(path: string, o: SafeOpenOptions, size: number | null): UnsafeFileError {
  const limit = limitOf(o);
  return new UnsafeFileError(
    `${o.label ?? path} is ${size === null ? 'larger than' : `${size} bytes, over`} the ${limit}-byte limit for ${o.kind === 'run-file' ? 'a run file' : `a ${o.kind.replace('-', ' ')} file`} — refusing to read it`,
    path,
    'too-large',
  );
}

/** A socket cannot be opened at all (ENXIO); say what it is rather than the errno. */
/** What the system says when a file is there and will not be read: named as unreadable (exit 2), never a bug's 70. */
const UNREADABLE = new Set(['EACCES', 'EPERM', 'EIO', 'ELOOP', 'ENAMETOOLONG']);

function openFailure(path: string, o: SafeOpenOptions, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENXIO' || code === 'EOPNOTSUPP' || code === 'ENODEV') return notRegular(path, o, 'a socket or device');
  if (code === 'ELOOP' && o.noFollow) return notRegular(path, o, 'a symbolic link');
  // Absent (ENOENT, ENOTDIR) stays the system's error, for the caller's isAbsent; so does the machine's own trouble (EMFILE, ENOMEM).
  if (code !== undefined && UNREADABLE.has(code)) return unreadableFile(path, o, err);
  return err;
}

function judge(path: string, st: Stats, o: SafeOpenOptions): void {
  if (!st.isFile()) throw notRegular(path, o, fileTypeName(st));
  if (st.size > limitOf(o)) throw tooLarge(path, o, st.size);
  if (o.ownOnly && (st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0)) {
    throw new UnsafeFileError(`${o.label ?? path} belongs to another user or others may write it — refusing to use it`, path, 'not-ours');
  }
}

/**
 * Open a regular file for reading, refusing anything else before a byte is read. The caller owns
 * the handle (close it); `size` is what fstat saw.
 */
export async function openRegularFile(path: string, o: SafeOpenOptions): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle;
  try {
    handle = await open(path, o.noFollow ? FLAGS | constants.O_NOFOLLOW : FLAGS);
  } catch (err) {
    throw openFailure(path, o, err);
  }
  try {
    const st = await handle.stat();
    judge(path, st, o);
    return { handle, size: st.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The bytes of a regular file, bounded by its kind. */
export async function readRegularFile(path: string, o: SafeOpenOptions): Promise<Buffer> {
  const { handle, size } = await openRegularFile(path, o);
  try {
    const limit = limitOf(o);
    // One byte past what fstat saw tells a file that grew; reading stops at the bound either way.
    const chunks: Buffer[] = [];
    let total = 0;
    for (let want = Math.min(size + 1, limit + 1); total <= limit; want = Math.min(64 * 1024, limit + 1 - total)) {
      const buf = Buffer.allocUnsafe(Math.max(want, 1));
      const { bytesRead } = await handle.read(buf, 0, buf.length, total);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
      // A read short of what was asked is the end of a regular file: no second read (and no
      // second buffer) just to be told so.
      if (bytesRead < buf.length) break;
    }
    if (total > limit) throw tooLarge(path, o, null);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/** The text (UTF-8) of a regular file, bounded by its kind. */
export async function readRegularText(path: string, o: SafeOpenOptions): Promise<string> {
  return (await readRegularFile(path, o)).toString('utf8');
}

/** Synchronous twin of readRegularFile, for the hot read paths (thousands of small sidecars). */
export function readRegularFileSync(path: string, o: SafeOpenOptions): Buffer {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    throw openFailure(path, o, err);
  }
  try {
    const st = fstatSync(fd);
    judge(path, st, o);
    const limit = limitOf(o);
    const chunks: Buffer[] = [];
    let total = 0;
    for (let want = Math.min(st.size + 1, limit + 1); total <= limit; want = Math.min(64 * 1024, limit + 1 - total)) {
      const buf = Buffer.allocUnsafe(Math.max(want, 1));
      const bytesRead = readSync(fd, buf, 0, buf.length, total);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      total += bytesRead;
      // Short of what was asked: the end of the file (see readRegularFile).
      if (bytesRead < buf.length) break;
    }
    if (total > limit) throw tooLarge(path, o, null);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** The text (UTF-8) of a regular file, synchronously. */
export function readRegularTextSync(path: string, o: SafeOpenOptions): string {
  return readRegularFileSync(path, o).toString('utf8');
}

/**
 * `err` from reading `path` as the failure to report: a refusal of ours stays as it is; a system
 * error (EACCES, EIO, …) becomes an UnsafeFileError `unreadable` naming the file and the errno
 * (exit 2, not a bug). Absence is the caller's to decide before it gets here.
 */
export function unreadableFile(path: string, o: Pick<SafeOpenOptions, 'label'>, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || err instanceof UnsafeFileError) return err;
  return new UnsafeFileError(
    `${o.label ?? path} cannot be read (${code}: ${(err as Error).message}) — fix it (its permissions, the links on its path) or move it away`,
    path,
    'unreadable',
    code,
  );
}

/** What `readOptionalJson` found when it found no document: no file, or a file that is not JSON. */
const NONE = undefined;

/**
 * The JSON document at `path`, or `undefined` when there is none: the file does not exist (ENOENT,
 * ENOTDIR: absent) or is not JSON (a torn write, another tool's text: unparsable). Anything else
 * is reported, never read as "none": a directory, pipe or device where the file should be, a file
 * too large (UnsafeFileError), or one the system will not let us read (`unreadableFile`).
 */
export async function readOptionalJson(path: string, o: SafeOpenOptions): Promise<unknown> {
  let text: string;
  try {
    text = await readRegularText(path, o);
  } catch (err) {
    if (isAbsent(err)) return NONE;
    throw unreadableFile(path, o, err);
  }
  return parseOrNone(text);
}

/** Synchronous twin of readOptionalJson. */
export function readOptionalJsonSync(path: string, o: SafeOpenOptions): unknown {
  let text: string;
  try {
    text = readRegularTextSync(path, o);
  } catch (err) {
    if (isAbsent(err)) return NONE;
    throw unreadableFile(path, o, err);
  }
  return parseOrNone(text);
}

function parseOrNone(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // unparsable (JSON.parse throws only a SyntaxError): no document, as the callers of readOptionalJson ask
    return NONE;
  }
}
