/**
 * WIP branches on the remote: fast-forward pushes of checkpoint tips, a view of the remote's WIP
 * branches, and the lease-guarded delete after a final publish. Never forced: a WIP push is a plain
 * `<sha>:<ref>` refspec, so a remote that moved (another machine continued the run) rejects it.
 */
import {
  fetchRefs,
  listRefs,
  lsRemote,
  push,
  resolveRef,
  tolerateLostRace,
  updateRefs,
  type PushClassification,
  type RefEntry,
  type Repo,
} from '../git/index.js';
import { WIP_REF_PREFIX } from './checkpoint-layout.js';
import { gitCause } from '../errors/redact.js';
import { trackingRef } from '../repo/tracking-refs.js';

export const DEFAULT_WIP_NETWORK_TIMEOUT_MS = 30_000;

/** Our remote-tracking copy of a WIP branch: refs/remotes/<remote>/agentv/wip/... */
export const wipTrackingRef = trackingRef;

export interface WipPushResult {
  classification: PushClassification;
  /** Refs now on the remote at the pushed tip. */
  pushed: string[];
  /** Refs the remote refused (diverged: someone else moved them), with git's reason. */
  rejected: { ref: string; reason: string }[];
  message: string;
}

/**
 * Pushes the tips of several WIP branches in one `git push` (non-atomic: one diverged branch must
 * not hold back the others). Records what landed in the tracking refs.
 */
export async function pushWipBranches(
  repo: Repo,
  remote: string,
  tips: { ref: string; sha: string }[],
  opts: { timeoutMs?: number } = {},
): Promise<WipPushResult> {
  if (tips.length === 0) return { classification: 'ok', pushed: [], rejected: [], message: 'nothing to push' };
  const result = await push(
    repo,
    remote,
    tips.map((t) => ({ src: t.sha, dst: t.ref })),
    { atomic: false, timeoutMs: opts.timeoutMs ?? DEFAULT_WIP_NETWORK_TIMEOUT_MS },
  );
  const pushed: string[] = [];
  const rejected: { ref: string; reason: string }[] = [];
  for (const r of result.refs) {
    if (r.status === 'ok' || r.status === 'up-to-date') pushed.push(r.dst);
    else if (r.status !== 'error') rejected.push({ ref: r.dst, reason: r.reason ?? r.summary });
  }
  const updates = [];
  for (const t of tips) {
    if (!pushed.includes(t.ref)) continue;
    const tracking = wipTrackingRef(remote, t.ref);
    const current = await resolveRef(repo, tracking);
    if (current !== t.sha) updates.push({ ref: tracking, new: t.sha, old: current });
  }
  // Best effort: a concurrent fetch may have moved a tracking ref already, and it knows better.
  for (const u of updates) await updateRefs(repo, [u]).catch(() => undefined);
  const message =
    result.classification === 'ok'
      ? `pushed ${pushed.length} WIP branch${pushed.length === 1 ? '' : 'es'} to ${remote}`
      : result.classification === 'unreachable'
        ? (result.silent ?? `${remote} is unreachable`)
        : result.classification === 'auth'
          ? `${remote} refused our credentials`
          : rejected.length > 0
            ? `${remote} refused ${rejected.map((r) => `${r.ref.slice('refs/heads/'.length)} (${r.reason})`).join(', ')}`
            : `push to ${remote} failed: ${gitCause(result.stderr)}`;
  return { classification: result.classification, pushed, rejected, message };
}

/**
 * The remote's WIP branches, with their objects fetched into refs/remotes/<remote>/agentv/wip/...
 * Tracking refs of branches the remote no longer has are removed (our namespace only), so the
 * tracking refs mirror the remote. Throws RemoteError when the remote cannot be reached.
 */
export async function refreshRemoteWip(repo: Repo, remote: string, opts: { timeoutMs?: number } = {}): Promise<RefEntry[]> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WIP_NETWORK_TIMEOUT_MS;
  const onRemote = (await lsRemote(repo, remote, [`${WIP_REF_PREFIX}*`], { timeoutMs })).filter((e) => e.ref.startsWith(WIP_REF_PREFIX));
  const tracking = new Map((await listRefs(repo, `refs/remotes/${remote}/agentv/wip`)).map((e) => [e.ref, e.sha]));
  const stale = onRemote.filter((e) => tracking.get(wipTrackingRef(remote, e.ref)) !== e.sha);
  if (stale.length > 0) {
    // "+": the tracking ref must mirror the remote even if that branch was recreated there.
    await fetchRefs(
      repo,
      remote,
      stale.map((e) => `+${e.ref}:${wipTrackingRef(remote, e.ref)}`),
      { timeoutMs },
    );
  }
  const live = new Set(onRemote.map((e) => wipTrackingRef(remote, e.ref)));
  const gone = [...tracking].filter(([ref]) => !live.has(ref)).map(([ref, sha]) => ({ ref, new: null, old: sha }));
  // Tracking refs of deleted WIP branches: a lost CAS means a concurrent fetch moved them, to what
  // the remote holds now; any other failure propagates.
  if (gone.length > 0) await updateRefs(repo, gone).catch(tolerateLostRace);
  return onRemote;
}

/** Deletes a WIP branch on the remote only if it still is `expect` (lease); then our tracking ref. */
export async function deleteRemoteWip(
  repo: Repo,
  remote: string,
  ref: string,
  expect: string,
  opts: { timeoutMs?: number } = {},
): Promise<{ deleted: boolean; classification: PushClassification; message: string }> {
  const result = await push(repo, remote, [{ dst: ref, delete: true, expect }], { atomic: false, timeoutMs: opts.timeoutMs ?? DEFAULT_WIP_NETWORK_TIMEOUT_MS });
  const deleted = result.classification === 'ok';
  if (deleted) {
    const tracking = wipTrackingRef(remote, ref);
    const current = await resolveRef(repo, tracking);
    if (current !== null) await updateRefs(repo, [{ ref: tracking, new: null, old: current }]).catch(tolerateLostRace);
  }
  const why = result.refs[0]?.reason ?? result.stderr.trim().split('\n').pop() ?? '';
  return {
    deleted,
    classification: result.classification,
    message: deleted
      ? `deleted ${ref.slice('refs/heads/'.length)} on ${remote}`
      : `could not delete ${ref.slice('refs/heads/'.length)} on ${remote} (${result.classification}${why ? `: ${why}` : ''})`,
  };
}
