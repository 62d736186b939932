import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deleteRef, listRefs, openRepo, resolveRef, updateRef, updateRefs, writeCommit, zeroId, type Repo } from '../src/git/index.js';
import { GitError, RefConflictError } from '../src/errors/git-errors.js';
import { git, initRepo, makeUserRepoWithRemote, snapshotCheckout, isolateGitForSuite, TEST_AUTHOR } from './helpers/git-fixtures.js';

isolateGitForSuite();

const RESULTS = 'refs/heads/agentv/results/v1';
const ARTIFACTS = 'refs/heads/agentv/artifacts/v1';

async function twoCommits(repo: Repo): Promise<[string, string]> {
  const a = await writeCommit(repo, { parent: null, files: [{ path: 'a', data: 'a' }], message: 'a', author: TEST_AUTHOR });
  const b = await writeCommit(repo, { parent: a.commit, files: [{ path: 'b', data: 'b' }], message: 'b', author: TEST_AUTHOR });
  return [a.commit, b.commit];
}

async function conflictOf(p: Promise<unknown>): Promise<RefConflictError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RefConflictError);
  return err as RefConflictError;
}

describe('updateRef (compare-and-swap)', () => {
  it('creates only when absent, updates only from the expected value', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a, b] = await twoCommits(repo);
    await updateRef(repo, RESULTS, a, null);
    expect(await resolveRef(repo, RESULTS)).toBe(a);

    const exists = await conflictOf(updateRef(repo, RESULTS, b, null));
    expect(exists).toMatchObject({ ref: RESULTS, expected: null, actual: a });

    const stale = await conflictOf(updateRef(repo, RESULTS, a, b));
    expect(stale).toMatchObject({ ref: RESULTS, expected: b, actual: a });
    expect(stale.message).toMatch(/changed underneath us/);

    await updateRef(repo, RESULTS, b, a);
    expect(await resolveRef(repo, RESULTS)).toBe(b);

    const missing = await conflictOf(updateRef(repo, 'refs/heads/agentv/none', b, a));
    expect(missing).toMatchObject({ expected: a, actual: null });
  });

  it('deleteRef deletes only the expected value', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a, b] = await twoCommits(repo);
    await updateRef(repo, RESULTS, b, null);
    expect(await conflictOf(deleteRef(repo, RESULTS, a))).toMatchObject({ expected: a, actual: b });
    expect(await resolveRef(repo, RESULTS)).toBe(b);
    await deleteRef(repo, RESULTS, b);
    expect(await resolveRef(repo, RESULTS)).toBeNull();
    expect(await conflictOf(deleteRef(repo, RESULTS, b))).toMatchObject({ expected: b, actual: null });
  });

  it('exactly one of many concurrent writers wins', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a] = await twoCommits(repo);
    await updateRef(repo, RESULTS, a, null);
    const contenders = await Promise.all(
      Array.from({ length: 8 }, (_, i) => writeCommit(repo, { parent: a, files: [{ path: `c${i}`, data: String(i) }], message: `c${i}`, author: TEST_AUTHOR })),
    );
    const outcomes = await Promise.allSettled(contenders.map((c) => updateRef(repo, RESULTS, c.commit, a)));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === 'rejected') {
        // A loser either saw the new value (conflict) or found the winner's lock (GitError).
        expect(o.reason instanceof RefConflictError || o.reason instanceof GitError).toBe(true);
      }
    }
    const winner = await resolveRef(repo, RESULTS);
    expect(contenders.map((c) => c.commit)).toContain(winner);
  });

  it('refuses names outside refs/, short ids and symbolic HEAD', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a] = await twoCommits(repo);
    await expect(updateRef(repo, 'HEAD', a, null)).rejects.toThrow(/not a full ref name under refs\//);
    await expect(updateRef(repo, 'main', a, null)).rejects.toThrow(/not a full ref name/);
    await expect(updateRef(repo, RESULTS, a.slice(0, 12), null)).rejects.toThrow(/not a full object id/);
    await expect(updateRef(repo, 'refs/heads/bad..name', a, null)).rejects.toBeInstanceOf(GitError);
  });

  it('leaves a stale lock as a GitError, not a conflict', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a, b] = await twoCommits(repo);
    await updateRef(repo, RESULTS, a, null);
    await writeFile(join(repo.gitDir, `${RESULTS}.lock`), '');
    const err = await updateRef(repo, RESULTS, b, a).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect(err).not.toBeInstanceOf(RefConflictError);
    expect((err as Error).message).toMatch(/cannot lock ref .*File exists/);
    // A fresh lock may belong to a live git: left alone, and the message says what to do.
    expect((err as Error).message).toMatch(/another git process may be updating this ref — wait for it; if none is running/);
  });
});

describe('updateRefs (transaction)', () => {
  it('moves several refs at once', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a, b] = await twoCommits(repo);
    await updateRefs(repo, [
      { ref: RESULTS, new: a, old: null },
      { ref: ARTIFACTS, new: b, old: null },
    ]);
    expect(await listRefs(repo, 'refs/heads/agentv')).toEqual([
      { ref: ARTIFACTS, sha: b },
      { ref: RESULTS, sha: a },
    ]);
    await updateRefs(
      repo,
      [
        { ref: RESULTS, new: b, old: a },
        { ref: ARTIFACTS, new: null, old: b },
        { ref: 'refs/heads/agentv/absent', new: null, old: null }, // assert absence
      ],
      { message: 'agentv-results: publish' },
    );
    expect(await listRefs(repo, 'refs/heads/agentv')).toEqual([{ ref: RESULTS, sha: b }]);
  });

  it('is all or nothing: one stale expectation and no ref moves', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a, b] = await twoCommits(repo);
    await updateRefs(repo, [
      { ref: RESULTS, new: a, old: null },
      { ref: ARTIFACTS, new: a, old: null },
    ]);
    const err = await conflictOf(
      updateRefs(repo, [
        { ref: RESULTS, new: b, old: a }, // fine on its own
        { ref: ARTIFACTS, new: b, old: b }, // stale
        { ref: 'refs/heads/agentv/new', new: b, old: null },
      ]),
    );
    expect(err).toMatchObject({ ref: ARTIFACTS, expected: b, actual: a });
    expect(await listRefs(repo, 'refs/heads/agentv')).toEqual([
      { ref: ARTIFACTS, sha: a },
      { ref: RESULTS, sha: a },
    ]);
    const absent = await conflictOf(updateRefs(repo, [{ ref: RESULTS, new: null, old: null }]));
    expect(absent).toMatchObject({ expected: null, actual: a });
  });

  it('rejects the same ref twice and is a no-op for an empty list', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const [a, b] = await twoCommits(repo);
    await expect(
      updateRefs(repo, [
        { ref: RESULTS, new: a, old: null },
        { ref: RESULTS, new: b, old: null },
      ]),
    ).rejects.toThrow(/twice/);
    await updateRefs(repo, []);
    expect(await listRefs(repo, 'refs/')).toEqual([]);
  });

  it("never touches the user's checkout, HEAD or other branches", async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    const before = await snapshotCheckout(work);
    const main = (await resolveRef(repo, 'refs/heads/main')) as string;
    const c = await writeCommit(repo, { parent: null, files: [{ path: 'x', data: 'x' }], message: 'x', author: TEST_AUTHOR });
    await updateRefs(repo, [
      { ref: RESULTS, new: c.commit, old: null },
      { ref: ARTIFACTS, new: c.commit, old: null },
    ]);
    expect(await snapshotCheckout(work)).toEqual(before);
    expect(await resolveRef(repo, 'refs/heads/main')).toBe(main);
    expect(await git(work, ['symbolic-ref', 'HEAD'])).toBe('refs/heads/main');
  });
});

describe('object formats', () => {
  it('works in a sha256 repository (64-hex ids, 64-zero absent id)', async () => {
    const repo = await openRepo(await initRepo({ bare: true, objectFormat: 'sha256' }));
    expect(repo.objectFormat).toBe('sha256');
    expect(zeroId(repo)).toBe('0'.repeat(64));
    const [a, b] = await twoCommits(repo);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    await updateRefs(repo, [
      { ref: RESULTS, new: a, old: null },
      { ref: 'refs/heads/agentv/absent', new: null, old: null },
    ]);
    expect(await conflictOf(updateRef(repo, RESULTS, b, b))).toMatchObject({ expected: b, actual: a });
    await updateRef(repo, RESULTS, b, a);
    expect(await resolveRef(repo, RESULTS)).toBe(b);
    expect(zeroId(await openRepo(await initRepo({ bare: true })))).toBe('0'.repeat(40));
  });
});
