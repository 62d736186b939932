/**
 * The team's branch as this machine knows it (issue 37): which tip of a results or artifacts
 * branch a verb reads, for every verb. It is the newer of the local branch and its remote-tracking
 * ref (after a fetch: what the remote has): the one that contains the other. A fresh clone has no
 * local branch, so it reads the remote-tracking ref; a machine with results not pushed yet reads
 * its own. When they diverged neither is newer: a read reads both, the local one first.
 *
 * A verb that writes (publish, tag, feedback, archive, expire) decides from the tip it will push
 * onto: `adoptTeamTips` first fast-forwards the local branches to their remote-tracking refs where
 * those are strictly newer (both branches in one compare-and-swap transaction, so a results commit
 * never becomes the local tip without the artifacts commit holding its payloads). A diverged pair
 * is left to the push loop, which merges it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { commitRelation, readRefs, updateRefs } from '../git/index.js';
import type { PublishTarget } from './target.js';
import { trackingRef } from './tracking-refs.js';
import { DEFAULT_ARTIFACTS_BRANCH, DEFAULT_RESULTS_BRANCH } from './config.js';

/** How the local branch and its remote-tracking ref relate. */
export type TipRelation = 'same' | 'local-ahead' | 'remote-ahead' | 'diverged' | 'local-only' | 'remote-only' | 'none';

export interface TeamTip {
  /** refs/heads/<branch> */
  ref: string;
  /** refs/remotes/<remote>/<branch>, or null without a remote. */
  tracking: string | null;
  local: string | null;
  remote: string | null;
  relation: TipRelation;
  /** Whose data wins where both have it: the newer tip (local when equal or diverged); null: none. */
  newest: 'local' | 'remote' | null;
  /** The tip to read: the newer one (local when diverged); null when neither exists. */
  tip: string | null;
  /** Every tip a read reads, the winning one first: one, or both when they diverged. */
  tips: string[];
}

export async function tipRelation(target: PublishTarget, local: string | null, remote: string | null): Promise<TipRelation> {
  if (local === null) return remote === null ? 'none' : 'remote-only';
  if (remote === null) return 'local-only';
  // One merge-base, not an ancestry question each way.
  const relation = await commitRelation(target.repo, local, remote);
  return relation === 'ancestor' ? 'remote-ahead' : relation === 'descendant' ? 'local-ahead' : relation;
}

/** The team tip of `ref` from its remote-tracking ref's name (null: no remote) and the known local and remote-tracking tips. */
export async function teamTipOf(target: PublishTarget, ref: string, tracking: string | null, local: string | null, remote: string | null): Promise<TeamTip> {
  const relation = await tipRelation(target, local, remote);
  const newest: TeamTip['newest'] = relation === 'none' ? null : relation === 'remote-ahead' || relation === 'remote-only' ? 'remote' : 'local';
  const tip = newest === 'remote' ? remote : newest === 'local' ? local : null;
  const tips = relation === 'diverged' ? [local!, remote!] : tip ? [tip] : [];
  return { ref, tracking, local, remote, relation, newest, tip, tips };
}

/** The team tips of several branches (full refs), read with one for-each-ref. */
export async function teamTips(target: PublishTarget, refs: string[]): Promise<Map<string, TeamTip>> {
  // Each branch's remote-tracking ref, named once (none without a remote).
  const remoteName = target.remote;
  const tracked = refs.map((r) => (remoteName ? trackingRef(remoteName, r) : null));
  const found = await readRefs(target.repo, [...refs, ...tracked.filter((t): t is string => t !== null)]);
  const out = new Map<string, TeamTip>();
  for (const [i, ref] of refs.entries()) {
    const tracking = tracked[i] ?? null;
    out.set(ref, await teamTipOf(target, ref, tracking, found.get(ref) ?? null, tracking === null ? null : (found.get(tracking) ?? null)));
  }
  return out;
}

/** The team tip of one branch (default: the results branch). */
export async function teamTip(target: PublishTarget, ref: string = target.resultsRef): Promise<TeamTip> {
  return (await teamTips(target, [ref])).get(ref)!;
}

/** The tip of the results branch a read reads, as one line for people. */
export function describeTeamTip(t: TeamTip): string {
  const name = t.ref.slice('refs/heads/'.length);
  const tracking = t.tracking ? t.tracking.slice('refs/remotes/'.length) : null;
  switch (t.relation) {
    case 'none':
      return `${name} does not exist here${tracking ? ` nor on ${tracking}` : ''}`;
    case 'remote-only':
    case 'remote-ahead':
      return `read ${tracking} (${t.remote!.slice(0, 12)})`;
    case 'diverged':
      return `read ${name} and ${tracking}: they diverged`;
    default:
      return `read ${name} (${t.local!.slice(0, 12)})`;
  }
}

export interface AdoptedTips {
  results: string | null;
  artifacts: string | null;
  /** The refs fast-forwarded to their remote-tracking copies (empty: nothing was behind). */
  moved: string[];
}

/**
 * Before a write decides anything, the local branches catch up with what this machine knows of
 * the remote (no network): each one absent or strictly behind its remote-tracking ref moves to it,
 * both in one compare-and-swap transaction, and only when neither diverged (then the push loop
 * merges). Call it under the publish lock; `beforeRefUpdate` asserts the lock is still held.
 */
export async function adoptTeamTips(target: PublishTarget, beforeRefUpdate?: () => void): Promise<AdoptedTips> {
  const tips = await teamTips(target, [target.resultsRef, target.artifactsRef]);
  const results = tips.get(target.resultsRef)!;
  const artifacts = tips.get(target.artifactsRef)!;
  const unchanged: AdoptedTips = { results: results.local, artifacts: artifacts.local, moved: [] };
  const behind = (t: TeamTip) => t.relation === 'remote-ahead' || t.relation === 'remote-only';
  const fine = (t: TeamTip) => behind(t) || t.relation === 'same' || t.relation === 'none' || t.relation === 'local-only';
  if (!(behind(results) || behind(artifacts)) || !fine(results) || !fine(artifacts)) return unchanged;
  const updates = [results, artifacts].filter(behind).map((t) => ({ ref: t.ref, new: t.remote!, old: t.local }));
  beforeRefUpdate?.();
  await updateRefs(target.repo, updates, { message: `agentv-results: catch up with ${target.remote}` });
  return {
    results: behind(results) ? results.remote : results.local,
    artifacts: behind(artifacts) ? artifacts.remote : artifacts.local,
    moved: updates.map((u) => u.ref),
  };
}

/**
 * The tips a write (or its dry run) starts from: a dry run reads the team's tips and moves
 * nothing; a real one first catches the local branches up (adoptTeamTips) and starts from them.
 */
export async function writeBaseTips(
  target: PublishTarget,
  opts: { dryRun?: boolean; beforeRefUpdate?: () => void } = {},
): Promise<{ results: string | null; artifacts: string | null }> {
  if (!opts.dryRun) return adoptTeamTips(target, opts.beforeRefUpdate);
  const tips = await teamTips(target, [target.resultsRef, target.artifactsRef]);
  return { results: tips.get(target.resultsRef)!.tip, artifacts: tips.get(target.artifactsRef)!.tip };
}

/** Whether the repository is a shallow clone (git records the boundary in <common dir>/shallow). */
export function isShallow(target: PublishTarget): boolean {
  return existsSync(join(target.repo.commonDir, 'shallow'));
}

/**
 * The depth of a fetch of `refs` (full branch refs): 1 when this shallow clone has none of them, neither
 * the local branch nor its remote-tracking ref (a fresh or depth-1 clone: the tip, not years of
 * history; a later fetch brings only what is new on top of it); undefined (a full fetch) when it
 * has one, whose history a merge may need to join. Branches under names other than the defaults
 * are fetched in full: ownership.ts tells them from a user's branch by their root commit.
 */
export async function firstFetchDepth(target: PublishTarget, refs: string[]): Promise<number | undefined> {
  const defaults = [`refs/heads/${DEFAULT_RESULTS_BRANCH}`, `refs/heads/${DEFAULT_ARTIFACTS_BRANCH}`];
  if (target.remote === null || refs.some((r) => !defaults.includes(r))) return undefined;
  // Only a clone that is shallow already (a depth-1 CI checkout) fetches shallow: a full clone
  // stays whole, so its writes keep merging with the remote row by row from their common base.
  if (!isShallow(target)) return undefined;
  const tips = await teamTips(target, refs);
  return [...tips.values()].every((t) => t.relation === 'none') ? 1 : undefined;
}
