/**
 * A run folder walked once: every regular file with its size, every directory, and every entry that
 * is neither (links, pipes, sockets, devices). What a command asks of the folder afterwards — is
 * this path safe, how large is it, what does it hold — is answered from the walk, not from the disk
 * again (`checkRunPathSync` costs an lstat and a realpath a file).
 *
 * With no irregular entry anywhere in the folder, a lexically safe path can only name something
 * inside it, so the walk's answer is the run-path check's answer. A folder holding a link or a
 * special file is answered through the run-path check itself (runs/read/run-files.ts), file by file.
 *
 * Contents: `read` reads each file once; with `keep` the bytes are kept, so the next reader
 * (publish's split after its validation) gets them without opening the file again.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { checkRunPathSync, realRunDir, type RunFileRead, type RunFiles, type RunPathCheck, unsafePathMessage } from './run-files.js';
import { readRegularFileSync } from '../../util/safe-open.js';
import { UnsafeFileError } from '../../errors/input-error.js';

export interface IrregularEntry {
  path: string;
  what: string;
}

export class RunTree implements RunFiles {
  /** Regular files, run-relative (dot entries included). */
  readonly files = new Set<string>();
  readonly dirs = new Set<string>(['']);
  readonly irregular: IrregularEntry[] = [];
  private readonly kept = new Map<string, Buffer>();
  private realDirValue: string | null = null;

  private constructor(
    readonly root: string,
    private readonly keep: boolean,
  ) {}

  /** Walk `root` once (synchronously: thousands of small entries, see split.ts). */
  static walk(root: string, opts: { keep?: boolean } = {}): RunTree {
    const tree = new RunTree(root, opts.keep ?? false);
    const go = (rel: string) => {
      for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          tree.dirs.add(child);
          go(child);
          continue;
        }
        // readdir gave the type: only an entry that is not a regular file is looked at again, to name it.
        if (e.isFile()) tree.files.add(child);
        else tree.irregular.push({ path: child, what: irregularName(lstatSync(join(root, child))) });
      }
    };
    go('');
    tree.irregular.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return tree;
  }

  get realDir(): string {
    this.realDirValue ??= realRunDir(this.root);
    return this.realDirValue;
  }

  /** True when the walk alone answers for every path (no link or special file in the folder). */
  get plain(): boolean {
    return this.irregular.length === 0;
  }

  /** The run-path check of `rel` (runs/read/run-files.ts), from the walk when the folder is plain. */
  check(rel: string): RunPathCheck {
    if (!this.plain) return checkRunPathSync(this.root, rel, this.realDir);
    const bad = unsafePathMessage(rel);
    if (bad) return { kind: 'bad', message: bad };
    // lexically safe: `rel` is its own normal form
    const safe = rel;
    if (this.files.has(safe)) return { kind: 'ok', abs: this.under(safe), isDir: false };
    if (this.dirs.has(safe)) return { kind: 'ok', abs: this.under(safe), isDir: true };
    return { kind: 'missing' };
  }

  /** The absolute path of a lexically safe `rel` (its own normal form): joined without normalising it again where `/` is the separator. */
  private under(safe: string): string {
    const real = this.realDir;
    return sep === '/' ? (real.endsWith('/') ? real + safe : `${real}/${safe}`) : join(real, safe);
  }

  /** A file of the run, never through a link leaving it; read from disk at most once when kept. */
  read(rel: string): RunFileRead {
    const at = this.check(rel);
    if (at.kind !== 'ok') return at;
    const safe = rel;
    if (at.isDir) return { kind: 'bad', message: `${safe} is a directory, not a file` };
    const kept = this.kept.get(safe);
    if (kept) return { kind: 'ok', data: kept };
    try {
      const data = readRegularFileSync(at.abs, { kind: 'run-file', label: safe });
      if (this.keep) this.kept.set(safe, data);
      return { kind: 'ok', data };
    } catch (err) {
      if (err instanceof UnsafeFileError) return { kind: 'bad', message: err.message };
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
      return { kind: 'bad', message: `${safe}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
  }

  /** The bytes of a file, read once: kept ones are handed over and forgotten (the caller now holds them). */
  take(rel: string): Buffer {
    const kept = this.kept.get(rel);
    if (kept) {
      this.kept.delete(rel);
      return kept;
    }
    return readRegularFileSync(join(this.root, rel), { kind: 'run-file', label: rel });
  }

  /** Forget every kept content. */
  release(): void {
    this.kept.clear();
  }
}

/** What an entry that is not a regular file or a directory is, in words (`a symbolic link`, `a named pipe`, …). */
export function irregularName(st: {
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}
