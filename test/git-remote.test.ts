import { chmod, readdir, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifyRemoteFailure,
  fetchRefs,
  lsRemote,
  openRepo,
  parsePushPorcelain,
  push,
  resolveRef,
  runGit,
  updateRef,
  writeCommit,
  type Repo,
} from '../src/git/index.js';
import { RemoteError } from '../src/errors/git-errors.js';
import {
  freePort,
  git,
  makeUserRepoWithRemote,
  snapshotCheckout,
  startGitDaemon,
  type GitDaemon,
  isolateGitForSuite,
  TEST_AUTHOR,
} from './helpers/git-fixtures.js';

isolateGitForSuite();

const RESULTS = 'refs/heads/agentv/results/v1';
const ARTIFACTS = 'refs/heads/agentv/artifacts/v1';
const TRACK_RESULTS = 'refs/remotes/origin/agentv/results/v1';

interface Setup {
  work: string;
  remote: string;
  repo: Repo;
  /** A second machine: a bare clone of the remote. */
  other: Repo;
}

async function setup(): Promise<Setup> {
  const { work, remote, root } = await makeUserRepoWithRemote();
  await git(root, ['clone', '-q', '--bare', remote, 'other.git']);
  return { work, remote, repo: await openRepo(work), other: await openRepo(join(root, 'other.git')) };
}

/** Commits `files` on top of local `ref` (or as a root commit) and CAS-moves the ref. */
async function commitOn(repo: Repo, ref: string, files: Record<string, string>): Promise<string> {
  const parent = await resolveRef(repo, ref);
  const { commit } = await writeCommit(repo, {
    parent,
    files: Object.entries(files).map(([path, data]) => ({ path, data })),
    message: `update ${Object.keys(files).join(', ')}`,
    author: TEST_AUTHOR,
  });
  await updateRef(repo, ref, commit, parent);
  return commit;
}

const remoteRefs = async (remote: string) => git(remote, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/agentv']);

function pushBoth(repo: Repo, remote: string) {
  return push(
    repo,
    remote,
    [
      { src: RESULTS, dst: RESULTS },
      { src: ARTIFACTS, dst: ARTIFACTS },
    ],
    { atomic: true },
  );
}

describe('push over a local path remote (receive.denyNonFastForwards=true)', () => {
  it('publishes both branches atomically, then reports up-to-date, leaving the checkout untouched', async () => {
    const { work, remote, repo } = await setup();
    const before = await snapshotCheckout(work);
    const r1 = await commitOn(repo, RESULTS, { 'catalog/2026-03-01.jsonl': '{"run":1}\n' });
    const a1 = await commitOn(repo, ARTIFACTS, { 'runs/x/transcript.json': '[]' });
    const first = await pushBoth(repo, 'origin');
    expect(first.classification).toBe('ok');
    expect(first.refs).toEqual([
      { dst: RESULTS, status: 'ok', summary: '[new branch]', reason: null },
      { dst: ARTIFACTS, status: 'ok', summary: '[new branch]', reason: null },
    ]);
    expect(await remoteRefs(remote)).toBe(`${ARTIFACTS} ${a1}\n${RESULTS} ${r1}`);
    const again = await pushBoth(repo, 'origin');
    expect(again.classification).toBe('ok');
    expect(again.refs.map((r) => r.status)).toEqual(['up-to-date', 'up-to-date']);
    expect(await snapshotCheckout(work)).toEqual({ ...before, refs: before.refs });
    expect(await git(remote, ['config', 'receive.denyNonFastForwards'])).toBe('true');
  });

  it('classifies a lost race as non-fast-forward (fetch first, then non-ff) and moves nothing', async () => {
    const { remote, repo, other } = await setup();
    await commitOn(repo, RESULTS, { 'catalog/d.jsonl': 'base\n' });
    await commitOn(repo, ARTIFACTS, { 'a.bin': 'a' });
    expect((await pushBoth(repo, 'origin')).classification).toBe('ok');

    // The other machine fetches, publishes on top, and wins the race.
    await git(other.gitDir, ['fetch', '-q', remote, `${RESULTS}:${RESULTS}`, `${ARTIFACTS}:${ARTIFACTS}`]);
    await commitOn(other, RESULTS, { 'catalog/d.jsonl': 'base\ntheirs\n' });
    expect((await push(other, remote, [{ src: RESULTS, dst: RESULTS }], { atomic: true })).classification).toBe('ok');
    const remoteBefore = await remoteRefs(remote);

    await commitOn(repo, RESULTS, { 'catalog/d.jsonl': 'base\nours\n' });
    await commitOn(repo, ARTIFACTS, { 'b.bin': 'b' });
    const rejected = await pushBoth(repo, 'origin');
    expect(rejected.classification).toBe('non-fast-forward');
    expect(rejected.refs[0]).toMatchObject({ dst: RESULTS, status: 'rejected-fetch-first', reason: 'fetch first' });
    // Atomic: the artifacts ref, fine on its own, did not land either.
    expect(rejected.refs[1]).toMatchObject({ dst: ARTIFACTS, status: 'rejected-other', reason: 'atomic push failed' });
    expect(await remoteRefs(remote)).toBe(remoteBefore);

    // Once we have their commit, git can tell it is a plain non-fast-forward.
    await fetchRefs(repo, 'origin', [`+${RESULTS}:${TRACK_RESULTS}`]);
    const again = await pushBoth(repo, 'origin');
    expect(again.classification).toBe('non-fast-forward');
    expect(again.refs[0]).toMatchObject({ status: 'rejected-non-ff', reason: 'non-fast-forward' });
    expect(await remoteRefs(remote)).toBe(remoteBefore);
  });

  it('create-only refuses an existing destination, even a fast-forward, and creates an absent one', async () => {
    const { remote, repo } = await setup();
    const c1 = await commitOn(repo, RESULTS, { f: '1' });
    expect((await push(repo, 'origin', [{ src: RESULTS, dst: 'refs/heads/agentv/results-sync/x' }], { atomic: true })).classification).toBe('ok');
    const c2 = await commitOn(repo, RESULTS, { f: '2' }); // a fast-forward of c1
    const refused = await push(repo, 'origin', [{ src: RESULTS, dst: 'refs/heads/agentv/results-sync/x', createOnly: true }], { atomic: true });
    expect(refused.classification).toBe('other');
    expect(refused.refs[0]).toMatchObject({ status: 'rejected-other', reason: 'stale info' });
    expect(await git(remote, ['rev-parse', 'refs/heads/agentv/results-sync/x'])).toBe(c1);

    const created = await push(repo, 'origin', [{ src: c2, dst: 'refs/heads/agentv/results-sync/y', createOnly: true }], { atomic: true });
    expect(created.classification).toBe('ok');
    expect(created.refs[0]?.summary).toBe('[new branch]');
    expect(await git(remote, ['rev-parse', 'refs/heads/agentv/results-sync/y'])).toBe(c2);
  });

  it('deletes a remote branch only at the expected value', async () => {
    const { remote, repo } = await setup();
    const c1 = await commitOn(repo, 'refs/heads/agentv/wip/host/run', { row: '1' });
    expect((await push(repo, 'origin', [{ src: c1, dst: 'refs/heads/agentv/wip/host/run' }], { atomic: false })).classification).toBe('ok');
    const c2 = await commitOn(repo, 'refs/heads/agentv/wip/host/run', { row: '2' });
    const stale = await push(repo, 'origin', [{ dst: 'refs/heads/agentv/wip/host/run', delete: true, expect: c2 }], { atomic: false });
    expect(stale.refs[0]).toMatchObject({ status: 'rejected-other', reason: 'stale info' });
    const deleted = await push(repo, 'origin', [{ dst: 'refs/heads/agentv/wip/host/run', delete: true, expect: c1 }], { atomic: false });
    expect(deleted.classification).toBe('ok');
    expect(deleted.refs[0]?.summary).toBe('[deleted]');
    expect(await git(remote, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
  });

  it('reports a hook refusal as remote-rejected', async () => {
    const { remote, repo } = await setup();
    const hook = join(remote, 'hooks', 'pre-receive');
    await writeFile(hook, '#!/bin/sh\necho "results frozen" >&2\nexit 1\n');
    await chmod(hook, 0o755);
    await commitOn(repo, RESULTS, { f: '1' });
    const r = await push(repo, 'origin', [{ src: RESULTS, dst: RESULTS }], { atomic: true });
    expect(r.classification).toBe('other');
    expect(r.refs[0]).toMatchObject({ status: 'remote-rejected', reason: 'pre-receive hook declined' });
  });

  it("is not blocked by the user's pre-push hook nor widened by push.followTags", async () => {
    const { work, remote, repo } = await setup();
    const hook = join(work, '.git', 'hooks', 'pre-push');
    await writeFile(hook, '#!/bin/sh\necho "lint failed" >&2\nexit 1\n');
    await chmod(hook, 0o755);
    await git(work, ['config', 'push.followTags', 'true']);
    const c = await commitOn(repo, RESULTS, { f: '1' });
    await git(work, ['tag', '-a', '-m', 'annotated', 'v-results', c]);
    const before = await snapshotCheckout(work);
    const r = await push(repo, 'origin', [{ src: RESULTS, dst: RESULTS }], { atomic: true });
    expect(r.classification).toBe('ok');
    expect(await git(remote, ['for-each-ref', 'refs/tags'])).toBe('');
    expect(await snapshotCheckout(work)).toEqual(before);
    // Control: the hook does block an ordinary push by the user.
    const plain = await runGit(['push', 'origin', `${RESULTS}:refs/heads/agentv/plain`], { cwd: work, okCodes: [0, 1] });
    expect(plain.code).toBe(1);
  });

  it('never sends a forcing, deleting or smuggled refspec', async () => {
    const { repo } = await setup();
    await commitOn(repo, RESULTS, { f: '1' });
    await expect(push(repo, 'origin', [{ src: `+${RESULTS}`, dst: RESULTS }], { atomic: true })).rejects.toThrow(/invalid push source/);
    await expect(push(repo, 'origin', [{ src: '', dst: RESULTS }], { atomic: true })).rejects.toThrow(/invalid push source/);
    await expect(push(repo, 'origin', [{ src: `${RESULTS}:refs/heads/main`, dst: RESULTS }], { atomic: true })).rejects.toThrow(/invalid push source/);
    await expect(push(repo, 'origin', [{ src: RESULTS, dst: 'main' }], { atomic: true })).rejects.toThrow(/full ref name/);
    await expect(push(repo, 'origin', [{ dst: RESULTS, delete: true, expect: '' }], { atomic: true })).rejects.toThrow(/expected object id/);
    await expect(push(repo, '--mirror', [{ src: RESULTS, dst: RESULTS }], { atomic: true })).rejects.toThrow(/must not start with "-"/);
  });

  it('resolves a relative remote URL the way git does: from the worktree top, or the git dir of a bare repository', async () => {
    const { work, remote, repo, other } = await setup();
    await git(work, ['remote', 'set-url', 'origin', relative(work, remote)]);
    await commitOn(repo, RESULTS, { f: 'ours' });
    await commitOn(repo, ARTIFACTS, { g: 'ours' });
    expect((await pushBoth(repo, 'origin')).classification).toBe('ok');
    await git(other.gitDir, ['remote', 'add', 'rel', relative(other.gitDir, remote)]);
    const fetched = await fetchRefs(other, 'rel', [`+${RESULTS}:refs/remotes/rel/agentv/results/v1`]);
    expect(fetched.fetched.map((f) => f.dst)).toEqual(['refs/remotes/rel/agentv/results/v1']);
    expect(await resolveRef(other, 'refs/remotes/rel/agentv/results/v1')).toBe(await resolveRef(repo, RESULTS));
  });

  it('classifies a missing repository path as other, with git’s message kept', async () => {
    const { repo } = await setup();
    await commitOn(repo, RESULTS, { f: '1' });
    const r = await push(repo, '/nonexistent/agentv/remote.git', [{ src: RESULTS, dst: RESULTS }], { atomic: true });
    expect(r.classification).toBe('other');
    expect(r.exitCode).toBe(128);
    expect(r.stderr).toMatch(/does not appear to be a git repository/);
    expect(r.refs[0]?.status).toBe('error');
  });
});

describe('push and fetch over git daemon (git://127.0.0.1)', () => {
  let daemon: GitDaemon;
  let s: Setup;
  beforeAll(async () => {
    s = await setup();
    daemon = await startGitDaemon(join(s.remote, '..'));
    await git(s.work, ['remote', 'add', 'daemon', daemon.url('remote.git')]);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('pushes, detects non-fast-forward, refuses create-only over an existing branch', async () => {
    const { repo, other, remote } = s;
    await commitOn(repo, RESULTS, { 'catalog/d.jsonl': 'a\n' });
    await commitOn(repo, ARTIFACTS, { blob: 'x' });
    const ok = await pushBoth(repo, 'daemon');
    expect(ok.classification).toBe('ok');
    expect(ok.refs.map((r) => r.summary)).toEqual(['[new branch]', '[new branch]']);

    // The other machine advances the remote over git:// too.
    await git(other.gitDir, ['fetch', '-q', daemon.url('remote.git'), `${RESULTS}:${RESULTS}`]);
    const theirs = await commitOn(other, RESULTS, { 'catalog/d.jsonl': 'a\nb\n' });
    expect((await push(other, daemon.url('remote.git'), [{ src: RESULTS, dst: RESULTS }], { atomic: true })).classification).toBe('ok');

    await commitOn(repo, RESULTS, { 'catalog/d.jsonl': 'a\nc\n' });
    const nonFf = await pushBoth(repo, 'daemon');
    expect(nonFf.classification).toBe('non-fast-forward');
    expect(await git(remote, ['rev-parse', RESULTS])).toBe(theirs);

    const fetched = await fetchRefs(repo, 'daemon', [`+${RESULTS}:refs/remotes/daemon/agentv/results/v1`]);
    expect(fetched.missing).toEqual([]);
    expect(await resolveRef(repo, 'refs/remotes/daemon/agentv/results/v1')).toBe(theirs);

    const sync = await push(repo, 'daemon', [{ src: RESULTS, dst: RESULTS, createOnly: true }], { atomic: true });
    expect(sync.refs[0]).toMatchObject({ status: 'rejected-other', reason: 'stale info' });
    const created = await push(repo, 'daemon', [{ src: RESULTS, dst: 'refs/heads/agentv/results-sync/20260301T100000Z-host-abc123', createOnly: true }], {
      atomic: true,
    });
    expect(created.classification).toBe('ok');

    const listed = await lsRemote(repo, 'daemon', ['refs/heads/agentv/results-sync/20260301T100000Z-host-abc123', RESULTS]);
    expect(listed.map((e) => e.ref).sort()).toEqual([RESULTS, 'refs/heads/agentv/results-sync/20260301T100000Z-host-abc123'].sort());
  });

  it('classifies a closed port as unreachable', async () => {
    const port = await freePort();
    const r = await push(s.repo, `git://127.0.0.1:${port}/remote.git`, [{ src: 'refs/heads/main', dst: 'refs/heads/main' }], { atomic: true });
    expect(r.classification).toBe('unreachable');
    expect(r.stderr).toMatch(/Connection refused/);
    const err = await lsRemote(s.repo, `git://127.0.0.1:${port}/remote.git`, []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).kind).toBe('unreachable');
  });
});

describe('remote failures that need a server of their own', () => {
  it('a remote that accepts the connection but never answers is cut off by the timeout', async () => {
    const { repo } = await setup();
    const sockets = new Set<Socket>();
    const server: Server = createTcpServer((sock) => {
      sockets.add(sock);
      sock.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      // The server never answers: only the timeouts can end these calls, and their messages say so.
      const r = await push(repo, `git://127.0.0.1:${port}/silent.git`, [{ src: 'refs/heads/main', dst: 'refs/heads/main' }], { atomic: true, timeoutMs: 500 });
      expect(r.classification).toBe('unreachable');
      expect(r.stderr).toMatch(/timed out after 500 ms/);
      const err = await lsRemote(repo, `git://127.0.0.1:${port}/silent.git`, [], { timeoutMs: 300 }).catch((e: unknown) => e);
      expect((err as RemoteError).kind).toBe('unreachable');
      expect((err as RemoteError).stderr).toMatch(/timed out after 300 ms/);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('an HTTP remote that demands credentials classifies as auth (no prompt, no hang)', async () => {
    const { repo } = await setup();
    const server: HttpServer = createHttpServer((_req, res) => {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="agentv-test"' });
      res.end('auth required');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await push(repo, `http://127.0.0.1:${port}/repo.git`, [{ src: 'refs/heads/main', dst: 'refs/heads/main' }], {
        atomic: true,
        timeoutMs: 20_000,
      });
      expect(r.classification).toBe('auth');
      expect(r.stderr).toMatch(/could not read Username|terminal prompts disabled|Authentication failed/);
      const err = await lsRemote(repo, `http://127.0.0.1:${port}/repo.git`, []).catch((e: unknown) => e);
      expect((err as RemoteError).kind).toBe('auth');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('fetchRefs', () => {
  it("mirrors only our namespace: the user's tracking refs, FETCH_HEAD and tags stay as they were", async () => {
    const { work, remote, repo, other } = await setup();
    const before = await snapshotCheckout(work);
    const trackingMain = await resolveRef(repo, 'refs/remotes/origin/main');
    // The other machine publishes results and also moves main and adds a tag on the remote.
    const theirs = await commitOn(other, RESULTS, { f: 'theirs' });
    const newMain = await commitOn(other, 'refs/heads/main', { moved: 'yes' });
    await git(other.gitDir, ['tag', 'v9', newMain]);
    await git(other.gitDir, ['push', '-q', remote, RESULTS, 'refs/heads/main', 'refs/tags/v9']);

    const result = await fetchRefs(repo, 'origin', [`+${RESULTS}:${TRACK_RESULTS}`, `+${ARTIFACTS}:refs/remotes/origin/agentv/artifacts/v1`]);
    expect(result.fetched.map((f) => f.dst)).toEqual([TRACK_RESULTS]);
    expect(result.missing).toEqual([{ src: ARTIFACTS, dst: 'refs/remotes/origin/agentv/artifacts/v1', force: true }]);
    expect(await resolveRef(repo, TRACK_RESULTS)).toBe(theirs);
    expect(await resolveRef(repo, 'refs/remotes/origin/main')).toBe(trackingMain);
    expect(await resolveRef(repo, 'refs/tags/v9')).toBeNull();
    expect((await readdir(repo.gitDir)).includes('FETCH_HEAD')).toBe(false);
    expect(await snapshotCheckout(work)).toEqual(before);
  });

  it('follows a rewritten remote branch with "+" (our mirror), and refuses destinations outside it', async () => {
    const { remote, repo, other } = await setup();
    const first = await commitOn(other, RESULTS, { f: '1' });
    await git(other.gitDir, ['push', '-q', remote, RESULTS]);
    await fetchRefs(repo, 'origin', [`+${RESULTS}:${TRACK_RESULTS}`]);
    expect(await resolveRef(repo, TRACK_RESULTS)).toBe(first);
    // An administrator rewrites the remote branch (possible server-side despite our no-force rule).
    const rewritten = (await writeCommit(await openRepo(remote), { parent: null, files: [{ path: 'g', data: 'g' }], message: 'rewrite', author: TEST_AUTHOR }))
      .commit;
    await git(remote, ['update-ref', RESULTS, rewritten]);
    await fetchRefs(repo, 'origin', [`+${RESULTS}:${TRACK_RESULTS}`]);
    expect(await resolveRef(repo, TRACK_RESULTS)).toBe(rewritten);

    await expect(fetchRefs(repo, 'origin', [`+${RESULTS}:refs/remotes/origin/main`])).rejects.toThrow(/outside our namespace/);
    await expect(fetchRefs(repo, 'origin', [`${RESULTS}:refs/heads/agentv/results/v1`])).rejects.toThrow(/outside our namespace/);
    await expect(fetchRefs(repo, 'origin', [RESULTS])).rejects.toThrow(/expected \[\+\]<src>:<dst>/);
  });

  it('reports every source missing on a remote that has none of our branches', async () => {
    const { repo } = await setup();
    const r = await fetchRefs(repo, 'origin', [`+${RESULTS}:${TRACK_RESULTS}`, `+${ARTIFACTS}:refs/remotes/origin/agentv/artifacts/v1`]);
    expect(r.fetched).toEqual([]);
    expect(r.missing.map((m) => m.src)).toEqual([RESULTS, ARTIFACTS]);
  });

  it('fails with RemoteError for an unknown remote', async () => {
    const { repo } = await setup();
    const err = await fetchRefs(repo, 'nowhere', [`+${RESULTS}:refs/remotes/nowhere/agentv/results/v1`]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).kind).toBe('other');
  });
});

describe('lsRemote and porcelain parsing', () => {
  it('lists matching refs of a remote', async () => {
    const { repo } = await setup();
    const c = await commitOn(repo, RESULTS, { f: '1' });
    await push(repo, 'origin', [{ src: RESULTS, dst: RESULTS }], { atomic: true });
    expect(await lsRemote(repo, 'origin', [RESULTS])).toEqual([{ ref: RESULTS, sha: c }]);
    expect(await lsRemote(repo, 'origin', ['refs/heads/agentv/nothing'])).toEqual([]);
    const all = await lsRemote(repo, 'origin', []);
    expect(all.map((e) => e.ref)).toContain('refs/heads/main');
  });

  it('parses every porcelain line shape', () => {
    const out = [
      'To git://127.0.0.1:1/r.git',
      '*\trefs/heads/a:refs/heads/a\t[new branch]',
      ' \trefs/heads/b:refs/heads/b\t1a2b3c4..5d6e7f8',
      '=\trefs/heads/c:refs/heads/c\t[up to date]',
      '-\t:refs/heads/d\t[deleted]',
      '!\t(delete):refs/heads/e\t[rejected] (stale info)',
      '!\trefs/heads/f:refs/heads/f\t[remote rejected] (failed to update ref)',
      '!\trefs/heads/g:refs/heads/g\t[remote failure] (remote failed to report status)',
      'Done',
    ].join('\n');
    const parsed = [...parsePushPorcelain(out).values()].map((r) => [r.dst, r.status, r.reason]);
    expect(parsed).toEqual([
      ['refs/heads/a', 'ok', null],
      ['refs/heads/b', 'ok', null],
      ['refs/heads/c', 'up-to-date', null],
      ['refs/heads/d', 'ok', null],
      ['refs/heads/e', 'rejected-other', 'stale info'],
      ['refs/heads/f', 'remote-rejected', 'failed to update ref'],
      ['refs/heads/g', 'error', 'remote failed to report status'],
    ]);
  });
});

describe('classifyRemoteFailure (last resort, from stderr)', () => {
  it('recognizes the usual ssh, https and git:// messages', () => {
    const cases: [string, string][] = [
      ['git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.', 'auth'],
      ["fatal: could not read Username for 'https://github.com': terminal prompts disabled", 'auth'],
      ["remote: Invalid username or password.\nfatal: Authentication failed for 'https://x/r.git/'", 'auth'],
      ["fatal: unable to access 'https://x/r.git/': The requested URL returned error: 403", 'auth'],
      ['ssh: connect to host example.com port 22: Connection timed out', 'unreachable'],
      ["fatal: unable to access 'https://x/r.git/': Could not resolve host: x", 'unreachable'],
      ["fatal: unable to access 'https://x/': Failed to connect to x port 443 after 3 ms: Couldn't connect to server", 'unreachable'],
      ["fatal: unable to access 'https://x/': The requested URL returned error: 503", 'unreachable'],
      ['fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused', 'unreachable'],
      ["fatal: '/nope.git' does not appear to be a git repository", 'other'],
      ['fatal: remote error: no such repository: /nope.git', 'other'],
    ];
    for (const [stderr, kind] of cases) expect(classifyRemoteFailure(stderr), stderr).toBe(kind);
  });
});
