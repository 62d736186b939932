/**
 * The local publish lock (ARCHITECTURE.md rule 6): serializes publishers on one machine. Compare-and-swap
 * on refs is the real guarantee; the lock only keeps two local publishers from wasting work
 * racing each other. A compromised lock (its holder stalled past `stale`) must abort the holder
 * before it moves any ref, so `assertHeld()` is checked right before ref updates.
 *
 * A holder killed with SIGKILL (or by the OOM killer) cannot remove its lock, and proper-lockfile
 * treats it as stale only after `stale` (30 s) without updates. So the holder also records its pid,
 * host and the lock directory's inode in `<lock>.owner` beside the lock (not inside: proper-lockfile
 * removes its lock with rmdir), and a waiter on the same host that finds that pid gone reclaims the
 * lock at once. The inode ties the record to this very lock directory: a lock another process has
 * just created (whose owner record is not written yet) has a different inode and is left alone.
 *
 * A holder can also die in the two gaps where the lock exists without a record of it: between
 * proper-lockfile's mkdir and our record write, and between removing the record and the rmdir on
 * release (CI caught a kill -9 landing in the first one: the next publish waited out the 30 s
 * staleness). A live holder writes its record within microseconds of the mkdir and never releases
 * slowly, so a lock directory with no record of its inode that is older than ORPHAN_GRACE_MS is an
 * orphan and is reclaimed too. Should that ever misjudge a stalled live holder, its next periodic
 * update sees the lock replaced, and `assertHeld()` stops it before it moves a ref. For the same
 * reason a holder that cannot write its record gives the lock back and fails instead of holding a
 * lock that others would judge orphaned.
 */
import lockfile from 'proper-lockfile';
import { randomBytes } from 'node:crypto';
import { readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { processAlive } from '../util/process-alive.js';
import { absentAs, diskErrorOf, isAbsent, isDiskRefusal } from '../errors/errors.js';
import { readRegularTextSync } from '../util/safe-open.js';
import { LockError } from '../errors/publish-errors.js';

export interface HeldLock {
  assertHeld(): void;
  release(): Promise<void>;
}

interface Owner {
  pid: number;
  host: string;
  ino: number;
}

function readOwner(ownerFile: string): Owner | null {
  try {
    const o = JSON.parse(readRegularTextSync(ownerFile, { kind: 'state' })) as Partial<Owner>;
    return typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.ino === 'number' ? { pid: o.pid, host: o.host, ino: o.ino } : null;
  } catch (err) {
    // absent: no owner file (or a torn one, a SyntaxError); anything else propagates
    if (isAbsent(err) || err instanceof SyntaxError) return null;
    throw err;
  }
}

/** How long a lock directory may exist without its owner record before it counts as orphaned. */
export const ORPHAN_GRACE_MS = 3_000;

/**
 * True when the lock was removed because its holder is gone: its recorded owner is a dead process
 * of this host, or it has had no record at all for longer than ORPHAN_GRACE_MS.
 */
async function reclaimIfOwnerDead(lockDir: string, ownerFile: string): Promise<boolean> {
  // absent: the lock went away meanwhile; anything else propagates
  const current = await stat(lockDir).catch(absentAs(null));
  if (!current) return false;
  const recorded = readOwner(ownerFile);
  const owner = recorded?.ino === current.ino ? recorded : null;
  if (owner) {
    if (owner.host !== hostname() || owner.pid === process.pid || processAlive(owner.pid)) return false;
  } else if (Date.now() - current.mtimeMs < ORPHAN_GRACE_MS) {
    return false; // just created: its holder is about to write the record
  }
  const moved = `${lockDir}.dead-${owner?.pid ?? 'orphan'}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(lockDir, moved);
  } catch {
    return false; // released or reclaimed by someone else meanwhile: just retry
  }
  // absent: the moved lock went away meanwhile; anything else propagates
  if ((await stat(moved).catch(absentAs(null)))?.ino !== current.ino) {
    // A live process re-took the lock between our stat and our rename: give it back. Should that
    // fail, its periodic update notices the loss and it aborts before moving any ref.
    await rename(moved, lockDir).catch(() => rm(moved, { recursive: true, force: true }));
    return false;
  }
  if (owner) {
    try {
      unlinkSync(ownerFile);
    } catch (err) {
      // absent: already gone; anything else propagates
      if (!isAbsent(err)) throw err;
    }
  }
  await rm(moved, { recursive: true, force: true });
  return true;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The owner records a killed holder was writing (`<owner>.tmp-<pid>`, killed between the write and
 * the rename): only a lock holder writes one, and we hold the lock now, so one of a process that is
 * gone is left over for good — removed. One of a live process (a holder the lock was taken from) stays.
 */
function sweepDeadOwnerTemps(ownerFile: string): void {
  const prefix = `${basename(ownerFile)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dirname(ownerFile));
  } catch {
    // best effort: an unreadable git directory fails the owner write just below, with its reason
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue;
    try {
      unlinkSync(join(dirname(ownerFile), name));
    } catch {
      // best effort: another publisher swept it first, or the file is not ours to remove
    }
  }
}

export async function acquirePublishLock(commonDir: string, opts: { waitMs?: number } = {}): Promise<HeldLock> {
  const file = join(commonDir, 'agentv-results.lock');
  const lockDir = `${file}.lock`;
  const ownerFile = `${file}.owner`;
  let compromised: Error | null = null;
  const waitMs = opts.waitMs ?? 120_000;
  const started = Date.now();
  let release: () => Promise<void>;
  // Our own retry loop (not proper-lockfile's) so a dead owner is noticed on every attempt.
  for (let attempt = 0; ; attempt++) {
    try {
      release = await lockfile.lock(file, {
        realpath: false,
        stale: 30_000,
        update: 5_000,
        retries: 0,
        onCompromised: (err) => {
          compromised = err;
        },
      });
      break;
    } catch (err) {
      if (isDiskRefusal(err)) throw diskErrorOf(err, `the publish lock ${lockDir} (nothing was written; no branch moved)`);
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() - started > waitMs) {
        // Who holds it, when its owner record says (the data of the failure, for a caller to show or wait on).
        let owner: Owner | null = null;
        try {
          owner = (err as NodeJS.ErrnoException).code === 'ELOCKED' ? readOwner(ownerFile) : null;
        } catch {
          // unreadable owner record: the holder is not known; the LockError below is the failure reported
        }
        throw new LockError(`could not take the publish lock ${lockDir}: ${(err as Error).message}`, {
          data: { path: lockDir, holder: owner ? { pid: owner.pid, host: owner.host } : null },
        });
      }
      if (await reclaimIfOwnerDead(lockDir, ownerFile)) continue;
      const backoff = Math.min(1_000, 50 * 1.3 ** attempt);
      await sleep(backoff / 2 + Math.random() * backoff);
    }
  }
  sweepDeadOwnerTemps(ownerFile);
  const tmp = `${ownerFile}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, JSON.stringify({ pid: process.pid, host: hostname(), ino: statSync(lockDir).ino }));
    renameSync(tmp, ownerFile);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never written
    }
    // best effort: the LockError below is the failure reported
    await release().catch(() => undefined);
    if (isDiskRefusal(err)) throw diskErrorOf(err, `the owner of the publish lock ${ownerFile} (nothing was written; no branch moved)`);
    throw new LockError(`could not record the owner of the publish lock in ${ownerFile}: ${(err as Error).message}`, { data: { path: lockDir } });
  }
  return {
    assertHeld() {
      if (compromised)
        throw new LockError(`the publish lock was lost (${(compromised as Error).message}); nothing was moved — run the command again`, {
          data: { path: lockDir },
        });
    },
    async release() {
      try {
        // Our record goes before the lock itself, so it never outlives the lock it describes.
        if (readOwner(ownerFile)?.pid === process.pid) unlinkSync(ownerFile);
      } catch {
        // any failure here is fine: the lock itself is released just below either way, and a stale
        // owner record is judged by its inode (readOwner's callers), never trusted alone
      }
      try {
        await release();
      } catch {
        // Already released or compromised: nothing left to undo.
      }
    },
  };
}
