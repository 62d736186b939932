/**
 * Bring the remote's work into our local branches (ARCHITECTURE.md, the path of a run): fetch the results and
 * artifacts branches into refs/remotes/<remote>/agentv/..., then for EACH branch fast-forward the
 * local ref, or merge with the remote tip as first parent. Both refs then move in one
 * compare-and-swap transaction, so a results commit never becomes local tip without the artifacts
 * commit that holds its payloads.
 *
 * The artifacts branch is append-mostly: different runs are different paths, and the same run
 * published twice with identical payloads is an identical add/add; both merge cleanly. Payloads that
 * differ at one path are a genuine conflict like any other file we do not own.
 */
import { configGetMany, fetchRefs, type Ident, type NetworkOptions, readRefs, type Repo, updateRefs } from '../git/index.js';
import { RefConflictError } from '../errors/git-errors.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { mergeCommits, type PathConflict, type PathResolver } from './merge-commits.js';
import type { PublishTarget } from '../repo/target.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { noteRemoteSeen } from '../repo/remote-seen.js';
import { firstFetchDepth } from '../repo/team-tip.js';

export interface BranchTips {
  results: string | null;
  artifacts: string | null;
}

/** Local tips and remote-tracking tips of both branches, with one for-each-ref process. */
export async function readTips(target: PublishTarget): Promise<{ local: BranchTips; tracking: BranchTips }> {
  const remote = target.remote;
  const tracked = remote ? [trackingRef(remote, target.resultsRef), trackingRef(remote, target.artifactsRef)] : [];
  const refs = await readRefs(target.repo, [target.resultsRef, target.artifactsRef, ...tracked]);
  return {
    local: { results: refs.get(target.resultsRef) ?? null, artifacts: refs.get(target.artifactsRef) ?? null },
    tracking: {
      results: tracked[0] ? (refs.get(tracked[0]) ?? null) : null,
      artifacts: tracked[1] ? (refs.get(tracked[1]) ?? null) : null,
    },
  };
}

/** Fetch both branches (plus `extra` full refs) into their tracking refs; null for a branch the remote lacks. */
export async function fetchBranches(
  target: PublishTarget,
  opts: NetworkOptions & { extra?: string[] } = {},
): Promise<BranchTips & { extra: Map<string, string | null> }> {
  const remote = target.remote!;
  const refs = [target.resultsRef, target.artifactsRef, ...(opts.extra ?? [])];
  // "+": the tracking refs mirror the remote even if someone rewrote it; nothing of the user's moves.
  const result = await fetchRefs(
    target.repo,
    remote,
    refs.map((r) => `+${r}:${trackingRef(remote, r)}`),
    { timeoutMs: opts.timeoutMs ?? 120_000, depth: opts.extra?.length ? undefined : await firstFetchDepth(target, refs) },
  );
  await noteRemoteSeen(target.repo, remote);
  const missing = new Set(result.missing.map((m) => m.src));
  const tips = await readRefs(
    target.repo,
    refs.filter((r) => !missing.has(r)).map((r) => trackingRef(remote, r)),
  );
  const tip = (r: string): string | null => (missing.has(r) ? null : (tips.get(trackingRef(remote, r)) ?? null));
  return { results: tip(target.resultsRef), artifacts: tip(target.artifactsRef), extra: new Map((opts.extra ?? []).map((r) => [r, tip(r)])) };
}

/** Which of our branches a fetch found on the remote; their tips are then in the tracking refs. */
export interface FetchedBranches {
  fetched: { results: boolean; artifacts: boolean };
}

/**
 * Fetch both branches without reading the tips back: integrateRemote() reads them together with
 * the local tips, under the lock, in the one for-each-ref it needs anyway (a sync round is what
 * other publishers wait on, and every git process in it is latency on a busy machine).
 */
export async function fetchBothBranches(target: PublishTarget, opts: NetworkOptions = {}): Promise<FetchedBranches> {
  const remote = target.remote!;
  const refs = [target.resultsRef, target.artifactsRef];
  // A clone that never had our branches (a depth-1 CI checkout) fetches their tips, not their
  // history: a publish or merge on top needs nothing older (team-tip.ts).
  const result = await fetchRefs(
    target.repo,
    remote,
    refs.map((r) => `+${r}:${trackingRef(remote, r)}`),
    { timeoutMs: opts.timeoutMs ?? 120_000, depth: await firstFetchDepth(target, refs) },
  );
  await noteRemoteSeen(target.repo, remote);
  const missing = new Set(result.missing.map((m) => m.src));
  return { fetched: { results: !missing.has(target.resultsRef), artifacts: !missing.has(target.artifactsRef) } };
}

const identities = new Map<string, Promise<{ name: string; email: string }>>();

/** Who merge and overlay commits are by: git's user.name/email (read once per repository and process). */
export async function syncIdent(repo: Repo, now: Date): Promise<Ident> {
  let who = identities.get(repo.gitDir);
  if (!who) {
    who = configGetMany(repo, ['user.name', 'user.email']).then((c) => ({
      name: c.get('user.name') ?? 'agentv-results',
      email: c.get('user.email') ?? 'agentv-results@localhost',
    }));
    identities.set(repo.gitDir, who);
    // observed: the caller awaits `who`; this only forgets the cached failure
    who.catch(() => identities.delete(repo.gitDir));
  }
  return { ...(await who), date: now };
}

export type IntegrateResult =
  /** Local branches now contain the remote tips; a push is a fast-forward (unless the remote moves again). */
  | { kind: 'ready'; before: BranchTips; local: BranchTips; remote: BranchTips; merges: number; fastForwards: number }
  | {
      kind: 'conflict';
      local: BranchTips;
      remote: BranchTips;
      conflicts: PathConflict[];
      /** Which branch(es) conflicted. */
      branches: ('results' | 'artifacts')[];
      /** The merged artifacts tip when only the results branch conflicted (not moved locally). */
      artifactsMerged: string | null;
    };

export interface IntegrateOptions {
  now?: () => Date;
  resolve?: PathResolver;
  /** CAS retries when something that does not take the publish lock moves a ref while we merge. */
  casRetries?: number;
}

const BRANCHES = ['results', 'artifacts'] as const;

/**
 * Merges run under the publish lock (local work only, no network): a publisher committing in a
 * loop would otherwise keep moving the ref under every merge and starve the compare-and-swap.
 */
export async function integrateRemote(target: PublishTarget, remote: BranchTips | FetchedBranches, opts: IntegrateOptions = {}): Promise<IntegrateResult> {
  const lock = await acquirePublishLock(target.repo.commonDir);
  try {
    return await integrateLocked(target, remote, opts, () => lock.assertHeld());
  } finally {
    await lock.release();
  }
}

async function integrateLocked(
  target: PublishTarget,
  remoteState: BranchTips | FetchedBranches,
  opts: IntegrateOptions,
  assertHeld: () => void,
): Promise<IntegrateResult> {
  const { repo } = target;
  const now = opts.now ?? (() => new Date());
  for (let round = 0; ; round++) {
    // Read under the lock, not taken from the caller: the push loop's copy is usually stale, since
    // this process keeps publishing while the loop sleeps and fetches, and a stale guess costs a
    // whole merge thrown away by the compare-and-swap (measured: most sync rounds merged twice).
    const { local, tracking } = await readTips(target);
    const remote: BranchTips =
      'fetched' in remoteState
        ? { results: remoteState.fetched.results ? tracking.results : null, artifacts: remoteState.fetched.artifacts ? tracking.artifacts : null }
        : remoteState;
    const author = await syncIdent(repo, now());
    // Both branches merge at once (independent git processes): a sync round's latency is what
    // other publishers wait on when they converge.
    const outcomes = await Promise.all(BRANCHES.map((b) => integrateBranch(target, b, remote[b], local[b], author, opts.resolve)));
    const next: BranchTips = { results: outcomes[0]!.tip, artifacts: outcomes[1]!.tip };
    const conflicted = BRANCHES.filter((_, i) => outcomes[i]!.conflicts !== null);
    if (conflicted.length > 0) {
      const conflicts = outcomes.flatMap((o) => o.conflicts ?? []);
      return { kind: 'conflict', local, remote, conflicts, branches: conflicted, artifactsMerged: conflicted.includes('artifacts') ? null : next.artifacts };
    }
    const merges = outcomes.filter((o) => o.how === 'merged').length;
    const fastForwards = outcomes.filter((o) => o.how === 'fast-forward').length;
    const updates = [
      { ref: target.resultsRef, new: next.results, old: local.results },
      { ref: target.artifactsRef, new: next.artifacts, old: local.artifacts },
    ].filter((u) => u.new !== u.old);
    try {
      assertHeld();
      await updateRefs(repo, updates, { message: `agentv-results: sync with ${target.remote}` });
      return { kind: 'ready', before: local, local: next, remote, merges, fastForwards };
    } catch (err) {
      // Something that does not take the lock moved a ref while we merged: merge again from it.
      if (!(err instanceof RefConflictError) || round >= (opts.casRetries ?? 5)) throw err;
    }
  }
}

interface BranchOutcome {
  /** The new local tip. */
  tip: string | null;
  how: 'unchanged' | 'fast-forward' | 'merged';
  conflicts: PathConflict[] | null;
}

async function integrateBranch(
  target: PublishTarget,
  b: 'results' | 'artifacts',
  r: string | null,
  l: string | null,
  author: Ident,
  resolve?: PathResolver,
): Promise<BranchOutcome> {
  if (r === null || r === l) return { tip: l, how: 'unchanged', conflicts: null };
  if (l === null) return { tip: r, how: 'fast-forward', conflicts: null };
  const branch = (b === 'results' ? target.resultsRef : target.artifactsRef).slice('refs/heads/'.length);
  const merged = await mergeCommits(target.repo, {
    first: r,
    second: l,
    author,
    resolve,
    message: `Merge ${target.remote}/${branch} (agentv-results sync)\n\nFirst parent: what ${target.remote} had; second parent: results published here meanwhile.\n`,
  });
  switch (merged.kind) {
    case 'conflict':
      return { tip: l, how: 'unchanged', conflicts: merged.conflicts.map((c) => ({ ...c, path: b === 'artifacts' ? `${branch}:${c.path}` : c.path })) };
    case 'up-to-date':
      return { tip: merged.commit, how: 'fast-forward', conflicts: null };
    case 'merged':
      return { tip: merged.commit, how: 'merged', conflicts: null };
    default:
      // 'fast-forward': the remote is behind us; the push itself fast-forwards it.
      return { tip: l, how: 'unchanged', conflicts: null };
  }
}
