/**
 * Build a directory off to the side and move it into place in one rename.
 *
 * The staging directory is a hidden sibling of the destination (same filesystem, so the final
 * rename is atomic). An interrupted run leaves only a hidden `.name.tmp-<pid>-<rand>` folder, never
 * a half-written run under the real name; the next writer in the same parent removes staging
 * folders whose process is gone.
 *
 * Writes are synchronous on purpose: a run is tens of thousands of small files, and pushing each
 * open/write/close through libuv's thread pool cost ~10x more kernel time in futex wake-ups than
 * the writes themselves (measured with strace -c: 422k futex calls for 24k files).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { lstat, mkdir, rename, rm, readdir, cp } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { safeRelativePath } from '../read/run-files.js';
import { assertReplaceableDir, notReplaceable } from '../../util/output-target.js';
import { OutputTargetError } from '../../errors/input-error.js';
import { processAlive } from '../../util/process-alive.js';
import { isAbsent } from '../../errors/errors.js';

const STAGING = /^\.(.+)\.(tmp|old)-(\d+)-[0-9a-f]+$/;

export async function removeStaleStaging(parent: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(parent);
  } catch (err) {
    // absent: no parent directory, no leftovers to clean; anything else propagates
    if (isAbsent(err)) return;
    throw err;
  }
  for (const name of names) {
    const m = STAGING.exec(name);
    if (m && !processAlive(Number(m[3]))) await rm(join(parent, name), { recursive: true, force: true });
  }
}

export class AtomicDir {
  private readonly made = new Set<string>();
  private closed = false;

  private constructor(
    readonly parent: string,
    readonly staging: string,
  ) {
    this.made.add(staging);
  }

  /** `parent` is where the final directory will live; its name may be decided only at commit. */
  static async create(parent: string, opts: { hint?: string } = {}): Promise<AtomicDir> {
    await mkdir(parent, { recursive: true });
    await removeStaleStaging(parent);
    const name = `.${opts.hint ?? 'run'}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const staging = join(parent, name);
    await mkdir(staging);
    return new AtomicDir(parent, staging);
  }

  private resolve(rel: string): string {
    const safe = safeRelativePath(rel);
    if (safe === null) throw new OutputTargetError(`refusing to write outside the output directory: ${JSON.stringify(rel)}`, rel);
    return join(this.staging, safe);
  }

  /**
   * mkdir -p that creates only the missing levels, each once, without EEXIST round trips. The
   * cache is bounded: rows write into their own fresh directories one after another, so only
   * recent entries are ever hit, and forgetting old ones costs at most one EEXIST each.
   */
  private ensureDir(dir: string): void {
    if (this.made.has(dir)) return;
    this.ensureDir(dirname(dir));
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (this.made.size >= 4096) {
      this.made.clear();
      this.made.add(this.staging);
    }
    this.made.add(dir);
  }

  async write(rel: string, data: string | Buffer): Promise<void> {
    this.writeSync(rel, data);
  }

  writeSync(rel: string, data: string | Buffer): void {
    const full = this.resolve(rel);
    this.ensureDir(dirname(full));
    writeFileSync(full, data);
  }

  /** Kept for callers that batch: writes are already complete when write() returns. */
  async flush(): Promise<void> {}

  async removeDir(rel: string): Promise<void> {
    const target = this.resolve(rel);
    await rm(target, { recursive: true, force: true });
    for (const d of [...this.made]) if (d === target || d.startsWith(target + '/')) this.made.delete(d);
  }

  /** Copy a file or directory from elsewhere into the staging tree. */
  async copyIn(from: string, rel: string): Promise<void> {
    const to = this.resolve(rel);
    this.ensureDir(dirname(to));
    await cp(from, to, { recursive: true, force: true });
  }

  path(rel: string): string {
    return this.resolve(rel);
  }

  /**
   * Move the staging tree to `parent/name`, replacing a previous directory of that name — only a
   * real directory (the caller has checked it is one it may replace, util/output-target.ts): a
   * file, device, FIFO, socket or symbolic link there is refused, before and after moving it aside.
   */
  async commit(name: string): Promise<string> {
    const finalPath = join(this.parent, name);
    if (basename(finalPath) !== name || name.startsWith('.')) throw new OutputTargetError(`invalid output name ${JSON.stringify(name)}`, name);
    await assertReplaceableDir(finalPath);
    const old = join(this.parent, `.${name}.old-${process.pid}-${randomBytes(4).toString('hex')}`);
    let moved = false;
    try {
      await rename(finalPath, old);
      moved = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (moved) {
      // Something swapped in between the check and the rename: put it back, untouched.
      const st = await lstat(old);
      if (!st.isDirectory()) {
        await rename(old, finalPath);
        throw notReplaceable(finalPath, st);
      }
    }
    try {
      await rename(this.staging, finalPath);
    } catch (err) {
      if (moved) await rename(old, finalPath);
      throw err;
    }
    this.closed = true;
    if (moved) await rm(old, { recursive: true, force: true });
    return finalPath;
  }

  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await rm(this.staging, { recursive: true, force: true });
  }
}
