/** How a push attempt ended, as the sync loop needs to know it. */
import type { PushClassification, PushResult } from '../git/index.js';

// With --atomic, a ref that lost a race on the server makes EVERY ref report "(atomic transaction
// failed)"; the real reason ("cannot lock ref ...: is at X but expected Y", "reference already
// exists") is only in the remote's stderr. src/git classifies that as "other"; it is contention.
const SERVER_RACE = /cannot lock ref|but expected|reference already exists|failed to lock|non-fast-forward|fetch first/;

/** The push's classification, with atomic server-side races recognized as lost races. */
export function pushClassification(r: PushResult): PushClassification {
  if (r.classification !== 'other') return r.classification;
  const rejected = r.refs.filter((x) => x.status !== 'up-to-date');
  const atomicFailure = rejected.length > 0 && rejected.every((x) => x.status === 'remote-rejected' && (x.reason === 'atomic transaction failed' || SERVER_RACE.test(x.reason ?? '')));
  return atomicFailure && SERVER_RACE.test(r.stderr) ? 'non-fast-forward' : 'other';
}
