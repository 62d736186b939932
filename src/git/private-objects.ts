/**
 * An object directory of one's own, for a `git fast-import` whose objects must not reach the
 * repository unless its commit is written (publish's prefeed, publish/prefeed.ts): git writes into
 * `<git dir>/agentv-results/objects-<pid>-*` and reads the repository's objects as alternates; the
 * packs move into the object store (each pack before its index: git sees a pack by its index) only
 * when the commit is written, and the directory goes either way. Those left by a process that died
 * (a publish killed mid-way) are removed when the next one is made: nothing in them was committed.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Repo } from './repo.js';
import { processAlive } from '../util/process-alive.js';

export class PrivateObjects {
  private constructor(
    private readonly repo: Repo,
    readonly dir: string,
  ) {}

  /** A new directory, inside the repository's git directory so its packs move in by rename. */
  static make(repo: Repo): PrivateObjects {
    const parent = join(repo.commonDir, 'agentv-results');
    mkdirSync(parent, { recursive: true });
    for (const name of readdirSync(parent)) {
      const pid = Number(/^objects-(\d+)-/.exec(name)?.[1] ?? Number.NaN);
      if (Number.isInteger(pid) && pid !== process.pid && !processAlive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
    }
    const dir = mkdtempSync(join(parent, `objects-${process.pid}-`));
    mkdirSync(join(dir, 'pack'));
    return new PrivateObjects(repo, dir);
  }

  /** What git is started with to write here and read the repository's objects. */
  env(): Record<string, string> {
    return { GIT_OBJECT_DIRECTORY: this.dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: join(this.repo.commonDir, 'objects') };
  }

  /** Move the packs git wrote here into the repository's object store: each pack before its index. */
  async adopt(): Promise<void> {
    const names = (await readdir(join(this.dir, 'pack'))).filter((n) => n.startsWith('pack-'));
    const order = [...names.filter((n) => !n.endsWith('.idx')), ...names.filter((n) => n.endsWith('.idx'))];
    for (const name of order) await rename(join(this.dir, 'pack', name), join(this.repo.commonDir, 'objects', 'pack', name));
  }

  /** The directory gone, with whatever was not adopted. */
  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
