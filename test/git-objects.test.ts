import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  catFile,
  commitTree,
  forEachBlob,
  formatGitDate,
  gcAuto,
  lsTree,
  openRepo,
  readBlobs,
  resolveRef,
  runGit,
  writeCommit,
  writeTree,
  type FileChange,
  type Repo,
} from '../src/git/index.js';
import { GitArgumentError, GitError, InvalidPathError } from '../src/errors/git-errors.js';
import { FastImportSession, fastImportEnv } from '../src/git/fast-import.js';
import {
  commitFiles,
  git,
  initRepo,
  makeUserRepoWithRemote,
  snapshotCheckout,
  subcommand,
  traceGitProcesses,
  isolateGitForSuite,
  TEST_AUTHOR,
} from './helpers/git-fixtures.js';

isolateGitForSuite();

async function fsckStrict(repo: Repo): Promise<void> {
  const r = await runGit(['fsck', '--strict', '--no-progress'], { gitDir: repo.gitDir });
  expect(r.code).toBe(0);
  // Only notices (e.g. "HEAD points to an unborn branch" in a bare test repo) are acceptable.
  expect(r.stderr.split('\n').filter((l) => l && !l.startsWith('notice:'))).toEqual([]);
  expect(r.stdout.toString()).not.toMatch(/^(error|warning|missing|broken)/m);
}

async function objectStoreState(repo: Repo): Promise<string> {
  const counts = await git(repo.gitDir, ['count-objects', '-v']);
  const packs = (await readdir(join(repo.commonDir, 'objects', 'pack'))).sort().join(',');
  return `${counts}\n${packs}`;
}

async function crashReports(repo: Repo): Promise<string[]> {
  return (await readdir(repo.gitDir)).filter((f) => f.startsWith('fast_import_crash'));
}

describe('writeCommit', () => {
  it('changes only the given paths, moves no ref and leaves the user checkout byte-identical', async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    const before = await snapshotCheckout(work);
    const refsBefore = await git(work, ['for-each-ref', '--format=%(objectname) %(refname)']);
    const parent = (await resolveRef(repo, 'refs/heads/main')) as string;
    const parentTree = await lsTree(repo, parent, { recursive: true });

    const { result, argvs } = await traceGitProcesses(() =>
      writeCommit(repo, {
        parent,
        files: [
          { path: 'README.md', data: '# replaced by agentv\n' },
          { path: 'runs/exp/2026-03-01/t1/summary.json', data: '{"ok":true}\n' },
          { path: 'src/app.js', delete: true },
        ],
        message: 'publish run exp/t1',
        author: TEST_AUTHOR,
      }),
    );
    expect(argvs.map(subcommand)).toEqual(['fast-import']);

    expect(await git(work, ['rev-parse', `${result.commit}^`])).toBe(parent);
    expect(await git(work, ['rev-parse', `${result.commit}^{tree}`])).toBe(result.tree);
    const tree = await lsTree(repo, result.commit, { recursive: true });
    expect(tree.map((e) => e.path)).toEqual(['.gitignore', 'README.md', 'runs/exp/2026-03-01/t1/summary.json']);
    // Untouched paths keep their exact blob.
    expect(tree.find((e) => e.path === '.gitignore')?.sha).toBe(parentTree.find((e) => e.path === '.gitignore')?.sha);
    const blobs = await readBlobs(repo, [`${result.commit}:README.md`, `${result.commit}:src/app.js`]);
    expect(blobs.get(`${result.commit}:README.md`)?.toString()).toBe('# replaced by agentv\n');
    expect(blobs.get(`${result.commit}:src/app.js`)).toBeNull();

    expect(await snapshotCheckout(work)).toEqual(before);
    expect(await git(work, ['for-each-ref', '--format=%(objectname) %(refname)'])).toBe(refsBefore);
    expect(await crashReports(repo)).toEqual([]);
    await fsckStrict(repo);
  });

  it('round-trips binary data and awkward but valid paths exactly', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const files: { path: string; data: Buffer }[] = [
      { path: 'bin/random.bin', data: randomBytes(200_000) },
      { path: 'bin/stream-lookalike', data: Buffer.from('\ndata 5\nhello\nM 100644 inline x\n\0\0done\n') },
      { path: 'bin/empty', data: Buffer.alloc(0) },
      { path: 'bin/no-newline', data: Buffer.from('no trailing newline') },
      { path: 'names/with space and "quotes".txt', data: Buffer.from('q') },
      { path: '"leading-quote', data: Buffer.from('lq') },
      { path: 'names/glob*[x]?.txt', data: Buffer.from('g') },
      { path: 'names/résumé ü 日本.md', data: Buffer.from('ü日本', 'utf8') },
      { path: 'names/tab\there', data: Buffer.from('t') },
      { path: 'names/back"slash"\u0001ctl', data: Buffer.from('c') },
    ];
    const { commit } = await writeCommit(repo, { parent: null, files, message: 'binary', author: TEST_AUTHOR });
    const got = await readBlobs(
      repo,
      files.map((f) => `${commit}:${f.path}`),
    );
    for (const f of files) expect(got.get(`${commit}:${f.path}`)?.equals(f.data), f.path).toBe(true);
    const listed = (await lsTree(repo, commit, { recursive: true })).map((e) => e.path).sort();
    expect(listed).toEqual(files.map((f) => f.path).sort());
    await fsckStrict(repo);
  });

  it('keeps executable modes and accepts async iterables', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    async function* gen(): AsyncIterable<FileChange> {
      yield { path: 'run.sh', data: '#!/bin/sh\necho hi\n', mode: '100755' };
      yield { path: 'plain.txt', data: 'plain\n' };
    }
    const { commit } = await writeCommit(repo, { parent: null, files: gen(), message: 'modes', author: TEST_AUTHOR });
    const entries = await lsTree(repo, commit);
    expect(entries.map((e) => [e.path, e.mode])).toEqual([
      ['plain.txt', '100644'],
      ['run.sh', '100755'],
    ]);
  });

  it('is deterministic and agrees with commitTree on the commit id', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const base = await writeCommit(repo, { parent: null, files: [{ path: 'a', data: 'a\n' }], message: 'base', author: TEST_AUTHOR });
    const opts = {
      parent: base.commit,
      files: [{ path: 'b/c.json', data: '{}\n' }],
      message: 'second\n\nbody line',
      author: TEST_AUTHOR,
      committer: { name: 'CI Runner', email: 'ci@agentv.invalid', date: new Date('2026-03-02T00:00:00Z') },
    };
    const one = await writeCommit(repo, opts);
    const two = await writeCommit(repo, opts);
    expect(two).toEqual(one);
    // Same date in every accepted spelling gives the same commit.
    const raw = await writeCommit(repo, { ...opts, committer: { ...opts.committer, date: '1772409600 +0000' } });
    expect(raw.commit).toBe(one.commit);
    const viaCommitTree = await commitTree(repo, {
      tree: one.tree,
      parents: [base.commit],
      message: opts.message,
      author: TEST_AUTHOR,
      committer: opts.committer,
    });
    expect(viaCommitTree).toBe(one.commit);
    expect(formatGitDate('2026-03-01T10:00:00+02:00')).toBe('1772352000 +0000');
    expect(formatGitDate('@1772352000 +0130')).toBe('1772352000 +0130');
    expect(() => formatGitDate('yesterday-ish')).toThrow(/invalid commit date/);
    const body = (await catFile(repo, one.commit))?.data.toString();
    expect(body).toContain(`author AgentV Bot <bot@agentv.invalid> 1772359200 +0000\n`);
    expect(body).toContain(`committer CI Runner <ci@agentv.invalid> 1772409600 +0000\n`);
    expect(body?.endsWith('\n\nsecond\n\nbody line\n')).toBe(true);
  });

  it('deleteAll starts from an empty tree but keeps the parent link; mergeParents make a merge', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const a = await writeCommit(repo, {
      parent: null,
      files: [
        { path: 'old/1', data: '1' },
        { path: 'old/2', data: '2' },
      ],
      message: 'a',
      author: TEST_AUTHOR,
    });
    const b = await writeCommit(repo, { parent: null, files: [{ path: 'other', data: 'o' }], message: 'b', author: TEST_AUTHOR });
    const replaced = await writeCommit(repo, { parent: a.commit, deleteAll: true, files: [{ path: 'only', data: 'x' }], message: 'r', author: TEST_AUTHOR });
    expect((await lsTree(repo, replaced.commit, { recursive: true })).map((e) => e.path)).toEqual(['only']);
    expect(await git(repo.gitDir, ['rev-parse', `${replaced.commit}^`])).toBe(a.commit);

    const merged = await writeCommit(repo, {
      parent: a.commit,
      mergeParents: [b.commit],
      files: [{ path: 'other', data: 'o' }],
      message: 'merge',
      author: TEST_AUTHOR,
    });
    expect((await git(repo.gitDir, ['rev-list', '--parents', '-n1', merged.commit])).split(' ')).toEqual([merged.commit, a.commit, b.commit]);
    expect((await lsTree(repo, merged.commit, { recursive: true })).map((e) => e.path)).toEqual(['old/1', 'old/2', 'other']);
  });

  it('baseTree starts from an existing tree with any parents; same id as commit-tree of the result', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const a = await writeCommit(repo, { parent: null, files: [{ path: 'a/1', data: '1' }], message: 'a', author: TEST_AUTHOR });
    const b = await writeCommit(repo, {
      parent: null,
      files: [
        { path: 'b/2', data: '2' },
        { path: 'b/3', data: '3' },
      ],
      message: 'b',
      author: TEST_AUTHOR,
    });
    // The tree comes from b, the parents are a then b, and one path changes and one goes.
    const merged = await writeCommit(repo, {
      parent: a.commit,
      mergeParents: [b.commit],
      baseTree: b.tree,
      files: [
        { path: 'b/2', data: 'two' },
        { path: 'b/3', delete: true },
      ],
      message: 'merge',
      author: TEST_AUTHOR,
    });
    expect((await lsTree(repo, merged.commit, { recursive: true })).map((e) => e.path)).toEqual(['b/2']);
    expect(await git(repo.gitDir, ['cat-file', 'blob', `${merged.commit}:b/2`])).toBe('two');
    expect((await git(repo.gitDir, ['rev-list', '--parents', '-n1', merged.commit])).split(' ')).toEqual([merged.commit, a.commit, b.commit]);
    const viaCommitTree = await commitTree(repo, { tree: merged.tree, parents: [a.commit, b.commit], message: 'merge', author: TEST_AUTHOR });
    expect(viaCommitTree).toBe(merged.commit);

    await expect(writeCommit(repo, { parent: a.commit, baseTree: 'HEAD', files: [], message: 'x', author: TEST_AUTHOR })).rejects.toThrow(/invalid base tree/);
    await expect(writeCommit(repo, { parent: a.commit, baseTree: b.tree, deleteAll: true, files: [], message: 'x', author: TEST_AUTHOR })).rejects.toThrow(
      /exclude each other/,
    );
  });

  it('rejects hostile paths before writing anything', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const state = await objectStoreState(repo);
    const hostile = [
      '/etc/passwd',
      '../outside',
      'a/../../b',
      'a//b',
      'trailing/',
      '',
      '.git/config',
      'x/.GIT/hooks/pre-commit',
      '.git',
      'a/./b',
      'nul\0byte',
      'new\nline',
      'carriage\rreturn',
      'back\\slash',
      'git~1/config',
      '.git./x',
      '.g\u200cit/x',
      'C:/windows',
    ];
    for (const path of hostile) {
      const { result, argvs } = await traceGitProcesses(() =>
        writeCommit(repo, {
          parent: null,
          files: [
            { path: 'fine.txt', data: 'ok' },
            { path, data: 'evil' },
          ],
          message: 'x',
          author: TEST_AUTHOR,
        }).then(
          () => null,
          (e: unknown) => e,
        ),
      );
      expect(result, JSON.stringify(path)).toBeInstanceOf(InvalidPathError);
      expect(argvs).toEqual([]);
    }
    await expect(
      writeCommit(repo, {
        parent: null,
        files: [
          { path: 'dup', data: '1' },
          { path: 'dup', data: '2' },
        ],
        message: 'x',
        author: TEST_AUTHOR,
      }),
    ).rejects.toThrow(/more than once/);
    await expect(
      writeCommit(repo, {
        parent: null,
        files: [
          { path: 'a', data: '1' },
          { path: 'a/b', data: '2' },
        ],
        message: 'x',
        author: TEST_AUTHOR,
      }),
    ).rejects.toBeInstanceOf(InvalidPathError);
    await expect(
      writeCommit(repo, { parent: null, files: [{ path: 'a', data: '1' }], message: 'x', author: { ...TEST_AUTHOR, name: 'Eve <evil@x>' } }),
    ).rejects.toThrow(/must not contain/);
    expect(await objectStoreState(repo)).toBe(state);
  });

  it('reports a bad parent as GitError and leaves no crash report behind', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const err = await writeCommit(repo, { parent: '1'.repeat(40), files: [{ path: 'a', data: 'a' }], message: 'x', author: TEST_AUTHOR }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GitError);
    expect((err as Error).message).toMatch(/fast-import failed: fatal: Not a valid commit/);
    expect(await crashReports(repo)).toEqual([]);
    expect(await git(repo.gitDir, ['for-each-ref'])).toBe('');
  });

  // How fast this is against a raw fast-import is a benchmark (bench/publish.bench.mjs, in
  // BENCHMARKS.md), not a timed test; what a test can hold for sure is the shape: one process.
  it('writes 2,000 files with one fast-import process', async () => {
    const files = Array.from({ length: 2000 }, (_, i) => ({
      path: `runs/exp/2026-03-01/t${Math.floor(i / 20)}/case-${i}/result.json`,
      data: `{"case":${i},"score":${(i % 7) / 7}}\n`,
    }));
    const repo = await openRepo(await initRepo({ bare: true }));
    const { result, argvs } = await traceGitProcesses(() => writeCommit(repo, { parent: null, files, message: 'traced', author: TEST_AUTHOR }));
    expect(argvs.map(subcommand)).toEqual(['fast-import']);
    const listed = await lsTree(repo, result.commit, { recursive: true });
    expect(listed.length).toBe(2000);
    expect(listed.find((e) => e.path === files[1234]!.path)).toBeTruthy();
  });

  it('onRoot: writes a root commit and the commit on it in one process, the root the same as written alone', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const rootSpec = { message: 'root of the branch', author: { ...TEST_AUTHOR, date: '0 +0000' } };
    const { result, argvs } = await traceGitProcesses(() =>
      writeCommit(repo, { parent: null, onRoot: rootSpec, files: [{ path: 'a.txt', data: 'a\n' }], message: 'on the root', author: TEST_AUTHOR }),
    );
    expect(argvs.map(subcommand)).toEqual(['fast-import']);
    const alone = await writeCommit(repo, { parent: null, files: [], message: rootSpec.message, author: rootSpec.author });
    expect(result.root).toBe(alone.commit);
    expect((await git(repo.gitDir, ['rev-list', '--parents', '-n', '1', result.commit])).trim()).toBe(`${result.commit} ${alone.commit}`);
    expect((await lsTree(repo, result.commit)).map((e) => e.path)).toEqual(['a.txt']);
    await expect(writeCommit(repo, { parent: alone.commit, onRoot: rootSpec, files: [], message: 'x', author: TEST_AUTHOR })).rejects.toThrow(/onRoot/);
    await fsckStrict(repo);
  });
});

describe("fast-import's malloc setting", () => {
  it("raises glibc's trim threshold, and a user's own tunables still apply (theirs come last, so theirs win)", () => {
    expect(fastImportEnv(undefined)).toEqual({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=33554432' });
    expect(fastImportEnv('glibc.malloc.trim_threshold=4096:glibc.malloc.arena_max=2')).toEqual({
      GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=33554432:glibc.malloc.trim_threshold=4096:glibc.malloc.arena_max=2',
    });
  });

  it('writes the same objects whatever the setting: a stream of similar blobs that delta against each other', async () => {
    const files = Array.from({ length: 60 }, (_, i) => ({
      path: `run/t${String(i).padStart(3, '0')}/transcript.json`,
      data: JSON.stringify({ turns: Array.from({ length: 40 }, (_, j) => ({ role: j % 2 ? 'assistant' : 'user', text: `turn ${j} of test ${i}` })) }),
    }));
    const ids: string[] = [];
    const saved = process.env.GLIBC_TUNABLES;
    try {
      for (const setting of [undefined, 'glibc.malloc.trim_threshold=131072']) {
        if (setting === undefined) delete process.env.GLIBC_TUNABLES;
        else process.env.GLIBC_TUNABLES = setting;
        const repo = await openRepo(await initRepo());
        const written = await writeCommit(repo, { parent: null, files, message: 'm', author: TEST_AUTHOR });
        await fsckStrict(repo);
        ids.push(written.commit);
      }
    } finally {
      if (saved === undefined) delete process.env.GLIBC_TUNABLES;
      else process.env.GLIBC_TUNABLES = saved;
    }
    expect(ids[0]).toMatch(/^[0-9a-f]{40}$/);
    expect(ids[1]).toBe(ids[0]);
  });
});

describe('FastImportSession: blobs offered early, one commit naming them', () => {
  // Small files and, among them, a few bigger than one chunk of the stream.
  const files = () =>
    Array.from({ length: 40 }, (_, i) => ({
      path: `run/t${String(i).padStart(2, '0')}/${i % 2 ? 'grading.json' : 'answer.md'}`,
      data: Buffer.from(`${i % 2 ? '{"score":' : 'answer '}${i}${i % 2 ? '}' : ''}\n`.repeat(i % 13 === 5 ? 40_000 + i : 50 + i)),
    }));

  it('commits the same tree and id as writeCommit, with or without deltas, whichever blobs were offered', async () => {
    const list = files();
    const plain = await writeCommit(await openRepo(await initRepo({ bare: true })), { parent: null, files: list, message: 'm', author: TEST_AUTHOR });
    for (const [deltas, offer, privateObjects] of [
      [true, list.map((f) => f.data), false],
      [false, list.filter((_, i) => i % 3 === 0).map((f) => f.data), false],
      // Offered but named by no file: packed, unreachable, the tree the same.
      [false, [Buffer.from('never named\n'), ...list.slice(0, 5).map((f) => f.data)], false],
      // Written in an object directory of its own, moved into the repository's with the commit.
      [false, list.map((f) => f.data), true],
    ] as const) {
      const repo = await openRepo(await initRepo({ bare: true }));
      const session = FastImportSession.start(repo, { deltas, privateObjects });
      for (const d of offer) session.offer(d);
      session.flushOffers();
      const written = await session.commit({ parent: null, files: list, message: 'm', author: TEST_AUTHOR });
      expect(written).toEqual(plain);
      await fsckStrict(repo);
      const blobs = await readBlobs(
        repo,
        list.map((f) => `${written.commit}:${f.path}`),
      );
      for (const f of list) expect(blobs.get(`${written.commit}:${f.path}`)?.equals(f.data), f.path).toBe(true);
      // Ended by its commit: closing again is harmless, committing again is refused.
      await session.close();
      await expect(session.commit({ parent: null, files: [], message: 'm', author: TEST_AUTHOR })).rejects.toBeInstanceOf(GitArgumentError);
    }
  });

  it("in an object directory of its own: closed without a commit leaves no object and no directory; a dead process's directory is removed", async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const before = await objectStoreState(repo);
    const session = FastImportSession.start(repo, { privateObjects: true });
    for (const f of files()) session.offer(f.data);
    await session.close();
    expect(await objectStoreState(repo)).toBe(before);
    const ours = join(repo.commonDir, 'agentv-results');
    expect((await readdir(ours)).filter((n) => n.startsWith('objects-'))).toEqual([]);
    // A publish killed mid-way left its directory: the next session removes it, its own stays until it ends.
    const dead = join(ours, 'objects-999999999-left');
    await mkdir(join(dead, 'pack'), { recursive: true });
    await writeFile(join(dead, 'pack', 'tmp_pack_x'), 'partial');
    const next = FastImportSession.start(repo, { privateObjects: true });
    const during = (await readdir(ours)).filter((n) => n.startsWith('objects-'));
    expect(during).toHaveLength(1);
    expect(during[0]).toMatch(new RegExp(`^objects-${process.pid}-`));
    const written = await next.commit({ parent: null, files: files(), message: 'm', author: TEST_AUTHOR });
    await fsckStrict(repo);
    expect(await objectStoreState(repo)).not.toBe(before);
    expect((await readdir(ours)).filter((n) => n.startsWith('objects-'))).toEqual([]);
    expect(written.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('closed without a commit: no ref, no crash report, the git process gone; a refused commit ends it too', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const refs = await git(repo.gitDir, ['for-each-ref']);
    const session = FastImportSession.start(repo);
    for (const f of files()) session.offer(f.data);
    await session.close();
    await session.close();
    expect(await git(repo.gitDir, ['for-each-ref'])).toBe(refs);
    expect(await crashReports(repo)).toEqual([]);
    await expect(session.commit({ parent: null, files: [], message: 'm', author: TEST_AUTHOR })).rejects.toBeInstanceOf(GitArgumentError);
    // A commit refused before it is sent (a hostile path, a forged author) ends the session it was on.
    for (const bad of [
      { parent: null, files: [{ path: '../x', data: 'x' }], message: 'm', author: TEST_AUTHOR },
      { parent: null, files: [{ path: 'a', data: 'x' }], message: 'm', author: { ...TEST_AUTHOR, name: 'Eve <evil@x>' } },
    ]) {
      const s = FastImportSession.start(repo);
      s.offer(Buffer.from('offered\n'));
      await expect(s.commit(bad)).rejects.toThrow();
      await expect(s.commit({ parent: null, files: [], message: 'm', author: TEST_AUTHOR })).rejects.toThrow(/has ended/);
    }
    expect(await git(repo.gitDir, ['for-each-ref'])).toBe(refs);
    expect(await crashReports(repo)).toEqual([]);
  });
});

describe('writeTree (temporary index)', () => {
  it('builds the same tree as writeCommit, never touching the repository index', async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    const before = await snapshotCheckout(work);
    const parent = (await resolveRef(repo, 'refs/heads/main')) as string;
    const changes: FileChange[] = [
      { path: 'src', delete: true }, // a whole directory
      { path: 'README.md', data: Buffer.from([0, 1, 2, 3]) },
      { path: 'tools/run.sh', data: '#!/bin/sh\n', mode: '100755' },
      { path: 'runs/a*b/[x].json', data: '{}' },
      ...Array.from({ length: 50 }, (_, i) => ({ path: `many/f${i}.txt`, data: `${i}\n` })),
    ];
    const { result: tree, argvs } = await traceGitProcesses(() => writeTree(repo, { base: parent, changes }));
    expect(argvs.length).toBeLessThanOrEqual(5);
    const viaFastImport = await writeCommit(repo, { parent, files: changes, message: 'x', author: TEST_AUTHOR });
    expect(tree).toBe(viaFastImport.tree);
    const paths = (await lsTree(repo, tree, { recursive: true })).map((e) => e.path);
    expect(paths).not.toContain('src/app.js');
    expect(paths).toContain('runs/a*b/[x].json');
    expect(await snapshotCheckout(work)).toEqual(before);
    await fsckStrict(repo);
  });

  it('handles an empty base, file/directory replacement and deleting a missing path', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const t0 = await writeTree(repo, {
      base: null,
      changes: [
        { path: 'a/b', data: 'ab' },
        { path: 'c', data: 'c' },
      ],
    });
    const c0 = await writeCommit(repo, {
      parent: null,
      files: [
        { path: 'a/b', data: 'ab' },
        { path: 'c', data: 'c' },
      ],
      message: 'x',
      author: TEST_AUTHOR,
    });
    expect(t0).toBe(c0.tree);
    const changes: FileChange[] = [
      { path: 'a', delete: true },
      { path: 'a', data: 'now a file' },
      { path: 'c/d', data: 'c is a directory now' },
      { path: 'not/there', delete: true },
    ];
    // "c" becomes a directory: its file must go first, as a delete, in both implementations.
    const withCDelete: FileChange[] = [{ path: 'c', delete: true }, ...changes.filter((c) => c.path !== 'a' || 'data' in c)];
    const t1 = await writeTree(repo, { base: t0, changes: withCDelete });
    const c1 = await writeCommit(repo, { parent: c0.commit, files: withCDelete, message: 'y', author: TEST_AUTHOR });
    expect(t1).toBe(c1.tree);
    expect((await lsTree(repo, t1, { recursive: true })).map((e) => [e.path, e.type])).toEqual([
      ['a', 'blob'],
      ['c/d', 'blob'],
    ]);
    await fsckStrict(repo);
  });
});

describe('reading objects', () => {
  it('readBlobs reads many blobs with one process; missing paths are null', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const files = Array.from({ length: 100 }, (_, i) => ({
      path: `catalog/2026-03-${String((i % 28) + 1).padStart(2, '0')}/${i}.jsonl`,
      data: `{"i":${i}}\n`.repeat(i),
    }));
    const { commit } = await writeCommit(repo, { parent: null, files, message: 'c', author: TEST_AUTHOR });
    const specs = [...files.map((f) => `${commit}:${f.path}`), `${commit}:nope.jsonl`, `${'e'.repeat(40)}:x`];
    const { result, argvs } = await traceGitProcesses(() => readBlobs(repo, specs));
    expect(argvs.map(subcommand)).toEqual(['cat-file']);
    for (const f of files) expect(result.get(`${commit}:${f.path}`)?.toString()).toBe(f.data);
    expect(result.get(`${commit}:nope.jsonl`)).toBeNull();
    expect(result.get(`${'e'.repeat(40)}:x`)).toBeNull();
    await expect(readBlobs(repo, [`${commit}:catalog`])).rejects.toThrow(/is a tree, not a file/);
    expect((await readBlobs(repo, [])).size).toBe(0);
  });

  it('forEachBlob streams blobs of every size, split across processes, the same bytes readBlobs gives', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    // Sizes around and far past a pipe chunk (64 KiB), so objects and headers straddle chunks.
    const sizes = [0, 1, 65_535, 65_536, 65_537, 3 * 1024 * 1024 + 7, 10, 200_000, ...Array.from({ length: 1200 }, (_, i) => (i * 97) % 5000)];
    const files = sizes.map((n, i) => ({ path: `d${i}/summary.json`, data: randomBytes(n) }));
    const { commit } = await writeCommit(repo, { parent: null, files, message: 'c', author: TEST_AUTHOR });
    const specs = [...files.map((f) => `${commit}:${f.path}`), `${commit}:absent.json`];
    const want = await readBlobs(repo, specs);
    for (const processes of [1, 2]) {
      const got = new Map<string, string | null>();
      const { argvs } = await traceGitProcesses(() =>
        forEachBlob(repo, specs, (spec, data) => got.set(spec, data === null ? null : createHash('sha256').update(data).digest('hex')), { processes }),
      );
      expect(argvs.map(subcommand)).toEqual(Array(processes).fill('cat-file'));
      expect(got.size).toBe(specs.length);
      for (const spec of specs) {
        const w = want.get(spec);
        expect(got.get(spec)).toBe(w == null ? null : createHash('sha256').update(w).digest('hex'));
      }
    }
    expect(want.get(`${commit}:absent.json`)).toBeNull();
    await expect(forEachBlob(repo, [`${commit}:d0/summary.json`, `${commit}:d1`], () => undefined)).rejects.toThrow(/is a tree, not a file/);
    let calls = 0;
    await forEachBlob(repo, [], () => calls++);
    expect(calls).toBe(0);
  });

  it('catFile returns one object of any type', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const { commit, tree } = await writeCommit(repo, { parent: null, files: [{ path: 'x', data: 'x' }], message: 'c', author: TEST_AUTHOR });
    const c = await catFile(repo, commit);
    expect(c?.type).toBe('commit');
    expect(c?.data.toString()).toContain(`tree ${tree}\n`);
    expect((await catFile(repo, `${commit}^{tree}`))?.sha).toBe(tree);
    expect(await catFile(repo, `${commit}:missing`)).toBeNull();
  });

  it('lsTree lists children, recursive entries, sizes, and takes paths literally', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const { commit } = await writeCommit(repo, {
      parent: null,
      files: [
        { path: 'runs/a/x.json', data: '12345' },
        { path: 'runs/b/y.json', data: '1' },
        { path: 'runs/*', data: 'star' },
        { path: 'top.txt', data: 'top' },
      ],
      message: 'c',
      author: TEST_AUTHOR,
    });
    expect((await lsTree(repo, commit)).map((e) => `${e.type} ${e.path}`)).toEqual(['tree runs', 'blob top.txt']);
    expect((await lsTree(repo, commit, { path: 'runs/' })).map((e) => e.path)).toEqual(['runs/*', 'runs/a', 'runs/b']);
    expect((await lsTree(repo, commit, { path: 'runs/*' })).map((e) => e.path)).toEqual(['runs/*']);
    const long = await lsTree(repo, commit, { path: 'runs/', recursive: true, long: true });
    expect(long.map((e) => [e.path, e.size])).toEqual([
      ['runs/*', 4],
      ['runs/a/x.json', 5],
      ['runs/b/y.json', 1],
    ]);
    expect((await lsTree(repo, commit))[0]?.size).toBeUndefined();
    await expect(lsTree(repo, 'refs/heads/missing')).rejects.toBeInstanceOf(GitError);
  });
});

describe('gcAuto', () => {
  it('packs loose objects once git says it is time, in the foreground', async () => {
    const dir = await initRepo();
    // gc --auto estimates loose objects from the objects/17 directory alone: put a few there.
    const files: Record<string, string> = {};
    for (let i = 0; Object.keys(files).length < 3; i++) {
      const content = `gc probe ${i}\n`;
      const id = createHash('sha1').update(`blob ${content.length}\0${content}`).digest('hex');
      if (id.startsWith('17')) files[`probe-${i}.txt`] = content;
    }
    await commitFiles(dir, files);
    const repo = await openRepo(dir);
    const loose = async () => Number(/^count: (\d+)$/m.exec(await git(dir, ['count-objects', '-v']))?.[1]);
    expect(await loose()).toBeGreaterThan(0);
    await gcAuto(repo); // default threshold (6700): nothing to do
    expect(await loose()).toBeGreaterThan(0);
    await git(dir, ['config', 'gc.auto', '1']);
    await gcAuto(repo);
    expect(await loose()).toBe(0);
    expect((await readdir(join(dir, '.git', 'objects', 'pack'))).some((f) => f.endsWith('.pack'))).toBe(true);
  });

  it('with the thresholds given, starts git only when its own estimate could say yes', async () => {
    const dir = await initRepo();
    // `git commit` runs its own auto-maintenance once gc.auto is low, by default detached (a race
    // CI lost): the counts below must change only through gcAuto. autoDetach=false makes any such
    // gc deterministic, maintenance.auto=false turns the commit's off.
    await git(dir, ['config', 'gc.autoDetach', 'false']);
    await git(dir, ['config', 'maintenance.auto', 'false']);
    const files: Record<string, string> = {};
    for (let i = 0; Object.keys(files).length < 3; i++) {
      const content = `gc threshold probe ${i}\n`;
      const id = createHash('sha1').update(`blob ${content.length}\0${content}`).digest('hex');
      if (id.startsWith('17')) files[`probe-${i}.txt`] = content;
    }
    await commitFiles(dir, files);
    const repo = await openRepo(dir);
    const loose = async () => Number(/^count: (\d+)$/m.exec(await git(dir, ['count-objects', '-v']))?.[1]);
    const packs = async () => (await readdir(join(dir, '.git', 'objects', 'pack'))).filter((f) => f.endsWith('.pack')).length;
    const before = await loose();
    // git's config says "now" but the thresholds we were handed say "not yet": nothing runs. This
    // is how we know the check, not git, decided.
    await git(dir, ['config', 'gc.auto', '1']);
    await gcAuto(repo, { config: {} });
    await gcAuto(repo, { config: { auto: '6700' } });
    await gcAuto(repo, { config: { auto: '0' } }); // gc.auto=0: automatic gc is off
    expect(await loose()).toBe(before);
    // 3 entries in objects/17 > ceil(256 / 256): git is asked, and packs.
    await gcAuto(repo, { config: { auto: '256' } });
    expect(await loose()).toBe(0);
    expect(await packs()).toBe(1);
    // Too many packs (more than autoPackLimit), with a k-suffixed gc.auto that git would read as 1024.
    await commitFiles(dir, { 'more.txt': 'more\n' });
    await git(dir, ['repack', '-q']);
    expect(await packs()).toBe(2);
    await git(dir, ['config', 'gc.autoPackLimit', '1']);
    await gcAuto(repo, { config: { auto: '1k', autoPackLimit: '5' } });
    expect(await packs()).toBe(2);
    await gcAuto(repo, { config: { auto: '1k', autoPackLimit: '1' } });
    expect(await packs()).toBe(1);
    // A value we cannot read: git decides (with gc.auto=1 in its config and loose objects, it packs).
    const again: Record<string, string> = {};
    for (let i = 0; Object.keys(again).length < 2; i++) {
      const content = `gc threshold probe again ${i}\n`;
      if (createHash('sha1').update(`blob ${content.length}\0${content}`).digest('hex').startsWith('17')) again[`again-${i}.txt`] = content;
    }
    await commitFiles(dir, again);
    expect(await loose()).toBeGreaterThan(0);
    await gcAuto(repo, { config: { auto: 'lots' } });
    expect(await loose()).toBe(0);
  });
});
