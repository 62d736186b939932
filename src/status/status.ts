/**
 * `status`: where this machine's results and artifacts branches stand against the remote's, and
 * whether anything is waiting to be pushed.
 *
 * The remote side is the remote-tracking ref (refs/remotes/<remote>/<branch>): what the last fetch
 * or push saw. `--fetch` refreshes it first; without it, status never touches the network.
 *
 * This module computes the branches' part; the sections of other features (WIP branches, the
 * daemon's outbox, sync fallbacks, an interrupted update) are passed in by the caller, no global
 * registry: the public `status()` (status/status-sections.ts, the one layer that can see them all)
 * passes every one, so the library returns exactly what the CLI prints. Each section's value lands
 * in `report.extra[name]`; a section that fails is reported as `{ error }` instead of failing the
 * whole command.
 */
import { aheadBehind } from '../git/index.js';
import { flag, objectOf, parseOptions, TargetFieldsDirLast } from '../options/verb-options.js';
import * as z from 'zod';
import { redactUrl } from '../errors/redact.js';
import { ReadError } from '../errors/read-errors.js';
import { remoteSeenAt } from '../repo/remote-seen.js';
import { checkListing, DEFAULT_MAX_LISTING_BYTES, listingWarning } from '../layout/listing-budget.js';
import { branchRefs, branchTips, fetchBranches, type BranchKind, type BranchRefs } from '../repo/remote-view.js';
import { chooseLayout, type LayoutChoice } from '../layout/layout-choice.js';
import { findDuplicateRuns, type DuplicateRun } from '../layout/duplicate-runs.js';
import { teamTip } from '../repo/team-tip.js';
import { resolveTarget, targetRemoteUrl, withRefView, type PublishTarget } from '../repo/target.js';

export type BranchState = 'in-sync' | 'ahead' | 'behind' | 'diverged' | 'local-only' | 'remote-only' | 'missing';

export interface BranchStatus {
  kind: BranchKind;
  /** Short branch name (agentv/results/v1). */
  name: string;
  /** Local tip, or null when the branch does not exist here. */
  local: string | null;
  /** Remote-tracking tip, or null (no remote, never fetched or pushed, or the remote lacks it). */
  remote: string | null;
  /** Commits the local branch has that the remote lacks. */
  ahead: number;
  /** Commits the remote has that the local branch lacks. */
  behind: number;
  state: BranchState;
}

/** The branches' part of `status` and the sections' values by name (the public, typed report is `StatusReport` in status/status-sections.ts). */
export interface CoreStatusReport {
  /** The repository's worktree (or git dir when bare / managed). */
  repo: string;
  /** Remote name, or null when there is none to push to. */
  remote: string | null;
  /** The remote's URL with any user:password removed, or null. */
  remoteUrl: string | null;
  managed: boolean;
  /** The `projects[]` entry of the configuration whose settings apply, if any. */
  project: string | null;
  branches: BranchStatus[];
  /** Something local has not reached the remote (a later publish or `sync` pushes it). */
  pending: boolean;
  /** When a fetch or push of ours last reached the remote (ISO): how old the remote side shown is. Null when none is recorded. */
  remoteSeenAt: string | null;
  /**
   * The live listing of the results branch (the newest of local and remote-tracking) against the
   * listing budget, whichever tool wrote its runs; `warning` is set when it is past the budget.
   */
  listing: { bytes: number; max: number; over: boolean; complete: boolean; warning: string | null } | null;
  /** With --fetch: what the fetch did, or why it failed (the rest is then as of the last fetch). */
  fetch: { ok: true; missing: string[] } | { ok: false; message: string } | null;
  /** Which AgentV's branch layout the next publish writes, and why (layout/layout-choice.ts). */
  layout: LayoutChoice;
  /**
   * Runs the results branch (the team's tip) holds twice, at the root and under AgentV 4.42's
   * `runs/` (layout/duplicate-runs.ts): `sync` removes the second copy.
   */
  duplicates: DuplicateRun[];
  /** The sections the caller passed, by name (a section that returned undefined is absent). */
  extra: Record<string, unknown>;
}

export interface StatusContext {
  target: PublishTarget;
  /** The core report so far (branches, pending, fetch), read-only. */
  report: Readonly<Omit<CoreStatusReport, 'extra'>>;
  /** True when --fetch refreshed the tracking refs (sections may then trust them as current). */
  fetched: boolean;
}

/**
 * Computes one section. Return undefined to omit the section. A returned object with
 * `pending: true` marks the whole report as pending (e.g. an outbox with queued runs).
 */
export type StatusSection = (ctx: StatusContext) => unknown | Promise<unknown>;

/** Sections by name, computed in this order after the branches' part. */
export type StatusSections = Readonly<Record<string, StatusSection>>;

export function branchState(local: string | null, remote: string | null, ahead: number, behind: number): BranchState {
  if (local === null) return remote === null ? 'missing' : 'remote-only';
  if (remote === null) return 'local-only';
  if (ahead === 0 && behind === 0) return 'in-sync';
  if (behind === 0) return 'ahead';
  if (ahead === 0) return 'behind';
  return 'diverged';
}

async function branchStatus(target: PublishTarget, b: BranchRefs): Promise<BranchStatus> {
  const { local, remote } = await branchTips(target, b);
  let ahead = 0;
  let behind = 0;
  if (local && remote && local !== remote) ({ ahead, behind } = await aheadBehind(target.repo, local, remote));
  return { kind: b.kind, name: b.name, local, remote, ahead, behind, state: branchState(local, remote, ahead, behind) };
}

// One redaction for every printed URL (errors/redact.ts); re-exported where it always lived.
export { redactUrl };

/** `status`'s options, parsed at its door (the `status` command's flags come from the same fields, in this order). */
export const StatusOptionsSchema = z.strictObject({
  /** Refresh the remote-tracking refs first (network). */
  fetch: z.boolean().default(false).meta(flag('--fetch', 'Fetch both branches from the remote first (otherwise no network is used)')),
  ...TargetFieldsDirLast,
  timeoutMs: z.number().positive().optional(),
  /** @internal A target resolved once by a reader that asks many questions (repo/target.ts `resolved`). */
  resolved: objectOf<PublishTarget>().optional(),
});

/** What a caller passes (a target resolved once is the package's own: internal). */
export interface StatusOptions extends Omit<z.input<typeof StatusOptionsSchema>, 'resolved'> {
  /** @internal */
  resolved?: PublishTarget;
}

/** The branches against the remote, then each of `sections` (see the module comment). */
export async function statusWithSections(options: StatusOptions = {}, sections: StatusSections = {}): Promise<CoreStatusReport> {
  // The door of `status` (status-sections.ts passes its options through unparsed).
  const opts = parseOptions('status', StatusOptionsSchema, options);
  const resolved = await resolveTarget(opts);
  const refs = [branchRefs(resolved, 'results'), branchRefs(resolved, 'artifacts')];
  let fetch: CoreStatusReport['fetch'] = null;
  if (opts.fetch) {
    try {
      const f = await fetchBranches(resolved, refs, { timeoutMs: opts.timeoutMs });
      fetch = { ok: true, missing: f.missing };
    } catch (err) {
      // Still worth showing what this machine knows; the CLI exits non-zero after printing it.
      if (!(err instanceof ReadError)) throw err;
      fetch = { ok: false, message: err.message };
    }
  }
  // Every ref this report reads, in one process (after the fetch: that moved some).
  const target = await withRefView(resolved);
  const branches = await Promise.all(refs.map((b) => branchStatus(target, b)));
  // Without a remote nothing can be waiting for one: a local-only branch is simply local.
  const pending = target.remote !== null && branches.some((b) => b.state === 'ahead' || b.state === 'diverged' || b.state === 'local-only');
  const url = await targetRemoteUrl(target);
  const results = branches.find((b) => b.kind === 'results')!;
  // The team's tip (repo/team-tip.ts): what the next publish decides from.
  const team = await teamTip(target);
  const layout = await chooseLayout(target.repo, team.tips, target.config.layout);
  const seen = target.remote ? await remoteSeenAt(target.repo, target.remote) : null;
  const liveTip = team.tip;
  const max = target.config.archive?.max_listing_bytes ?? DEFAULT_MAX_LISTING_BYTES;
  let listing: CoreStatusReport['listing'] = null;
  if (liveTip && max > 0) {
    const check = await checkListing(target.repo, liveTip, max);
    listing = { ...check, warning: check.over ? listingWarning(results.name, check) : null };
  }
  // Only a tip with runs of both layouts can hold one twice: the layout choice has counted them
  // (or, with a configured layout, not looked), so a single-layout branch costs no git process here.
  const bothLayouts = layout.runs === null ? target.config.layout !== 'auto' : layout.runs.stable > 0 && layout.runs.next > 0;
  const duplicates = liveTip && bothLayouts ? await findDuplicateRuns(target.repo, liveTip) : [];
  const core: Omit<CoreStatusReport, 'extra'> = {
    layout,
    duplicates,
    repo: target.repo.workTree ?? target.repo.gitDir,
    remote: target.remote,
    remoteUrl: url === null ? null : redactUrl(url),
    managed: target.managed,
    project: target.project,
    branches,
    pending,
    remoteSeenAt: seen ? seen.toISOString() : null,
    listing,
    fetch,
  };
  const ctx: StatusContext = { target, report: core, fetched: fetch?.ok === true };
  const extra: Record<string, unknown> = {};
  let extraPending = false;
  const entries = Object.entries(sections);
  const values = await Promise.all(
    entries.map(async ([, fn]) => {
      try {
        return await fn(ctx);
      } catch (err) {
        // Swallowed on purpose: one failing section is shown as { error } and the rest of status still answers.
        return { error: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  entries.forEach(([name], i) => {
    const v = values[i];
    if (v === undefined) return;
    extra[name] = v;
    if (v !== null && typeof v === 'object' && (v as { pending?: unknown }).pending === true) extraPending = true;
  });
  return { ...core, pending: pending || extraPending, extra };
}
