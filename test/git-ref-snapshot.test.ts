// A command's one read of its refs (src/git/ref-snapshot.ts): reads answer from it, every ref write of
// ours drops it, a compare-and-swap is never decided by it, and the Repo it was made from never sees it.
import { describe, expect, it } from 'vitest';
import { listRefs, openRepo, readRefs, resolveRef, updateRef, withRefSnapshot, writeCommit, type Repo } from '../src/git/index.js';
import { RefConflictError } from '../src/errors/git-errors.js';
import { git, initRepo, isolateGitForSuite, subcommand, TEST_AUTHOR, traceGitProcesses } from './helpers/git-fixtures.js';

isolateGitForSuite();

const RESULTS = 'refs/heads/agentv/results/v1';
const WIP = 'refs/heads/agentv/wip/host/run';
const TRACKING = 'refs/remotes/origin/agentv/results/v1';

async function commit(repo: Repo, name: string, parent: string | null = null): Promise<string> {
  return (await writeCommit(repo, { parent, files: [{ path: name, data: name }], message: name, author: TEST_AUTHOR })).commit;
}

describe('withRefSnapshot', () => {
  it('answers resolveRef, readRefs and listRefs of its patterns from one for-each-ref; our write drops it; a CAS is never decided by it', async () => {
    const dir = await initRepo();
    const repo = await openRepo(dir);
    const a = await commit(repo, 'a');
    const b = await commit(repo, 'b', a);
    const c = await commit(repo, 'c', a);
    await git(dir, ['update-ref', RESULTS, a]);
    await git(dir, ['update-ref', WIP, b]);

    const taken = await traceGitProcesses(() => withRefSnapshot(repo, ['refs/heads/agentv', 'refs/remotes/origin/agentv']));
    expect(taken.argvs.map(subcommand)).toEqual(['for-each-ref']);
    const view = taken.result;

    const reads = await traceGitProcesses(async () => ({
      results: await resolveRef(view, RESULTS),
      tracking: await resolveRef(view, TRACKING),
      both: await readRefs(view, [RESULTS, WIP, TRACKING]),
      wips: await listRefs(view, 'refs/heads/agentv/wip'),
      all: await listRefs(view, 'refs/heads/agentv/'),
    }));
    expect(reads.argvs).toHaveLength(0);
    expect(reads.result.results).toBe(a);
    expect(reads.result.tracking).toBeNull();
    expect(Object.fromEntries(reads.result.both)).toEqual({ [RESULTS]: a, [WIP]: b });
    expect(reads.result.wips).toEqual([{ ref: WIP, sha: b }]);
    expect(reads.result.all.map((e) => e.ref)).toEqual([RESULTS, WIP]);

    // Outside its patterns, or a revision expression: git is asked, as before.
    const outside = await traceGitProcesses(async () => [await resolveRef(view, 'refs/heads/main'), await resolveRef(view, `${RESULTS}^{commit}`)]);
    expect(outside.argvs.map(subcommand)).toEqual(['rev-parse', 'rev-parse']);
    expect(outside.result[1]).toBe(a);

    // The Repo it was made from never answers from it.
    const plain = await traceGitProcesses(() => resolveRef(repo, RESULTS));
    expect(plain.argvs.map(subcommand)).toEqual(['rev-parse']);

    // Another process moved the branch: the snapshot is only a read, so a compare-and-swap against
    // what it said loses, and the lost race drops it: the next read is fresh.
    await git(dir, ['update-ref', RESULTS, b]);
    expect(await resolveRef(view, RESULTS)).toBe(a);
    const lost = await updateRef(view, RESULTS, c, a).then(
      () => null,
      (err: unknown) => err,
    );
    expect(lost).toBeInstanceOf(RefConflictError);
    expect(await resolveRef(view, RESULTS)).toBe(b);

    // Our own write through another handle of the same repository drops it too.
    const again = await withRefSnapshot(repo, ['refs/heads/agentv']);
    await updateRef(repo, RESULTS, c, b);
    const fresh = await traceGitProcesses(() => resolveRef(again, RESULTS));
    expect(fresh.result).toBe(c);
    expect(fresh.argvs.map(subcommand)).toEqual(['rev-parse']);
  });
});
