/**
 * `status` sections for the outbox and the WIP branches (registered through history/status.ts).
 * Both read only local state: the journal file and local refs (remote WIP copies as last fetched).
 */
import { registerStatusSection, type StatusContext } from '../history/status.js';
import { listWip } from '../wip/index.js';
import { daemonRunning } from './instance-lock.js';
import { Outbox, type OutboxItem } from './outbox.js';

function describeJob(i: OutboxItem): Record<string, unknown> {
  const job = i.job;
  const what =
    job.kind === 'publish'
      ? { run: job.run_id, dir: job.run_dir }
      : job.kind === 'push-wip'
        ? { wip: job.ref.slice('refs/heads/'.length) }
        : job.kind === 'finalize-wip'
          ? { run: job.run_id, wip: job.ref.slice('refs/heads/'.length) }
          : {};
  return {
    kind: job.kind,
    ...what,
    queued_at: i.queuedAt,
    attempts: i.attempts,
    ...(i.state === 'pending' && i.nextAt > 0 ? { next_attempt: new Date(i.nextAt).toISOString() } : {}),
    ...(i.lastError ? { error: i.lastError } : {}),
  };
}

export interface OutboxStatus {
  /** Queued work exists (marks the whole status report as pending). */
  pending: boolean;
  daemon: { pid: number; host: string; since: string; root: string } | null;
  queued: Record<string, unknown>[];
  failed: Record<string, unknown>[];
  journal: string;
}

export async function outboxStatusSection(ctx: Pick<StatusContext, 'target'>): Promise<OutboxStatus> {
  const outbox = Outbox.forCommonDir(ctx.target.repo.commonDir);
  const items = await outbox.items();
  const queued = items.filter((i) => i.state === 'pending');
  const failed = items.filter((i) => i.state === 'dead');
  const d = await daemonRunning(ctx.target.repo.commonDir);
  return {
    pending: queued.length > 0,
    daemon: d ? { pid: d.pid, host: d.host, since: d.started_at, root: d.root } : null,
    queued: queued.map(describeJob),
    failed: failed.map(describeJob),
    journal: outbox.file,
  };
}

export async function wipStatusSection(ctx: Pick<StatusContext, 'target'>): Promise<Record<string, unknown> | undefined> {
  const listing = await listWip({ repo: ctx.target.repo, remote: ctx.target.remote, fetch: false });
  if (listing.entries.length === 0) return undefined;
  return {
    branches: listing.entries.map((e) => ({
      branch: e.branch,
      run: e.runId,
      rows: e.rows,
      last_checkpoint: e.updatedAt,
      where: e.where,
    })),
  };
}

let registered = false;

/** Adds the "outbox" and "wip" sections to `status` (idempotent). */
export function registerDaemonStatusSections(): void {
  if (registered) return;
  registered = true;
  registerStatusSection('outbox', outboxStatusSection);
  registerStatusSection('wip', wipStatusSection);
}
