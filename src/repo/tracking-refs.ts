// Names of the refs we keep about a remote. One builder, so every layer agrees on where the
// remote-tracking copy of one of our branches lives.
import { GitArgumentError } from '../errors/git-errors.js';

/** The remote-tracking ref of one of our branches: refs/heads/agentv/x -> refs/remotes/<remote>/agentv/x. */
export function trackingRef(remote: string, ref: string): string {
  if (!ref.startsWith('refs/heads/')) throw new GitArgumentError(`trackingRef needs a full branch ref, got ${JSON.stringify(ref)}`);
  return `refs/remotes/${remote}/${ref.slice('refs/heads/'.length)}`;
}
