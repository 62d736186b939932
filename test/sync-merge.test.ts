/**
 * mergeCommits: the tree-level merge of two commits (no worktree, no index of the user's), with
 * every kind of divergence decided explicitly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepo, readBlobs, writeCommit, type FileChange, type Repo } from '../src/git/index.js';
import { mergeOwnedText } from '../src/merge/index.js';
import { mergeCommits, type MergeCommitsResult } from '../src/sync/merge-commits.js';
import { cleanupTempDirs, git, initRepo, useIsolatedGitEnv } from './helpers/git-fixtures.js';

const RUN = 'runs/exp/2026-03-14/2026-03-14T10-00-00-000Z';
const INDEX = `${RUN}/index.jsonl`;
const SUMMARY = `${RUN}/summary.json`;
const AUTHOR = { name: 'T', email: 't@example.invalid', date: '2026-03-14T10:00:00Z' };
const row = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ projection_identity: { id }, test_id: id, ...extra });
const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join('');

let restore: () => void;
let dir: string;
let repo: Repo;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  dir = await initRepo({ bare: true });
  repo = await openRepo(dir);
});
afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

const commit = async (parent: string | null, files: FileChange[], message = 'c') =>
  (await writeCommit(repo, { parent, files, message, author: AUTHOR })).commit;

async function diverge(base: FileChange[], remote: FileChange[], local: FileChange[]) {
  const b = await commit(null, [{ path: '.gitattributes', data: 'x\n' }, ...base]);
  return { base: b, remote: await commit(b, remote, 'remote'), local: await commit(b, local, 'local') };
}

const merge = (first: string, second: string): Promise<MergeCommitsResult> => mergeCommits(repo, { first, second, message: 'merge', author: AUTHOR });

async function file(rev: string, path: string): Promise<string | null> {
  const spec = `${rev}:${path}`;
  return (await readBlobs(repo, [spec])).get(spec)?.toString('utf8') ?? null;
}

function merged(r: MergeCommitsResult): string {
  if (r.kind !== 'merged') throw new Error(`expected a merge, got ${JSON.stringify(r)}`);
  return r.commit;
}

describe('mergeCommits', () => {
  it('different runs merge; the first argument is the first parent', async () => {
    const c = await diverge([], [{ path: 'runs/a/x.json', data: '1' }], [{ path: 'runs/b/y.json', data: '2' }]);
    const m = merged(await merge(c.remote, c.local));
    expect((await git(dir, ['rev-list', '--parents', '-n', '1', m])).split(' ').slice(1)).toEqual([c.remote, c.local]);
    expect(await file(m, 'runs/a/x.json')).toBe('1');
    expect(await file(m, 'runs/b/y.json')).toBe('2');
  });

  it('fast-forward and up-to-date need no merge commit', async () => {
    const a = await commit(null, [{ path: 'f', data: '1' }]);
    const b = await commit(a, [{ path: 'f', data: '2' }]);
    expect(await merge(a, b)).toEqual({ kind: 'fast-forward', commit: b });
    expect(await merge(b, a)).toEqual({ kind: 'up-to-date', commit: b });
    expect(await merge(b, b)).toEqual({ kind: 'up-to-date', commit: b });
  });

  it('both sides appending to one index.jsonl: union, each row once, remote rows first', async () => {
    const base = lines(row('t0'));
    const c = await diverge(
      [{ path: INDEX, data: base }],
      [{ path: INDEX, data: base + lines(row('r1'), row('both')) }],
      [{ path: INDEX, data: base + lines(row('both'), row('l1')) }],
    );
    const m = merged(await merge(c.remote, c.local));
    expect(await file(m, INDEX)).toBe(lines(row('t0'), row('r1'), row('both'), row('l1')));
  });

  it('owned files git merged as text are re-merged like the drivers would', async () => {
    // git's text merge is clean here (an insertion at the top, an append at the end) but orders
    // rows differently from jsonl-union; the result must be jsonl-union's, as with `git merge`.
    const base = lines(row('a'), row('b'), row('c'));
    const remote = lines(row('new-top'), row('a'), row('b'), row('c'));
    const local = lines(row('a'), row('b'), row('c'), row('new-end'));
    const c = await diverge([{ path: INDEX, data: base }], [{ path: INDEX, data: remote }], [{ path: INDEX, data: local }]);
    const m = merged(await merge(c.remote, c.local));
    const expected = mergeOwnedText('jsonl', INDEX, base, remote, local);
    expect(expected.ok).toBe(true);
    expect(expected.text).toBe(lines(row('a'), row('b'), row('c'), row('new-top'), row('new-end')));
    expect(await file(m, INDEX)).toBe(expected.text);
  });

  it('modify/delete of an owned JSONL file: rows the deleting side knew are gone, new rows survive', async () => {
    const base = lines(row('a'));
    const c = await diverge([{ path: INDEX, data: base }], [{ path: INDEX, delete: true }], [{ path: INDEX, data: base + lines(row('late')) }]);
    const m = merged(await merge(c.remote, c.local));
    expect(await file(m, INDEX)).toBe(lines(row('late')));
  });

  it('modify/delete of a file we do not own is a genuine conflict', async () => {
    const c = await diverge([{ path: SUMMARY, data: '{"a":1}' }], [{ path: SUMMARY, delete: true }], [{ path: SUMMARY, data: '{"a":2}' }]);
    const r = await merge(c.remote, c.local);
    expect(r.kind).toBe('conflict');
    expect(r.kind === 'conflict' && r.conflicts[0]?.reason).toMatch(/summary\.json: deleted on our side and modified on theirs/);
  });

  it('add/add identical is clean; add/add different merges owned files and conflicts on others', async () => {
    const same = await diverge(
      [],
      [
        { path: SUMMARY, data: '{"s":1}' },
        { path: 'runs/r/a', data: 'r' },
      ],
      [
        { path: SUMMARY, data: '{"s":1}' },
        { path: 'runs/l/a', data: 'l' },
      ],
    );
    expect(await file(merged(await merge(same.remote, same.local)), SUMMARY)).toBe('{"s":1}');

    const owned = await diverge([], [{ path: INDEX, data: lines(row('r')) }], [{ path: INDEX, data: lines(row('l')) }]);
    expect(await file(merged(await merge(owned.remote, owned.local)), INDEX)).toBe(lines(row('r'), row('l')));

    const other = await diverge([], [{ path: SUMMARY, data: '{"s":1}' }], [{ path: SUMMARY, data: '{"s":2}' }]);
    const r = await merge(other.remote, other.local);
    expect(r).toMatchObject({ kind: 'conflict', conflicts: [{ path: SUMMARY, reason: expect.stringMatching(/added on both sides with different content/) }] });
  });

  it('a conflict in a file we do not own names it and says to resolve by hand', async () => {
    const c = await diverge([{ path: 'NOTES.md', data: 'base\n' }], [{ path: 'NOTES.md', data: 'remote\n' }], [{ path: 'NOTES.md', data: 'local\n' }]);
    const r = await merge(c.remote, c.local);
    expect(r).toMatchObject({ kind: 'conflict', conflicts: [{ path: 'NOTES.md', reason: expect.stringMatching(/not a file agentv-results merges/) }] });
  });

  it('tags.json edited on both sides: json-union with a recomputed tag_revision', async () => {
    const TAGS = `${RUN}/tags.json`;
    const doc = (tags: string[], at: string) => `${JSON.stringify({ tags, updated_at: at, tag_revision: tags.join('+') }, null, 2)}\n`;
    const c = await diverge(
      [{ path: TAGS, data: doc([], '2026-03-14T10:00:00Z') }],
      [{ path: TAGS, data: doc(['baseline'], '2026-03-14T11:00:00Z') }],
      [{ path: TAGS, data: doc(['release-2.1'], '2026-03-14T12:00:00Z') }],
    );
    const out = JSON.parse((await file(merged(await merge(c.remote, c.local)), TAGS))!);
    expect(out.tags).toEqual(['baseline', 'release-2.1']);
    expect(out.updated_at).toBe('2026-03-14T12:00:00Z');
    expect(out.tag_revision).not.toBe('release-2.1');
  });

  it('histories without a common root merge from an empty base', async () => {
    const a = await commit(null, [
      { path: '.gitattributes', data: 'same\n' },
      { path: INDEX, data: lines(row('a')) },
    ]);
    const b = await commit(null, [
      { path: '.gitattributes', data: 'same\n' },
      { path: INDEX, data: lines(row('b')) },
    ]);
    expect(await file(merged(await merge(a, b)), INDEX)).toBe(lines(row('a'), row('b')));
  });
});
