/** A repository handle and a ref entry: plain types every git module shares (their own module, so ref-snapshot.ts need not import repo.ts). */
export interface Repo {
  /** Absolute git directory of this worktree (for a linked worktree: .git/worktrees/<name>). */
  gitDir: string;
  /** Absolute shared git directory (objects, refs, config). Equal to gitDir except in linked worktrees. */
  commonDir: string;
  /** Absolute top of the worktree; null for a bare repository or when opened from inside the git dir. */
  workTree: string | null;
  bare: boolean;
  /** Hash algorithm; decides the length of object ids and of the all-zero "absent" id. */
  objectFormat: 'sha1' | 'sha256';
}

export interface RefEntry {
  ref: string;
  sha: string;
}
