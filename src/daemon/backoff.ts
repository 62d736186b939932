/**
 * The daemon's retry policy for a remote that is down: equal jitter (see src/util/backoff.ts); the
 * cap bounds how long a queued run waits after the remote comes back.
 */
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';

export { backoffDelay, type BackoffPolicy };

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 60_000 };
