/**
 * The end of a run outside the daemon (`exec`): publish it, push per configuration, and delete its
 * WIP branch once the publish is confirmed on the remote. What cannot be done now (the remote is
 * away) is written to the outbox, so the next daemon or `daemon --once` finishes it.
 */
import { resolveRef } from '../git/index.js';
import { publish } from '../publish/publish.js';
import type { PublishResult } from '../publish/publish-job.js';
import { pushBranches, type PushOutcome } from '../sync/push-branches.js';
import { targetOptionsOf, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { finalizeWip, type FinalizeOutcome } from '../wip/index.js';
import type { Logger } from './log.js';
import type { Outbox } from './outbox.js';

export interface FinishRunOptions {
  target: PublishTarget;
  targetOptions: TargetOptions;
  runDir: string;
  wipRef: string | null;
  push: boolean;
  outbox: Outbox;
  logger: Logger;
  networkTimeoutMs?: number;
}

export interface FinishRunResult {
  publish: PublishResult;
  push: PushOutcome | null;
  /** What happened to the WIP branch. */
  wip: FinalizeOutcome['status'] | 'none' | 'queued' | 'kept-no-push';
  /** Work left in the outbox for a daemon (`daemon --once` to run it now). */
  queued: string[];
}

export async function finishRun(opts: FinishRunOptions): Promise<FinishRunResult> {
  const { target, logger, outbox } = opts;
  const res = await publish({ ...targetOptionsOf(opts.targetOptions), run: opts.runDir, push: false });
  logger.info(res.status === 'already-published' ? 'run already published' : 'published', {
    run: res.runId,
    status: res.status,
    results: res.commits.results.slice(0, 12),
    rows: res.counts.total,
  });
  const wipTip = opts.wipRef ? await resolveRef(target.repo, opts.wipRef) : null;
  const out: FinishRunResult = { publish: res, push: null, wip: wipTip ? 'kept-no-push' : 'none', queued: [] };
  const finalizeJob =
    opts.wipRef && wipTip
      ? { kind: 'finalize-wip' as const, ref: opts.wipRef, run_id: res.runId, run_path: res.location.path, results_commit: res.commits.results }
      : null;

  if (target.remote === null) {
    if (finalizeJob)
      out.wip = (
        await finalizeWip({
          repo: target.repo,
          remote: null,
          ref: finalizeJob.ref,
          resultsRef: target.resultsRef,
          runPath: finalizeJob.run_path,
          resultsCommit: finalizeJob.results_commit,
        })
      ).status;
    return out;
  }
  if (!opts.push) return out;

  out.push = await pushBranches(target, { timeoutMs: opts.networkTimeoutMs });
  if (out.push.landed) {
    logger.info('results pushed', { remote: target.remote, attempts: out.push.attempts });
    if (finalizeJob) {
      const f = await finalizeWip({
        repo: target.repo,
        remote: target.remote,
        ref: finalizeJob.ref,
        resultsRef: target.resultsRef,
        runPath: finalizeJob.run_path,
        resultsCommit: finalizeJob.results_commit,
        timeoutMs: opts.networkTimeoutMs,
      });
      out.wip = f.status;
      if (f.status === 'waiting') {
        out.queued.push(await outbox.put(finalizeJob));
        out.wip = 'queued';
      }
      logger.info(f.status === 'deleted' ? 'WIP branch deleted after the publish reached the remote' : 'WIP branch kept', {
        wip: finalizeJob.ref,
        note: f.note ?? undefined,
      });
    }
    return out;
  }
  if (out.push.classification === 'conflict') {
    logger.error('genuine conflict: results set aside on a sync branch; the WIP branch is kept', { message: out.push.message });
    return out;
  }
  // Not landed: the run is committed locally; the daemon (or `daemon --once`) pushes it later.
  out.queued.push(await outbox.put({ kind: 'push-results' }));
  if (finalizeJob) {
    out.queued.push(await outbox.put(finalizeJob));
    out.wip = 'queued';
  }
  logger.warn('push did not land; queued in the outbox', { remote: target.remote, message: out.push.message });
  return out;
}
