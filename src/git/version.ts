// git version detection. The floor is 2.38 because `merge-tree --write-tree` (a merge without a
// checkout or index) appeared there; everything else we use is older.
import { GitOutputError, GitVersionError } from '../errors/git-errors.js';
import { runGit } from './runner.js';

export interface GitVersion {
  major: number;
  minor: number;
  patch: number;
  /** As printed, e.g. "2.39.5" or "2.39.3 (Apple Git-145)". */
  raw: string;
}

export const MIN_GIT_VERSION = { major: 2, minor: 38, patch: 0 } as const;

/** Parses the output of `git version` ("git version 2.39.5", "git version 2.41.0.windows.1"). */
export function parseGitVersion(output: string): GitVersion {
  const raw = output.trim().replace(/^git version\s+/, '');
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(raw);
  if (!m) throw new GitOutputError(`cannot parse git version from ${JSON.stringify(output.trim())}`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0), raw };
}

/** Throws GitVersionError when `v` is older than 2.38. Pure, so the message is testable. */
export function checkGitVersion(v: GitVersion): void {
  const min = MIN_GIT_VERSION;
  const older = v.major < min.major || (v.major === min.major && v.minor < min.minor);
  if (!older) return;
  const found = `${v.major}.${v.minor}.${v.patch}`;
  const required = `${min.major}.${min.minor}`;
  throw new GitVersionError(
    found,
    required,
    `agentv-results needs git >= ${required} (found ${found}): merge-tree --write-tree is used to merge ` +
      `results branches without touching your checkout. Please upgrade git.`,
  );
}

let cached: Promise<GitVersion> | null = null;

/** The version of the `git` on PATH; computed once per process. */
export function gitVersion(): Promise<GitVersion> {
  if (!cached) {
    cached = runGit(['version']).then((r) => parseGitVersion(r.stdout.toString('utf8')));
    // Any failure here is fine to forget: a failed probe (no git on PATH) must not be cached forever, the
    // user may fix PATH and retry; the caller still gets the rejection through `cached`.
    cached.catch(() => {
      cached = null;
    });
  }
  return cached;
}

/** Resolves with the version when git is new enough; rejects with GitVersionError otherwise. */
export async function assertGitVersion(): Promise<GitVersion> {
  const v = await gitVersion();
  checkGitVersion(v);
  return v;
}
