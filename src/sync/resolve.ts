/**
 * `sync --resolve <sync-branch>`: once a human has fixed the conflict on the results branch
 * (edited the contested values there, e.g. with `feedback`/`tag`, or merged by hand), re-merge the
 * sync branch into it and push; then delete the sync branch on the remote, guarded by a lease on
 * the commit we merged (a sync branch that moved since is left alone).
 *
 *   fetch results, artifacts, the sync branch (and its artifacts twin, if one was set aside)
 *   bring local results up to the remote (fast-forward or clean merge)
 *   merge: first parent = results branch, second = sync branch; clean merges as usual, values that
 *     still contradict take the results branch's (prefer-main.ts)
 *   push with the normal protocol; when it landed and contains the sync branch: delete it remotely
 *     and locally (CAS), log it as resolved
 *
 * A sync branch already contained in the results branch (merged by hand, or through the host's
 * UI) is simply deleted.
 */
import { isAncestor, resolveRef, updateRefs, type Repo } from '../git/index.js';
import { deleteSyncBranches } from './delete-sync-branch.js';
import { fetchBranches, integrateRemote, syncIdent } from './integrate.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { mergeCommits } from './merge-commits.js';
import { preferMainResolver } from './resolve-merger.js';
import { pushBranches, type PushOutcome } from './push-branches.js';
import { appendSyncRecord, ARTIFACTS_SYNC_PREFIX, normalizeSyncBranch, readSyncLog, SYNC_PREFIX } from './sync-branch-log.js';
import { SyncFields, targetSummary } from './sync.js';
import type { PathResolver } from './recompute-derived.js';
import { flag, parseOptions } from '../options/verb-options.js';
import * as z from 'zod';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { PublishError } from '../errors/publish-errors.js';
import { ReadError } from '../errors/read-errors.js';
import { SyncConflictError } from '../errors/publish-errors.js';

/** `resolveSyncBranch`'s options: `sync`'s and the sync branch (the `sync` command's `--resolve`). */
export const ResolveSyncOptionsSchema = z.strictObject({
  /** The sync branch, with or without the `agentv/results-sync/` prefix. */
  branch: z
    .string()
    .min(1)
    .meta(flag('--resolve <sync-branch>', 'After fixing the conflict on the results branch: merge this sync branch into it, push, delete the sync branch')),
  ...SyncFields,
});

/** What a caller of `resolveSyncBranch` passes (members the package passes itself are internal). */
export interface ResolveSyncOptions extends Omit<z.input<typeof ResolveSyncOptionsSchema>, 'target' | 'resolver'> {
  /** @internal */
  target?: PublishTarget;
  /** @internal */
  resolver?: PathResolver;
}

export interface ResolveSyncResult {
  repo: string;
  remote: string | null;
  resultsBranch: string;
  artifactsBranch: string;
  branch: string;
  /** merged: a merge commit joined it; already-merged: it was contained already; otherwise see push. */
  status: 'merged' | 'already-merged' | 'not-landed' | 'conflict';
  /** The merge commit (or the results tip that already contained the sync branch). */
  commit: string | null;
  push: PushOutcome;
  deletedRemote: boolean;
  /**
   * Local copies of the sync branch (or their remote-tracking refs) left in place because they
   * moved between our read and the delete (compare-and-swap lost): delete them by hand once checked.
   */
  keptLocal: string[];
}

/** Merge one sync branch (a conflict set aside, or AgentV's parked run) into the results branch and push, as `sync --resolve` does. */
export async function resolveSyncBranch(options: ResolveSyncOptions): Promise<ResolveSyncResult> {
  const opts = parseOptions('resolveSyncBranch', ResolveSyncOptionsSchema, options);
  const target = opts.target ?? (await resolveTarget(opts));
  if (target.remote === null) throw new PublishError('sync --resolve needs a remote (the sync branch lives there)');
  const remote = target.remote;
  const { repo } = target;
  const branch = normalizeSyncBranch(opts.branch);
  const syncRef = `refs/heads/${branch}`;
  const record = (await readSyncLog(repo.commonDir)).find((r) => r.event === 'created' && r.branch === branch);
  const asideBranch = record && record.event === 'created' ? record.artifacts_branch : ARTIFACTS_SYNC_PREFIX + branch.slice(SYNC_PREFIX.length);
  const asideRef = asideBranch ? `refs/heads/${asideBranch}` : null;

  const fetched = await fetchBranches(target, { timeoutMs: opts.timeoutMs, extra: [syncRef, ...(asideRef ? [asideRef] : [])] });
  const remoteSync = fetched.extra.get(syncRef) ?? null;
  const syncTip = remoteSync ?? (await resolveRef(repo, syncRef));
  if (syncTip === null) throw new ReadError(`no sync branch ${branch} on ${remote} or here (already resolved? see \`agentv-results status\`)`, 'not-found');
  const asideTip = asideRef ? (fetched.extra.get(asideRef) ?? (await resolveRef(repo, asideRef))) : null;

  // Local results must contain the remote's (the human's fix) before we merge into it.
  const integrated = await integrateRemote(target, fetched, { now: opts.now });
  if (integrated.kind === 'conflict') {
    throw new SyncConflictError(
      `this repository has unpushed results that conflict with ${remote} (${integrated.conflicts[0]?.reason ?? 'conflict'}); run \`agentv-results sync\` first`,
    );
  }

  const merged = await mergeIntoMain(target, syncTip, asideTip, branch, opts.now);
  const outcome = await pushBranches(target, { ...opts, resolver: undefined });
  const base = { ...targetSummary(target), branch, push: outcome, deletedRemote: false, keptLocal: [] as string[] };
  if (!outcome.landed) return { ...base, status: outcome.classification === 'conflict' ? 'conflict' : 'not-landed', commit: merged.commit };
  const remoteResults = outcome.remoteTips?.results ?? (await resolveRef(repo, trackingRef(remote, target.resultsRef)));
  if (remoteResults === null || !(await isAncestor(repo, syncTip, remoteResults))) return { ...base, status: 'not-landed', commit: merged.commit };

  const { deletedRemote, keptLocal } = await deleteSyncBranches(
    target,
    [
      { ref: syncRef, remoteTip: remoteSync, tip: syncTip },
      ...(asideRef && asideTip ? [{ ref: asideRef, remoteTip: fetched.extra.get(asideRef) ?? null, tip: asideTip }] : []),
    ],
    opts.timeoutMs,
  );
  await appendSyncRecord(repo.commonDir, {
    event: 'resolved',
    branch,
    resolved_at: (opts.now?.() ?? new Date()).toISOString(),
    commit: remoteResults,
    deleted_remote: deletedRemote,
  });
  return { ...base, status: merged.already ? 'already-merged' : 'merged', commit: merged.commit ?? remoteResults, deletedRemote, keptLocal };
}

/** Merge the sync branch (and its artifacts twin) into the local branches, under the publish lock. */
async function mergeIntoMain(
  target: PublishTarget,
  syncTip: string,
  asideTip: string | null,
  branch: string,
  now?: () => Date,
): Promise<{ commit: string | null; already: boolean }> {
  const { repo } = target;
  const lock = await acquirePublishLock(repo.commonDir);
  try {
    const author = await syncIdent(repo, now?.() ?? new Date());
    const results = await resolveRef(repo, target.resultsRef);
    const artifacts = await resolveRef(repo, target.artifactsRef);
    const message = (what: string) =>
      `Merge ${what} (agentv-results sync --resolve)\n\nConflicting values were decided on the results branch; the other versions stay in this merge's second parent.\n`;
    const nextResults = results === null ? syncTip : await mergeOne(repo, results, syncTip, message(branch), author);
    const nextArtifacts =
      asideTip === null
        ? artifacts
        : artifacts === null
          ? asideTip
          : await mergeOne(repo, artifacts, asideTip, message(`${ARTIFACTS_SYNC_PREFIX}${branch.slice(SYNC_PREFIX.length)}`), author);
    lock.assertHeld();
    const updates = [
      { ref: target.resultsRef, new: nextResults, old: results },
      { ref: target.artifactsRef, new: nextArtifacts, old: artifacts },
    ].filter((u): u is { ref: string; new: string; old: string | null } => u.new !== null && u.new !== u.old);
    await updateRefs(repo, updates, { message: `agentv-results: resolve ${branch}` });
    return { commit: nextResults, already: nextResults === results };
  } finally {
    await lock.release();
  }
}

async function mergeOne(repo: Repo, main: string, side: string, message: string, author: Parameters<typeof mergeCommits>[1]['author']): Promise<string> {
  const r = await mergeCommits(repo, { first: main, second: side, message, author, resolve: preferMainResolver });
  if (r.kind === 'conflict') {
    throw new SyncConflictError(
      `cannot merge automatically even preferring the results branch: ${r.conflicts.map((c) => c.reason).join('; ')} — merge it by hand (the merge drivers help: \`agentv-results drivers install\`)`,
    );
  }
  // A sync branch that only lags behind main (fast-forward) still needs no merge commit.
  return r.kind === 'fast-forward' ? r.commit : r.kind === 'up-to-date' ? main : r.commit;
}
