// The remote: a bare repository behind a real `git daemon`, configured like a protective host, so
// the soak sees the refusals a hosted remote would give (non-fast-forwards, deletes of the results
// branches) and every update a push makes is logged for the "only moved forward" check.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from '../../../src/git/index.js';
import { makeClone } from '../../sync-helpers.js';
import { git, makeTempDir, startGitDaemon, type GitDaemon } from '../git-fixtures.js';
import type { Clone } from './model.js';

export const RESULTS_REF = 'refs/heads/agentv/results/v1';
export const ARTIFACTS_REF = 'refs/heads/agentv/artifacts/v1';
/** The branches that may never be deleted or move other than forward. */
export const PROTECTED = [RESULTS_REF, ARTIFACTS_REF];
export const SYNC_PREFIXES = ['refs/heads/agentv/results-sync/', 'refs/heads/agentv/artifacts-sync/'];
export const WIP_PREFIX = 'refs/heads/agentv/wip/';

const PRE_RECEIVE = `#!/bin/sh
# Deletes of the results branches are refused; everything else (sync and WIP branches) may go.
status=0
while read old new ref; do
  case "$ref" in
    refs/heads/agentv/results/v1|refs/heads/agentv/artifacts/v1)
      case "$new" in
        *[!0]*) ;;
        *) echo "soak remote: refusing to delete $ref" >&2; status=1 ;;
      esac ;;
  esac
done
exit $status
`;

async function makeProtectedRemote(root: string): Promise<string> {
  const remote = join(root, 'remote.git');
  await runGit(['init', '-q', '--bare', '-b', 'main', remote]);
  await git(remote, ['config', 'receive.denyNonFastForwards', 'true']);
  await git(remote, ['config', 'receive.denyDeletes', 'false']);
  // Reflogs in a bare repository: every update a push makes is recorded, so each one can be checked.
  await git(remote, ['config', 'core.logAllRefUpdates', 'always']);
  await writeFile(join(remote, 'hooks', 'pre-receive'), PRE_RECEIVE);
  await chmod(join(remote, 'hooks', 'pre-receive'), 0o755);
  return remote;
}

export async function refOf(dir: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '-q', '--verify', `${ref}^{commit}`], { cwd: dir, okCodes: [0, 1, 128] });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}

export async function isAncestor(dir: string, a: string, b: string): Promise<boolean> {
  const r = await runGit(['merge-base', '--is-ancestor', a, b], { cwd: dir, okCodes: [0, 1, 128] });
  return r.code === 0;
}

export async function refsUnder(dir: string, prefixes: string[]): Promise<Map<string, string>> {
  const out = await git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', ...prefixes]);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ') as [string, string]),
  );
}

/** The remote, its daemon, the clones that write and a clone that only reads (to pull and validate). */
export interface World {
  root: string;
  remote: string;
  daemon: GitDaemon;
  url: string;
  clones: Clone[];
  reader: string;
}

export async function makeWorld(clones: number): Promise<World> {
  const root = await makeTempDir('soak');
  const remote = await makeProtectedRemote(root);
  const daemon = await startGitDaemon(root);
  const url = daemon.url('remote.git');
  const list: Clone[] = [];
  for (let i = 0; i < clones; i++) list.push({ index: i, dir: await makeClone(url, `soak-${i}`), host: `soak-c${i}`, have: new Map(), openWip: null });
  // The project's own branch, as on any real remote (and HEAD then names a branch that exists).
  await git(list[0]!.dir, ['push', '-q', 'origin', 'main']);
  const reader = await makeClone(url, 'soak-reader');
  return { root, remote, daemon, url, clones: list, reader };
}
