/**
 * One daemon per repository: a proper-lockfile lock (atomic mkdir, refreshed every 2 s, stale after
 * 10 s) at `<git-common-dir>/agentv-results/daemon.lock`, plus `daemon.json` saying who holds it,
 * so a second daemon can say which process it lost to.
 *
 * A daemon killed with -9 leaves the lock behind; on the same host the next daemon sees that the
 * recorded pid is gone (or that no record was ever written) and waits for the lock to go stale
 * instead of refusing. A lock lost while
 * running (the process stalled past the stale time and another daemon took over) is reported
 * through `onCompromised`: the daemon must then stop, so two never run at once for long.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { OUTBOX_DIR } from './outbox.js';
import { isAbsent } from '../errors/errors.js';
import { processAlive } from '../util/process-alive.js';
import { readRegularText } from '../util/safe-open.js';
import { DaemonLockedError, type DaemonInfo } from '../errors/daemon-errors.js';
export type { DaemonInfo } from '../errors/daemon-errors.js';

export interface DaemonLock {
  release(): Promise<void>;
}

const STALE_MS = 10_000;
const UPDATE_MS = 2_000;

export async function readDaemonInfo(commonDir: string): Promise<DaemonInfo | null> {
  try {
    const v = JSON.parse(await readRegularText(join(commonDir, OUTBOX_DIR, 'daemon.json'), { kind: 'state' })) as DaemonInfo;
    return typeof v.pid === 'number' ? v : null;
  } catch (err) {
    // absent: no daemon.json (or a torn one, a SyntaxError) means no daemon info; anything else propagates
    if (isAbsent(err) || err instanceof SyntaxError) return null;
    throw err;
  }
}

/** Is a daemon holding this repository's lock right now (lock present and refreshed)? */
export async function daemonRunning(commonDir: string): Promise<DaemonInfo | null> {
  const file = join(commonDir, OUTBOX_DIR, 'daemon');
  // unknown: a lock that cannot be checked counts as not held
  const held = await lockfile.check(file, { realpath: false, lockfilePath: `${file}.lock`, stale: STALE_MS }).catch(() => false);
  return held ? ((await readDaemonInfo(commonDir)) ?? { pid: 0, host: '?', started_at: '?', root: '?' }) : null;
}

export async function acquireDaemonLock(
  commonDir: string,
  info: Omit<DaemonInfo, 'pid' | 'host' | 'started_at'>,
  opts: { onCompromised: (err: Error) => void; onWait?: (holder: DaemonInfo | null) => void },
): Promise<DaemonLock> {
  const dir = join(commonDir, OUTBOX_DIR);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'daemon');
  const options = { realpath: false, lockfilePath: `${file}.lock`, stale: STALE_MS, update: UPDATE_MS, onCompromised: opts.onCompromised };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, { ...options, retries: 0 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    // The winner of a simultaneous start writes daemon.json right after locking: give it a moment.
    let holder: DaemonInfo | null = null;
    for (let i = 0; i < 20 && holder === null; i++) {
      holder = await readDaemonInfo(commonDir);
      if (holder === null) await new Promise((r) => setTimeout(r, 50));
    }
    // No record after a second means the holder died between taking the lock and writing
    // daemon.json (a live one writes it at once); a record naming a dead pid of this host means it
    // died later. Either way its lock stops being refreshed and goes stale within STALE_MS.
    const holderGone = holder === null || (holder.host === hostname() && holder.pid !== process.pid && !processAlive(holder.pid));
    if (!holderGone) {
      const who = `pid ${holder!.pid} on ${holder!.host}, running since ${holder!.started_at}, watching ${holder!.root}`;
      throw new DaemonLockedError(`another agentv-results daemon already runs for this repository: ${who} — stop it first (kill -TERM ${holder!.pid})`, holder);
    }
    opts.onWait?.(holder);
    try {
      release = await lockfile.lock(file, {
        ...options,
        retries: { retries: Math.ceil((STALE_MS + 2 * UPDATE_MS) / 500), factor: 1, minTimeout: 500, maxTimeout: 500 },
      });
    } catch (waitErr) {
      if ((waitErr as NodeJS.ErrnoException).code !== 'ELOCKED') throw waitErr;
      const latest = await readDaemonInfo(commonDir);
      const who = latest ? `pid ${latest.pid} on ${latest.host}` : 'a process that never said who it is';
      throw new DaemonLockedError(`another agentv-results daemon holds this repository's lock and keeps it fresh: ${who} — stop it first`, latest);
    }
  }
  const mine: DaemonInfo = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), ...info };
  const infoFile = join(dir, 'daemon.json');
  const tmp = `${infoFile}.tmp-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, JSON.stringify(mine, null, 2) + '\n');
  await rename(tmp, infoFile);
  return {
    async release() {
      const current = await readDaemonInfo(commonDir);
      if (current?.pid === process.pid) await rm(infoFile, { force: true });
      // best effort: releasing at exit; the lock goes stale by itself
      await release().catch(() => undefined);
    },
  };
}
