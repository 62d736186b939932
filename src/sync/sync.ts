/**
 * The library behind `agentv-results sync`: push whatever this repository has committed and not yet
 * pushed (publishes that could not reach the remote, tag and feedback edits, runs queued by other
 * processes), with the full protocol of push-branches.ts.
 */
import { pushBranches, type PushBranchesOptions, type PushOutcome } from './push-branches.js';
import { resolveTarget, type PublishTarget, type TargetOptions } from '../branch/target.js';

export interface SyncOptions extends TargetOptions, PushBranchesOptions {
  /** An already resolved target (the daemon keeps one); otherwise resolved from cwd/config. */
  target?: PublishTarget;
}

export interface SyncResult {
  repo: string;
  remote: string | null;
  resultsBranch: string;
  artifactsBranch: string;
  push: PushOutcome;
}

export function targetSummary(target: PublishTarget): Omit<SyncResult, 'push'> {
  return {
    repo: target.repo.workTree ?? target.repo.gitDir,
    remote: target.remote,
    resultsBranch: target.config.branch,
    artifactsBranch: target.config.artifacts_branch,
  };
}

export async function sync(opts: SyncOptions = {}): Promise<SyncResult> {
  const target = opts.target ?? (await resolveTarget(opts));
  const push: PushOutcome =
    target.remote === null
      ? {
          landed: false,
          classification: 'no-remote',
          message: `no remote to push to: ${target.repo.workTree ?? target.repo.gitDir} has none (set results.remote or add one)`,
          attempts: 0,
        }
      : await pushBranches(target, opts);
  return { ...targetSummary(target), push };
}
