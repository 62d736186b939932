/**
 * Build a directory off to the side and move it into place in one rename.
 *
 * The staging directory is a hidden sibling of the destination (same filesystem, so the final
 * rename is atomic). An interrupted run leaves only a hidden `.name.tmp-<pid>-<rand>` folder, never
 * a half-written run under the real name; the next writer in the same parent removes staging
 * folders whose process is gone.
 */
import { mkdir, rename, rm, writeFile, readdir, cp } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { safeRelativePath } from '../model/paths.js';

const STAGING = /^\.(.+)\.(tmp|old)-(\d+)-[0-9a-f]+$/;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function removeStaleStaging(parent: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = STAGING.exec(name);
    if (m && !processAlive(Number(m[3]))) await rm(join(parent, name), { recursive: true, force: true });
  }
}

export class AtomicDir {
  private readonly made = new Set<string>();
  private pending: Promise<unknown>[] = [];
  private failed: unknown = null;
  private closed = false;

  private constructor(readonly parent: string, readonly staging: string, private readonly concurrency: number) {}

  /** `parent` is where the final directory will live; its name may be decided only at commit. */
  static async create(parent: string, opts: { concurrency?: number; hint?: string } = {}): Promise<AtomicDir> {
    await mkdir(parent, { recursive: true });
    await removeStaleStaging(parent);
    const name = `.${opts.hint ?? 'run'}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const staging = join(parent, name);
    await mkdir(staging);
    return new AtomicDir(parent, staging, opts.concurrency ?? 16);
  }

  private resolve(rel: string): string {
    const safe = safeRelativePath(rel);
    if (safe === null) throw new Error(`refusing to write outside the output directory: ${JSON.stringify(rel)}`);
    return join(this.staging, safe);
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.made.add(dir);
  }

  /** Queue a write; at most `concurrency` writes are in flight, so memory stays bounded. */
  async write(rel: string, data: string | Buffer): Promise<void> {
    if (this.failed) throw this.failed;
    const full = this.resolve(rel);
    const task = this.ensureDir(dirname(full))
      .then(() => writeFile(full, data))
      .catch((err) => {
        this.failed ??= err;
      });
    this.pending.push(task);
    if (this.pending.length >= this.concurrency) await this.flush();
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    await Promise.all(batch);
    if (this.failed) throw this.failed;
  }

  async removeDir(rel: string): Promise<void> {
    await this.flush();
    await rm(this.resolve(rel), { recursive: true, force: true });
    for (const d of [...this.made]) if (d.startsWith(this.resolve(rel))) this.made.delete(d);
  }

  /** Copy a file or directory from elsewhere into the staging tree. */
  async copyIn(from: string, rel: string): Promise<void> {
    await this.flush();
    const to = this.resolve(rel);
    await this.ensureDir(dirname(to));
    await cp(from, to, { recursive: true, force: true });
  }

  path(rel: string): string {
    return this.resolve(rel);
  }

  /** Move the staging tree to `parent/name`, replacing any previous directory of that name. */
  async commit(name: string): Promise<string> {
    await this.flush();
    const finalPath = join(this.parent, name);
    if (basename(finalPath) !== name || name.startsWith('.')) throw new Error(`invalid output name ${JSON.stringify(name)}`);
    const old = join(this.parent, `.${name}.old-${process.pid}-${randomBytes(4).toString('hex')}`);
    let moved = false;
    try {
      await rename(finalPath, old);
      moved = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
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
    await Promise.allSettled(this.pending);
    await rm(this.staging, { recursive: true, force: true });
  }
}
