import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lsTree, mergeTree, openRepo, readBlobs, resolveRef, runGit, writeCommit, type Repo } from '../src/git/index.js';
import { GitError } from '../src/errors/git-errors.js';
import {
  initRepo,
  makeTempDir,
  makeUserRepoWithRemote,
  snapshotCheckout,
  testGlobalConfigPath,
  isolateGitForSuite,
  TEST_AUTHOR,
} from './helpers/git-fixtures.js';

isolateGitForSuite();

async function commit(repo: Repo, parent: string | null, files: Record<string, string | null>, message = 'c'): Promise<string> {
  const changes = Object.entries(files).map(([path, data]) => (data === null ? { path, delete: true as const } : { path, data }));
  return (await writeCommit(repo, { parent, files: changes, message, author: TEST_AUTHOR })).commit;
}

/** base -> ours, base -> theirs */
async function fork(base: Record<string, string>, ours: Record<string, string | null>, theirs: Record<string, string | null>, bare = true) {
  const repo = await openRepo(await initRepo({ bare }));
  const b = await commit(repo, null, base, 'base');
  return { repo, base: b, ours: await commit(repo, b, ours, 'ours'), theirs: await commit(repo, b, theirs, 'theirs') };
}

async function fsckClean(repo: Repo): Promise<void> {
  const r = await runGit(['fsck', '--strict', '--no-progress'], { gitDir: repo.gitDir });
  expect(r.code).toBe(0);
  expect(r.stdout.toString()).not.toMatch(/^(error|warning|missing|broken)/m);
}

describe('mergeTree', () => {
  it('merges disjoint changes cleanly', async () => {
    const f = await fork({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { 'a.txt': 'A\n' }, { 'c.txt': 'c\n' });
    const r = await mergeTree(f.repo, f.ours, f.theirs);
    expect(r.clean).toBe(true);
    expect(r.conflicts).toEqual([]);
    const blobs = await readBlobs(f.repo, [`${r.tree}:a.txt`, `${r.tree}:b.txt`, `${r.tree}:c.txt`]);
    expect([...blobs.values()].map((b) => b?.toString())).toEqual(['A\n', 'b\n', 'c\n']);
    await fsckClean(f.repo);
  });

  it('reports a content conflict with all three stages', async () => {
    const f = await fork({ 'summary.json': '{\n"score": 1\n}\n' }, { 'summary.json': '{\n"score": 2\n}\n' }, { 'summary.json': '{\n"score": 3\n}\n' });
    const r = await mergeTree(f.repo, f.ours, f.theirs);
    expect(r.clean).toBe(false);
    expect(r.conflicts).toHaveLength(1);
    const [c] = r.conflicts;
    expect(c?.path).toBe('summary.json');
    const blobs = await readBlobs(f.repo, [`${f.base}:summary.json`, `${f.ours}:summary.json`, `${f.theirs}:summary.json`]);
    const ids = await Promise.all([f.base, f.ours, f.theirs].map((x) => resolveRef(f.repo, `${x}:summary.json`)));
    expect(c?.stages).toEqual({
      base: { mode: '100644', sha: ids[0] },
      ours: { mode: '100644', sha: ids[1] },
      theirs: { mode: '100644', sha: ids[2] },
    });
    expect(blobs.size).toBe(3);
    expect(r.messages).toMatch(/CONFLICT \(content\): Merge conflict in summary.json/);
    expect(r.details).toContainEqual({ paths: ['summary.json'], type: 'CONFLICT (contents)', message: 'CONFLICT (content): Merge conflict in summary.json' });
    await fsckClean(f.repo);
  });

  it('reports modify/delete with the deleted side missing', async () => {
    const f = await fork({ 'tags.json': '{"tags":[]}\n', keep: 'k' }, { 'tags.json': null }, { 'tags.json': '{"tags":["x"]}\n' });
    const r = await mergeTree(f.repo, f.ours, f.theirs);
    expect(r.clean).toBe(false);
    expect(r.conflicts.map((c) => c.path)).toEqual(['tags.json']);
    const stages = r.conflicts[0]?.stages;
    expect(stages?.base?.sha).toBe(await resolveRef(f.repo, `${f.base}:tags.json`));
    expect(stages?.ours).toBeUndefined();
    expect(stages?.theirs?.sha).toBe(await resolveRef(f.repo, `${f.theirs}:tags.json`));
    expect(r.details.map((d) => d.type)).toContain('CONFLICT (modify/delete)');
  });

  it('treats add/add of identical content as clean and of different content as a conflict', async () => {
    const same = await fork({ base: 'b' }, { 'runs/x/summary.json': '{"same":true}\n' }, { 'runs/x/summary.json': '{"same":true}\n' });
    const r1 = await mergeTree(same.repo, same.ours, same.theirs);
    expect(r1.clean).toBe(true);
    expect((await lsTree(same.repo, r1.tree, { recursive: true })).map((e) => e.path)).toEqual(['base', 'runs/x/summary.json']);

    const diff = await fork({ base: 'b' }, { 'runs/x/summary.json': '{"v":1}\n' }, { 'runs/x/summary.json': '{"v":2}\n' });
    const r2 = await mergeTree(diff.repo, diff.ours, diff.theirs);
    expect(r2.clean).toBe(false);
    expect(r2.conflicts).toHaveLength(1);
    expect(r2.conflicts[0]?.stages.base).toBeUndefined();
    expect(r2.conflicts[0]?.stages.ours?.sha).toBe(await resolveRef(diff.repo, `${diff.ours}:runs/x/summary.json`));
    expect(r2.conflicts[0]?.stages.theirs?.sha).toBe(await resolveRef(diff.repo, `${diff.theirs}:runs/x/summary.json`));
  });

  it('needs an explicit opt-in for unrelated histories', async () => {
    const repo = await openRepo(await initRepo({ bare: true }));
    const a = await commit(repo, null, { 'catalog/a.jsonl': 'a\n' });
    const b = await commit(repo, null, { 'catalog/b.jsonl': 'b\n' });
    const err = await mergeTree(repo, a, b).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as Error).message).toMatch(/refusing to merge unrelated histories/);
    const r = await mergeTree(repo, a, b, { allowUnrelatedHistories: true });
    expect(r.clean).toBe(true);
    expect((await lsTree(repo, r.tree, { recursive: true })).map((e) => e.path)).toEqual(['catalog/a.jsonl', 'catalog/b.jsonl']);
  });

  it("is independent of the caller's cwd .gitattributes and the user's core.attributesFile", async () => {
    // Non-bare, like a user's repository: git ignores cwd attributes only for bare repositories.
    const f = await fork({ 'index.jsonl': 'row1\n' }, { 'index.jsonl': 'row1\nours\n' }, { 'index.jsonl': 'row1\ntheirs\n' }, false);
    const dir = await makeTempDir('agentv-attrs');
    await writeFile(join(dir, '.gitattributes'), '* merge=union\n');
    const attrsFile = join(dir, 'user-attributes');
    await writeFile(attrsFile, '* merge=union\n');

    // Control: plain git from that directory really does take the attributes (union => clean).
    const raw = await runGit(['merge-tree', '--write-tree', f.ours, f.theirs], { gitDir: f.repo.gitDir, cwd: dir, okCodes: [0, 1] });
    expect(raw.code).toBe(0);

    const savedCwd = process.cwd();
    await writeFile(testGlobalConfigPath(), `[core]\n\tattributesFile = ${attrsFile}\n`);
    process.chdir(dir);
    try {
      const withUserConfig = await runGit(['merge-tree', '--write-tree', f.ours, f.theirs], { gitDir: f.repo.gitDir, cwd: f.repo.gitDir, okCodes: [0, 1] });
      expect(withUserConfig.code).toBe(0); // core.attributesFile alone also turns it into a union merge
      const r = await mergeTree(f.repo, f.ours, f.theirs);
      expect(r.clean).toBe(false);
      expect(r.conflicts.map((c) => c.path)).toEqual(['index.jsonl']);
    } finally {
      process.chdir(savedCwd);
      await writeFile(testGlobalConfigPath(), '');
    }
  });

  it("leaves a user's checkout untouched", async () => {
    const { work } = await makeUserRepoWithRemote();
    const repo = await openRepo(work);
    const main = (await resolveRef(repo, 'refs/heads/main')) as string;
    const ours = await commit(repo, main, { 'README.md': 'ours\n' });
    const theirs = await commit(repo, main, { 'README.md': 'theirs\n' });
    const before = await snapshotCheckout(work);
    const r = await mergeTree(repo, ours, theirs);
    expect(r.clean).toBe(false);
    expect(await snapshotCheckout(work)).toEqual(before);
    await fsckClean(repo);
  });
});
