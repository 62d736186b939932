/**
 * The library behind `agentv-results sync`, two-way: first fetch both branches and integrate what
 * others pushed (fast-forward, or merge with the remote tip as first parent: integrate.ts), even
 * when this machine has nothing to push, so every later read here sees the remote's runs; then push
 * whatever this repository has committed and not yet pushed (publishes that could not reach the
 * remote, tag and feedback edits, runs queued by other processes, the merge itself), with the full
 * protocol of push-branches.ts.
 */
import { fetchBothBranches, integrateRemote, type BranchTips } from './integrate.js';
import { pushBranches, type PushOutcome } from './push-branches.js';
import type { PathResolver } from './recompute-derived.js';
import { fnOf, objectOf, parseOptions, TargetFieldsDirLast } from '../options/verb-options.js';
import * as z from 'zod';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { finishAdoption, mergeSyncBranches, type AdoptionPlan, type SyncBranchAdoption } from './adopt-agentv.js';
import { lsRemote, type RefEntry } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { CHECKPOINT_PREFIX, finishCheckpoints, takeCheckpoints, type CheckpointPlan } from './adopt-checkpoints.js';
import { ARTIFACTS_SYNC_PREFIX, SYNC_PREFIX } from './sync-branch-log.js';
import { repairDuplicateRuns, type DuplicateRepair } from './repair-duplicates.js';

/** The fields of `sync`'s options (`resolveSyncBranch` adds the branch): where, and how the push loop runs. */
export const SyncFields = {
  ...TargetFieldsDirLast,
  /** Most pushes per loop (default 16). */
  maxAttempts: z.number().int().positive().optional(),
  /** Backoff before retry n (push-branches.ts; defaults 100 ms / 1.5 s). */
  backoff: z.strictObject({ baseMs: z.number().nonnegative(), capMs: z.number().nonnegative() }).optional(),
  /** Per network operation. */
  timeoutMs: z.number().positive().optional(),
  now: fnOf<() => Date>().optional(),
  random: fnOf<() => number>().optional(),
  sleep: fnOf<(ms: number) => Promise<void>>().optional(),
  /** @internal For tests: conflict resolution for the merges. */
  resolver: fnOf<PathResolver>().optional(),
  /** Host part of a sync-branch name (tests). */
  host: z.string().optional(),
  /** @internal An already resolved target (the daemon keeps one); otherwise resolved from cwd/config. */
  target: objectOf<PublishTarget>().optional(),
};

/** `sync`'s options, parsed at its door (the `sync` command's flags come from the same fields). */
export const SyncOptionsSchema = z.strictObject(SyncFields);

/** What a caller of `sync` passes (the schema's input; the members the package passes itself are marked internal, so the published type leaves them out). */
export interface SyncOptions extends Omit<z.input<typeof SyncOptionsSchema>, 'target' | 'resolver'> {
  /** @internal */
  target?: PublishTarget;
  /** @internal */
  resolver?: PathResolver;
}

/** What the fetch at the start of a sync brought in. */
export interface SyncFetch {
  /** Local branches fast-forwarded to the remote's tips. */
  fastForwards: number;
  /** Merge commits made to take in the remote's work next to ours (pushed by the push that follows). */
  merges: number;
  /** Local tips before and after the fetch and integration. */
  before: BranchTips;
  after: BranchTips;
  /** The remote's tips as fetched (null for a branch it does not have). */
  remote: BranchTips;
  /** Set when the remote's work conflicts with ours: the push that follows sets ours aside. */
  conflict?: boolean;
}

export interface SyncResult {
  repo: string;
  remote: string | null;
  resultsBranch: string;
  artifactsBranch: string;
  /** The fetch-and-integrate half; null without a remote, or when the fetch failed (then `push` says why). */
  fetch: SyncFetch | null;
  push: PushOutcome;
  /**
   * Sync branches on the remote (AgentV's parked runs, another machine's) taken into the results
   * branch and deleted, or left because they do not merge (adopt-agentv.ts). Null when the fetch
   * conflicted, or when listing them failed (`syncBranchesError` says why).
   */
  syncBranches: SyncBranchAdoption | null;
  syncBranchesError?: string;
  /**
   * AgentV's checkpoint branches (`agentv/wip/...`) whose finished run was taken into the results
   * branch and deleted, pending, or left (unfinished, or refused) with the reason
   * (adopt-checkpoints.ts). Null when the fetch conflicted, or listing them failed (`checkpointsError`).
   */
  checkpoints: SyncBranchAdoption | null;
  checkpointsError?: string;
  /** Runs the results branch held twice (at the root and under AgentV 4.42's runs/): the second copy removed by an ordinary commit this push carries. */
  duplicates?: DuplicateRepair;
}

export function targetSummary(target: PublishTarget): Omit<SyncResult, 'push' | 'fetch' | 'syncBranches' | 'checkpoints'> {
  return {
    repo: target.repo.workTree ?? target.repo.gitDir,
    remote: target.remote,
    resultsBranch: target.config.branch,
    artifactsBranch: target.config.artifacts_branch,
  };
}

/** Fetch, merge and push the results and artifacts branches until the remote has this machine's runs, adopting AgentV's sync branches. */
export async function sync(options: SyncOptions = {}): Promise<SyncResult> {
  const opts = parseOptions('sync', SyncOptionsSchema, options);
  const target = opts.target ?? (await resolveTarget(opts));
  if (target.remote === null) {
    return {
      ...targetSummary(target),
      fetch: null,
      syncBranches: null,
      checkpoints: null,
      push: {
        landed: false,
        classification: 'no-remote',
        message: `no remote to push to: ${target.repo.workTree ?? target.repo.gitDir} has none (set results.remote or add one)`,
        attempts: 0,
      },
    };
  }
  let fetch: SyncFetch | null = null;
  try {
    const fetched = await fetchBothBranches(target, { timeoutMs: opts.timeoutMs });
    const integrated = await integrateRemote(target, fetched, { now: opts.now, resolve: opts.resolver });
    fetch =
      integrated.kind === 'ready'
        ? { fastForwards: integrated.fastForwards, merges: integrated.merges, before: integrated.before, after: integrated.local, remote: integrated.remote }
        : { fastForwards: 0, merges: 0, before: integrated.local, after: integrated.local, remote: integrated.remote, conflict: true };
  } catch (err) {
    const kind = err instanceof RemoteError ? err.kind : undefined;
    const classification = kind === 'unreachable' || kind === 'auth' ? kind : 'other';
    return {
      ...targetSummary(target),
      fetch: null,
      syncBranches: null,
      checkpoints: null,
      push: { landed: false, classification, message: `fetching from ${target.remote} failed: ${(err as Error).message}`, attempts: 0 },
    };
  }
  // AgentV's parked runs join the results branch before the push, so the same push lands them.
  // One listing of the remote's side branches (sync branches, their artifacts twins, checkpoints)
  // serves both adoptions below.
  let listed: RefEntry[] | undefined;
  let listError: string | undefined;
  if (!fetch.conflict) {
    try {
      const heads = [SYNC_PREFIX, ARTIFACTS_SYNC_PREFIX, CHECKPOINT_PREFIX].map((p) => `refs/heads/${p}*`);
      listed = await lsRemote(target.repo, target.remote!, heads, { timeoutMs: opts.timeoutMs ?? 120_000 });
    } catch (err) {
      // The remote answered the fetch but not this: the sync itself goes on; the next one retries.
      if (!(err instanceof RemoteError)) throw err;
      listError = err.message;
    }
  }
  let plan: AdoptionPlan | null = null;
  let syncBranchesError: string | undefined = listError && `listing the sync branches of ${target.remote} failed: ${listError}`;
  if (listed) {
    try {
      plan = await mergeSyncBranches(target, { now: opts.now, timeoutMs: opts.timeoutMs, listed });
    } catch (err) {
      if (!(err instanceof RemoteError)) throw err;
      syncBranchesError = `fetching the sync branches of ${target.remote} failed: ${err.message}`;
    }
  }
  // AgentV's checkpoints of finished runs it never published: the same runs-only adoption.
  let checkpointPlan: CheckpointPlan | null = null;
  let checkpointsError: string | undefined = listError && `listing the checkpoint branches of ${target.remote} failed: ${listError}`;
  if (listed) {
    try {
      checkpointPlan = await takeCheckpoints(target, { now: opts.now, timeoutMs: opts.timeoutMs, listed });
    } catch (err) {
      if (!(err instanceof RemoteError)) throw err;
      checkpointsError = `fetching the checkpoint branches of ${target.remote} failed: ${err.message}`;
    }
  }
  // A run held in both layouts: the second copy goes before the push (repair-duplicates.ts).
  // The tip the integration left, unless an adoption took runs since (then read again).
  const adopted = (plan?.merged.length ?? 0) + (checkpointPlan?.merged.length ?? 0) > 0;
  const tip = adopted ? undefined : fetch.after.results;
  const duplicates = fetch.conflict ? null : await repairDuplicateRuns(target, { now: opts.now, tip });
  const push = await pushBranches(target, opts);
  const syncBranches = plan ? await finishAdoption(target, plan, push, opts.timeoutMs) : null;
  const checkpoints = checkpointPlan ? await finishCheckpoints(target, checkpointPlan, push, opts.timeoutMs) : null;
  return {
    ...targetSummary(target),
    fetch,
    push,
    syncBranches,
    checkpoints,
    ...(syncBranchesError ? { syncBranchesError } : {}),
    ...(checkpointsError ? { checkpointsError } : {}),
    ...(duplicates && duplicates.runs.length > 0 ? { duplicates } : {}),
  };
}
