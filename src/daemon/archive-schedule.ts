/**
 * The daemon's archive rollover on a schedule: every `everyMs` it moves runs past the live window
 * to the month archives and pushes (archive first, then the live branches). A failed rollover is
 * logged and tried again at the next slot; it never stops the daemon's publishing. When
 * `.agentv/config.yaml` sets `results.retention`, the same slot then applies the retention policy
 * (`expire`) and pushes it the same way.
 */
import { expireAndPush, rolloverAndPush } from '../archive/push-archive.js';
import type { PublishTarget } from '../repo/target.js';
import type { Logger } from './log.js';
import { flag } from '../options/verb-options.js';
import * as z from 'zod';

/** The daemon's `archive` option (its `--archive-every`, `--keep-days`, `--keep-runs` flags come from these fields). */
export const ArchiveScheduleOptionsSchema = z.strictObject({
  /** How often to roll over (ms; at least a minute: a rollover rereads the catalog and pushes). */
  everyMs: z
    .number()
    .min(60_000, 'must be at least 1m (a rollover rereads the catalog and pushes)')
    .meta(
      flag(
        '--archive-every <duration>',
        'Also roll runs past the live window over to the month archives this often (and apply results.retention when it is configured), e.g. 1d or 6h (off unless given)',
        { as: 'duration' },
      ),
    ),
  keepDays: z.number().nonnegative().optional().meta(flag('--keep-days <n>', 'With --archive-every: keep runs of the last n days live (default 30)')),
  keepRuns: z.number().nonnegative().optional().meta(flag('--keep-runs <n>', 'With --archive-every: keep at most the n newest runs live (default 200)')),
});
export type ArchiveScheduleOptions = z.output<typeof ArchiveScheduleOptionsSchema>;

export class ArchiveSchedule {
  /** Epoch ms of the next rollover; the first one runs as soon as the daemon is up. */
  nextAt = 0;
  runs = 0;
  archived = 0;
  /** Runs the scheduled retentions removed. */
  expired = 0;

  constructor(
    private readonly opts: ArchiveScheduleOptions,
    private readonly target: PublishTarget,
    private readonly push: boolean,
    private readonly logger: Logger,
  ) {}

  due(now = Date.now()): boolean {
    return now >= this.nextAt;
  }

  async run(): Promise<void> {
    this.nextAt = Date.now() + this.opts.everyMs;
    try {
      const r = await rolloverAndPush({ target: this.target, keepDays: this.opts.keepDays, keepRuns: this.opts.keepRuns, push: this.push, timeoutMs: 30_000 });
      this.runs++;
      this.archived += r.archived.length;
      if (r.archived.length > 0 || r.catalogued > 0 || (r.push && !r.push.archiveLanded)) {
        this.logger.info('archive rollover', {
          archived: r.archived.length,
          live: r.live,
          catalogued: r.catalogued,
          pushed: r.push ? r.push.archiveLanded && (r.push.live?.landed ?? true) : false,
          message: r.push?.message,
        });
      }
    } catch (err) {
      this.logger.warn('archive rollover failed; trying again at the next slot', { error: (err as Error).message });
    }
    if (this.target.config.retention) await this.retention();
  }

  private async retention(): Promise<void> {
    try {
      const r = await expireAndPush({ target: this.target, push: this.push, timeoutMs: 30_000 });
      this.expired += r.expired.length;
      if (r.expired.length > 0 || (r.push && !r.push.archiveLanded)) {
        this.logger.info('retention', {
          expired: r.expired.length,
          kept: r.kept,
          id: r.id,
          pushed: r.push ? r.push.archiveLanded && (r.push.live?.landed ?? true) : false,
          message: r.push?.message,
        });
      }
    } catch (err) {
      this.logger.warn('retention failed; trying again at the next slot', { error: (err as Error).message });
    }
  }
}
