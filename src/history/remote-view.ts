/**
 * Our two branches as this machine sees them: the local branch and its remote-tracking mirror
 * (refs/remotes/<remote>/<branch>), and the fetch that refreshes the mirror. Shared by `list`,
 * `status` and `pull`; nothing here moves a local branch.
 */
import { deleteRef, fetchRefs, RemoteError, resolveRef } from '../git/index.js';
import { trackingRef } from '../branch/refs.js';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, monthOf } from '../branch/archive-refs.js';
import { ReadError } from '../branch/read-errors.js';
import type { PublishTarget } from '../branch/target.js';

export type BranchKind = 'results' | 'artifacts';

export interface BranchRefs {
  kind: BranchKind;
  /** Short branch name, e.g. agentv/results/v1. */
  name: string;
  /** refs/heads/<name> */
  ref: string;
  /** refs/remotes/<remote>/<name>, or null when there is no remote. */
  tracking: string | null;
}

export function branchRefs(target: PublishTarget, kind: BranchKind): BranchRefs {
  const ref = kind === 'results' ? target.resultsRef : target.artifactsRef;
  return { kind, name: ref.slice('refs/heads/'.length), ref, tracking: target.remote ? trackingRef(target.remote, ref) : null };
}

/** The month archive branches a rolled-over run of this catalog day lives on (see src/archive). */
export function archiveBranchRefs(target: PublishTarget, day: string): { results: BranchRefs; artifacts: BranchRefs } {
  const month = monthOf(day);
  const of = (kind: BranchKind, ref: string): BranchRefs => ({
    kind,
    name: ref.slice('refs/heads/'.length),
    ref,
    tracking: target.remote ? trackingRef(target.remote, ref) : null,
  });
  return { results: of('results', ARCHIVE_RESULTS_PREFIX + month), artifacts: of('artifacts', ARCHIVE_ARTIFACTS_PREFIX + month) };
}

export interface Tips {
  local: string | null;
  remote: string | null;
}

export async function branchTips(target: PublishTarget, b: BranchRefs): Promise<Tips> {
  const [local, remote] = await Promise.all([resolveRef(target.repo, b.ref), b.tracking ? resolveRef(target.repo, b.tracking) : Promise.resolve(null)]);
  return { local, remote };
}

export interface FetchOutcome {
  /** Branches the remote has (their tracking refs now mirror it). */
  fetched: string[];
  /** Branches the remote does not have (a stale tracking ref of ours was removed). */
  missing: string[];
}

/**
 * Refreshes the tracking refs of `branches` from the remote in one `git fetch`. A branch the remote
 * no longer has loses its tracking ref (compare-and-swap), so `status` does not report a tip that
 * is gone. Failures become a ReadError of kind "git" that names the remote and what to do.
 */
export async function fetchBranches(target: PublishTarget, branches: BranchRefs[], opts: { timeoutMs?: number } = {}): Promise<FetchOutcome> {
  const remote = target.remote;
  if (remote === null) {
    throw new ReadError(`--fetch: ${target.repo.workTree ?? target.repo.gitDir} has no remote to fetch from (add one, or set results.remote)`, 'input');
  }
  const specs = branches.map((b) => `+${b.ref}:${b.tracking!}`);
  let result: Awaited<ReturnType<typeof fetchRefs>>;
  try {
    result = await fetchRefs(target.repo, remote, specs, { timeoutMs: opts.timeoutMs ?? 60_000 });
  } catch (err) {
    if (err instanceof RemoteError) throw new ReadError(describeFetchFailure(remote, err), 'git');
    throw err;
  }
  const missing = new Set(result.missing.map((m) => m.src));
  for (const b of branches) {
    if (!missing.has(b.ref)) continue;
    const stale = await resolveRef(target.repo, b.tracking!);
    // Best effort: a concurrent fetch that just recreated it knows better than we do.
    if (stale) await deleteRef(target.repo, b.tracking!, stale).catch(() => undefined);
  }
  return { fetched: branches.filter((b) => !missing.has(b.ref)).map((b) => b.name), missing: branches.filter((b) => missing.has(b.ref)).map((b) => b.name) };
}

export function describeFetchFailure(remote: string, err: RemoteError): string {
  const why =
    err.kind === 'unreachable'
      ? `${remote} is unreachable`
      : err.kind === 'auth'
        ? `${remote} refused our credentials (check your credential helper, token or ssh key)`
        : `fetching from ${remote} failed`;
  const detail = err.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^(fatal|error):/.test(l))[0];
  return `${why}${detail ? ` (${detail})` : ''}; what this machine already has is unchanged — run again without --fetch to use it`;
}
