// Counting commits between two tips, for `status` (ahead/behind of our branches versus the remote's).
import { assertNotOption, gitIn, text, type Repo } from './repo.js';

export interface AheadBehind {
  /** Commits reachable from `local` but not from `remote`. */
  ahead: number;
  /** Commits reachable from `remote` but not from `local`. */
  behind: number;
}

/**
 * One `git rev-list --left-right --count local...remote`: both counts in a single walk that stops
 * at the merge base, so it costs O(divergence), not O(history).
 */
export async function aheadBehind(repo: Repo, local: string, remote: string): Promise<AheadBehind> {
  assertNotOption(local, 'commit');
  assertNotOption(remote, 'commit');
  const r = await gitIn(repo, ['rev-list', '--left-right', '--count', `${local}...${remote}`, '--']);
  const m = /^(\d+)\s+(\d+)$/.exec(text(r.stdout).trim());
  if (!m) throw new Error(`unexpected output from git rev-list --left-right --count: ${JSON.stringify(r.stdout.toString('utf8'))}`);
  return { ahead: Number(m[1]), behind: Number(m[2]) };
}
