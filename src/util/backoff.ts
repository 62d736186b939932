/**
 * Retry delays: exponential, capped, with jitter. The one implementation; callers differ only in
 * the jitter they need, which they declare:
 * - `equal` (uniform in [c/2, c]): retrying a remote that is down — never sooner than half the
 *   step, so a fleet of daemons does not hammer it, yet spread out so they do not retry in step;
 * - `full` (uniform in [0, c)): losers of a push race — spreads the crowd over the whole window so
 *   it thins instead of re-synchronizing.
 */
export type Jitter = 'equal' | 'full';

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** Default `equal`. */
  jitter?: Jitter;
}

/**
 * Delay before retry number `attempt` (1 = first retry). The ceiling is
 * min(cap, slot * 2^(attempt-1)) with slot = max(base, slotMs): a caller that knows how long one
 * round takes (`slotMs`) makes contenders sit out whole rounds, whatever the machine's speed.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random, slotMs = 0): number {
  const slot = Math.max(policy.baseMs, slotMs);
  const ceiling = Math.min(policy.capMs, slot * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return policy.jitter === 'full' ? Math.floor(random() * ceiling) : Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
