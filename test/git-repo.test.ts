import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  configGet,
  configGetMany,
  currentBranch,
  isAncestor,
  listRefs,
  listRemotes,
  openRepo,
  remoteUrl,
  resolveRef,
  worktreeBranches,
} from '../src/git/index.js';
import { NotARepositoryError } from '../src/errors/git-errors.js';
import {
  commitFiles,
  git,
  initRepo,
  makeTempDir,
  makeUserRepoWithRemote,
  snapshotCheckout,
  isolateGitForSuite,
  subcommand,
  traceGitProcesses,
} from './helpers/git-fixtures.js';

isolateGitForSuite();

describe('openRepo', () => {
  it('describes a non-bare repository, also when opened from a subdirectory', async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    expect(repo).toEqual({ gitDir: join(work, '.git'), commonDir: join(work, '.git'), workTree: work, bare: false, objectFormat: 'sha1' });
    expect(await openRepo(join(work, 'src'))).toEqual(repo);
  });

  it('asks git once: the worktree top comes with the rest, and from inside the git dir there is none', async () => {
    const { work } = await makeUserRepoWithRemote();
    const { argvs } = await traceGitProcesses(() => openRepo(join(work, 'src')));
    expect(argvs.map(subcommand).filter((c) => c === 'rev-parse')).toEqual(['rev-parse']);
    expect(await openRepo(join(work, '.git'))).toEqual({
      gitDir: join(work, '.git'),
      commonDir: join(work, '.git'),
      workTree: null,
      bare: false,
      objectFormat: 'sha1',
    });
  });

  it('describes a bare repository', async () => {
    const bare = await initRepo({ bare: true });
    expect(await openRepo(bare)).toEqual({ gitDir: bare, commonDir: bare, workTree: null, bare: true, objectFormat: 'sha1' });
  });

  it('distinguishes gitDir from commonDir in a linked worktree', async () => {
    const { work, root } = await makeUserRepoWithRemote();
    const wt = join(root, 'linked');
    await git(work, ['worktree', 'add', '-q', '-b', 'feature', wt]);
    const repo = await openRepo(wt);
    expect(repo.gitDir).toBe(join(work, '.git', 'worktrees', 'linked'));
    expect(repo.commonDir).toBe(join(work, '.git'));
    expect(repo.workTree).toBe(wt);
    expect(await currentBranch(repo)).toBe('refs/heads/feature');
    expect((await worktreeBranches(repo)).sort()).toEqual(['refs/heads/feature', 'refs/heads/main']);
  });

  it('says clearly when the path is not a repository', async () => {
    const plain = await makeTempDir('agentv-plain');
    await expect(openRepo(plain)).rejects.toThrow(new RegExp(`^not a git repository: ${plain}`));
    await expect(openRepo(plain)).rejects.toBeInstanceOf(NotARepositoryError);
    await expect(openRepo(join(plain, 'missing'))).rejects.toThrow(/not a git repository: .*missing \(no such directory\)/);
  });

  it('is not fooled by an inherited GIT_DIR', async () => {
    const { work } = await makeUserRepoWithRemote();
    const other = await initRepo({ bare: true });
    process.env.GIT_DIR = other;
    try {
      expect((await openRepo(work)).gitDir).toBe(join(work, '.git'));
    } finally {
      delete process.env.GIT_DIR;
    }
  });
});

describe('repository queries', () => {
  it('resolveRef, currentBranch, isAncestor', async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    const before = await snapshotCheckout(work);
    const first = await resolveRef(repo, 'refs/heads/main');
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    expect(await resolveRef(repo, 'refs/heads/nope')).toBeNull();
    expect(await resolveRef(repo, 'main^{tree}')).toMatch(/^[0-9a-f]{40}$/);
    expect(await currentBranch(repo)).toBe('refs/heads/main');
    await expect(resolveRef(repo, '--all')).rejects.toThrow(/must not start with "-"/);

    // Build a second commit on a side branch in a scratch clone so the user's checkout stays as is.
    const side = await makeTempDir('agentv-side');
    await git(side, ['clone', '-q', work, 'c']);
    const second = await commitFiles(join(side, 'c'), { 'more.txt': 'more\n' });
    await git(work, ['fetch', '-q', join(side, 'c'), `${second}:refs/heads/side`]);
    expect(await isAncestor(repo, first as string, second)).toBe(true);
    expect(await isAncestor(repo, second, first as string)).toBe(false);
    expect(await isAncestor(repo, second, second)).toBe(true);
    const after = await snapshotCheckout(work);
    expect({ ...after, refs: '' }).toEqual({ ...before, refs: '' });
  });

  it('currentBranch is null when HEAD is detached', async () => {
    const repo = await initRepo();
    const head = await commitFiles(repo, { 'x.txt': 'x\n' });
    await git(repo, ['checkout', '-q', '--detach', head]);
    expect(await currentBranch(await openRepo(repo))).toBeNull();
  });

  it('listRefs matches a prefix as a directory', async () => {
    const dir = await initRepo();
    const head = await commitFiles(dir, { 'x.txt': 'x\n' });
    for (const r of ['refs/heads/agentv/results/v1', 'refs/heads/agentv/wip/h/run', 'refs/heads/agentvx', 'refs/tags/agentv']) {
      await git(dir, ['update-ref', r, head]);
    }
    const repo = await openRepo(dir);
    expect(await listRefs(repo, 'refs/heads/agentv')).toEqual([
      { ref: 'refs/heads/agentv/results/v1', sha: head },
      { ref: 'refs/heads/agentv/wip/h/run', sha: head },
    ]);
    expect(await listRefs(repo, 'refs/heads/agentv/wip/')).toEqual([{ ref: 'refs/heads/agentv/wip/h/run', sha: head }]);
    expect(await listRefs(repo, 'refs/nothing')).toEqual([]);
  });

  it('configGet, listRemotes, remoteUrl', async () => {
    const { work, remote } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    expect(await configGet(repo, 'remote.origin.url')).toBe(remote);
    expect(await configGet(repo, 'agentv.unset')).toBeNull();
    await git(work, ['config', 'agentv.multi', 'line one\nline two']);
    expect(await configGet(repo, 'agentv.multi')).toBe('line one\nline two');
    expect(await listRemotes(repo)).toEqual(['origin']);
    expect(await remoteUrl(repo, 'origin')).toBe(remote);
    expect(await remoteUrl(repo, 'upstream')).toBeNull();
    await git(work, ['config', 'remote.origin.pushurl', 'git://127.0.0.1:1/push.git']);
    expect(await remoteUrl(repo, 'origin', { push: true })).toBe('git://127.0.0.1:1/push.git');
  });

  it('configGetMany reads several keys with one process, agreeing with configGet', async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    await git(work, ['config', 'gc.autoPackLimit', '7']);
    await git(work, ['config', 'agentv.multi', 'line one\nline two']);
    // A key set twice: the later value wins, as with --get.
    await git(work, ['config', '--add', 'agentv.twice', 'first']);
    await git(work, ['config', '--add', 'agentv.twice', 'second']);
    // Look-alikes the pattern must not catch.
    await git(work, ['config', 'agentv.twicex', 'no']);
    await git(work, ['config', 'agentvXtwice.y', 'no']);
    const keys = ['gc.autoPackLimit', 'agentv.multi', 'agentv.twice', 'agentv.unset'];
    const got = await configGetMany(repo, keys);
    expect(Object.fromEntries(got)).toEqual({ 'gc.autoPackLimit': '7', 'agentv.multi': 'line one\nline two', 'agentv.twice': 'second' });
    for (const k of keys) expect(got.get(k) ?? null).toBe(await configGet(repo, k));
    expect((await configGetMany(repo, ['agentv.none'])).size).toBe(0);
    expect((await configGetMany(repo, [])).size).toBe(0);
    await expect(configGetMany(repo, ['remote.origin.url'])).rejects.toThrow(/plain section.name keys/);
    await expect(configGetMany(repo, ['a.b|c.d'])).rejects.toThrow(/plain section.name keys/);
  });

  it('worktreeBranches lists the branch of every worktree', async () => {
    const dir = await initRepo();
    await commitFiles(dir, { 'x.txt': 'x\n' });
    const repo = await openRepo(dir);
    expect(await worktreeBranches(repo)).toEqual(['refs/heads/main']);
    const wtRoot = await makeTempDir('agentv-wt');
    await git(dir, ['worktree', 'add', '-q', '-b', 'agentv/results/v1', join(wtRoot, 'w')]);
    expect((await worktreeBranches(repo)).sort()).toEqual(['refs/heads/agentv/results/v1', 'refs/heads/main']);
  });
});
