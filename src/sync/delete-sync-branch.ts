/**
 * Deleting a sync branch whose content is on the results branch (`sync --resolve`, and `sync`
 * adopting AgentV's parked runs): on the remote with a lease on the exact tip we merged (a delete
 * only if it still points there, never a force), then the local branch and its tracking ref, each
 * on its own compare-and-swap.
 */
import { deleteRef, push, resolveRef } from '../git/index.js';
import { RefConflictError } from '../errors/git-errors.js';
import type { PublishTarget } from '../repo/target.js';
import { trackingRef } from '../repo/tracking-refs.js';

/** Delete merged sync branches on the remote (lease: only if still at the merged commit), then locally. */
export async function deleteSyncBranches(
  target: PublishTarget,
  refs: { ref: string; remoteTip: string | null; tip: string }[],
  timeoutMs?: number,
): Promise<{ deletedRemote: boolean; keptLocal: string[] }> {
  const { repo } = target;
  const remote = target.remote!;
  const onRemote = refs.filter((r) => r.remoteTip !== null && r.remoteTip === r.tip);
  let deleted = onRemote.length > 0;
  if (onRemote.length > 0) {
    const r = await push(
      repo,
      remote,
      onRemote.map((x) => ({ dst: x.ref, delete: true as const, expect: x.tip })),
      { atomic: true, timeoutMs: timeoutMs ?? 120_000 },
    );
    deleted = r.classification === 'ok';
  }
  if (!deleted && onRemote.length > 0) return { deletedRemote: false, keptLocal: [] };
  // Each local ref is deleted on its own lease (the tip we merged): one that moved since is kept
  // and reported, never dropped silently; any other failure propagates.
  const keptLocal: string[] = [];
  for (const r of refs) {
    for (const ref of [r.ref, trackingRef(remote, r.ref)]) {
      const sha = await resolveRef(repo, ref);
      if (sha !== r.tip) continue;
      try {
        await deleteRef(repo, ref, sha, { message: 'agentv-results: sync branch resolved' });
      } catch (err) {
        if (!(err instanceof RefConflictError)) throw err;
        keptLocal.push(ref);
      }
    }
  }
  return { deletedRemote: deleted, keptLocal };
}
