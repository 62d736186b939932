/**
 * No AgentV run left on a side branch (issue 50 item 3): `sync` (and so the daemon's schedule)
 * adopts the complete runs in AgentV's checkpoint branches, `agentv/wip/<host>/<run dir name>`,
 * with the same runs-only adoption as sync branches (adopt-runs.ts), and deletes a checkpoint
 * branch on the remote, with a lease on its tip, once its run is on the remote's results branch.
 *
 * What AgentV leaves there (both lines' `pushWipCheckpoint`): every ~30 s it copies the run
 * workspace into a worktree of the results branch and amends the results tip's commit with it
 * (`commit --amend`), then force-pushes; on success it deletes the branch, on failure (a push
 * refused, a pod lost) the branch stays. So a checkpoint's tree is the results branch as it was
 * plus one run: 5.x at `<run_id>/` (its workspace byte for byte, what its publish writes when no
 * transcript pointer sends payloads elsewhere), 4.42 at `runs/<experiment>/<timestamp>/` (the run
 * byte for byte, as 4.42 publishes it). Only that run is looked at; everything else is the base it
 * was taken on.
 *
 * Complete = what AgentV itself would have published, i.e. the eval finished: 5.x rewrites its
 * start-of-run stub `summary.json` at the end (the stub counts no test; the final one counts every
 * planned test); 4.42 writes `timing.json` only at the end (its `benchmark.json` stub comes first).
 * An incomplete one is left and reported (its eval may still be running, or will be resumed). A
 * checkpoint whose run the results branch already holds at the same path has landed: it is
 * only deleted.
 *
 * Checkpoints of ours (`wip.json` at the root: src/wip) are not runs in a branch layout; they are
 * not touched here: the daemon publishes a finished one that only the remote holds
 * (daemon/adopt-own-checkpoints.ts), and `wip` lists, recovers and cleans them.
 */
import { fetchRefs, isAncestor, lsRemote, readBlobs, resolveRef, updateRefs, type RefEntry, type Repo } from '../git/index.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { listRunDirs, type BranchRunDir } from '../layout/branch-layout.js';
import type { PublishTarget } from '../repo/target.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { lostRuns, takeRuns } from './adopt-runs.js';
import type { AdoptedSyncBranch, KeptSyncBranch, MergedSyncBranch, SeenSyncBranch, SyncBranchAdoption } from './adopt-agentv.js';
import { deleteSyncBranches } from './delete-sync-branch.js';
import { syncIdent } from './integrate.js';
import type { PushOutcome } from './push-branches.js';

export const CHECKPOINT_PREFIX = 'agentv/wip/';

export interface CheckpointPlan {
  merged: MergedSyncBranch[];
  kept: KeptSyncBranch[];
}

/** Why a checkpoint's run is not (yet) one AgentV would publish, or null when it is complete. */
export async function incompleteReason(repo: Repo, tip: string, run: BranchRunDir): Promise<string | null> {
  const names = run.layout === 'root' ? ['summary.json'] : ['benchmark.json', 'timing.json', 'index.jsonl'];
  const specs = names.map((n) => `${tip}:${run.path}/${n}`);
  const blobs = await readBlobs(repo, specs);
  if (run.layout === 'stable') {
    const missing = names.filter((_, i) => !blobs.get(specs[i]!));
    return missing.length === 0 ? null : `its run ${run.path} is not finished (no ${missing.join(', ')} yet)`;
  }
  const raw = blobs.get(specs[0]!);
  if (!raw) return `its run ${run.path} is not finished (no summary.json yet)`;
  let summary: { counts?: { total_tests?: unknown }; metadata?: { planned_test_count?: unknown } };
  try {
    summary = JSON.parse(raw.toString('utf8')) as typeof summary;
  } catch {
    // unparsable: not a summary AgentV finished writing; the checkpoint is left and reported
    return `its run ${run.path} has a summary.json that does not parse`;
  }
  const done = typeof summary?.counts?.total_tests === 'number' ? summary.counts.total_tests : 0;
  const planned = summary?.metadata?.planned_test_count;
  if (done === 0) return `its run ${run.path} is not finished (summary.json counts no test yet)`;
  if (typeof planned === 'number' && done < planned) return `its run ${run.path} is not finished (${done} of ${planned} planned tests)`;
  return null;
}

/**
 * List AgentV's checkpoint branches on the remote, mirror them into our tracking refs, and take
 * each complete run onto the local results branch (under the publish lock, one compare-and-swap).
 */
export async function takeCheckpoints(
  target: PublishTarget,
  opts: { now?: () => Date; timeoutMs?: number; listed?: RefEntry[] } = {},
): Promise<CheckpointPlan> {
  const { repo } = target;
  const remote = target.remote!;
  const heads = `refs/heads/${CHECKPOINT_PREFIX}`;
  // The caller's listing of the remote's side branches (sync lists them once for both adoptions), or our own.
  const listed = opts.listed ?? (await lsRemote(repo, remote, [`${heads}*`], { timeoutMs: opts.timeoutMs ?? 120_000 }));
  const seen: SeenSyncBranch[] = listed
    .filter((e) => e.ref.startsWith(heads))
    .map((e) => ({ branch: e.ref.slice('refs/heads/'.length), tip: e.sha, onRemote: true }))
    .sort((a, b) => a.branch.localeCompare(b.branch));
  if (seen.length === 0) return { merged: [], kept: [] };
  await fetchRefs(
    repo,
    remote,
    seen.map((s) => `+refs/heads/${s.branch}:${trackingRef(remote, `refs/heads/${s.branch}`)}`),
    { timeoutMs: opts.timeoutMs ?? 120_000 },
  );
  const lock = await acquirePublishLock(repo.commonDir);
  try {
    const start = await resolveRef(repo, target.resultsRef);
    const merged: MergedSyncBranch[] = [];
    const kept: KeptSyncBranch[] = [];
    if (start === null) return { merged, kept };
    const author = await syncIdent(repo, (opts.now ?? (() => new Date()))());
    let tip = start;
    let tipRuns = await listRunDirs(repo, tip);
    for (const s of seen) {
      const dirs = await listRunDirs(repo, s.tip);
      if (dirs.root.some((e) => e.path === 'wip.json')) continue; // ours: src/wip's to handle
      const name = s.branch.split('/').pop()!;
      const runs = dirs.dirs.filter((d) => d.path.split('/').pop() === name);
      if (runs.length !== 1) {
        kept.push({ ...s, reason: runs.length === 0 ? `it holds no run named ${name}` : `it holds ${runs.length} runs named ${name}` });
        continue;
      }
      const run = runs[0]!;
      // Already on the results branch at its own path (AgentV's own publish, or ours of the same
      // run): landed. By path, not by its last segment: another experiment's 4.42 run with the
      // same timestamp is not this one, and its checkpoint (deleted once "landed") is the only copy.
      if (tipRuns.dirs.some((d) => d.path === run.path)) {
        merged.push({ ...s, commit: tip });
        continue;
      }
      const incomplete = await incompleteReason(repo, s.tip, run);
      if (incomplete) {
        kept.push({ ...s, reason: incomplete });
        continue;
      }
      const r = await takeRuns(repo, {
        tip,
        offered: s.tip,
        onlyRuns: [run.path],
        author,
        message: `Adopt ${run.path} from ${s.branch} (agentv-results sync)\n\nA finished run AgentV checkpointed and never published, taken from its checkpoint branch.\n`,
      });
      if (r.kind === 'refused') {
        kept.push({ ...s, reason: r.reason });
        continue;
      }
      if (r.commit !== tip) tipRuns = await listRunDirs(repo, r.commit);
      tip = r.commit;
      merged.push({ ...s, commit: r.commit });
    }
    if (tip !== start) {
      const lost = await lostRuns(repo, start, tip);
      if (lost.length > 0) {
        const why = `taking it in would lose ${lost.join(', ')}`;
        return { merged: [], kept: [...kept, ...merged.map((m) => ({ branch: m.branch, tip: m.tip, onRemote: m.onRemote, reason: why }))] };
      }
      lock.assertHeld();
      await updateRefs(repo, [{ ref: target.resultsRef, new: tip, old: start }], { message: 'agentv-results: sync took in the runs of checkpoint branches' });
    }
    return { merged, kept };
  } finally {
    await lock.release();
  }
}

/** After the push: each checkpoint whose run the remote's results branch holds is deleted there (lease on its tip). */
export async function finishCheckpoints(target: PublishTarget, plan: CheckpointPlan, push: PushOutcome, timeoutMs?: number): Promise<SyncBranchAdoption> {
  const { repo } = target;
  const remoteResults = push.landed ? (push.remoteTips?.results ?? (await resolveRef(repo, trackingRef(target.remote!, target.resultsRef)))) : null;
  const adopted: AdoptedSyncBranch[] = [];
  const pending: SeenSyncBranch[] = [];
  for (const s of plan.merged) {
    const seen = { branch: s.branch, tip: s.tip, onRemote: s.onRemote };
    if (remoteResults === null || !(await isAncestor(repo, s.commit, remoteResults))) {
      pending.push(seen);
      continue;
    }
    const { deletedRemote, keptLocal } = await deleteSyncBranches(target, [{ ref: `refs/heads/${s.branch}`, remoteTip: s.tip, tip: s.tip }], timeoutMs);
    adopted.push({ ...seen, deletedRemote, keptLocal });
  }
  return { adopted, pending, kept: plan.kept };
}
