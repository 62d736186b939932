/**
 * The `interrupted-update` section of `status`: a git killed while moving the results and
 * artifacts branches (a `.lock` file left behind, or only one branch moved). Without it status
 * would say "in sync" while every write fails.
 */
import { inspectInterrupted, lockAdvice } from '../git/ref-recovery.js';
import type { StatusContext } from './status.js';

/** The `interrupted-update` section: what was left half-done, and how the next write repairs it. */
export interface InterruptedStatus {
  /** Always true: nothing is in sync until the interrupted update is completed. */
  pending: true;
  message: string;
  locks: string[];
  fix: string;
}

export async function interruptedSection(ctx: Pick<StatusContext, 'target'>): Promise<InterruptedStatus | undefined> {
  const { target } = ctx;
  const found = await inspectInterrupted(target.repo, [target.resultsRef, target.artifactsRef]);
  if (!found) return undefined;
  const moved = found.journal?.refs.filter((r) => r.now === r.new).map((r) => r.ref) ?? [];
  const behind = found.journal?.refs.filter((r) => r.now !== r.new).map((r) => r.ref) ?? [];
  return {
    pending: true,
    message: found.journal
      ? `an update of ${found.journal.refs.map((r) => r.ref).join(' and ')} was interrupted (process ${found.journal.pid} died${moved.length > 0 ? ` after moving ${moved.join(', ')} but not ${behind.join(', ')}` : ''})`
      : 'a ref lock file was left behind',
    locks: found.locks.map(lockAdvice),
    fix: 'the next `publish`, `tag` or `sync` repairs it first (stale locks removed, the interrupted pair completed)',
  };
}
