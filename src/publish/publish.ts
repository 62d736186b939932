/**
 * `publish`: put a finished run on the results branch (metadata) and the artifacts branch (heavy
 * payloads) of a repository without touching its checkout, then push when asked.
 *
 *   lock -> derive what is missing -> split -> commit artifacts, commit results -> CAS both refs
 *   -> unlock -> push both branches atomically (never forced)
 *
 * A push that does not land leaves the run committed locally and pending: `status` shows it and
 * the next publish or `sync` pushes it. With require_push a push that did not land is exit 3.
 */
import { configGetMany, gcAuto, RemoteError, resolveRef, type GcConfig, type Ident } from '../git/index.js';
import { adoptTeamTips, isShallow, teamTip } from '../repo/team-tip.js';
import { remoteSeenAt } from '../repo/remote-seen.js';
import { fetchBothBranches } from '../sync/integrate.js';
import { checkListing, DEFAULT_MAX_LISTING_BYTES, listingWarning } from '../layout/listing-budget.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { repairInterrupted } from '../git/ref-recovery.js';
import { runLocation, type RunLocation } from '../layout/branch-layout.js';
import { isAgentvWorkspace, prepareAgentvRun, prepareRun, publishDerivation } from './prepare.js';
import { openRun, type RunHandle } from '../runs/read/run-handle.js';
import { agentvRunFiles } from './agentv-run.js';
import { commitStableRun } from './stable-publish.js';
import { stableRunFiles, type StableRunFile } from './stable-shape.js';
import { chooseLayout, heldLayouts, layoutName, type LayoutChoice } from '../layout/layout-choice.js';
import type { BranchLayout } from '../layout/branch-layout.js';
import { splitRun, type SplitFile } from './split.js';
import { offloadPayloads } from './offload.js';
import { objectStoreFor } from '../repo/storage.js';
import { AGENTV_ARTIFACTS_REF_NAME } from './agentv-run.js';
import { refuseInvalidRun } from './validate-gate.js';
import { catalogRow, commitRun, type CommitRunResult } from './commit-run.js';
import { PublishError, resolveTarget, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { pushBranches, type PushOutcome } from '../sync/push-branches.js';
import { diskErrorOf } from '../errors/errors.js';
import { checkOptions, fnOf, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { endWipAfterPublish, type EndedWip } from '../wip/index.js';
import { basename, dirname, resolve } from 'node:path';

/** `publish`'s options, checked when it is called. */
export const PublishOptionsSchema = z.object({
  ...TargetFields,
  /** A run workspace, its index.jsonl, or a results JSONL file (exported first). */
  run: z.string(),
  /** true/false force; undefined follows results.auto_push. */
  push: z.boolean().optional(),
  requirePush: z.boolean().optional(),
  message: z.string().optional(),
  experiment: z.string().optional(),
  /** Publish a run `validate` rejects (path checks still apply). */
  allowInvalid: z.boolean().optional(),
  /** Commit time (tests); defaults to now. */
  now: fnOf<() => Date>().optional(),
  /** Told each step as it starts (reading the run, committing its files, pushing): the CLI's progress line. */
  onStep: fnOf<(step: string) => void>().optional(),
});

export type PublishOptions = TargetOptions & Omit<z.infer<typeof PublishOptionsSchema>, keyof TargetOptions>;

export interface PublishResult {
  runId: string;
  location: RunLocation;
  runDir: string;
  derived: boolean;
  status: CommitRunResult['status'];
  commits: { results: string; artifacts: string };
  counts: { total: number; passed: number; failed: number; payloads: number; metadata: number };
  push: PushOutcome | null;
  /** Rows of the run already on the branch that this workspace lacked (another shard's): kept, never dropped. */
  keptRows: number;
  /** The run's WIP branches this publish ended (deleted once the run reached the remote) or kept, and why. */
  wip: EndedWip[];
  /** Which AgentV's branch layout the run was written in, and why (layout/layout-choice.ts). */
  layout: LayoutChoice;
  target: { repo: string; resultsBranch: string; artifactsBranch: string; remote: string | null };
  /**
   * The live listing of the results branch after this publish (every run on it, whoever wrote it)
   * against the listing budget; `warning` says what to run when it is past it. Null when the budget
   * is off (0) or nothing was committed.
   */
  listing?: { bytes: number; max: number; over: boolean; complete: boolean; warning: string | null } | null;
  /** `storage_mode: hybrid`: payloads the run points at in the bucket, how many this publish sent, their bytes; null in git-native mode. */
  stored?: { objects: number; uploaded: number; bytes: number; where: string } | null;
}

/** Who the commits are by, and gc's thresholds for after the publish: one config read for both. */
async function publishConfig(target: PublishTarget, now: Date): Promise<{ author: Ident; gc: GcConfig }> {
  const c = await configGetMany(target.repo, ['user.name', 'user.email', 'gc.auto', 'gc.autoPackLimit']);
  return {
    author: { name: c.get('user.name') ?? 'agentv-results', email: c.get('user.email') ?? 'agentv-results@localhost', date: now },
    gc: { auto: c.get('gc.auto'), autoPackLimit: c.get('gc.autoPackLimit') },
  };
}

/**
 * AgentV's commit title (`feat(results): <experiment> - <passed>/<total> PASS (<mean score>)`) and
 * its `AgentV-Run: <run directory>` trailer, so `git log` reads the same whichever tool published.
 * `passed` is our verdict count (README "Working with AgentV" says how it differs from AgentV's).
 */
export function commitMessage(loc: RunLocation, counts: { total: number; passed: number; meanScore?: number }, targets: string[], custom?: string): string {
  const mean = counts.meanScore ?? (counts.total === 0 ? 0 : counts.passed / counts.total);
  const title = custom ?? `feat(results): ${loc.experiment} - ${counts.passed}/${counts.total} PASS (${mean.toFixed(3)})`;
  return `${title}\n\nRun ${loc.runId} on ${targets.join(', ') || 'no target'}: ${counts.passed} of ${counts.total} passed.\n\nAgentV-Run: ${loc.path}\n`;
}

function meanScore(rows: { score?: unknown }[]): number {
  const scores = rows.map((r) => r.score).filter((s): s is number => typeof s === 'number' && Number.isFinite(s));
  return scores.length === 0 ? 0 : scores.reduce((a, b) => a + b, 0) / scores.length;
}

function summaryTimestamp(summary: Record<string, unknown> | null): string | undefined {
  const meta = summary?.metadata as Record<string, unknown> | undefined;
  const t = meta?.timestamp ?? summary?.timestamp;
  return typeof t === 'string' ? t : undefined;
}

/** An AgentV 5.x workspace's files for each branch, as AgentV's auto_push lays them out (agentv-run.ts). */
function agentvSplit(dir: string, runPath: string): { metadata: SplitFile[]; payloads: SplitFile[] } {
  const files = agentvRunFiles(dir, runPath);
  return { metadata: files.results, payloads: files.payloads };
}

/** Publish a run to the results and artifacts branches (validated, committed once, pushed when asked), as `agentv-results publish` does. */
export async function publish(opts: PublishOptions): Promise<PublishResult> {
  checkOptions('publish', PublishOptionsSchema, opts);
  const target = await resolveTarget(opts);
  // The run is opened once, here (runs/read/run-handle.ts): validation, derivation, the split and
  // the commit all read it through this handle, and its scratch copy goes when the publish ends.
  const run = await openRun(opts.run, { cwd: opts.cwd, keepContents: true, derive: publishDerivation(opts.experiment) });
  try {
    return await publishRun(target, run, opts);
  } catch (err) {
    // A full or read-only disk, said with where it was writing (a branch moves only by its last compare-and-swap).
    throw diskErrorOf(err, `the run ${opts.run} into ${target.repo.commonDir} (its git data, or the run's scratch copy)`);
  } finally {
    await run.dispose();
  }
}

async function publishRun(target: PublishTarget, handle: RunHandle, opts: PublishOptions): Promise<PublishResult> {
  const { repo, config } = target;
  // Who the commits are by does not depend on the branch: read it before taking the lock, which a
  // sync round in this or another process may be waiting for.
  const settings = publishConfig(target, opts.now?.() ?? new Date());
  // observed: settings is awaited below; this only keeps an early rejection from being unhandled
  settings.catch(() => {});
  // One gate for every layout a publish writes (a 4.42 run too: our validate reads its layout).
  // Reads only the user's run: before the lock, so other publishers do not wait for it.
  if (!opts.allowInvalid) await refuseInvalidRun(handle);
  await firstSightOfRemote(target, opts);
  // The layout the team's AgentV reads; AgentV 4.42's is written beside this path (stable-publish.ts).
  const stable = await publishIfStableLayout(target, opts, handle, settings);
  if (stable.result) return afterCommit(target, opts, stable.result, settings);
  const layout = stable.layout;
  const lock = await acquirePublishLock(repo.commonDir);
  let result: PublishResult;
  try {
    // Before reading the tips: a kill during an earlier ref update may have left a half-moved pair.
    await repairInterrupted(repo, [target.resultsRef, target.artifactsRef]);
    opts.onStep?.('reading the run');
    const agentvDir = isAgentvWorkspace(handle) ? handle.dir : null;
    const run = agentvDir ? await prepareAgentvRun(handle, { experiment: opts.experiment }) : await prepareRun(handle, { experiment: opts.experiment });
    const location = runLocation(run.runId, { experiment: run.experiment, timestamp: summaryTimestamp(run.summary) });
    let split = agentvDir
      ? agentvSplit(agentvDir, location.path)
      : await splitRun(run.dir, run.rows, {
          runPath: location.path,
          artifactsRef: target.artifactsRef,
          threshold: config.heavy_threshold_bytes,
          tree: handle.tree && handle.tree.root === run.dir ? handle.tree : undefined,
        });
    // hybrid: the payloads go to the bucket first; the commit below then carries only pointers.
    const store = objectStoreFor(config);
    let stored: PublishResult['stored'] = null;
    if (store) {
      try {
        const off = await offloadPayloads(split, store, [config.artifacts_branch, AGENTV_ARTIFACTS_REF_NAME], opts.onStep);
        split = off;
        stored = { objects: off.stored, uploaded: off.uploaded, bytes: off.bytes, where: store.where };
      } finally {
        await store.close();
      }
    }
    // Counted from the reader's rows (one per test and attempt), not the manifest's lines.
    const catalog = catalogRow(location, run.summary, run.rows);
    opts.onStep?.(`committing ${split.metadata.length + split.payloads.length} files`);
    const committed = await commitRun({
      repo,
      resultsRef: target.resultsRef,
      artifactsRef: target.artifactsRef,
      location,
      metadata: split.metadata,
      payloads: split.payloads,
      // AgentV's publish replaces the run's directory with the workspace's files: so do we for its runs.
      replaceRun: agentvDir !== null,
      catalog,
      message: commitMessage(location, { ...catalog, meanScore: meanScore(run.rows) }, catalog.targets, opts.message),
      author: (await settings).author,
      beforeRefUpdate: () => lock.assertHeld(),
    });
    result = {
      runId: run.runId,
      location,
      runDir: run.dir,
      derived: run.derived,
      status: committed.status,
      commits: { results: committed.results.after, artifacts: committed.artifacts.after },
      counts: {
        total: committed.catalog.total,
        passed: committed.catalog.passed,
        failed: committed.catalog.failed,
        payloads: split.payloads.length,
        metadata: split.metadata.length,
      },
      keptRows: committed.keptRows,
      push: null,
      wip: [],
      layout,
      stored,
      target: { repo: repo.workTree ?? repo.gitDir, resultsBranch: config.branch, artifactsBranch: config.artifacts_branch, remote: target.remote },
    };
  } finally {
    await lock.release();
  }
  return afterCommit(target, opts, result, settings);
}

/**
 * A publish that pushes from a clone that never heard from the remote and has no results branch
 * of its own (a depth-1 CI checkout has no remote-tracking ref of it) fetches it first, so the layout, the catalog and the
 * run's rows are decided on the tip the push goes onto, not on an empty branch. Offline is fine:
 * the push then reports it.
 */
async function firstSightOfRemote(target: PublishTarget, opts: PublishOptions): Promise<void> {
  const wantPush = opts.push ?? (target.config.auto_push || (opts.requirePush ?? target.config.require_push));
  if (!wantPush || target.remote === null) return;
  // Remote-tracking refs are kept only under refs/remotes/<remote>/agentv/: a branch named outside
  // agentv/ (allowed in config) has none to fetch into, and its push decides as before.
  if (![target.resultsRef, target.artifactsRef].every((r) => r.startsWith('refs/heads/agentv/'))) return;
  const known = await teamTip(target);
  if (known.remote !== null || known.local !== null || (await remoteSeenAt(target.repo, target.remote)) !== null) return;
  try {
    await fetchBothBranches(target);
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
  }
}

/** After the commit, outside the lock: gc, the push, the end of the run's WIP. */
async function afterCommit(target: PublishTarget, opts: PublishOptions, result: PublishResult, settings: Promise<{ gc: GcConfig }>): Promise<PublishResult> {
  const { repo, config } = target;
  // Packs accumulate one per publish; gc --auto repacks only past git's thresholds.
  if (result.status !== 'already-published') await gcAuto(repo, { config: (await settings).gc }).catch(() => {});
  const maxListing = config.archive?.max_listing_bytes ?? DEFAULT_MAX_LISTING_BYTES;
  if (result.status !== 'already-published' && maxListing > 0) {
    // Reads at most the budget's worth of listing: the check costs little however large the branch.
    const check = await checkListing(repo, result.commits.results, maxListing);
    result.listing = { ...check, warning: check.over ? listingWarning(config.branch, check) : null };
  }

  const wantPush = opts.push ?? config.auto_push;
  const requirePush = opts.requirePush ?? config.require_push;
  if (wantPush || requirePush) {
    if (target.remote === null) {
      result.push = {
        landed: false,
        classification: 'no-remote',
        message: `no remote to push to: ${repo.workTree ?? repo.gitDir} has none (set results.remote or add one)`,
        attempts: 0,
      };
    } else {
      opts.onStep?.(`pushing to ${target.remote}`);
      result.push = await pushBranches(target);
    }
    // A conflict set aside on a sync branch is exit 1 (the CLI), not a failed push.
    if (requirePush && !result.push.landed && result.push.classification !== 'conflict') {
      const error = new PublishError(`${result.push.message}; the run is committed locally and pending (run \`agentv-results sync\` to retry)`);
      (error as PublishError & { result?: PublishResult }).result = result;
      throw error;
    }
  }
  // The final publish on the remote (or, with no remote at all, on this machine) ends the run's WIP.
  if (target.remote === null || result.push?.landed) result.wip = await endWip(target, result, opts);
  return result;
}

/** The run directory, experiment and timestamp when `run` names a run of AgentV 4.42's local layout; null otherwise. */
function stableRunSource(run: RunHandle): { dir: string; experiment: string; timestamp: string } | null {
  const dir = run.dir;
  if (dir === null || run.layout !== 'agentv-stable') return null;
  return { dir, experiment: basename(dirname(dir)), timestamp: basename(dir) };
}

/**
 * A run's identity on the branch, whichever layout holds it: its experiment and its id (AgentV
 * 4.42's timestamp directory, AgentV 5.x's run id). Known before the publish for AgentV's own runs
 * (4.42's from its path, 5.x's from the workspace's one reading); null for a results file or a
 * bundle of ours, whose id is known only once it is derived.
 */
async function runIdentity(
  run: RunHandle,
  source: { experiment: string; timestamp: string } | null,
  opts: PublishOptions,
): Promise<{ experiment: string; id: string } | null> {
  if (source && opts.experiment === undefined) return { experiment: source.experiment, id: source.timestamp };
  if (!isAgentvWorkspace(run)) return null;
  const loaded = await run.load();
  if (loaded.runId.includes('/')) return null;
  return { experiment: opts.experiment ?? loaded.experiment, id: loaded.runId };
}

/**
 * Under the publish lock: which layout to write (layout/layout-choice.ts) and, when it is AgentV
 * 4.42's, the publish itself. `result` null: the 5.x path publishes.
 */
async function publishIfStableLayout(
  target: PublishTarget,
  opts: PublishOptions,
  run: RunHandle,
  settings: Promise<{ author: Ident }>,
): Promise<{ layout: LayoutChoice; result: PublishResult | null }> {
  const { repo, config } = target;
  const lock = await acquirePublishLock(repo.commonDir);
  try {
    await repairInterrupted(repo, [target.resultsRef, target.artifactsRef]);
    const source = stableRunSource(run);
    // Decide from the tip the push goes onto (repo/team-tip.ts): on a fresh clone
    // the remote-tracking branch. The local branch first catches up with it only in a shallow clone
    // (a depth-1 CI checkout), where a merge could not find its base; elsewhere the commit goes on
    // the local branch and the push merges row by row, so rows another machine published of the
    // same run are never replaced (test/conformance/agentv-summary-merge.test.ts).
    if (isShallow(target)) await adoptTeamTips(target, () => lock.assertHeld());
    const tips = (await teamTip(target)).tips;
    // The run's writer, when known: its layout is where that AgentV's Dashboard looks (layout-choice.ts).
    const writer: BranchLayout | undefined = source ? 'stable' : isAgentvWorkspace(run) ? 'next' : undefined;
    let layout = await chooseLayout(repo, tips, config.layout, writer);
    // One run, one copy: a run the branch already holds in the other layout is merged there. Only
    // a tip with runs in the other layout can hold it there: the choice counted them (none counted:
    // no runs/ tree, or a configured layout, which did not look), so a one-layout branch reads nothing more.
    const other: BranchLayout = layout.layout === 'stable' ? 'next' : 'stable';
    const otherMayHold = layout.runs !== null ? layout.runs[other] > 0 : config.layout !== 'auto';
    const identity = otherMayHold ? await runIdentity(run, source, opts) : null;
    if (identity) {
      const held = await heldLayouts(repo, tips, identity.experiment, identity.id);
      if (!held.has(layout.layout) && held.has(other))
        layout = {
          layout: other,
          reason: `the branch already holds this run (${identity.experiment}, ${identity.id}) in ${layoutName(other)}: its rows are merged there, never a second copy`,
          runs: layout.runs,
        };
    }
    if (layout.layout !== 'stable') return { layout, result: null };
    return { layout, result: await publishStable(target, opts, run, source, layout, (await settings).author, () => lock.assertHeld()) };
  } finally {
    await lock.release();
  }
}

/**
 * A publish in AgentV 4.42's layout (publish/stable-publish.ts): its own run byte for byte; any
 * other run as our derived bundle (its benchmark.json is what 4.42's Dashboard lists a run by).
 */
async function publishStable(
  target: PublishTarget,
  opts: PublishOptions,
  handle: RunHandle,
  source: { dir: string; experiment: string; timestamp: string } | null,
  layout: LayoutChoice,
  author: Ident,
  beforeRefUpdate: () => void,
): Promise<PublishResult> {
  const { repo, config } = target;
  let runDir: string;
  let experiment: string;
  let timestamp: string;
  let derived = false;
  let files: StableRunFile[] | undefined;
  if (source && opts.experiment === undefined) {
    ({ dir: runDir, experiment, timestamp } = source);
  } else {
    const run = await prepareRun(handle, { experiment: opts.experiment });
    const loc = runLocation(run.runId, { experiment: run.experiment, timestamp: summaryTimestamp(run.summary) });
    runDir = run.dir;
    derived = run.derived;
    experiment = loc.experiment;
    timestamp = loc.runId.split('/').pop()!;
    // Not a run of 4.42's own: our bundle in the files 4.42 writes, so its Dashboard and validate read it.
    files = stableRunFiles(runDir);
  }
  const committed = await commitStableRun({
    repo,
    resultsRef: target.resultsRef,
    runDir,
    experiment,
    timestamp,
    author,
    message: opts.message,
    files,
    beforeRefUpdate,
  });
  return {
    runId: committed.location.runId,
    location: committed.location,
    runDir,
    derived,
    status: committed.status,
    commits: { results: committed.after, artifacts: (await resolveRef(repo, target.artifactsRef)) ?? '' },
    counts: { total: committed.counts.total, passed: committed.counts.passed, failed: committed.counts.failed, payloads: 0, metadata: committed.files },
    keptRows: 0,
    push: null,
    wip: [],
    layout,
    target: { repo: repo.workTree ?? repo.gitDir, resultsBranch: config.branch, artifactsBranch: config.artifacts_branch, remote: target.remote },
  };
}

/** The published workspace as the user named it (a derived copy's index is not what WIP captured). */
function workspaceOf(opts: PublishOptions): string | null {
  const named = resolve(opts.cwd ?? process.cwd(), opts.run);
  if (named.endsWith('.jsonl')) return basename(named) === 'index.jsonl' ? dirname(named) : null;
  return named;
}

async function endWip(target: PublishTarget, result: PublishResult, opts: PublishOptions): Promise<EndedWip[]> {
  try {
    return await endWipAfterPublish({
      repo: target.repo,
      remote: target.remote,
      resultsRef: target.resultsRef,
      runId: result.runId,
      runPath: result.location.path,
      resultsCommit: result.commits.results,
      workspace: workspaceOf(opts),
    });
  } catch (err) {
    // The run is published; a WIP branch left behind is only clutter (`wip clean` removes it later).
    return [{ branch: '(wip branches)', status: 'kept', note: `could not end the run's WIP: ${(err as Error).message}` }];
  }
}
