/**
 * The public `status()`: the branches against the remote (status/status.ts) and every section the
 * CLI prints — an interrupted update, open sync branches, the daemon's outbox, WIP branches — so
 * the library returns exactly what `agentv-results status` shows. It lives here because the outbox
 * is the highest-layer section. The outbox and WIP sections read only local state: the journal
 * file and local refs (remote WIP copies as last fetched).
 */
import { statusWithSections, type CoreStatusReport, type StatusContext, type StatusOptions } from './status.js';
import { interruptedSection, type InterruptedStatus } from './status-interrupted.js';
import { syncStatusSection, type SyncStatusSection } from '../sync/sync-branch-status.js';
import { listWip } from '../wip/index.js';
import type { WipLocation } from '../wip/list.js';
import { daemonRunning } from '../daemon/instance-lock.js';
import { Outbox, type OutboxItem } from '../daemon/outbox.js';

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

export async function wipStatusSection(ctx: Pick<StatusContext, 'target'>): Promise<WipStatus | undefined> {
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

/** The `wip` section: WIP branches of running (or interrupted) evals. */
export interface WipStatus {
  branches: { branch: string; run: string | null; rows: number | null; last_checkpoint: string | null; where: WipLocation }[];
}

/** A section whose computation failed: shown instead of failing the whole report. */
export interface StatusSectionError {
  error: string;
}

/** The sections of `status`, each present only when it has something to say. */
export type StatusExtra = {
  'interrupted-update'?: InterruptedStatus | StatusSectionError;
  'sync-branches'?: SyncStatusSection | StatusSectionError;
  outbox?: OutboxStatus | StatusSectionError;
  wip?: WipStatus | StatusSectionError;
};

/** Everything `agentv-results status` prints (`--json` prints this object). */
export interface StatusReport extends Omit<CoreStatusReport, 'extra'> {
  extra: StatusExtra;
}

/** The sections, in the order the report shows them. */
const SECTIONS = {
  'interrupted-update': interruptedSection,
  'sync-branches': (ctx: StatusContext) => syncStatusSection(ctx.target),
  outbox: outboxStatusSection,
  wip: wipStatusSection,
} as const;

/**
 * Where this machine's results and artifacts branches stand against the remote's, and whether
 * anything is waiting: exactly what `agentv-results status` prints. Never touches the network
 * unless `fetch` is set.
 */
export async function status(options: StatusOptions = {}): Promise<StatusReport> {
  return (await statusWithSections(options, SECTIONS)) as StatusReport;
}
