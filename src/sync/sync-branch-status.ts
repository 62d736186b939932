/**
 * The "sync-branches" section of `status`: every sync branch, ours and AgentV's. First the
 * conflicts this repository set aside and nobody has resolved yet (the local log,
 * sync/sync-branch-log.ts); then every other `agentv/results-sync/*` branch the remote holds (as
 * of the last fetch): AgentV's own — 5.x parks a run there when its push cannot merge, and on git
 * before 2.40 it always does — or another machine's. Each with its review link and the command
 * that closes it. Reads the local log and the remote-tracking refs; never touches the network.
 */
import { listRefs, remoteUrl } from '../git/index.js';
import { compareUrl, reviewHint } from './compare-link.js';
import { SYNC_PREFIX } from './sync-branch-log.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { keptSyncBranches, openSyncBranches } from './sync-branch-log.js';
import { targetRemoteUrl, type PublishTarget } from '../repo/target.js';

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
  /** `this-repository`: set aside here (the local log); `remote`: on the remote, written elsewhere (AgentV's own, or another machine's). */
  seen_from?: 'this-repository' | 'remote';
}

export interface SyncStatusSection {
  /** Open sync branches are waiting for a human, not for a push: they never make status "pending". */
  pending: false;
  open: SyncBranchStatus[];
}

/** The section's value, or undefined when there is nothing open (the section is then omitted). */
export async function syncStatusSection(target: PublishTarget): Promise<SyncStatusSection | undefined> {
  const logged = await openSyncBranches(target.repo.commonDir);
  const remoteRefs = target.remote ? await listRefs(target.repo, `refs/remotes/${target.remote}/agentv`) : null;
  const tracked = remoteRefs === null ? null : new Set(remoteRefs.map((e) => e.ref));
  const open: SyncBranchStatus[] = logged.map((r) => ({
    branch: r.branch,
    created_at: r.created_at,
    host: r.host,
    conflicts: r.conflicts.length,
    first_conflict: r.conflicts[0]?.reason ?? null,
    compare_url: r.compare_url,
    review_hint: r.review_hint,
    resolve_command: `agentv-results sync --resolve ${r.branch}`,
    on_remote: tracked === null ? null : tracked.has(trackingRef(r.remote, `refs/heads/${r.branch}`)),
    seen_from: 'this-repository',
  }));
  if (target.remote !== null && remoteRefs !== null) open.push(...(await remoteOnly(target, target.remote, remoteRefs, new Set(open.map((o) => o.branch)))));
  if (open.length === 0) return undefined;
  return { pending: false, open };
}

/** The remote's sync branches this repository's log does not name (AgentV's own, another machine's). */
async function remoteOnly(target: PublishTarget, remote: string, refs: { ref: string; sha: string }[], known: Set<string>): Promise<SyncBranchStatus[]> {
  const prefix = `refs/remotes/${remote}/`;
  const tips = new Map(refs.map((e) => [e.ref.slice(prefix.length), e.sha]));
  const branches = [...tips.keys()].filter((b) => b.startsWith(SYNC_PREFIX) && !known.has(b)).sort();
  if (branches.length === 0) return [];
  // Why `sync` left one (its merge found a conflict at this very tip), when it tried.
  const kept = await keptSyncBranches(target.repo.commonDir);
  const why = (b: string): string | null => {
    const k = kept.get(b);
    return k && k.tip === tips.get(b) ? k.reason : null;
  };
  // no compare link without a readable remote url: the branch is still listed, with its review hint
  const url = await (remote === target.remote ? targetRemoteUrl(target) : remoteUrl(target.repo, remote)).catch(() => null);
  const base = target.config.branch;
  return branches.map((branch) => ({
    branch,
    // AgentV's names and ours both start with the UTC time it was made (20260314T103200Z-…).
    created_at: /^(\d{8}T\d{6}Z)/.exec(branch.slice(SYNC_PREFIX.length))?.[1] ?? '',
    host: '',
    conflicts: why(branch) === null ? 0 : 1,
    first_conflict: why(branch),
    compare_url: url ? compareUrl(url, base, branch) : null,
    review_hint: reviewHint(remote, base, branch),
    resolve_command: `agentv-results sync --resolve ${branch}`,
    on_remote: true,
    seen_from: 'remote',
  }));
}
