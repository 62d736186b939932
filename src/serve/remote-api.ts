/**
 * `GET /api/remote/status` and `POST /api/remote/sync` with the field names AgentV's own Dashboard
 * API returns for the same repository (configured, available, repo, path, local_dir, auto_push,
 * require_push, push_conflict_policy, sync_status, branch, upstream, ahead, behind, dirty_paths,
 * conflicted_paths, run_count, pending_merge, and for a sync blocked/pull_performed/
 * push_performed/commit_created/last_error/block_reason), so a client written for AgentV reads
 * ours. What only we know sits under one extra key, `agentv_results`: the artifacts branch, the
 * daemon's outbox, the last push, open sync branches with their compare links, WIP branches.
 *
 * We never keep a worktree of the results branch, so dirty_paths and conflicted_paths are always
 * empty; a conflict we set aside is reported the way AgentV reports its own: sync_status
 * "needs_human_merge" with a pending_merge.
 */
import { listRuns } from '../branch-read/list.js';
import type { BranchStatus } from '../status/status.js';
import { status, type StatusReport } from '../status/status-sections.js';
import type { SyncStatusSection } from '../sync/sync-branch-status.js';
import { sync } from '../sync/sync.js';
import { targetOptionsOf, type TargetOptions } from '../repo/target.js';
import type { OutboxStatus } from '../status/status-sections.js';
import { asHttpError } from './http-status.js';
import { NotARepositoryError } from '../errors/git-errors.js';
import type { HttpError } from '../errors/serve-errors.js';
import type { RemoteExtrasAnswer, RemoteStatusAnswer, RemoteSyncStatus, WipBranchAnswer } from './api-types.js';

/** The request named something wrong (an unknown project, bad input): answered as such. No repository is not that: AgentV reports it as "not configured". */
function isRequestProblem(err: unknown, e: HttpError): boolean {
  return e.status === 404 || (e.status === 400 && !(err instanceof NotARepositoryError));
}

export type AgentVSyncStatus = RemoteSyncStatus;

/** AgentV's fields are the answer's (serve/api-types.ts, one definition); ours carry the full branch statuses. */
export interface RemoteStatus extends Omit<RemoteStatusAnswer, 'agentv_results'> {
  agentv_results?: OurExtras;
}

/** The extras as the server builds them: the answer's, plus each branch's full status and the daemon's. */
export interface OurExtras extends RemoteExtrasAnswer {
  project: string | null;
  remote: string | null;
  results: BranchStatus;
  artifacts: BranchStatus;
  outbox: { depth: number; failed: number; daemon: OutboxStatus['daemon'] } | null;
  sync_branches: SyncStatusSection['open'];
}

/** Per-server memory: syncs in flight (by project) and the last landed push. */
export class RemoteState {
  readonly inFlight = new Set<string>();
  lastSync = new Map<string, { at: string; results: string | null; artifacts: string | null; error?: string }>();
}

function agentvState(b: BranchStatus, report: StatusReport, openSync: number): AgentVSyncStatus {
  if (report.remote === null) return 'unavailable';
  if (openSync > 0) return 'needs_human_merge';
  switch (b.state) {
    case 'ahead':
    case 'local-only':
      return 'ahead';
    case 'behind':
    case 'remote-only':
      return 'behind';
    case 'diverged':
      return 'diverged';
    default:
      return 'clean';
  }
}

const key = (opts: TargetOptions) => opts.project ?? '';

export async function remoteStatus(opts: TargetOptions, state: RemoteState): Promise<RemoteStatus> {
  let report: StatusReport;
  try {
    report = await status(opts);
  } catch (err) {
    const e = asHttpError(err);
    if (isRequestProblem(err, e)) throw e;
    // No repository to read: AgentV's "not configured" shape.
    return { configured: false, available: false, repo: '', local_dir: '', sync_status: 'unavailable', run_count: 0, last_error: e.message };
  }
  // optional: run_count is 0 when the branch cannot be listed; the status itself answered
  // limit 1: only the count is shown (a listing kept on disk answers it from its header)
  const list = await listRuns({ ...opts, limit: 1 }).catch(() => null);
  const results = report.branches.find((b) => b.kind === 'results')!;
  const artifacts = report.branches.find((b) => b.kind === 'artifacts')!;
  const syncSection = report.extra['sync-branches'] as SyncStatusSection | undefined;
  const open = syncSection && Array.isArray(syncSection.open) ? syncSection.open : [];
  const outbox = report.extra.outbox as OutboxStatus | { error: string } | undefined;
  const wip = report.extra.wip as { branches?: unknown[] } | undefined;
  const newest = open.length > 0 ? [...open].sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0]! : null;
  const last = state.lastSync.get(key(opts));
  const { config } = await configOf(opts);
  const syncing = state.inFlight.has(key(opts));
  const out: RemoteStatus = {
    configured: true,
    available: true,
    // AgentV reports the configured repo, else the configured local path ("." for the checkout itself).
    repo: config?.repo ?? config?.path ?? '.',
    repo_path: report.repo,
    path: report.repo,
    auto_push: config?.auto_push ?? false,
    require_push: config?.require_push ?? false,
    push_conflict_policy: 'block',
    local_dir: report.repo,
    ...(last ? { last_synced_at: last.at } : {}),
    ...(last?.error ? { last_error: last.error } : {}),
    sync_status: syncing ? 'syncing' : agentvState(results, report, open.length),
    branch: results.name,
    ...(report.remote ? { upstream: `${report.remote}/${results.name}` } : {}),
    ahead: results.ahead + (results.state === 'local-only' ? 1 : 0),
    behind: results.behind + (results.state === 'remote-only' ? 1 : 0),
    dirty_paths: [],
    conflicted_paths: [],
    ...(newest
      ? {
          pending_merge: {
            temp_branch: newest.branch,
            target_branch: results.name,
            ...(newest.compare_url ? { compare_url: newest.compare_url } : {}),
            created_at: newest.created_at,
          },
        }
      : {}),
    run_count: list?.matched ?? 0,
    agentv_results: {
      project: report.project,
      remote: report.remote,
      remote_url: report.remoteUrl,
      results,
      artifacts,
      outbox: outbox && !('error' in outbox) ? { depth: outbox.queued.length, failed: outbox.failed.length, daemon: outbox.daemon } : null,
      last_push: last && !last.error ? { at: last.at, results: last.results, artifacts: last.artifacts } : null,
      sync_branches: open,
      // The status report's WIP section is untyped there (status-sections.ts): its entries are wip/list.ts's WipEntry.
      wip: (wip?.branches ?? []) as WipBranchAnswer[],
    },
  };
  return out;
}

/**
 * The configuration as loaded: no configuration file reads as AgentV's defaults (loadResultsConfig
 * says so itself); a broken or unreadable one is its ConfigError (a 400 naming the file), never the
 * defaults shown as if they were what the project configured.
 */
async function configOf(opts: TargetOptions) {
  const { loadResultsConfig } = await import('../repo/config.js');
  return loadResultsConfig({ cwd: opts.cwd, env: opts.env, configFile: opts.configFile, project: opts.project });
}

/**
 * Push what is committed here and not yet on the remote, integrating the remote's work first
 * (publish's own push loop). One sync per project at a time: a second request while one runs gets
 * the status with sync_status "syncing" and blocked, as AgentV answers.
 */
export async function remoteSync(opts: TargetOptions, state: RemoteState): Promise<RemoteStatus> {
  const k = key(opts);
  if (state.inFlight.has(k))
    return { ...(await remoteStatus(opts, state)), sync_status: 'syncing', blocked: true, block_reason: 'a sync of this project is already running' };
  state.inFlight.add(k);
  let outcome: Awaited<ReturnType<typeof sync>> | null = null;
  let failure: string | null = null;
  try {
    outcome = await sync(targetOptionsOf(opts));
  } catch (err) {
    const e = asHttpError(err);
    if (isRequestProblem(err, e)) throw e;
    failure = e.message;
  } finally {
    state.inFlight.delete(k);
  }
  const push = outcome?.push;
  const landed = push !== undefined && (push.classification === 'ok' || push.classification === 'nothing-to-push');
  const at = new Date().toISOString();
  if (landed) state.lastSync.set(k, { at, results: push.remoteTips?.results ?? null, artifacts: push.remoteTips?.artifacts ?? null });
  else state.lastSync.set(k, { at, results: null, artifacts: null, error: failure ?? push?.message ?? 'sync failed' });
  const now = await remoteStatus(opts, state);
  const blocked = !landed;
  return {
    ...now,
    blocked,
    ...(blocked ? { block_reason: failure ?? push?.message ?? 'sync failed', last_error: failure ?? push?.message ?? 'sync failed' } : {}),
    pull_performed: (push?.merges ?? 0) + (push?.fastForwards ?? 0) > 0,
    push_performed: push?.classification === 'ok',
    commit_created: (push?.merges ?? 0) > 0,
  };
}
