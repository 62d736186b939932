/**
 * Adopting what AgentV could not publish (issue 39): `agentv/results-sync/*` branches on the
 * remote (and here) whose runs join the results branch — runs only, never the branch itself
 * (issue 48: adopt-runs.ts says what a branch may hold and refuses one that holds anything else). AgentV 5.x parks a run on such a
 * branch whenever its own push cannot merge — on git before 2.40 that is every contended push,
 * since it asks merge-tree for `--merge-base=` — and nothing ever brings it back. (Runs AgentV
 * 4.42 committed on its local results branch and could not push need nothing here: they are local
 * commits of the results branch, which `sync`'s merge and push already land.)
 *
 *   before the push: list the remote's sync branches (ls-remote), fetch them into our tracking
 *     refs (pruning the tracking refs of sync branches the remote no longer has), add local ones;
 *     take each one's runs onto the local results branch (one commit per branch on the current
 *     tip, its only parent), under the publish lock; check that the new tip holds every run the
 *     old one did, then one compare-and-swap. One that is refused is left as it is (kept on the
 *     remote, never deleted) and reported with its reason, which `status` shows.
 *   after the push landed: every sync branch whose runs the remote's results branch now holds is
 *     deleted on the remote with a lease on the exact tip we saw (`--force-with-lease=<ref>:<sha>`
 *     and an empty source: a delete only if it still points there, never a force), then here.
 *
 * Sync branches this repository set aside itself (sync-branch-log.ts) are left to `sync --resolve`:
 * our own merge already found them genuinely conflicting, and a person was told so. So is one with
 * an artifacts twin (`agentv/artifacts-sync/<same suffix>`, another machine's set-aside payloads):
 * landing its rows alone would leave pointers to payloads the artifacts branch lacks.
 */
import { deleteRef, fetchRefs, isAncestor, listRefs, lsRemote, resolveRef, updateRefs, type RefEntry } from '../git/index.js';
import { RefConflictError } from '../errors/git-errors.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import type { PublishTarget } from '../repo/target.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { syncIdent } from './integrate.js';
import { lostRuns, takeRuns } from './adopt-runs.js';
import type { PushOutcome } from './push-branches.js';
import { deleteSyncBranches } from './delete-sync-branch.js';
import { appendSyncRecord, ARTIFACTS_SYNC_PREFIX, keptSyncBranches, openSyncBranches, SYNC_PREFIX } from './sync-branch-log.js';

/** One sync branch as this sync saw it. */
export interface SeenSyncBranch {
  branch: string;
  /** The tip we saw (on the remote when `onRemote`, else the local branch's). */
  tip: string;
  onRemote: boolean;
}

/** A sync branch that stays: its content does not merge into the results branch here. */
export interface KeptSyncBranch extends SeenSyncBranch {
  reason: string;
}

export interface AdoptedSyncBranch extends SeenSyncBranch {
  /** The remote copy was deleted (lease on `tip`); false when it moved since, or was not there. */
  deletedRemote: boolean;
  /** Local refs kept because they moved since we read them (delete by hand once checked). */
  keptLocal: string[];
}

export interface SyncBranchAdoption {
  /** Sync branches whose content the remote's results branch now holds: deleted. */
  adopted: AdoptedSyncBranch[];
  /** Merged into the local results branch, not yet on the remote (the push did not land). */
  pending: SeenSyncBranch[];
  /** Left in place: their content does not merge; `status`, `list` and the Dashboard name them. */
  kept: KeptSyncBranch[];
}

/** What the first half found and merged; `finishAdoption` takes it after the push. */
/** A sync branch whose runs the local results branch now holds. */
export interface MergedSyncBranch extends SeenSyncBranch {
  /** The results commit that holds them (the adoption's commit, or the tip that already held them). */
  commit: string;
}

export interface AdoptionPlan {
  /** Taken into the local results branch (or already contained in it). */
  merged: MergedSyncBranch[];
  kept: KeptSyncBranch[];
}

const SYNC_HEADS = `refs/heads/${SYNC_PREFIX}`;

/**
 * Find the sync branches (remote and local), mirror the remote's into our tracking refs, and merge
 * each into the local results branch. Needs the network (ls-remote, fetch); the merges are local.
 */
export async function mergeSyncBranches(
  target: PublishTarget,
  opts: { now?: () => Date; timeoutMs?: number; listed?: RefEntry[] } = {},
): Promise<AdoptionPlan> {
  const seen = await findSyncBranches(target, opts.timeoutMs, opts.listed);
  if (seen.length === 0) return { merged: [], kept: [] };
  const { repo } = target;
  const lock = await acquirePublishLock(repo.commonDir);
  try {
    const start = await resolveRef(repo, target.resultsRef);
    const author = await syncIdent(repo, (opts.now ?? (() => new Date()))());
    let tip = start;
    const merged: MergedSyncBranch[] = [];
    const kept: KeptSyncBranch[] = [];
    for (const s of seen) {
      if (tip === null) {
        kept.push({ ...s, reason: `there is no ${target.config.branch} here to take its runs into yet` });
        continue;
      }
      // Runs only, never the branch (adopt-runs.ts): one commit on the current tip, or a refusal.
      const r = await takeRuns(repo, {
        tip,
        offered: s.tip,
        author,
        message: `Adopt the runs of ${s.branch} (agentv-results sync)\n\nRuns AgentV could not publish, taken from that branch onto the results branch (its history is not merged).\n`,
      });
      if (r.kind === 'refused') {
        kept.push({ ...s, reason: r.reason });
        continue;
      }
      tip = r.commit;
      merged.push({ ...s, commit: r.commit });
    }
    const lost = start !== null && tip !== null ? await lostRuns(repo, start, tip) : [];
    if (lost.length > 0) {
      // Never expected (each take only adds): nothing moves, nothing is pushed from this adoption.
      for (const m of merged.splice(0)) kept.push({ branch: m.branch, tip: m.tip, onRemote: m.onRemote, reason: `taking it in would lose ${lost.join(', ')}` });
      tip = start;
    }
    if (tip !== start && tip !== null) {
      lock.assertHeld();
      await updateRefs(repo, [{ ref: target.resultsRef, new: tip, old: start }], { message: 'agentv-results: sync took in the runs of sync branches' });
    }
    // Why each one stayed, once per tip (a daemon retries every slot): `status` shows it.
    const known = kept.length > 0 ? await keptSyncBranches(repo.commonDir) : new Map();
    const checkedAt = (opts.now ?? (() => new Date()))().toISOString();
    for (const k of kept) {
      if (known.get(k.branch)?.tip === k.tip) continue;
      await appendSyncRecord(repo.commonDir, { event: 'kept', branch: k.branch, tip: k.tip, reason: k.reason, checked_at: checkedAt });
    }
    return { merged, kept };
  } finally {
    await lock.release();
  }
}

/**
 * After the push: every merged sync branch whose tip the remote's results branch holds is deleted
 * (remote first, on its lease; then here). Those the push did not bring there are `pending`.
 */
export async function finishAdoption(target: PublishTarget, plan: AdoptionPlan, push: PushOutcome, timeoutMs?: number): Promise<SyncBranchAdoption> {
  const { repo } = target;
  const remote = target.remote!;
  const remoteResults = push.landed ? (push.remoteTips?.results ?? (await resolveRef(repo, trackingRef(remote, target.resultsRef)))) : null;
  const adopted: AdoptedSyncBranch[] = [];
  const pending: SeenSyncBranch[] = [];
  for (const s of plan.merged) {
    if (remoteResults === null || !(await isAncestor(repo, s.commit, remoteResults))) {
      pending.push({ branch: s.branch, tip: s.tip, onRemote: s.onRemote });
      continue;
    }
    const ref = `refs/heads/${s.branch}`;
    const { deletedRemote, keptLocal } = await deleteSyncBranches(target, [{ ref, remoteTip: s.onRemote ? s.tip : null, tip: s.tip }], timeoutMs);
    adopted.push({ branch: s.branch, tip: s.tip, onRemote: s.onRemote, deletedRemote: s.onRemote && deletedRemote, keptLocal });
  }
  return { adopted, pending, kept: plan.kept };
}

/**
 * The sync branches to adopt, oldest name first: the remote's (ls-remote, then fetched into our
 * tracking refs) and the local ones the remote does not have; minus the ones set aside here.
 */
async function findSyncBranches(target: PublishTarget, timeoutMs?: number, listed?: RefEntry[]): Promise<SeenSyncBranch[]> {
  const { repo } = target;
  const remote = target.remote!;
  const twins = `refs/heads/${ARTIFACTS_SYNC_PREFIX}`;
  // The caller's listing (sync lists every side branch once, for this and the checkpoints), or our own.
  const onRemote = (listed ?? (await lsRemote(repo, remote, [`${SYNC_HEADS}*`, `${twins}*`], { timeoutMs: timeoutMs ?? 120_000 }))).filter(
    (e) => e.ref.startsWith(SYNC_HEADS) || e.ref.startsWith(twins),
  );
  const withTwin = new Set(onRemote.filter((e) => e.ref.startsWith(twins)).map((e) => SYNC_PREFIX + e.ref.slice(twins.length)));
  const remoteTips = new Map(onRemote.filter((e) => e.ref.startsWith(SYNC_HEADS)).map((e) => [e.ref.slice('refs/heads/'.length), e.sha]));
  if (remoteTips.size > 0) {
    await fetchRefs(
      repo,
      remote,
      [...remoteTips.keys()].map((b) => `+refs/heads/${b}:${trackingRef(remote, `refs/heads/${b}`)}`),
      { timeoutMs: timeoutMs ?? 120_000 },
    );
  }
  await pruneTracking(target, new Set(remoteTips.keys()));
  const ours = new Set((await openSyncBranches(repo.commonDir)).map((r) => r.branch));
  const seen = new Map<string, SeenSyncBranch>();
  for (const [branch, tip] of remoteTips) seen.set(branch, { branch, tip, onRemote: true });
  for (const e of await listRefs(repo, SYNC_HEADS)) {
    const branch = e.ref.slice('refs/heads/'.length);
    if (!seen.has(branch)) seen.set(branch, { branch, tip: e.sha, onRemote: false });
  }
  return [...seen.values()].filter((s) => !ours.has(s.branch) && !withTwin.has(s.branch)).sort((a, b) => a.branch.localeCompare(b.branch));
}

/** Tracking refs of sync branches the remote no longer has go (each on a lease of what we read). */
async function pruneTracking(target: PublishTarget, live: Set<string>): Promise<void> {
  const remote = target.remote!;
  const prefix = `refs/remotes/${remote}/`;
  for (const e of await listRefs(target.repo, `${prefix}${SYNC_PREFIX}`)) {
    if (live.has(e.ref.slice(prefix.length))) continue;
    try {
      await deleteRef(target.repo, e.ref, e.sha, { message: 'agentv-results: sync branch gone from the remote' });
    } catch (err) {
      // A concurrent fetch moved it: it mirrors the remote as well as we would; the next sync prunes it.
      if (!(err instanceof RefConflictError)) throw err;
    }
  }
}
