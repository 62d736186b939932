import { describe, expect, it } from 'vitest';
import { computeTagRevision, resolveConflictedPath, type TreeResolution } from '../src/merge/index.js';

const buf = (text: string): Buffer => Buffer.from(text, 'utf8');
const row = (id: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ projection_identity: { id }, test_id: id, ...extra });
const file = (...lines: string[]): string => lines.map((line) => `${line}\n`).join('');
const j = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

const INDEX = 'runs/exp/2026-03-14/2026-03-14T10-32-00/index.jsonl';
const TAGS = 'runs/exp/2026-03-14/2026-03-14T10-32-00/tags.json';
const FEEDBACK = 'runs/exp/2026-03-14/2026-03-14T10-32-00/feedback.json';
const SUMMARY = 'runs/exp/2026-03-14/2026-03-14T10-32-00/summary.json';

const resolve = (path: string, base: string | null, ours: string | null, theirs: string | null): TreeResolution =>
  resolveConflictedPath({ path, base: base === null ? null : buf(base), ours: ours === null ? null : buf(ours), theirs: theirs === null ? null : buf(theirs) });

const written = (resolution: TreeResolution): string => {
  if (resolution.action !== 'write') throw new Error(`expected write, got ${JSON.stringify(resolution)}`);
  return resolution.data.toString('utf8');
};

describe('resolveConflictedPath: whole-file rules (any path)', () => {
  it('add/add with identical content is written', () => {
    expect(written(resolve(SUMMARY, null, '{"a":1}', '{"a":1}'))).toBe('{"a":1}');
  });

  it('deleted on both sides is deleted', () => {
    expect(resolve(SUMMARY, '{"a":1}', null, null)).toEqual({ action: 'delete' });
  });

  it('one side unchanged takes the other side, including its deletion', () => {
    expect(written(resolve(SUMMARY, 'x', 'x', 'y'))).toBe('y');
    expect(written(resolve(SUMMARY, 'x', 'y', 'x'))).toBe('y');
    expect(resolve(SUMMARY, 'x', 'x', null)).toEqual({ action: 'delete' });
    expect(written(resolve(SUMMARY, null, null, 'new'))).toBe('new');
  });
});

describe('resolveConflictedPath: files we do not own', () => {
  it("a run's summary.json changed differently on both sides is a conflict naming the path", () => {
    const result = resolve(SUMMARY, '{"n":1}', '{"n":2}', '{"n":3}');
    expect(result.action).toBe('conflict');
    if (result.action === 'conflict')
      expect(result.reason).toBe(`${SUMMARY}: changed differently on both sides; not a file agentv-results merges — resolve it by hand`);
  });

  it('add/add with different content, and modify/delete, are conflicts', () => {
    expect(resolve('notes/readme.md', null, 'a', 'b')).toMatchObject({ action: 'conflict', reason: expect.stringContaining('added on both sides') });
    expect(resolve(SUMMARY, 'a', null, 'b')).toMatchObject({
      action: 'conflict',
      reason: expect.stringContaining('deleted on our side and modified on theirs'),
    });
  });
});

describe('resolveConflictedPath: owned JSONL', () => {
  it('merges rows appended on both sides', () => {
    expect(written(resolve(INDEX, file(row('a')), file(row('a'), row('o')), file(row('a'), row('t'))))).toBe(file(row('a'), row('o'), row('t')));
  });

  it('add/add with different rows is a union', () => {
    expect(written(resolve('catalog/2026-03-14.jsonl', null, file('{"run_id":"e/1"}'), file('{"run_id":"e/2"}')))).toBe(
      file('{"run_id":"e/1"}', '{"run_id":"e/2"}'),
    );
  });

  it('deleted on one side: rows the other side only kept disappear, rows it appended survive', () => {
    expect(written(resolve(INDEX, file(row('a')), null, file(row('a'), row('t'))))).toBe(file(row('t')));
  });

  it('deleted on one side, a row changed on the other: conflict', () => {
    const result = resolve(INDEX, file(row('a')), file(row('a', { s: 2 })), null);
    expect(result.action).toBe('conflict');
    if (result.action === 'conflict') expect(result.reason).toBe(`${INDEX}: 1 conflicting row: projection_identity.id:a (modify-delete)`);
  });

  it('deleted on one side and merged down to nothing is a deletion', () => {
    // Theirs only re-formatted the row: not a change, so ours' deletion wins and the file goes.
    expect(resolve(INDEX, file(row('a')), null, file(JSON.stringify({ test_id: 'a', projection_identity: { id: 'a' } })))).toEqual({ action: 'delete' });
  });

  it('a conflicting row edit is a conflict', () => {
    expect(resolve(INDEX, file(row('a')), file(row('a', { s: 1 })), file(row('a', { s: 2 }))).action).toBe('conflict');
  });

  it('non-UTF-8 content is a conflict, never a lossy rewrite', () => {
    const result = resolveConflictedPath({ path: INDEX, base: null, ours: buf(file(row('o'))), theirs: Buffer.from([0xc3, 0x28, 0x0a]) });
    expect(result).toMatchObject({ action: 'conflict', reason: expect.stringContaining('not UTF-8') });
  });
});

describe('resolveConflictedPath: owned JSON overlays', () => {
  const T1 = '2026-03-14T10:00:00.000Z';
  const T2 = '2026-03-14T11:00:00.000Z';

  it('merges tags changed on both sides and recomputes tag_revision', () => {
    const doc = JSON.parse(
      written(
        resolve(
          TAGS,
          j({ tags: ['a'], updated_at: T1, tag_revision: 'r0' }),
          j({ tags: ['a', 'o'], updated_at: T1, tag_revision: 'r1' }),
          j({ tags: ['a', 't'], updated_at: T2, tag_revision: 'r2' }),
        ),
      ),
    ) as Record<string, unknown>;
    expect(doc).toEqual({ tags: ['a', 'o', 't'], updated_at: T2, tag_revision: computeTagRevision({ tags: ['a', 'o', 't'], updated_at: T2 }) });
  });

  it('add/add of feedback.json merges against an empty base', () => {
    const doc = JSON.parse(written(resolve(FEEDBACK, null, j({ entries: { t1: { feedback: 'a' } } }), j({ entries: { t2: { feedback: 'b' } } }))));
    expect(doc).toEqual({ entries: { t1: { feedback: 'a' }, t2: { feedback: 'b' } } });
  });

  it('deleted on one side and changed on the other is a conflict', () => {
    expect(resolve(FEEDBACK, j({ entries: {} }), null, j({ entries: { t: { feedback: 'x' } } }))).toMatchObject({
      action: 'conflict',
      reason: `${FEEDBACK}: deleted on our side and modified on theirs`,
    });
  });

  it('deleted on one side and only re-formatted on the other is a deletion', () => {
    expect(resolve(FEEDBACK, j({ entries: {} }), '{"entries":{}}', null)).toEqual({ action: 'delete' });
  });

  it('a divergent feedback text is a conflict naming the value', () => {
    const result = resolve(
      FEEDBACK,
      j({ entries: { t: { feedback: 'a' } } }),
      j({ entries: { t: { feedback: 'b' } } }),
      j({ entries: { t: { feedback: 'c' } } }),
    );
    expect(result).toEqual({ action: 'conflict', reason: `${FEEDBACK}: 1 conflicting value: entries.t.feedback (both-modified)` });
  });

  it('invalid JSON is a conflict', () => {
    expect(resolve(TAGS, j({ tags: [] }), '{', j({ tags: ['x'] }))).toMatchObject({
      action: 'conflict',
      reason: expect.stringContaining('ours is not valid JSON'),
    });
  });

  it('a tag union over the limit is a conflict', () => {
    const many = (p: string) => Array.from({ length: 11 }, (_, i) => `${p}${i}`);
    expect(resolve(TAGS, j({ tags: [] }), j({ tags: many('o') }), j({ tags: many('t') }))).toMatchObject({
      action: 'conflict',
      reason: expect.stringContaining('22 tags given; at most 20 are allowed'),
    });
  });
});
