/**
 * A genuine conflict (ARCHITECTURE.md, the path of a run): set our results aside on a new remote branch
 * `agentv/results-sync/<YYYYMMDDTHHMMSSZ>-<host>-<rand6>`, created with a create-only lease (it can
 * never overwrite anything), and tell the human where to look.
 *
 * Payloads stay consistent with pointers: in the same atomic push, the artifacts branch is
 * fast-forwarded to the clean merge of both sides' payloads (it is append-mostly, so the sync
 * branch's pointers resolve on the artifacts branch they name). Only if the artifacts merge itself
 * conflicted is our artifacts tip set aside too, on `agentv/artifacts-sync/<same suffix>`.
 *
 * Locally the results branch then returns to the remote tip (the diverted commits live on the sync
 * branch, remote and local), so later publishes land instead of conflicting again. That reset is
 * done under the publish lock, after checking nothing was committed since we merged: a run
 * committed meanwhile is never dropped from the branch.
 */
import { configGet, push, remoteUrl, resolveRef, tolerateLostRace, updateRefs, type PushClassification, type Repo } from '../git/index.js';
import { compareUrl, reviewHint } from './compare-link.js';
import { trackingRef } from '../repo/tracking-refs.js';
import type { BranchTips, IntegrateResult } from './integrate.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { appendSyncRecord, ARTIFACTS_SYNC_PREFIX, hostSlug, SYNC_PREFIX, syncSuffix, type SyncBranchRecord } from './sync-branch-log.js';
import type { PublishTarget } from '../repo/target.js';

export type DivertResult =
  | { kind: 'diverted'; record: SyncBranchRecord; remoteTips: BranchTips }
  /** Someone moved a branch meanwhile (remote or local): merge again. */
  | { kind: 'retry'; why: string }
  | { kind: 'failed'; classification: PushClassification; message: string };

export interface DivertOptions {
  now?: () => Date;
  timeoutMs?: number;
  /** For tests: a fixed host and random part. */
  host?: string;
  random?: string;
}

export async function divertToSyncBranch(
  target: PublishTarget,
  conflict: Extract<IntegrateResult, { kind: 'conflict' }>,
  opts: DivertOptions = {},
): Promise<DivertResult> {
  const { repo } = target;
  const remote = target.remote!;
  const { local } = conflict;
  const now = (opts.now ?? (() => new Date()))();
  const host = opts.host ?? hostSlug();
  const suffix = syncSuffix(now, host, opts.random);
  const branch = SYNC_PREFIX + suffix;
  const artifactsAside = conflict.artifactsMerged === null && local.artifacts !== null ? ARTIFACTS_SYNC_PREFIX + suffix : null;
  const baseBranch = target.resultsRef.slice('refs/heads/'.length);

  const lock = await acquirePublishLock(repo.commonDir);
  try {
    const nowResults = await resolveRef(repo, target.resultsRef);
    const nowArtifacts = await resolveRef(repo, target.artifactsRef);
    if (nowResults !== local.results || nowArtifacts !== local.artifacts) return { kind: 'retry', why: 'a run was committed locally while merging' };
    if (local.results === null) return { kind: 'retry', why: 'nothing to set aside' };

    const updates: { src: string; dst: string; createOnly?: boolean }[] = [{ src: local.results, dst: `refs/heads/${branch}`, createOnly: true }];
    let artifactsAfter = local.artifacts;
    if (artifactsAside !== null) {
      updates.push({ src: local.artifacts!, dst: `refs/heads/${artifactsAside}`, createOnly: true });
      artifactsAfter = conflict.remote.artifacts;
    } else if (conflict.artifactsMerged !== null && conflict.artifactsMerged !== conflict.remote.artifacts) {
      updates.push({ src: conflict.artifactsMerged, dst: target.artifactsRef });
      artifactsAfter = conflict.artifactsMerged;
    }
    const pushed = await push(repo, remote, updates, { atomic: true, timeoutMs: opts.timeoutMs ?? 120_000 });
    const classification = pushed.classification;
    if (classification === 'non-fast-forward') return { kind: 'retry', why: `${remote} moved while setting the conflict aside` };
    // "(stale info)" on a create-only lease: a branch of that name exists (a random collision); a new name next round.
    if (classification === 'other' && pushed.refs.some((r) => r.reason === 'stale info')) return { kind: 'retry', why: `${branch} already exists` };
    if (classification !== 'ok') {
      return {
        kind: 'failed',
        classification,
        message: `could not push the sync branch to ${remote}: ${pushed.stderr.trim().split('\n').pop() ?? pushed.classification}`,
      };
    }

    // Landed. Local refs follow, in one CAS transaction: main results back to the remote tip,
    // artifacts to what we pushed, the sync branch(es) kept locally too.
    lock.assertHeld();
    const localUpdates = [
      // (A remote without a results branch cannot conflict on it; keep ours then.)
      { ref: target.resultsRef, new: conflict.remote.results ?? local.results, old: local.results },
      { ref: target.artifactsRef, new: artifactsAfter, old: local.artifacts },
      { ref: `refs/heads/${branch}`, new: local.results, old: null },
      ...(artifactsAside ? [{ ref: `refs/heads/${artifactsAside}`, new: local.artifacts, old: null }] : []),
    ].filter((u) => u.new !== u.old);
    await updateRefs(repo, localUpdates, { message: `agentv-results: conflict set aside on ${branch}` });

    const url = await linkableUrl(repo, remote, baseBranch, branch);
    const record: SyncBranchRecord = {
      event: 'created',
      branch,
      artifacts_branch: artifactsAside,
      remote,
      base_branch: baseBranch,
      base: conflict.remote.results ?? local.results,
      head: local.results,
      created_at: now.toISOString(),
      host,
      conflicts: conflict.conflicts,
      compare_url: url,
      review_hint: reviewHint(remote, baseBranch, branch),
    };
    await appendSyncRecord(repo.commonDir, record);
    // The remote-tracking refs follow what the push landed, after the record is safe. A lost CAS
    // means a concurrent fetch moved them, to what the remote holds now: as current as ours, so kept.
    // Any other failure propagates.
    const tracking = [
      { ref: trackingRef(remote, `refs/heads/${branch}`), new: local.results, old: await resolveRef(repo, trackingRef(remote, `refs/heads/${branch}`)) },
      ...(artifactsAfter && !artifactsAside
        ? [{ ref: trackingRef(remote, target.artifactsRef), new: artifactsAfter, old: await resolveRef(repo, trackingRef(remote, target.artifactsRef)) }]
        : []),
    ].filter((u) => u.new !== u.old);
    await updateRefs(repo, tracking).catch(tolerateLostRace);
    return {
      kind: 'diverted',
      record,
      remoteTips: { results: conflict.remote.results ?? null, artifacts: artifactsAside ? conflict.remote.artifacts : artifactsAfter },
    };
  } finally {
    await lock.release();
  }
}

/**
 * The compare page for the sync branch. The URL git uses (insteadOf rules applied) is tried first;
 * when that is not a recognizable host (e.g. a mirror or proxy rewrite), the URL as configured.
 */
async function linkableUrl(repo: Repo, remote: string, base: string, branch: string): Promise<string | null> {
  for (const url of [await remoteUrl(repo, remote), await configGet(repo, `remote.${remote}.url`)]) {
    const link = url ? compareUrl(url, base, branch) : null;
    if (link) return link;
  }
  return null;
}

/** The lines a command prints for a diverted run. */
export function describeSyncBranch(record: SyncBranchRecord): string[] {
  const lines = [`conflict: set aside on ${record.remote}/${record.branch} (nothing was lost; ${record.base_branch} was not changed)`];
  for (const c of record.conflicts.slice(0, 5)) lines.push(`  ${c.reason}`);
  if (record.conflicts.length > 5) lines.push(`  … and ${record.conflicts.length - 5} more`);
  lines.push(record.compare_url ? `review: ${record.compare_url}` : `review: ${record.review_hint}`);
  lines.push(`then fix ${record.base_branch} and run: agentv-results sync --resolve ${record.branch}`);
  return lines;
}
