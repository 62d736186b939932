/**
 * After a publish's commit, outside the lock: gc when git's thresholds may be crossed, the listing
 * budget, the push as the PushPlan decided, and the end of the run's WIP.
 */
import { gcAuto, type GcConfig } from '../git/index.js';
import { PublishError } from '../errors/publish-errors.js';
import { checkListing, DEFAULT_MAX_LISTING_BYTES, listingWarning } from '../layout/listing-budget.js';
import type { PublishTarget } from '../repo/target.js';
import { pushBranches } from '../sync/push-branches.js';
import { endWipAfterPublish } from '../wip/index.js';
import type { PublishJob, PublishResult } from './publish-job.js';

/** After the commit, outside the lock: gc, the push (as the PushPlan decided), the end of the run's WIP. */
export async function afterCommit(target: PublishTarget, job: PublishJob, result: PublishResult, gc: GcConfig): Promise<PublishResult> {
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
