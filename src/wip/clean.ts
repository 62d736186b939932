/**
 * Removing WIP branches, only when that loses nothing (ARCHITECTURE.md rule 3):
 *
 *  - finalizeWip: after a run's final publish, delete its WIP branch — but only once the publish is
 *    confirmed on the remote (the remote's results branch contains the run). Remote first, with a
 *    lease on the value we pushed, then the local ref by compare-and-swap. With no remote at all,
 *    the local publish is final and the local branch goes.
 *  - cleanWip (`wip clean`): stale branches (last checkpoint older than a threshold) whose run is
 *    published on the remote; unpublished ones only with forceUnpublished, reported one by one.
 */
import { deleteRef, fetchRefs, isAncestor, lsRemote, lsTree, readBlobs, resolveRef, type Repo } from '../git/index.js';
import { RefConflictError, RemoteError } from '../errors/git-errors.js';
import { runLocation } from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { deleteRemoteWip, DEFAULT_WIP_NETWORK_TIMEOUT_MS, wipTrackingRef } from './remote.js';
import { listWip, type WipEntry } from './list.js';

const resultsTrackingRef = trackingRef;

/** Branch path of a run on the results branch, or null when the run id cannot be a location. */
export function runPathOf(runId: string): string | null {
  try {
    return runLocation(runId).path;
  } catch (err) {
    if (err instanceof LayoutError) return null;
    throw err;
  }
}

async function holdsRun(repo: Repo, commit: string | null, runPath: string): Promise<boolean> {
  if (commit === null) return false;
  return (await lsTree(repo, commit, { path: runPath })).length > 0;
}

/**
 * Is the run a WIP branch records (its wip.json `run_id`) on the results branch at `commit`? A
 * workspace checkpoints as `<experiment>/<timestamp>` (its folder pair) but publishes under
 * AgentV's bare run id, the folder name (`<timestamp>/` at the branch root, the experiment in
 * summary.json). Both places are looked at; the bare one counts only when its summary names the
 * same experiment, so a same-named run of another experiment never passes for this one.
 */
export async function holdsWipRun(repo: Repo, commit: string | null, runId: string): Promise<boolean> {
  if (commit === null) return false;
  const own = runPathOf(runId);
  if (own !== null && (await holdsRun(repo, commit, own))) return true;
  const parts = runId.split('/');
  if (parts.length !== 2) return false;
  const [experiment, name] = parts as [string, string];
  const bare = runPathOf(name);
  if (bare === null || bare === own) return false;
  const spec = `${commit}:${bare}/summary.json`;
  const blob = (await readBlobs(repo, [spec])).get(spec);
  if (!blob) return false;
  try {
    const s = JSON.parse(blob.toString('utf8')) as { experiment?: unknown; metadata?: { experiment?: unknown } };
    // `.agentv/results/<run_id>/` (parent "results"): the folder name alone is the run.
    if (experiment === 'results') return true;
    return s.experiment === experiment || s.metadata?.experiment === experiment;
  } catch {
    // unparsable: a summary that does not parse names no experiment
    return false;
  }
}

export interface RemoteResultsView {
  /** The remote's results tip as of now (or as last fetched when `stale`). */
  tip: string | null;
  stale: boolean;
  error: string | null;
}

/** Fetch the remote's results branch into its tracking ref; offline, fall back to the last fetch. */
export async function remoteResults(repo: Repo, remote: string, resultsRef: string, opts: { timeoutMs?: number } = {}): Promise<RemoteResultsView> {
  const tracking = resultsTrackingRef(remote, resultsRef);
  try {
    const r = await fetchRefs(repo, remote, [`+${resultsRef}:${tracking}`], { timeoutMs: opts.timeoutMs ?? DEFAULT_WIP_NETWORK_TIMEOUT_MS });
    if (r.missing.length > 0) return { tip: null, stale: false, error: null };
    return { tip: await resolveRef(repo, tracking), stale: false, error: null };
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
    return { tip: await resolveRef(repo, tracking), stale: true, error: `${remote} could not be reached (${err.kind})` };
  }
}

/**
 * Is the run on the remote's results branch right now? Cheap path: the remote tip (ls-remote) is a
 * commit we have and contains `resultsCommit`; otherwise fetch and look for the run's directory.
 * Network failure means "not confirmed" (never "yes").
 */
export async function confirmPublished(
  repo: Repo,
  remote: string,
  resultsRef: string,
  runPath: string,
  resultsCommit: string | null,
  opts: { timeoutMs?: number } = {},
): Promise<boolean> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WIP_NETWORK_TIMEOUT_MS;
  let remoteTip: string | null;
  try {
    remoteTip = (await lsRemote(repo, remote, [resultsRef], { timeoutMs })).find((e) => e.ref === resultsRef)?.sha ?? null;
  } catch (err) {
    if (err instanceof RemoteError) return false;
    throw err;
  }
  if (remoteTip === null) return false;
  if (resultsCommit !== null && (await resolveRef(repo, `${remoteTip}^{commit}`)) !== null && (await isAncestor(repo, resultsCommit, remoteTip))) return true;
  const view = await remoteResults(repo, remote, resultsRef, { timeoutMs });
  if (view.stale) return false;
  return holdsRun(repo, view.tip, runPath);
}

export interface DeleteOutcome {
  deletedLocal: boolean;
  deletedRemote: boolean;
  /** Set when something was deliberately left in place. */
  note: string | null;
}

/**
 * Deletes a WIP branch locally and on the remote. The remote copy goes only if it is ours (the
 * local tip or an ancestor of it: a checkpoint we pushed), under a lease on exactly that value; the
 * local ref only if it still is `local` (a checkpoint landing meanwhile keeps it).
 */
export async function deleteWipBranch(
  repo: Repo,
  remote: string | null,
  ref: string,
  opts: { local?: string | null; timeoutMs?: number } = {},
): Promise<DeleteOutcome> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WIP_NETWORK_TIMEOUT_MS;
  const local = opts.local === undefined ? await resolveRef(repo, ref) : opts.local;
  let deletedRemote = false;
  let note: string | null = null;
  if (remote !== null) {
    const onRemote = (await lsRemote(repo, remote, [ref], { timeoutMs })).find((e) => e.ref === ref)?.sha ?? null;
    if (onRemote !== null) {
      const known = (await resolveRef(repo, `${onRemote}^{commit}`)) !== null;
      const ours = local === null ? known : local === onRemote || (known && (await isAncestor(repo, onRemote, local)));
      if (!ours) {
        note = `${ref.slice('refs/heads/'.length)} moved on ${remote} (another machine continued the run?); left in place there`;
      } else {
        const r = await deleteRemoteWip(repo, remote, ref, onRemote, { timeoutMs });
        if (!r.deleted) return { deletedLocal: false, deletedRemote: false, note: r.message };
        deletedRemote = true;
      }
    }
  }
  let deletedLocal = false;
  if (local !== null) {
    try {
      await deleteRef(repo, ref, local, { message: 'agentv-results: wip branch no longer needed' });
      deletedLocal = true;
    } catch (err) {
      if (!(err instanceof RefConflictError)) throw err;
      note = `${ref.slice('refs/heads/'.length)} received a new checkpoint meanwhile; kept locally`;
    }
  }
  return { deletedLocal, deletedRemote, note };
}

export interface FinalizeOptions {
  repo: Repo;
  remote: string | null;
  /** The WIP ref (refs/heads/agentv/wip/...). */
  ref: string;
  resultsRef: string;
  /** The run's path on the results branch (PublishResult.location.path). */
  runPath: string;
  /** The results commit of the publish (speeds up confirmation). */
  resultsCommit?: string | null;
  timeoutMs?: number;
}

export interface FinalizeOutcome extends DeleteOutcome {
  /** deleted: gone (or never existed); waiting: the publish is not confirmed on the remote yet. */
  status: 'deleted' | 'waiting' | 'kept';
}

/** Delete a run's WIP branch once its final publish is confirmed on the remote (or there is no remote). */
export async function finalizeWip(opts: FinalizeOptions): Promise<FinalizeOutcome> {
  const { repo, remote, ref } = opts;
  if (remote !== null) {
    const confirmed = await confirmPublished(repo, remote, opts.resultsRef, opts.runPath, opts.resultsCommit ?? null, { timeoutMs: opts.timeoutMs });
    if (!confirmed) return { status: 'waiting', deletedLocal: false, deletedRemote: false, note: `the publish is not on ${remote} yet` };
  } else if (!(await holdsRun(repo, await resolveRef(repo, opts.resultsRef), opts.runPath))) {
    return { status: 'waiting', deletedLocal: false, deletedRemote: false, note: 'the run is not on the local results branch' };
  }
  try {
    const out = await deleteWipBranch(repo, remote, ref, { timeoutMs: opts.timeoutMs });
    return { ...out, status: out.note ? 'kept' : 'deleted' };
  } catch (err) {
    if (err instanceof RemoteError)
      return { status: 'waiting', deletedLocal: false, deletedRemote: false, note: `${remote} could not be reached (${err.kind})` };
    throw err;
  }
}

export interface CleanOptions {
  repo: Repo;
  remote: string | null;
  resultsRef: string;
  /** Only branches whose last checkpoint is older than this. */
  olderThanMs: number;
  forceUnpublished?: boolean;
  dryRun?: boolean;
  now?: Date;
  timeoutMs?: number;
}

export interface CleanDecision {
  branch: string;
  runId: string | null;
  rows: number | null;
  ageSeconds: number | null;
  local: string | null;
  remote: string | null;
  /** true: on the remote results branch; false: not; null: could not be told. */
  published: boolean | null;
  action: 'deleted' | 'would-delete' | 'kept';
  reason: string;
}

export interface CleanResult {
  decisions: CleanDecision[];
  remoteError: string | null;
}

export async function cleanWip(opts: CleanOptions): Promise<CleanResult> {
  const { repo, remote } = opts;
  const listing = await listWip({ repo, remote, timeoutMs: opts.timeoutMs, now: opts.now });
  let resultsTip: string | null;
  let remoteError = listing.remoteError;
  let confirmable = true;
  if (remote !== null) {
    const view = await remoteResults(repo, remote, opts.resultsRef, { timeoutMs: opts.timeoutMs });
    resultsTip = view.tip;
    if (view.stale) {
      // Last-known remote state is still a confirmation for what it contains; absence proves nothing.
      confirmable = false;
      remoteError = remoteError ?? view.error;
    }
  } else {
    resultsTip = await resolveRef(repo, opts.resultsRef);
  }
  const decisions: CleanDecision[] = [];
  for (const e of listing.entries) decisions.push(await decide(e, opts, resultsTip, confirmable, remoteError !== null));
  return { decisions, remoteError };
}

async function decide(e: WipEntry, opts: CleanOptions, resultsTip: string | null, confirmable: boolean, offline: boolean): Promise<CleanDecision> {
  const base = { branch: e.branch, runId: e.runId, rows: e.rows, ageSeconds: e.ageSeconds, local: e.local, remote: e.remote };
  const olderThanS = opts.olderThanMs / 1000;
  if (e.ageSeconds !== null && e.ageSeconds < olderThanS) return { ...base, published: null, action: 'kept', reason: 'recent' };
  const onRemote = e.runId !== null && (await holdsWipRun(opts.repo, resultsTip, e.runId));
  const published: boolean | null = onRemote ? true : confirmable ? false : null;
  if (!onRemote && !opts.forceUnpublished) {
    return { ...base, published, action: 'kept', reason: published === null ? 'cannot confirm it is published (remote unreachable)' : 'not published' };
  }
  const reason = onRemote ? 'published' : 'NOT published (--force-unpublished)';
  if (opts.dryRun) return { ...base, published, action: 'would-delete', reason };
  if (offline && e.remote !== null) return { ...base, published, action: 'kept', reason: 'remote unreachable: cannot delete its copy' };
  try {
    const out = await deleteWipBranch(opts.repo, opts.remote, e.ref, { local: e.local, timeoutMs: opts.timeoutMs });
    if (out.note) return { ...base, published, action: out.deletedLocal || out.deletedRemote ? 'deleted' : 'kept', reason: `${reason}; ${out.note}` };
    return { ...base, published, action: 'deleted', reason };
  } catch (err) {
    if (err instanceof RemoteError) return { ...base, published, action: 'kept', reason: `${opts.remote} could not be reached (${err.kind})` };
    throw err;
  }
}

export { wipTrackingRef };
