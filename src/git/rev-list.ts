// Counting commits between two tips, for `status` (ahead/behind of our branches versus the remote's).
import { GitArgumentError, GitOutputError } from '../errors/git-errors.js';
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
  if (!m) throw new GitOutputError(`unexpected output from git rev-list --left-right --count: ${JSON.stringify(r.stdout.toString('utf8'))}`);
  return { ahead: Number(m[1]), behind: Number(m[2]) };
}

/**
 * The newest commit on the way from `from` (excluded) to `to` whose message contains `needle`
 * (a fixed string), or null: `git rev-list --ancestry-path --fixed-strings --grep`. Walks only
 * the commits that descend from `from`, so it costs O(history since then), not O(history).
 */
export async function findDescendantByMessage(repo: Repo, from: string, to: string, needle: string): Promise<string | null> {
  assertNotOption(from, 'commit');
  assertNotOption(to, 'commit');
  if (/[\n\0]/.test(needle)) throw new GitArgumentError(`invalid message needle ${JSON.stringify(needle)}`);
  const r = await gitIn(repo, ['rev-list', '--ancestry-path', '--fixed-strings', `--grep=${needle}`, '-n', '1', `${from}..${to}`, '--']);
  const sha = text(r.stdout).trim();
  return sha === '' ? null : sha;
}

/**
 * The root commits of each ref that exists (ids and first lines of their messages), in one
 * `git log --max-parents=0` per ref. Walks the whole history: callers use it only for branches
 * whose owner is in doubt, never on the hot path.
 */
export async function rootCommits(repo: Repo, ref: string): Promise<{ commit: string; subject: string }[]> {
  assertNotOption(ref, 'ref');
  const r = await gitIn(repo, ['log', '--max-parents=0', '--format=%H %s', ref, '--']);
  return text(r.stdout)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ({ commit: l.slice(0, l.indexOf(' ')), subject: l.slice(l.indexOf(' ') + 1) }));
}

/**
 * The root commits reachable from `tip` and not from `exclude`: `git rev-list --max-parents=0
 * tip ^exclude`. Walks only what `tip` holds beyond `exclude`, so it costs O(divergence). Empty
 * when `tip`'s history adds no root of its own (adoption refuses a branch that would: sync/adopt-runs.ts).
 */
export async function rootsNotIn(repo: Repo, tip: string, exclude: string): Promise<string[]> {
  assertNotOption(tip, 'commit');
  assertNotOption(exclude, 'commit');
  const r = await gitIn(repo, ['rev-list', '--max-parents=0', tip, `^${exclude}`, '--']);
  return text(r.stdout)
    .split('\n')
    .filter((l) => l.trim() !== '');
}
