/**
 * Our two branches as this machine sees them: the local branch and its remote-tracking mirror
 * (refs/remotes/<remote>/<branch>), and the fetch that refreshes the mirror. Shared by `list`,
 * `status` and `pull`; nothing here moves a local branch.
 */
import { deleteRef, fetchRefs, resolveRef } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { firstFetchDepth, tipRelation, type TipRelation } from './team-tip.js';
import { describeAge, noteRemoteSeen, remoteSeenAt } from './remote-seen.js';
import { trackingRef } from './tracking-refs.js';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, monthOf } from '../layout/archive-refs.js';
import { ReadError } from '../errors/read-errors.js';
import type { PublishTarget } from './target.js';

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
    // A clone that never had the branch fetches its tip, not its history (team-tip.ts).
    const depth = await firstFetchDepth(
      target,
      branches.map((b) => b.ref),
    );
    result = await fetchRefs(target.repo, remote, specs, { timeoutMs: opts.timeoutMs ?? 60_000, depth });
  } catch (err) {
    if (err instanceof RemoteError) throw new ReadError(describeFetchFailure(remote, err), 'git');
    throw err;
  }
  await noteRemoteSeen(target.repo, remote);
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
  if (err.silence) return `${err.silence}; what this machine already has is unchanged — run again without --fetch to use it`;
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

export type { TipRelation } from './team-tip.js';

/**
 * What a read of a branch reads: the newest of the local branch and the
 * remote-tracking ref, i.e. the one that contains the other. When they diverged neither is newer:
 * both are read, the local one first, and the description says `sync` merges them.
 */
export interface ReadView {
  branch: string;
  /** `<remote>/<branch>`, or null without a remote. */
  tracking: string | null;
  tips: Tips;
  relation: TipRelation;
  /** The tip whose data wins where both have a run: the newer one (local when diverged or equal). */
  newest: 'local' | 'remote' | null;
  /** This command fetched the branch just now. */
  fetched: boolean;
  /** When a fetch or push of ours last reached the remote (ISO), or null when none is recorded. */
  remoteSeenAt: string | null;
  /** One line for people: what was read, and how fresh the remote side is. */
  description: string;
}

/** How the tips relate: repo/team-tip.ts, the one home of which tip a verb reads. */
export async function relationOf(target: PublishTarget, tips: Tips): Promise<TipRelation> {
  return tipRelation(target, tips.local, tips.remote);
}

/** The view of `b` a read should use, after an optional fetch (`fetched`). */
export async function readView(target: PublishTarget, b: BranchRefs, opts: { fetched: boolean; now?: Date }): Promise<ReadView> {
  const tips = await branchTips(target, b);
  const relation = await relationOf(target, tips);
  const seen = target.remote ? await remoteSeenAt(target.repo, target.remote) : null;
  const tracking = b.tracking ? b.tracking.slice('refs/remotes/'.length) : null;
  const newest: ReadView['newest'] = relation === 'none' ? null : relation === 'remote-ahead' || relation === 'remote-only' ? 'remote' : 'local';
  const short = (t: string | null) => (t ? t.slice(0, 12) : '');
  let what: string;
  switch (relation) {
    case 'none':
      what = `${b.name} does not exist here${tracking ? ` nor on ${tracking}` : ''}`;
      break;
    case 'local-only':
      what = `read ${b.name} (${short(tips.local)})${tracking ? `; ${tracking} has none` : ''}`;
      break;
    case 'remote-only':
      what = `read ${tracking} (${short(tips.remote)}); no local ${b.name}`;
      break;
    case 'same':
      what = `read ${b.name} (${short(tips.local)}), the same as ${tracking}`;
      break;
    case 'remote-ahead':
      what = `read ${tracking} (${short(tips.remote)}): newer than the local ${b.name} (${short(tips.local)}), which \`agentv-results sync\` brings up to date`;
      break;
    case 'local-ahead':
      what = `read ${b.name} (${short(tips.local)}): ahead of ${tracking} (${short(tips.remote)}) by results not pushed yet`;
      break;
    default:
      what = `read ${b.name} (${short(tips.local)}) and ${tracking} (${short(tips.remote)}): they diverged, the local one wins where both have a run; \`agentv-results sync\` merges them`;
  }
  let fresh = '';
  if (target.remote) {
    if (opts.fetched) fresh = `; ${target.remote} fetched just now`;
    else if (seen) fresh = `; ${target.remote} last seen ${describeAge(seen, opts.now)} (--fetch to refresh)`;
    else fresh = `; ${target.remote} never fetched by agentv-results here (--fetch to see what it has)`;
  }
  return { branch: b.name, tracking, tips, relation, newest, fetched: opts.fetched, remoteSeenAt: seen ? seen.toISOString() : null, description: what + fresh };
}
