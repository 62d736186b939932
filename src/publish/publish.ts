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
import { configGetMany, resolveRef, type GcConfig, type Ident } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { teamTip } from '../repo/team-tip.js';
import { remoteSeenAt } from '../repo/remote-seen.js';
import { fetchBothBranches } from '../sync/integrate.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import { repairInterrupted } from '../git/ref-recovery.js';
import type { RunLocation } from '../layout/branch-layout.js';
import { isAgentvWorkspace, prepareAgentvRun, prepareRun, publishDerivation } from './prepare.js';
import { openRun, type RunHandle } from '../runs/read/run-handle.js';
import type { LoadedRun } from '../runs/read/run-reader.js';
import { agentvRunFiles } from './agentv-run.js';
import { commitStableRun } from './stable-publish.js';
import { stableRunFiles, type StableRunFile } from './stable-shape.js';
import type { LayoutChoice } from '../layout/layout-choice.js';
import { splitRun, type SplitFile } from './split.js';
import { offloadPayloads } from './offload.js';
import { startPrefeed, type Prefeed } from './prefeed.js';
import { objectStoreFor } from '../repo/storage.js';
import { AGENTV_ARTIFACTS_REF_NAME } from './agentv-run.js';
import { refuseInvalidRun } from './validate-gate.js';
import { catalogRow, commitRun } from './commit-run.js';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { diskErrorOf } from '../errors/errors.js';
import { afterCommit } from './after-commit.js';
import { decideLayout, type StableSource } from './decide-layout.js';
import { pushPlan, workspaceOf, type PublishJob, type PublishResult } from './publish-job.js';
import { flag, fnOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';

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
