/**
 * The one-daemon-per-repository lock, through its library API: who it refuses, and when it takes
 * over a lock whose holder died (a recorded dead pid, or no record at all).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDaemonLock } from '../src/daemon/instance-lock.js';
import { DaemonLockedError } from '../src/errors/daemon-errors.js';

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((d) => rm(d, { recursive: true, force: true })));
});

async function commonDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentv-daemon-lock-'));
  made.push(dir);
  await mkdir(join(dir, 'agentv-results'), { recursive: true });
  return dir;
}

const noop = () => undefined;

describe('the daemon instance lock', () => {
  it('refuses while a live daemon holds it, naming that daemon', async () => {
    const dir = await commonDir();
    const first = await acquireDaemonLock(dir, { root: '/somewhere' }, { onCompromised: noop });
    try {
      const err = await acquireDaemonLock(dir, { root: '/elsewhere' }, { onCompromised: noop }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DaemonLockedError);
      expect((err as Error).message).toContain(`pid ${process.pid}`);
      expect((err as DaemonLockedError).holder?.root).toBe('/somewhere');
    } finally {
      await first.release();
    }
  });

  // The two takeovers each wait out the 10 s staleness, so they run side by side.
  it.concurrent('takes over a lock left by a daemon killed before it wrote who it is', async () => {
    const dir = await commonDir();
    // A fresh lock and no daemon.json: what a daemon killed right after the mkdir leaves.
    await mkdir(join(dir, 'agentv-results', 'daemon.lock'));
    const waitedFor: unknown[] = [];
    const lock = await acquireDaemonLock(dir, { root: '/r' }, { onCompromised: noop, onWait: (h) => waitedFor.push(h) });
    await lock.release();
    // It waited (once, for a lock with no holder recorded) and then took it over: nothing but
    // staleness can release a lock nobody refreshes. How long that takes is the test's timeout's
    // business, not an assertion.
    expect(waitedFor).toEqual([null]);
  }, 30_000);

  it.concurrent('takes over a lock whose recorded holder is a dead process of this host', async () => {
    const dir = await commonDir();
    await mkdir(join(dir, 'agentv-results', 'daemon.lock'));
    const dead = { pid: 99_999_999, host: hostname(), started_at: new Date().toISOString(), root: '/r' };
    await writeFile(join(dir, 'agentv-results', 'daemon.json'), JSON.stringify(dead));
    const waitedFor: unknown[] = [];
    const lock = await acquireDaemonLock(dir, { root: '/r' }, { onCompromised: noop, onWait: (h) => waitedFor.push(h) });
    await lock.release();
    expect(waitedFor).toEqual([dead]);
  }, 30_000);
});
