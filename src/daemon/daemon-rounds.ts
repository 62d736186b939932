/** The daemon's rounds over its parts (daemon-loop.ts): `--once`, or the long-running watch loop. */
import type { Loop } from './daemon-loop.js';

/** Most rounds a `--once` run makes (each publish adds push jobs for the next round). */
const ONCE_ROUNDS = 6;

/**
 * The outbox journal is append-only (a record per queued, done or dead job): a daemon that runs for
 * weeks compacts it after this many completed jobs, not only when it starts and stops, so its state
 * on disk stays flat however many runs it publishes (bench/daemon-soak.bench.mjs).
 */
const COMPACT_EVERY_JOBS = 100;

/** `--once`: examine every run, flush their checkpoints, then push until the outbox is done. */
export async function runOnceRounds(loop: Loop): Promise<void> {
  await loop.scan();
  await Promise.all([...loop.dirty].map((d) => loop.tracker.examine(d)));
  loop.dirty.clear();
  await loop.tracker.stopAll({ flush: true });
  await loop.tracker.settle();
  for (let i = 0; i < ONCE_ROUNDS && !loop.sw.stopping; i++) {
    const r = await loop.worker.round({ force: true });
    loop.published += r.published;
    loop.remoteDown = r.remoteDown;
    if (r.completed === 0 || r.remoteDown) break;
  }
  if (loop.archive && !loop.sw.stopping && !loop.remoteDown) await loop.archive.run();
  if (loop.syncBranches && !loop.sw.stopping && !loop.remoteDown) await loop.syncBranches.run();
}

/** The long-running loop: rescan now and then, examine what changed, push, sleep until needed. */
export async function runWatchLoop(loop: Loop): Promise<void> {
  const { opts, watcher } = loop;
  // With events the rescan is only a safety net; polling discovers runs with it; a root that
  // does not exist yet is looked for often, so the watcher starts soon after it appears.
  const scanEvery = (): number => opts.scanIntervalMs ?? (watcher.mode === 'events' ? 30_000 : opts.poll ? 2_000 : 500);
  let nextScanAt = 0;
  while (!loop.sw.stopping) {
    const now = Date.now();
    if (loop.rescan || now >= nextScanAt) {
      loop.rescan = false;
      nextScanAt = now + scanEvery();
      await loop.scan();
    }
    const dirs = [...loop.dirty];
    loop.dirty.clear();
    await Promise.all(dirs.map((d) => loop.tracker.examine(d)));
    if (loop.sw.stopping) break;
    const r = await loop.worker.round();
    loop.published += r.published;
    loop.remoteDown = r.remoteDown;
    loop.sinceCompact += r.completed;
    if (loop.sinceCompact >= COMPACT_EVERY_JOBS) {
      loop.sinceCompact = 0;
      await loop.outbox.compact().catch((err: unknown) => opts.logger.warn('could not compact the outbox', { error: (err as Error).message }));
    }
    if (loop.archive?.due() && !loop.sw.stopping) await loop.archive.run();
    if (loop.syncBranches?.due() && !loop.sw.stopping && !loop.remoteDown) await loop.syncBranches.run();
    if (loop.dirty.size > 0 || loop.rescan) continue;
    await loop.sw.sleepUntil(Math.min(nextScanAt, r.nextAt ?? Infinity, loop.archive?.nextAt ?? Infinity, loop.syncBranches?.nextAt ?? Infinity));
  }
}
