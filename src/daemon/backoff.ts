/**
 * Retry delays: exponential with jitter, capped. Jitter spreads the retries of many machines that
 * lost the remote at the same moment; the cap bounds how long a queued run waits after the remote
 * comes back.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 60_000 };

/** Delay before retry number `attempt` (1 = first retry): uniform in [d/2, d], d = min(cap, base * 2^(attempt-1)). */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.round(exp / 2 + (random() * exp) / 2);
}
