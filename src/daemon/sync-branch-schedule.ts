/**
 * The daemon's schedule for sync branches (issue 39): every `everyMs` (and once at the end of a
 * `--once` run) it syncs, which takes in the runs AgentV parked on `agentv/results-sync/*` and the
 * finished runs left in AgentV's checkpoint branches `agentv/wip/...`, and deletes those branches
 * once their runs are on the remote (sync/adopt-agentv.ts, sync/adopt-checkpoints.ts). Runs AgentV
 * committed locally and could not push are the outbox's: `queueUnpushed` already pushes them. A
 * failed slot is logged and tried again at the next one; it never stops the daemon's publishing.
 */
import { sync } from '../sync/sync.js';
import type { PublishTarget, TargetOptions } from '../repo/target.js';
import { adoptOwnCheckpoints } from './adopt-own-checkpoints.js';
import type { Logger } from './log.js';

/** Five minutes: an ls-remote per slot, a fetch only when there is a sync branch to take in. */
export const DEFAULT_SYNC_BRANCHES_EVERY_MS = 5 * 60_000;

export class SyncBranchSchedule {
  /** Epoch ms of the next slot: a watching daemon's first comes one interval after it starts (`--once` runs one at its end). */
  nextAt: number;
  /** Sync branches taken in and deleted so far. */
  adopted = 0;

  constructor(
    private readonly everyMs: number,
    private readonly target: PublishTarget,
    private readonly logger: Logger,
    /** How publish finds the target: our own checkpoint branches of lost machines are published with it (adopt-own-checkpoints.ts). */
    private readonly targetOptions?: TargetOptions,
  ) {
    this.nextAt = Date.now() + everyMs;
  }

  due(now = Date.now()): boolean {
    return now >= this.nextAt;
  }

  async run(): Promise<void> {
    this.nextAt = Date.now() + this.everyMs;
    try {
      const r = await sync({ target: this.target, timeoutMs: 30_000 });
      const a = r.syncBranches;
      if (a) this.adopted += a.adopted.length;
      if (a && (a.adopted.length > 0 || a.kept.length > 0 || a.pending.length > 0)) {
        this.logger.info('sync branches', {
          adopted: a.adopted.map((b) => b.branch),
          pending: a.pending.map((b) => b.branch),
          kept: a.kept.map((b) => ({ branch: b.branch, reason: b.reason })),
        });
      }
      const c = r.checkpoints;
      if (c) this.adopted += c.adopted.length;
      if (c && (c.adopted.length > 0 || c.kept.length > 0 || c.pending.length > 0)) {
        this.logger.info('checkpoint branches', {
          adopted: c.adopted.map((b) => b.branch),
          pending: c.pending.map((b) => b.branch),
          kept: c.kept.map((b) => ({ branch: b.branch, reason: b.reason })),
        });
      }
      if (r.checkpointsError) this.logger.warn('listing checkpoint branches failed; trying again at the next slot', { error: r.checkpointsError });
      if (r.syncBranchesError) this.logger.warn('listing sync branches failed; trying again at the next slot', { error: r.syncBranchesError });
      if (!r.push.landed) this.logger.warn('sync did not land; trying again at the next slot', { message: r.push.message });
      if (r.push.landed && this.targetOptions) {
        const own = await adoptOwnCheckpoints(this.target, this.targetOptions, { timeoutMs: 30_000 });
        if (own.published.length > 0 || own.left.length > 0) this.logger.info('own checkpoint branches', { published: own.published, left: own.left });
      }
    } catch (err) {
      this.logger.warn('sync failed; trying again at the next slot', { error: (err as Error).message });
    }
  }
}
