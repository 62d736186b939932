// Several refs read with one process (the sync loop reads four per attempt).
import type { Repo } from './repo.js';
import { runGit } from './runner.js';
import { GitArgumentError } from '../errors/git-errors.js';
import { snapshotRef } from './ref-snapshot.js';

/**
 * Current values of several full ref names with ONE process (listRefs takes a single prefix); a
 * ref that does not exist is absent from the map. The sync loop reads four refs per attempt.
 */
export async function readRefs(repo: Repo, refs: string[]): Promise<Map<string, string>> {
  const wanted = new Set(refs);
  for (const r of wanted)
    if (!/^refs\/[^\0\n\s]+$/.test(r) || r.includes('*')) throw new GitArgumentError(`readRefs needs full ref names, got ${JSON.stringify(r)}`);
  const out = new Map<string, string>();
  if (wanted.size === 0) return out;
  const known = [...wanted].map((ref) => [ref, snapshotRef(repo, ref)] as const);
  if (known.every(([, sha]) => sha !== undefined)) {
    for (const [ref, sha] of known) if (sha) out.set(ref, sha);
    return out;
  }
  const r = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', ...wanted], { gitDir: repo.gitDir });
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const sp = line.indexOf(' ');
    const ref = line.slice(sp + 1);
    // for-each-ref patterns also match refs BELOW a name; keep exact names only.
    if (sp > 0 && wanted.has(ref)) out.set(ref, line.slice(0, sp));
  }
  return out;
}
