/**
 * Before a retention removes anything, this machine takes in what the remote has: the live
 * branches (fetched and merged by the sync loop's own integrate step) and the month archives the
 * policy may touch (fetched into their tracking refs; the local archive branch fast-forwarded,
 * created, or merged with the remote's tip as first parent). A run tagged `baseline` on another
 * machine an hour ago is then seen, and the removal commits sit on the remote's tips, so the push
 * that follows is a fast-forward unless someone publishes meanwhile.
 *
 * Offline is not an error here: the retention then works on what this machine has, and the push
 * afterwards reports that the remote could not be reached.
 */
import { fetchRefs, readRefs, updateRefs } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX } from '../layout/archive-refs.js';
import { trackingRef } from '../repo/tracking-refs.js';
import type { PublishTarget } from '../repo/target.js';
import { fetchBranches, integrateRemote, syncIdent } from '../sync/integrate.js';
import { mergeCommits } from '../sync/merge-commits.js';

/** Fetch and merge the live branches; false when the remote could not be reached. */
export async function catchUpLive(target: PublishTarget, opts: { timeoutMs?: number; now?: () => Date } = {}): Promise<boolean> {
  if (target.remote === null) return false;
  try {
    const remote = await fetchBranches(target, { timeoutMs: opts.timeoutMs });
    // A genuine conflict with unpushed local work is left to the push loop, which sets it aside.
    await integrateRemote(target, { results: remote.results, artifacts: remote.artifacts }, { now: opts.now });
    return true;
  } catch (err) {
    if (err instanceof RemoteError) return false;
    throw err;
  }
}

/** Bring the local archive branches of `months` up to the remote's (fetch, then fast-forward, create or merge). */
export async function catchUpArchives(target: PublishTarget, months: string[], opts: { timeoutMs?: number; now?: () => Date } = {}): Promise<void> {
  const { repo, remote } = target;
  if (remote === null || months.length === 0) return;
  const refs = months.flatMap((m) => [ARCHIVE_RESULTS_PREFIX + m, ARCHIVE_ARTIFACTS_PREFIX + m]);
  let missing: Set<string>;
  try {
    const fetched = await fetchRefs(
      repo,
      remote,
      refs.map((r) => `+${r}:${trackingRef(remote, r)}`),
      { timeoutMs: opts.timeoutMs ?? 120_000 },
    );
    missing = new Set(fetched.missing.map((m) => m.src));
  } catch (err) {
    if (err instanceof RemoteError) return;
    throw err;
  }
  const present = refs.filter((r) => !missing.has(r));
  const tips = await readRefs(repo, [...present, ...present.map((r) => trackingRef(remote, r))]);
  const author = await syncIdent(repo, (opts.now ?? (() => new Date()))());
  const updates: { ref: string; new: string; old: string | null }[] = [];
  for (const ref of present) {
    const local = tips.get(ref) ?? null;
    const theirs = tips.get(trackingRef(remote, ref)) ?? null;
    if (theirs === null || theirs === local) continue;
    if (local === null) {
      updates.push({ ref, new: theirs, old: null });
      continue;
    }
    const m = await mergeCommits(repo, { first: theirs, second: local, message: `Merge archive ${ref.slice('refs/heads/'.length)} from ${remote}\n`, author });
    // A conflict stays for the archive push, which reports it and pushes nothing.
    if (m.kind !== 'conflict' && m.commit !== local) updates.push({ ref, new: m.commit, old: local });
  }
  if (updates.length > 0) await updateRefs(repo, updates, { message: `agentv-results: catch up with ${remote}'s archive` });
}
