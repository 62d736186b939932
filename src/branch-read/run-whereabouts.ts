/**
 * Where a run that the live listing does not show is: moved to its month's archive branch by
 * rollover, removed by a retention (the record says when and under which policy), or on no branch
 * at all (a typo, or a run never published here). The Dashboard asks this to word its "no such
 * run" page; the search is pull's (findRunTree), so both say the same thing about the same run.
 */
import { presumedRunLocation } from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import { ReadError, RunExpiredError } from '../errors/read-errors.js';
import { describePolicy } from '../layout/retention-log.js';
import { resolveTarget, type TargetOptions } from '../repo/target.js';
import { findRunTree } from './pull.js';
import { archiveBranchRefs, branchRefs, readView } from '../repo/remote-view.js';

export type RunWhereabouts =
  /** On the live branch after all (published since the listing was read). */
  | { state: 'live' }
  /** Moved by archive rollover: `branch` is the month's archive branch that holds it. */
  | { state: 'archived'; branch: string }
  /** Removed by retention on `at` (a day) under `policy`; `message` says how to get it back from history. */
  | { state: 'expired'; at: string; policy: string; message: string }
  /** No branch has it: not a run id, or a run id nothing published here. */
  | { state: 'unknown'; reason: 'not-a-run-id' | 'not-published' };

export async function runWhereabouts(opts: TargetOptions & { runId: string }): Promise<RunWhereabouts> {
  let loc: ReturnType<typeof presumedRunLocation>;
  try {
    loc = presumedRunLocation(opts.runId);
  } catch (err) {
    if (err instanceof LayoutError) return { state: 'unknown', reason: 'not-a-run-id' };
    throw err;
  }
  const target = await resolveTarget(opts);
  const results = branchRefs(target, 'results');
  const view = await readView(target, results, { fetched: false });
  try {
    const found = await findRunTree(target, results, loc, false, view);
    if (found.source !== 'archive') return { state: 'live' };
    return { state: 'archived', branch: archiveBranchRefs(target, found.loc.day).results.name };
  } catch (err) {
    if (err instanceof RunExpiredError)
      return { state: 'expired', at: err.removal.record.at.slice(0, 10), policy: describePolicy(err.removal.record.policy), message: err.message };
    if (err instanceof ReadError && err.code === 'not-found') return { state: 'unknown', reason: 'not-published' };
    throw err;
  }
}
