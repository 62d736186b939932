/**
 * The "sync-branches" section of `status`: conflicts this repository set aside and nobody has
 * resolved yet, each with its review link and the command that closes it. Reads the local log
 * (sync/sync-branch-log.ts) and the remote-tracking refs; never touches the network.
 */
import { listRefs } from '../../git/index.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { openSyncBranches } from '../../sync/sync-branch-log.js';
import type { PublishTarget } from '../repo/target.js';

export interface SyncBranchStatus {
  branch: string;
  created_at: string;
  host: string;
  conflicts: number;
  /** First conflict's reason, for a one-line listing. */
  first_conflict: string | null;
  compare_url: string | null;
  review_hint: string;
  resolve_command: string;
  /** Whether the remote-tracking ref still exists (as of the last fetch/push); null without a remote. */
  on_remote: boolean | null;
}

export interface SyncStatusSection {
  /** Open sync branches are waiting for a human, not for a push: they never make status "pending". */
  pending: false;
  open: SyncBranchStatus[];
}

/** The section's value, or undefined when there is nothing open (the section is then omitted). */
export async function syncStatusSection(target: PublishTarget): Promise<SyncStatusSection | undefined> {
  const open = await openSyncBranches(target.repo.commonDir);
  if (open.length === 0) return undefined;
  const tracked = target.remote ? new Set((await listRefs(target.repo, `refs/remotes/${target.remote}/agentv`)).map((e) => e.ref)) : null;
  return {
    pending: false,
    open: open.map((r) => ({
      branch: r.branch,
      created_at: r.created_at,
      host: r.host,
      conflicts: r.conflicts.length,
      first_conflict: r.conflicts[0]?.reason ?? null,
      compare_url: r.compare_url,
      review_hint: r.review_hint,
      resolve_command: `agentv-results sync --resolve ${r.branch}`,
      on_remote: tracked === null ? null : tracked.has(trackingRef(r.remote, `refs/heads/${r.branch}`)),
    })),
  };
}
