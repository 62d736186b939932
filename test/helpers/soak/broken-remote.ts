// For the checker's own test: copies of the remote broken one way each, behind the hooks' back
// (on the server itself), to show every invariant of check.ts fails when it should.
import { cp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from '../../../src/git/index.js';
import { git, makeTempDir } from '../git-fixtures.js';
import { checkRemote, newCheckState } from './check.js';
import type { Model } from './model.js';
import { PROTECTED, RESULTS_REF, refOf, type World } from './remote.js';

export type Breaker = (copy: string) => Promise<unknown>;

/** A copy of the remote, broken by `brk`, checked against the model and the tips seen on the intact remote. */
export async function violationsOfBrokenCopy(world: World, model: Model, brk: Breaker): Promise<string[]> {
  const copy = join(await makeTempDir('soak-broken'), 'remote.git');
  await cp(world.remote, copy, { recursive: true });
  await brk(copy);
  const state = newCheckState();
  for (const ref of PROTECTED) state.tips.set(ref, await refOf(world.remote, ref));
  return (await checkRemote({ remote: copy, reader: world.reader, model, state, syncBranchesAllowed: false })).violations;
}

/** Rewrites one file on the results branch with an ordinary fast-forward commit (so only the content is wrong, not the history). */
export const editResultsFile =
  (path: string, edit: (text: string) => string): Breaker =>
  async (copy) => {
    const text = await git(copy, ['show', `${RESULTS_REF}:${path}`]);
    const blob = (await runGit(['hash-object', '-w', '--stdin'], { cwd: copy, input: `${edit(`${text}\n`)}` })).stdout.toString().trim();
    const env = { GIT_INDEX_FILE: join(copy, 'soak-index') };
    await git(copy, ['read-tree', RESULTS_REF], { env });
    await git(copy, ['update-index', '--cacheinfo', `100644,${blob},${path}`], { env });
    const tree = await git(copy, ['write-tree'], { env });
    const commit = await git(copy, ['commit-tree', tree, '-p', RESULTS_REF, '-m', `break ${path}`]);
    await git(copy, ['update-ref', RESULTS_REF, commit]);
  };

/** An object the branch needs is gone: every object made loose (a pack cannot lose just one), then this one deleted. */
export const loseObject =
  (rev: string): Breaker =>
  async (copy) => {
    const blob = await git(copy, ['rev-parse', rev]);
    await git(copy, ['repack', '-a', '-d', '-q']);
    const packDir = join(copy, 'objects', 'pack');
    const aside = await makeTempDir('soak-pack');
    for (const f of await readdir(packDir)) await rename(join(packDir, f), join(aside, f));
    for (const f of (await readdir(aside)).filter((n) => n.endsWith('.pack')))
      await runGit(['unpack-objects', '-q'], { cwd: copy, input: await readFile(join(aside, f)) });
    await rm(join(copy, 'objects', blob.slice(0, 2), blob.slice(2)));
  };
