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
import { configGetMany, gcAuto, resolveRef, type GcConfig, type Ident } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { adoptTeamTips, isShallow, teamTip, teamTips } from '../repo/team-tip.js';
import { remoteSeenAt } from '../repo/remote-seen.js';
import { fetchBothBranches } from '../sync/integrate.js';
import { checkListing, DEFAULT_MAX_LISTING_BYTES, listingWarning } from '../layout/listing-budget.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { repairInterrupted } from '../git/ref-recovery.js';
import type { RunLocation } from '../layout/branch-layout.js';
import { isAgentvWorkspace, prepareAgentvRun, prepareRun, publishDerivation } from './prepare.js';
import { openRun, type RunHandle } from '../runs/read/run-handle.js';
import type { LoadedRun } from '../runs/read/run-reader.js';
import { agentvRunFiles } from './agentv-run.js';
import { commitStableRun } from './stable-publish.js';
import { stableRunFiles, type StableRunFile } from './stable-shape.js';
import { chooseLayout, heldLayouts, layoutName, type LayoutChoice } from '../layout/layout-choice.js';
import type { BranchLayout } from '../layout/branch-layout.js';
import { splitRun, type SplitFile } from './split.js';
import { offloadPayloads } from './offload.js';
import { startPrefeed, type Prefeed } from './prefeed.js';
import { objectStoreFor } from '../repo/storage.js';
import { AGENTV_ARTIFACTS_REF_NAME } from './agentv-run.js';
import { refuseInvalidRun } from './validate-gate.js';
import { catalogRow, commitRun, type CommitRunResult } from './commit-run.js';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { PublishError } from '../errors/publish-errors.js';
import { pushBranches, type PushOutcome } from '../sync/push-branches.js';
import { diskErrorOf } from '../errors/errors.js';
import { flag, fnOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { endWipAfterPublish, type EndedWip } from '../wip/index.js';
import { basename, dirname, resolve } from 'node:path';

/**
 * `publish`'s options: the door parses them once (defaults here), and the parsed value is what the
 * publish passes on. The fields are in the order of the `publish` command's flags.
 */
export const PublishOptionsSchema = z
  .strictObject({
    /** A run workspace, its index.jsonl, or a results JSONL file (exported first). */
    run: z.string(),
    /** true: push; false: never push (the configuration's auto_push and require_push do not apply); absent: results.auto_push decides. */
    push: z
      .boolean()
      .optional()
      .meta(
        flag('--push', 'Push both branches after committing (default: results.auto_push)', {
          negate: { flag: '--no-push', help: 'Do not push, whatever the configuration says' },
        }),
      ),
    /** A push that does not land is an error (exit 3); absent: results.require_push. Cannot be asked together with `push: false`. */
    requirePush: z.boolean().optional().meta(flag('--require-push', 'Exit 3 when the push does not land (the run stays committed locally)')),
    remote: TargetFields.remote,
    message: z.string().optional().meta(flag('--message <m>', 'First line of the commit message')),
    experiment: z.string().optional().meta(flag('--experiment <name>', 'Experiment name when <run> is a results .jsonl file')),
    configFile: TargetFields.configFile,
    project: TargetFields.project,
    cwd: TargetFields.cwd,
    /** Publish a run `validate` rejects (path checks still apply). */
    allowInvalid: z
      .boolean()
      .default(false)
      .meta(
        flag('--allow-invalid', 'Publish a run `validate` rejects (missing sidecars, counts that disagree); paths out of the run are refused all the same'),
      ),
    env: TargetFields.env,
    overrides: TargetFields.overrides,
    /** Commit time (tests); defaults to now. */
    now: fnOf<() => Date>().default(() => () => new Date()),
    /** Told each step as it starts (reading the run, committing its files, pushing): the CLI's progress line. */
    onStep: fnOf<(step: string) => void>().default(() => () => {}),
  })
  .refine((o) => !(o.push === false && o.requirePush === true), {
    path: ['requirePush'],
    message: 'cannot require a push that push: false forbids (--require-push with --no-push): drop one of them',
  });

export type PublishOptions = z.input<typeof PublishOptionsSchema>;

/**
 * Whether this publish pushes, decided once from the options and the configuration: `push: false`
 * never pushes (and so requires nothing); `push: true` pushes; absent, results.auto_push pushes, and
 * so does a required push (`requirePush`, else results.require_push). The decision also says
 * whether a clone that never heard from the remote fetches it first (publishRun).
 */
export interface PushPlan {
  push: boolean;
  /** A push that does not land is a PublishError (exit 3). */
  required: boolean;
}

export function pushPlan(opts: { push?: boolean; requirePush?: boolean }, config: { auto_push: boolean; require_push: boolean }): PushPlan {
  if (opts.push === false) return { push: false, required: false };
  const required = opts.requirePush ?? config.require_push;
  return { push: opts.push ?? (config.auto_push || required), required };
}

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

/** An AgentV 5.x workspace's files for each branch, as AgentV's auto_push lays them out (agentv-run.ts). */
function agentvSplit(dir: string, runPath: string): { metadata: SplitFile[]; payloads: SplitFile[] } {
  const files = agentvRunFiles(dir, runPath);
  return { metadata: files.results, payloads: files.payloads };
}

/**
 * What one publish was asked, decided at the door: the values the steps below need, each already
 * settled (the push decided once, the defaults applied), never the options object itself.
 */
interface PublishJob {
  plan: PushPlan;
  /** The run as the user named it, and the directory it resolves from. */
  run: string;
  cwd: string;
  experiment: string | undefined;
  message: string | undefined;
  allowInvalid: boolean;
  now: Date;
  onStep: (step: string) => void;
  /** The published workspace as the user named it (what WIP captured), or null for a results file. */
  workspace: string | null;
}

/** Publish a run to the results and artifacts branches (validated, committed once, pushed when asked), as `agentv-results publish` does. */
export async function publish(opts: PublishOptions): Promise<PublishResult> {
  return publishParsed(parseOptions('publish', PublishOptionsSchema, opts));
}

/** The publish behind the door: `given` is the parsed options (defaults applied), read here once into decided values. */
async function publishParsed(given: z.output<typeof PublishOptionsSchema>): Promise<PublishResult> {
  // The parsed options hold no `resolved` target (the schema refuses unknown keys): resolveTarget reads their target fields.
  const target = await resolveTarget(given);
  const job: PublishJob = {
    plan: pushPlan(given, target.config),
    run: given.run,
    cwd: given.cwd,
    experiment: given.experiment,
    message: given.message,
    allowInvalid: given.allowInvalid,
    now: given.now(),
    onStep: given.onStep,
    workspace: workspaceOf(given),
  };
  return publishRun(target, job);
}

async function publishRun(target: PublishTarget, job: PublishJob): Promise<PublishResult> {
  const { repo, config } = target;
  const where: PublishResult['target'] = {
    repo: repo.workTree ?? repo.gitDir,
    resultsBranch: config.branch,
    artifactsBranch: config.artifacts_branch,
    remote: target.remote,
  };
  // Who the commits are by does not depend on the run or the branch: read it before taking the
  // lock, which a sync round in this or another process may be waiting for.
  const settings = publishConfig(target, job.now);
  // observed: settings is awaited below; this only keeps an early rejection from being unhandled
  settings.catch(() => {});
  // The run is opened once, here (runs/read/run-handle.ts): validation, derivation, the split and
  // the commit all read it through this handle, and its scratch copy goes when the publish ends.
  const handle = await openRun(job.run, { cwd: job.cwd, keepContents: true, derive: publishDerivation(job.experiment) });
  let prefeed: Prefeed | null = null;
  try {
    // git starts packing the run's files while it is validated (publish/prefeed.ts).
    prefeed = startPrefeed(target, handle);
    // One gate for every layout a publish writes (a 4.42 run too: our validate reads its layout).
    // Reads only the user's run: before the lock, so other publishers do not wait for it.
    const judgedSafe = job.allowInvalid ? null : await refuseInvalidRun(handle);
    // A publish that pushes from a clone that never heard from the remote and has no results branch
    // of its own (a depth-1 CI checkout has no remote-tracking ref of it) fetches it first, so the
    // layout, the catalog and the run's rows are decided on the tip the push goes onto, not on an
    // empty branch. Offline is fine: the push then reports it. Remote-tracking refs are kept only
    // under refs/remotes/<remote>/agentv/: a branch named outside agentv/ (allowed in config) has
    // none to fetch into, and its push decides as before.
    if (job.plan.push && target.remote !== null && [target.resultsRef, target.artifactsRef].every((r) => r.startsWith('refs/heads/agentv/'))) {
      const known = await teamTip(target);
      if (known.remote === null && known.local === null && (await remoteSeenAt(target.repo, target.remote)) === null) {
        try {
          await fetchBothBranches(target);
        } catch (err) {
          if (!(err instanceof RemoteError)) throw err;
        }
      }
    }
    // One lock: the layout is decided, the refs repaired and the run committed under it; the push after.
    const lock = await acquirePublishLock(repo.commonDir);
    let result: PublishResult;
    try {
      // Before reading the tips: a kill during an earlier ref update may have left a half-moved pair.
      await repairInterrupted(repo, [target.resultsRef, target.artifactsRef]);
      const beforeRefUpdate = () => lock.assertHeld();
      const decided = await decideLayout(target, handle, job.experiment, beforeRefUpdate);
      const author = (await settings).author;
      const committed =
        decided.layout.layout === 'stable'
          ? await publishStable(target, job, handle, judgedSafe, decided.source, decided.layout, author, beforeRefUpdate)
          : await publishNext(target, job, handle, judgedSafe, decided, author, beforeRefUpdate, prefeed);
      result = { ...committed, target: where };
    } finally {
      await lock.release();
    }
    return await afterCommit(target, job, result, (await settings).gc);
  } catch (err) {
    // A full or read-only disk, said with where it was writing (a branch moves only by its last compare-and-swap).
    throw diskErrorOf(err, `the run ${job.run} into ${target.repo.commonDir} (its git data, or the run's scratch copy)`);
  } finally {
    await prefeed?.stop();
    await handle.dispose();
  }
}

/** A publish in our layout (AgentV 5.x's): the run split between the results and artifacts branches. */
async function publishNext(
  target: PublishTarget,
  job: PublishJob,
  handle: RunHandle,
  judgedSafe: LoadedRun | null,
  decided: { layout: LayoutChoice; local: { results: string | null; artifacts: string | null } },
  author: Ident,
  beforeRefUpdate: () => void,
  prefeed: Prefeed | null,
): Promise<Omit<PublishResult, 'target'>> {
  const { repo, config } = target;
  job.onStep('reading the run');
  // Every file offered first: the split then takes what validation and the offers read, none twice.
  await prefeed?.fed;
  const agentvDir = isAgentvWorkspace(handle) ? handle.dir : null;
  const choice = { experiment: job.experiment, judgedSafe };
  const run = agentvDir ? await prepareAgentvRun(handle, choice) : await prepareRun(handle, choice);
  const { location } = run;
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
      const off = await offloadPayloads(split, store, [config.artifacts_branch, AGENTV_ARTIFACTS_REF_NAME], job.onStep);
      split = off;
      stored = { objects: off.stored, uploaded: off.uploaded, bytes: off.bytes, where: store.where };
    } finally {
      await store.close();
    }
  }
  // Counted from the reader's rows (one per test and attempt), not the manifest's lines.
  const catalog = catalogRow(location, run.summary, run.rows);
  job.onStep(`committing ${split.metadata.length + split.payloads.length} files`);
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
    message: commitMessage(location, { ...catalog, meanScore: meanScore(run.rows) }, catalog.targets, job.message),
    author,
    beforeRefUpdate,
    tips: decided.local,
    ...(prefeed ? { sessions: prefeed.sessions } : {}),
  });
  return {
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
    layout: decided.layout,
    stored,
  };
}

/** After the commit, outside the lock: gc, the push (as the PushPlan decided), the end of the run's WIP. */
async function afterCommit(target: PublishTarget, job: PublishJob, result: PublishResult, gc: GcConfig): Promise<PublishResult> {
  const { repo, config } = target;
  // Packs accumulate one per publish; gc --auto repacks only past git's thresholds.
  if (result.status !== 'already-published') await gcAuto(repo, { config: gc }).catch(() => {});
  const maxListing = config.archive?.max_listing_bytes ?? DEFAULT_MAX_LISTING_BYTES;
  if (result.status !== 'already-published' && maxListing > 0) {
    // Reads at most the budget's worth of listing: the check costs little however large the branch.
    const check = await checkListing(repo, result.commits.results, maxListing);
    result.listing = { ...check, warning: check.over ? listingWarning(config.branch, check) : null };
  }

  if (job.plan.push) {
    if (target.remote === null) {
      result.push = {
        landed: false,
        classification: 'no-remote',
        message: `no remote to push to: ${repo.workTree ?? repo.gitDir} has none (set results.remote or add one)`,
        attempts: 0,
      };
    } else {
      job.onStep(`pushing to ${target.remote}`);
      result.push = await pushBranches(target);
    }
    // A conflict set aside on a sync branch is exit 1 (the CLI), not a failed push.
    if (job.plan.required && !result.push.landed && result.push.classification !== 'conflict')
      throw new PublishError(`${result.push.message}; the run is committed locally and pending (run \`agentv-results sync\` to retry)`, {
        data: {
          runId: result.runId,
          commits: result.commits,
          push: { classification: result.push.classification, message: result.push.message },
        },
      });
  }
  // The final publish on the remote (or, with no remote at all, on this machine) ends the run's WIP.
  if (target.remote === null || result.push?.landed) {
    try {
      result.wip = await endWipAfterPublish({
        repo,
        remote: target.remote,
        resultsRef: target.resultsRef,
        runId: result.runId,
        runPath: result.location.path,
        resultsCommit: result.commits.results,
        workspace: job.workspace,
      });
    } catch (err) {
      // The run is published; a WIP branch left behind is only clutter (`wip clean` removes it later).
      result.wip = [{ branch: '(wip branches)', status: 'kept', note: `could not end the run's WIP: ${(err as Error).message}` }];
    }
  }
  return result;
}

/** The run directory, experiment and timestamp when `run` names a run of AgentV 4.42's local layout; null otherwise. */
function stableRunSource(run: RunHandle): StableSource | null {
  const dir = run.dir;
  if (dir === null || run.layout !== 'agentv-stable') return null;
  return { dir, experiment: basename(dirname(dir)), timestamp: basename(dir) };
}

type StableSource = { dir: string; experiment: string; timestamp: string };

/**
 * Under the publish lock: which layout to write (layout/layout-choice.ts), decided on the tip the
 * push goes onto, and where a 4.42 run comes from when the run is one.
 */
async function decideLayout(
  target: PublishTarget,
  run: RunHandle,
  experiment: string | undefined,
  assertHeld: () => void,
): Promise<{ layout: LayoutChoice; source: StableSource | null; local: { results: string | null; artifacts: string | null } }> {
  const { repo, config } = target;
  const source = stableRunSource(run);
  // Decide from the tip the push goes onto (repo/team-tip.ts): on a fresh clone
  // the remote-tracking branch. The local branch first catches up with it only in a shallow clone
  // (a depth-1 CI checkout), where a merge could not find its base; elsewhere the commit goes on
  // the local branch and the push merges row by row, so rows another machine published of the
  // same run are never replaced (test/conformance/agentv-summary-merge.test.ts).
  if (isShallow(target)) await adoptTeamTips(target, assertHeld);
  // Both branches in one read: the commit, under the same lock, starts from these local tips.
  const read = await teamTips(target, [target.resultsRef, target.artifactsRef]);
  const tips = read.get(target.resultsRef)!.tips;
  const local = { results: read.get(target.resultsRef)!.local, artifacts: read.get(target.artifactsRef)!.local };
  // The run's writer, when known: its layout is where that AgentV's Dashboard looks (layout-choice.ts).
  const writer: BranchLayout | undefined = source ? 'stable' : isAgentvWorkspace(run) ? 'next' : undefined;
  let layout = await chooseLayout(repo, tips, config.layout, writer);
  // One run, one copy: a run the branch already holds in the other layout is merged there. Only
  // a tip with runs in the other layout can hold it there: the choice counted them (none counted:
  // no runs/ tree, or a configured layout, which did not look), so a one-layout branch reads nothing more.
  const other: BranchLayout = layout.layout === 'stable' ? 'next' : 'stable';
  const otherMayHold = layout.runs !== null ? layout.runs[other] > 0 : config.layout !== 'auto';
  // The run's identity on the branch, whichever layout holds it: its experiment and its id (AgentV
  // 4.42's timestamp directory, AgentV 5.x's run id). Known before the publish for AgentV's own runs
  // (4.42's from its path, 5.x's from the workspace's one reading); none for a results file or a
  // bundle of ours, whose id is known only once it is derived.
  let identity: { experiment: string; id: string } | null = null;
  if (otherMayHold && source && experiment === undefined) identity = { experiment: source.experiment, id: source.timestamp };
  else if (otherMayHold && isAgentvWorkspace(run)) {
    const loaded = await run.load();
    if (!loaded.runId.includes('/')) identity = { experiment: experiment ?? loaded.experiment, id: loaded.runId };
  }
  if (identity) {
    const held = await heldLayouts(repo, tips, identity.experiment, identity.id);
    if (!held.has(layout.layout) && held.has(other))
      layout = {
        layout: other,
        reason: `the branch already holds this run (${identity.experiment}, ${identity.id}) in ${layoutName(other)}: its rows are merged there, never a second copy`,
        runs: layout.runs,
      };
  }
  return { layout, source, local };
}

/**
 * A publish in AgentV 4.42's layout (publish/stable-publish.ts): its own run byte for byte; any
 * other run as our derived bundle (its benchmark.json is what 4.42's Dashboard lists a run by).
 */
async function publishStable(
  target: PublishTarget,
  job: PublishJob,
  handle: RunHandle,
  judgedSafe: LoadedRun | null,
  source: StableSource | null,
  layout: LayoutChoice,
  author: Ident,
  beforeRefUpdate: () => void,
): Promise<Omit<PublishResult, 'target'>> {
  const { repo } = target;
  let runDir: string;
  let experiment: string;
  let timestamp: string;
  let derived = false;
  let files: StableRunFile[] | undefined;
  if (source && job.experiment === undefined) {
    ({ dir: runDir, experiment, timestamp } = source);
  } else {
    const run = await prepareRun(handle, { experiment: job.experiment, judgedSafe });
    const loc = run.location;
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
    message: job.message,
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
  };
}

/** The published workspace as the user named it (a derived copy's index is not what WIP captured). */
function workspaceOf(opts: { cwd: string; run: string }): string | null {
  const named = resolve(opts.cwd, opts.run);
  if (named.endsWith('.jsonl')) return basename(named) === 'index.jsonl' ? dirname(named) : null;
  return named;
}
