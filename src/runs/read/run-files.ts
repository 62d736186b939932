/**
 * Opening a file a run names, without ever leaving the run.
 *
 * Paths inside a run come from data (index rows, a hand-edited or downloaded workspace), so every
 * command that reads one goes through here, the same check `validate` reports:
 *   - lexically: no absolute path, no `..`, `.` or `.git` segment (safeRelativePath, here);
 *   - after resolving symbolic links: the real path must stay inside the run's real directory
 *     (a link to /etc/passwd, or an `outputs/` directory linked elsewhere, is refused);
 *   - by type: only regular files and directories. A FIFO or device would block or never end.
 * A link that stays inside the run is followed: it cannot expose anything the run does not hold.
 */
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { ROW_DIR_FIELDS, ROW_PATH_FIELDS } from '../../model/path-segments.js';
import { readRegularFile, readRegularFileSync } from '../../util/safe-open.js';
import { InputError, UnsafeFileError } from '../../errors/input-error.js';
import { isAbsent } from '../../errors/errors.js';

/**
 * The lexical half of the check: a relative path read back from a manifest (index.jsonl paths,
 * pointer paths), normalized, or null when it is absolute, escapes its root, or is malformed. A
 * path it accepts has no empty, `.` or `..` segment, so it is its own normal form.
 */
export function safeRelativePath(path: string): string | null {
  if (typeof path !== 'string' || path.length === 0 || path.length > 4096) return null;
  return UNSAFE_RELATIVE.test(path) ? null : path;
}

/**
 * A control character or backslash, or a segment that is empty (a leading, trailing or doubled
 * `/`), `.`, `..` or `.git`. One test per path: a big run checks hundreds of thousands.
 */
const UNSAFE_RELATIVE = /[\u0000-\u001f\\]|(?:^|\/)(?:\.{0,2}|\.git)(?:\/|$)/;

export type RunPathCheck = { kind: 'ok'; abs: string; isDir: boolean } | { kind: 'missing' } | { kind: 'bad'; message: string };

/** Why a path from data is refused before touching the disk, or null when it is lexically safe. */
export function unsafePathMessage(rel: string): string | null {
  return safeRelativePath(rel) === null ? escapesMessage(rel) : null;
}

function escapesMessage(rel: string): string {
  return `${JSON.stringify(rel)} escapes the run directory (absolute paths, "..", "." and ".git" segments are not allowed)`;
}

function inside(real: string, realDir: string): boolean {
  return real === realDir || real.startsWith(realDir.endsWith(sep) ? realDir : realDir + sep);
}

function typeName(st: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Why a file the user named directly (a results file, a manifest) cannot be opened, or null: a
 * named pipe would block until something writes to it and a device may never end, so both are
 * refused before anything opens them. A link to a regular file is fine: the user chose it.
 */
export function specialInputMessage(st: import('node:fs').Stats): string | null {
  if (st.isFile() || st.isDirectory()) return null;
  return `is ${typeName(st)}, not a regular file — write the results to a file first and pass that file`;
}

function judge(safe: string, real: string, realDir: string, st: import('node:fs').Stats): RunPathCheck {
  if (!inside(real, realDir)) return { kind: 'bad', message: `${safe} resolves outside the run directory (symbolic link to ${real})` };
  if (st.isDirectory()) return { kind: 'ok', abs: real, isDir: true };
  if (!st.isFile()) return { kind: 'bad', message: `${safe} is ${typeName(st)} — only regular files are read` };
  return { kind: 'ok', abs: real, isDir: false };
}

/**
 * What a failed lookup of a run path answers: a loop of links is a bad path; an absent entry is
 * missing at `lstat` and a dangling link at `realpath` (the entry is there, what it names is not);
 * anything else (a permission, the machine's own trouble) is thrown as it is.
 */
function lookupFailure(safe: string, err: unknown, step: 'lstat' | 'realpath'): RunPathCheck {
  if ((err as NodeJS.ErrnoException).code === 'ELOOP') return { kind: 'bad', message: `${safe} is a loop of symbolic links` };
  if (!isAbsent(err)) throw err;
  return step === 'lstat' ? { kind: 'missing' } : { kind: 'bad', message: `${safe} is a dangling symbolic link` };
}

/** Check `rel` inside `dir` (`realDir`: realpath of dir when the caller has it). */
export async function checkRunPath(dir: string, rel: string, realDir?: string): Promise<RunPathCheck> {
  // A lexically safe path is its own normal form (no empty, `.` or `..` segment): `rel` is used as it is.
  if (safeRelativePath(rel) === null) return { kind: 'bad', message: escapesMessage(rel) };
  const safe = rel;
  const abs = join(dir, safe);
  try {
    await lstat(abs);
  } catch (err) {
    // lookupFailure answers for an entry not there, a dangling link or a loop, and throws anything else
    return lookupFailure(safe, err, 'lstat');
  }
  let real: string;
  try {
    real = await realpath(abs);
  } catch (err) {
    // lookupFailure answers for an entry not there, a dangling link or a loop, and throws anything else
    return lookupFailure(safe, err, 'realpath');
  }
  return judge(safe, real, realDir ?? (await realpath(dir)), await stat(real));
}

/** Synchronous twin of checkRunPath for the hot read paths (thousands of small sidecars). */
export function checkRunPathSync(dir: string, rel: string, realDir?: string): RunPathCheck {
  if (safeRelativePath(rel) === null) return { kind: 'bad', message: escapesMessage(rel) };
  const safe = rel;
  const abs = join(dir, safe);
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(abs);
  } catch (err) {
    // lookupFailure answers for an entry not there, a dangling link or a loop, and throws anything else
    return lookupFailure(safe, err, 'lstat');
  }
  // Fast path: a regular file whose real path is its lexical one has no link anywhere on the way.
  let real: string;
  try {
    real = realpathSync.native(abs);
  } catch (err) {
    // lookupFailure answers for an entry not there, a dangling link or a loop, and throws anything else
    return lookupFailure(safe, err, 'realpath');
  }
  const root = realDir ?? realpathSync.native(dir);
  return judge(safe, real, root, !st.isSymbolicLink() && real === join(root, safe) ? st : statSync(real));
}

export type RunFileRead = { kind: 'ok'; data: Buffer } | { kind: 'missing' } | { kind: 'bad'; message: string };

/** Read a file of the run (never a directory, never through a link leaving it). */
export function readRunFileSync(dir: string, rel: string, realDir?: string): RunFileRead {
  const at = checkRunPathSync(dir, rel, realDir);
  if (at.kind !== 'ok') return at;
  // checked: `rel` is lexically safe, and so its own normal form
  if (at.isDir) return { kind: 'bad', message: `${rel} is a directory, not a file` };
  try {
    return { kind: 'ok', data: readRegularFileSync(at.abs, { kind: 'run-file', label: rel }) };
  } catch (err) {
    if (err instanceof UnsafeFileError) return { kind: 'bad', message: err.message };
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'bad', message: `${rel}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}

/**
 * The files of one run as its readers ask for them: the run-path check of a path and the read of a
 * file. The walked folder (`RunTree`, runs/read/run-tree.ts) answers both from its walk; `RunDirFiles`
 * asks the disk.
 */
export interface RunFiles {
  check(rel: string): RunPathCheck;
  read(rel: string): RunFileRead;
}

/** A run folder's files asked of the disk path by path (a folder not walked: a derived copy). */
export class RunDirFiles implements RunFiles {
  constructor(
    readonly dir: string,
    /** realpath of `dir`. */
    readonly realDir: string,
  ) {}

  check(rel: string): RunPathCheck {
    return checkRunPathSync(this.dir, rel, this.realDir);
  }

  read(rel: string): RunFileRead {
    return readRunFileSync(this.dir, rel, this.realDir);
  }
}

const realDirs = new Map<string, string>();

/** realpath of a run directory, remembered (a command reads many files of one run). */
export function realRunDir(dir: string): string {
  let real = realDirs.get(dir);
  if (real === undefined) {
    real = realpathSync.native(dir);
    if (realDirs.size > 256) realDirs.clear();
    realDirs.set(dir, real);
  }
  return real;
}

/**
 * Every entry of a run directory that is not a regular file or a directory (symbolic links,
 * pipes, sockets, devices), as run-relative paths. Commands that copy a whole run (publish) refuse
 * such a run rather than drop the entry and keep a row pointing at nothing.
 */
export function irregularEntries(root: string, limit = 20): { path: string; what: string }[] {
  const out: { path: string; what: string }[] = [];
  const go = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (out.length >= limit) return;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) go(child);
      else if (e.isSymbolicLink()) out.push({ path: child, what: 'a symbolic link' });
      else if (!e.isFile()) out.push({ path: child, what: typeName(lstatSync(join(root, child))) });
    }
  };
  go('');
  return out;
}

/**
 * The entries of a run folder a reader must not open: links leading out of it (or dangling), pipes,
 * sockets and devices. A link that stays inside the run is followed: it exposes nothing the run
 * does not hold.
 */
export function hostileEntries(root: string, limit = 20): { path: string; what: string }[] {
  const irregular = irregularEntries(root, limit);
  if (irregular.length === 0) return irregular;
  const realRoot = realpathSync.native(root);
  return irregular.filter((e) => e.what !== 'a symbolic link' || checkRunPathSync(root, e.path, realRoot).kind === 'bad');
}

/**
 * Each of `fields` a row carries must be a string naming a file (or, for ROW_DIR_FIELDS, a
 * directory) inside the run that exists, unless it is in `detached` (an artifact pointer says its
 * bytes live on the artifacts branch). `missing` says what an absent one is (default: a problem).
 */
export function pathFieldProblems(
  files: Pick<RunFiles, 'check'>,
  row: Record<string, unknown>,
  fields: readonly string[],
  detached: ReadonlySet<string>,
  problem: (message: string) => void,
  missing: (field: string, rel: string) => void = (field, rel) => problem(`${field} ${rel} does not exist`),
): void {
  for (const field of fields) {
    const rel = row[field];
    if (rel === null || rel === undefined) continue;
    if (typeof rel !== 'string') {
      problem(`${field} is not a string`);
      continue;
    }
    const at = files.check(rel);
    if (at.kind === 'bad') problem(`${field} ${at.message}`);
    else if (at.kind === 'missing') {
      if (!detached.has(rel)) missing(field, rel);
    } else if (ROW_DIR_FIELDS.has(field) !== at.isDir) problem(`${field} ${rel} is ${at.isDir ? 'a directory, not a file' : 'a file, not a directory'}`);
  }
}

/** A file of a run folder read whole: its run-relative path, its bytes, and whether it is executable. */
export interface RunFolderFile {
  rel: string;
  data: Buffer;
  executable: boolean;
}

/**
 * Every regular file under `dir` (sorted by path), read whole, to be carried as it is (AgentV 4.42's
 * run directory onto its branch). A link or special file is refused: it could lead out of the run.
 */
export async function readRunFolder(dir: string, rel = ''): Promise<RunFolderFile[]> {
  const out: RunFolderFile[] = [];
  const entries = (await readdir(join(dir, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = rel ? `${rel}/${e.name}` : e.name;
    const st = await lstat(join(dir, path));
    if (st.isDirectory()) out.push(...(await readRunFolder(dir, path)));
    else if (st.isFile()) out.push({ rel: path, data: await readRegularFile(join(dir, path), { kind: 'run-file' }), executable: (st.mode & 0o111) !== 0 });
    else
      throw new InputError(
        `${join(dir, path)}: refusing to publish a ${st.isSymbolicLink() ? 'symbolic link' : 'special file'} (only regular files go on the branch)`,
      );
  }
  return out;
}

/** One line about a hostile entry, for commands that read a run. */
export function hostileEntryMessage(e: { path: string; what: string }): string {
  return `${e.path} is ${e.what === 'a symbolic link' ? 'a symbolic link leading out of the run' : e.what} — only regular files inside the run are read`;
}

/** Why an entry of the folder that is not a regular file or a directory (`what`: a symbolic link, a named pipe, …) is refused. */
export function irregularEntryMessage(root: string, realRoot: string, e: { path: string; what: string }): string {
  const tail = '— only regular files are read or published; replace it by the file itself or remove it';
  if (e.what !== 'a symbolic link') return `is ${e.what} ${tail}`;
  const at = checkRunPathSync(root, e.path, realRoot);
  if (at.kind === 'bad') {
    const out = /\(symbolic link to (.*)\)$/.exec(at.message);
    if (out) return `is a symbolic link leading out of the run (to ${out[1]}) ${tail}`;
    return `${at.message.startsWith(`${e.path} `) ? at.message.slice(e.path.length + 1) : at.message} ${tail}`;
  }
  return `is a symbolic link${at.kind === 'ok' && at.isDir ? ' to a directory' : ''} ${tail}`;
}

/** A path a reader would open: bad itself, or missing under a folder that leads out of the run. */
export function onDiskMessage(dir: string, rel: string, realDir: string): string | null {
  const at = checkRunPathSync(dir, rel, realDir);
  if (at.kind === 'bad') return at.message;
  if (at.kind === 'ok') return null;
  for (let up = rel.lastIndexOf('/'); up > 0; up = rel.lastIndexOf('/', up - 1)) {
    const parent = checkRunPathSync(dir, rel.slice(0, up), realDir);
    if (parent.kind === 'bad') return parent.message;
    if (parent.kind === 'ok') return null;
  }
  return null;
}

/** The refusal of a run with unsafe paths: one line per problem (reading commands, exit 2). */
export function unsafeRunMessage(path: string, problems: readonly string[]): string {
  return `${path}: refusing to read a run with unsafe paths (report and show read the rest with --skip-unsafe):\n${problems.map((p) => `  ${p}`).join('\n')}`;
}

export { ROW_PATH_FIELDS } from '../../model/path-segments.js';

/** The first path field of a row that escapes the run lexically (`field "value" escapes …`), or null. */
export function unsafeRowPath(row: unknown): string | null {
  if (typeof row !== 'object' || row === null) return null;
  for (const field of ROW_PATH_FIELDS) {
    const rel = (row as Record<string, unknown>)[field];
    if (rel === null || rel === undefined) continue;
    const bad = typeof rel === 'string' ? unsafePathMessage(rel) : 'is not a string';
    if (bad) return `${field} ${bad}`;
  }
  return null;
}

/**
 * Why a directory holding a run's other files has no manifest, when that is the likely cause: a
 * CI artifact upload that dropped names starting with a dot (actions/upload-artifact@v4 does,
 * unless `include-hidden-files: true`), taking AgentV's `.internal/index.jsonl` with it.
 */
export function missingManifestHint(dir: string): string {
  if (!existsSync(join(dir, 'summary.json')) || existsSync(join(dir, '.internal'))) return '';
  return '; it holds summary.json but no .internal/ folder: an artifact upload may have dropped names starting with a dot (actions/upload-artifact@v4: set include-hidden-files: true)';
}
