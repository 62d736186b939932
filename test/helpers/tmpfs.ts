/**
 * A real, small tmpfs for the disk tests (test/wip-diskfull.test.ts, test/disk-full.test.ts): the
 * kernel answers ENOSPC when it is full and EROFS once it is remounted read-only, exactly as a real
 * disk would. Mounting needs CAP_SYS_ADMIN (the tests run as root here and in CI): where it is not
 * permitted the suite reports itself skipped and says why — except under CI=true, where a disk
 * test that cannot run fails instead of passing by not running.
 *
 * Unmount in afterAll (`unmount()`), with every file closed first: the helpers here open nothing
 * they do not close.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Tmpfs {
  /** Where it is mounted (an empty directory when the mount failed). */
  dir: string;
  mounted: boolean;
  /** Why the mount failed (mount's own words). */
  why: string;
  /**
   * Fills it until the kernel says ENOSPC (ballast files under `<dir>/ballast`, largest first, so
   * at most a few bytes stay free), then gives back about `leave` bytes (ballast files removed);
   * returns the ballast directory: `free()` removes it.
   */
  fill(leave?: number): string;
  /** Removes the ballast: the space is back. */
  free(): void;
  /** `mount -o remount,ro` / `remount,rw`. */
  readOnly(): void;
  writable(): void;
  /** Lazy unmount (afterAll); safe to call when nothing was mounted. */
  unmount(): void;
  /** In a test: skip it (with the reason) when the mount failed, or fail under CI=true. */
  require(ctx: { skip: (note?: string) => void }): void;
}

/** Mounts a tmpfs of `size` (mount's syntax: `4m`, `512k`) on `dir` (an empty directory the caller made). */
export function mountTmpfs(dir: string, size: string): Tmpfs {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  let mounted = r.status === 0;
  const why = r.error?.message ?? (r.stderr ?? '').trim();
  const ballast = join(dir, 'ballast');
  const remount = (mode: 'ro' | 'rw') => {
    const m = spawnSync('mount', ['-o', `remount,${mode}`, dir], { encoding: 'utf8' });
    if (m.status !== 0) throw new Error(`mount -o remount,${mode} ${dir} failed: ${m.error?.message ?? m.stderr}`);
  };
  return {
    dir,
    get mounted() {
      return mounted;
    },
    why,
    fill(leave = 0) {
      mkdirSync(ballast, { recursive: true });
      let n = 0;
      const sizes: number[] = [];
      // Bounded: each size is written until ENOSPC, and the tmpfs is small.
      for (const size of [256 * 1024, 16 * 1024, 1024, 64]) {
        for (;;) {
          try {
            writeFileSync(join(ballast, `f${n}`), Buffer.alloc(size, 1));
            sizes[n++] = size;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
            break;
          }
        }
      }
      // Given back: ballast files removed until `leave` bytes are free, then the excess filled again.
      let given = 0;
      for (let i = sizes.length - 1; i >= 0 && given < leave; i--) {
        if (sizes[i] === undefined) continue;
        rmSync(join(ballast, `f${i}`));
        given += sizes[i]!;
      }
      if (given > leave) writeFileSync(join(ballast, 'refill'), Buffer.alloc(given - leave, 1));
      return ballast;
    },
    free() {
      rmSync(ballast, { recursive: true, force: true });
    },
    readOnly: () => remount('ro'),
    writable: () => remount('rw'),
    unmount() {
      if (mounted) spawnSync('umount', ['-l', dir]);
      mounted = false;
    },
    require(ctx) {
      if (mounted) return;
      const note = `cannot mount a tmpfs here (${why || 'not permitted'}); the disk tests need CAP_SYS_ADMIN`;
      if (process.env.CI === 'true') throw new Error(`${note} — under CI they must run`);
      ctx.skip(note);
    },
  };
}
