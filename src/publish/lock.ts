/**
 * The local publish lock (DESIGN.md 5): serializes publishers on one machine. Compare-and-swap
 * on refs is the real guarantee; the lock only keeps two local publishers from wasting work
 * racing each other. A compromised lock (its holder stalled past `stale`) must abort the holder
 * before it moves any ref, so `assertHeld()` is checked right before ref updates.
 */
import lockfile from 'proper-lockfile';
import { join } from 'node:path';

export class LockError extends Error {}

export interface HeldLock {
  assertHeld(): void;
  release(): Promise<void>;
}

export async function acquirePublishLock(commonDir: string, opts: { waitMs?: number } = {}): Promise<HeldLock> {
  const file = join(commonDir, 'agentv-results.lock');
  let compromised: Error | null = null;
  const waitMs = opts.waitMs ?? 120_000;
  const started = Date.now();
  let release: () => Promise<void>;
  for (;;) {
    try {
      release = await lockfile.lock(file, {
        realpath: false,
        stale: 30_000,
        update: 5_000,
        retries: { retries: 20, factor: 1.3, minTimeout: 50, maxTimeout: 1_000, randomize: true },
        onCompromised: (err) => {
          compromised = err;
        },
      });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() - started > waitMs) {
        throw new LockError(`could not take the publish lock ${file}.lock: ${(err as Error).message}`);
      }
    }
  }
  return {
    assertHeld() {
      if (compromised) throw new LockError(`the publish lock was lost (${(compromised as Error).message}); nothing was moved — run the command again`);
    },
    async release() {
      try {
        await release();
      } catch {
        // Already released or compromised: nothing left to undo.
      }
    },
  };
}
