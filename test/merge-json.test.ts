import { describe, expect, it } from 'vitest';
import { computeTagRevision, MAX_TAG_LENGTH, MAX_TAGS, mergeJson, validateTags, type JsonMergeResult } from '../src/merge/index.js';

const j = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

function merged(result: JsonMergeResult): unknown {
  if (!result.ok) throw new Error(`expected a clean merge, got ${JSON.stringify(result.conflicts)}`);
  return JSON.parse(result.text);
}

function conflicts(result: JsonMergeResult) {
  if (result.ok) throw new Error(`expected a conflict, got ${result.text}`);
  return result.conflicts;
}

const T1 = '2026-03-14T10:00:00.000Z';
const T2 = '2026-03-14T11:00:00.000Z';
const T3 = '2026-03-14T12:00:00.000Z';

describe('mergeJson: tags.json', () => {
  const tags = (list: string[], updatedAt = T1, revision = 'stale') => j({ tags: list, updated_at: updatedAt, tag_revision: revision });

  it('unions additions, respects removals, orders base then ours then theirs', () => {
    const result = mergeJson(tags(['a', 'b']), tags(['a', 'b', 'c'], T2), tags(['a', 'd'], T3));
    const doc = merged(result) as { tags: string[]; updated_at: string };
    expect(doc.tags).toEqual(['a', 'c', 'd']);
    expect(doc.updated_at).toBe(T3);
  });

  it('does not resurrect a tag removed on one side and untouched on the other', () => {
    const doc = merged(mergeJson(tags(['a', 'b']), tags(['a'], T2), tags(['a', 'b', 'x'], T3))) as { tags: string[] };
    expect(doc.tags).toEqual(['a', 'x']);
  });

  it('does not duplicate a tag added on both sides', () => {
    const doc = merged(mergeJson(tags(['a']), tags(['a', 'n', 'o'], T2), tags(['a', 'n', 't'], T3))) as { tags: string[] };
    expect(doc.tags).toEqual(['a', 'n', 'o', 't']);
  });

  it('recomputes tag_revision from the merged content instead of carrying either side over', () => {
    const result = mergeJson(tags(['a'], T1, 'r0'), tags(['a', 'o'], T2, 'r-ours'), tags(['a', 't'], T3, 'r-theirs'));
    const doc = merged(result) as Record<string, unknown>;
    expect(doc['tag_revision']).toBe(computeTagRevision(doc));
    expect(doc['tag_revision']).toMatch(/^[0-9a-f]{16}$/);
    expect(doc['tag_revision']).toBe(computeTagRevision({ tags: ['a', 'o', 't'], updated_at: T3 }));
    // Written last, after the merged keys.
    expect(Object.keys(doc)).toEqual(['tags', 'updated_at', 'tag_revision']);
  });

  it('recomputes tag_revision even when only one side changed', () => {
    const doc = merged(mergeJson(tags(['a'], T1, 'r0'), tags(['a'], T1, 'r0'), tags(['a', 'b'], T2, 'whatever'))) as Record<string, unknown>;
    expect(doc['tag_revision']).toBe(computeTagRevision({ tags: ['a', 'b'], updated_at: T2 }));
  });

  it('treats an empty base as a file added on both sides and merges the two', () => {
    const doc = merged(mergeJson('', tags(['x'], T1), tags(['y'], T2))) as { tags: string[]; updated_at: string };
    expect(doc.tags).toEqual(['x', 'y']);
    expect(doc.updated_at).toBe(T2);
  });

  it('writes pretty JSON with 2-space indent and a trailing newline', () => {
    const result = mergeJson(tags(['a']), tags(['a', 'b'], T2), tags(['a'], T1));
    expect(result.ok && result.text).toBe(
      `{\n  "tags": [\n    "a",\n    "b"\n  ],\n  "updated_at": "${T2}",\n  "tag_revision": "${computeTagRevision({ tags: ['a', 'b'], updated_at: T2 })}"\n}\n`,
    );
  });
});

describe('mergeJson: updated_at', () => {
  it('takes the later instant, comparing parsed dates rather than strings', () => {
    // 12:30+02:00 is 10:30Z: earlier than T2 (11:00Z) although it sorts later as a string.
    const doc = merged(mergeJson(j({ updated_at: T1 }), j({ updated_at: '2026-03-14T12:30:00+02:00' }), j({ updated_at: T2 }))) as { updated_at: string };
    expect(doc.updated_at).toBe(T2);
  });

  it('breaks a tie (same instant, different spelling) the same way whichever side is ours', () => {
    const a = '2026-03-14T13:00:00+02:00';
    const forward = merged(mergeJson(j({ updated_at: T1 }), j({ updated_at: a }), j({ updated_at: T2 })));
    const backward = merged(mergeJson(j({ updated_at: T1 }), j({ updated_at: T2 }), j({ updated_at: a })));
    expect(forward).toEqual(backward);
  });

  it('is a conflict when one side is not a valid date', () => {
    const found = conflicts(mergeJson(j({ updated_at: T1 }), j({ updated_at: 'yesterday' }), j({ updated_at: T2 })));
    expect(found).toEqual([{ reason: 'both-modified', path: ['updated_at'], base: T1, ours: 'yesterday', theirs: T2 }]);
  });

  it('applies at any depth (per feedback entry)', () => {
    const doc = merged(mergeJson(j({ e: { updated_at: T1 } }), j({ e: { updated_at: T3 } }), j({ e: { updated_at: T2 } }))) as { e: { updated_at: string } };
    expect(doc.e.updated_at).toBe(T3);
  });

  it('now(): stamps a merged document that neither side had, never moving updated_at backwards', () => {
    const base = j({ a: 1, b: 1, updated_at: T1 });
    const ours = j({ a: 2, b: 1, updated_at: T2 });
    const theirs = j({ a: 1, b: 2, updated_at: T2 });
    expect((merged(mergeJson(base, ours, theirs, { now: () => T3 })) as { updated_at: string }).updated_at).toBe(T3);
    expect((merged(mergeJson(base, ours, theirs, { now: () => T1 })) as { updated_at: string }).updated_at).toBe(T2);
    // Without a clock the merge is deterministic and keeps the later side.
    expect((merged(mergeJson(base, ours, theirs)) as { updated_at: string }).updated_at).toBe(T2);
    // When the result equals one side, nothing new happened: no stamp.
    expect((merged(mergeJson(base, ours, base, { now: () => T3 })) as { updated_at: string }).updated_at).toBe(T2);
  });
});

describe('mergeJson: conflicts and recursion', () => {
  it('reports a scalar changed differently on both sides, with its path and the three values', () => {
    const found = conflicts(mergeJson(j({ meta: { title: 'a', n: 1 } }), j({ meta: { title: 'b', n: 1 } }), j({ meta: { title: 'c', n: 2 } })));
    expect(found).toEqual([{ reason: 'both-modified', path: ['meta', 'title'], base: 'a', ours: 'b', theirs: 'c' }]);
  });

  it('accepts a scalar changed identically on both sides', () => {
    expect(merged(mergeJson(j({ x: 1, y: 1 }), j({ x: 2, y: 1 }), j({ x: 2, y: 3 })))).toEqual({ x: 2, y: 3 });
  });

  it('reports a key added on both sides with different scalar values', () => {
    expect(conflicts(mergeJson(j({}), j({ k: 1 }), j({ k: 2 })))).toEqual([{ reason: 'both-added', path: ['k'], base: undefined, ours: 1, theirs: 2 }]);
  });

  it('recurses into a key added on both sides when both values are objects', () => {
    expect(merged(mergeJson(j({}), j({ k: { a: 1, same: true } }), j({ k: { b: 2, same: true } })))).toEqual({ k: { a: 1, same: true, b: 2 } });
  });

  it('reports a key deleted on one side and changed on the other', () => {
    const found = conflicts(mergeJson(j({ k: 1, z: 0 }), j({ z: 0 }), j({ k: 2, z: 0 })));
    expect(found).toEqual([{ reason: 'modify-delete', path: ['k'], base: 1, ours: undefined, theirs: 2 }]);
  });

  it('respects a key deleted on one side and untouched on the other', () => {
    expect(merged(mergeJson(j({ k: 1, z: 0 }), j({ z: 0 }), j({ k: 1, z: 0, n: 1 })))).toEqual({ z: 0, n: 1 });
  });

  it('reports a type change on one side against a different change on the other', () => {
    expect(conflicts(mergeJson(j({ k: [1] }), j({ k: { a: 1 } }), j({ k: [1, 2] })))[0]?.path).toEqual(['k']);
  });

  it('keeps base key order, then ours new keys, then theirs new keys', () => {
    const result = mergeJson(j({ b: 1, a: 1 }), j({ z: 1, b: 2, a: 1, o: 1 }), j({ t: 1, b: 1, a: 3 }));
    expect(Object.keys(merged(result) as object)).toEqual(['b', 'a', 'z', 'o', 't']);
  });

  it('reports unparseable JSON on any side as an invalid-json conflict naming the side', () => {
    const found = conflicts(mergeJson(j({}), j({ a: 1 }), '{"a": '));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ reason: 'invalid-json', path: [], side: 'theirs' });
    expect(conflicts(mergeJson('{oops', j({}), j({})))[0]).toMatchObject({ reason: 'invalid-json', side: 'base' });
    expect(conflicts(mergeJson(j({}), '', j({})))[0]).toMatchObject({ reason: 'invalid-json', side: 'ours' });
  });

  it('refuses a document nested too deeply to merge as invalid-json instead of overflowing', () => {
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    expect(conflicts(mergeJson('{}', deep, '{"b":1}'))).toEqual([{ reason: 'invalid-json', path: [], side: 'ours', message: 'nested deeper than 500 levels' }]);
  });

  it('keeps every version of an unparseable file in the best-effort text', () => {
    const result = mergeJson('{"v":0}', '{"v":1}', 'not json');
    expect(result.ok).toBe(false);
    expect(result.text).toBe('<<<<<<< ours\n{"v":1}\n||||||| base\n{"v":0}\n=======\nnot json\n>>>>>>> theirs\n');
  });

  it('stores a key named __proto__ as data', () => {
    const doc = merged(mergeJson('{"__proto__":{"x":1}}', '{"__proto__":{"x":1,"o":1}}', '{"__proto__":{"x":1,"t":1}}'));
    expect(Object.getOwnPropertyNames(doc)).toEqual(['__proto__']);
    expect(JSON.stringify(doc)).toBe('{"__proto__":{"x":1,"o":1,"t":1}}');
  });

  it('handles CRLF and a byte order mark', () => {
    expect(merged(mergeJson('\ufeff{\r\n"a": 1\r\n}\r\n', '{"a":1,"b":2}', '{"a":1}'))).toEqual({ a: 1, b: 2 });
  });
});

describe('mergeJson: arrays of objects', () => {
  it('matches elements by id and merges them element-wise', () => {
    const base = j({ items: [{ id: 'a', v: 1, w: 1 }, { id: 'b' }] });
    const ours = j({ items: [{ id: 'a', v: 2, w: 1 }, { id: 'b' }, { id: 'o' }] });
    const theirs = j({ items: [{ id: 'a', v: 1, w: 3 }, { id: 't' }] });
    expect(merged(mergeJson(base, ours, theirs))).toEqual({ items: [{ id: 'a', v: 2, w: 3 }, { id: 'o' }, { id: 't' }] });
  });

  it('matches by test_id and name too, and reports a divergent field with an element path', () => {
    const found = conflicts(mergeJson(j({ r: [{ test_id: 't1', s: 0 }] }), j({ r: [{ test_id: 't1', s: 1 }] }), j({ r: [{ test_id: 't1', s: 2 }] })));
    expect(found).toEqual([{ reason: 'both-modified', path: ['r', '[test_id="t1"]', 's'], base: 0, ours: 1, theirs: 2 }]);
    expect(merged(mergeJson(j({ r: [] }), j({ r: [{ name: 'n', x: 1 }] }), j({ r: [{ name: 'm' }] })))).toEqual({ r: [{ name: 'n', x: 1 }, { name: 'm' }] });
  });

  it('reports an element deleted on one side and changed on the other', () => {
    const result = mergeJson(j({ r: [{ id: 1, v: 0 }, 'keep'] }), j({ r: ['keep'] }), j({ r: [{ id: 1, v: 1 }, 'keep'] }));
    expect(conflicts(result)).toEqual([{ reason: 'modify-delete', path: ['r', '[id=1]'], base: { id: 1, v: 0 }, ours: undefined, theirs: { id: 1, v: 1 } }]);
    // The element is shown in place; the empty ours section says "deleted on our side".
    expect(result.text).toBe(
      [
        '{',
        '  "r": [',
        '<<<<<<< ours',
        '||||||| base',
        '    {\n      "id": 1,\n      "v": 0\n    },',
        '=======',
        '    {\n      "id": 1,\n      "v": 1\n    },',
        '>>>>>>> theirs',
        '    "keep"',
        '  ]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('falls back to whole-element identity when an id repeats with different content', () => {
    const doc = merged(
      mergeJson(
        j({ r: [{ id: 1, v: 0 }] }),
        j({
          r: [
            { id: 1, v: 0 },
            { id: 1, v: 9 },
          ],
        }),
        j({ r: [{ id: 1, v: 0 }, { id: 2 }] }),
      ),
    );
    expect(doc).toEqual({ r: [{ id: 1, v: 0 }, { id: 1, v: 9 }, { id: 2 }] });
  });

  it('merges objects without an identity field as whole values (set semantics)', () => {
    const doc = merged(mergeJson(j({ r: [{ a: 1 }, { a: 2 }] }), j({ r: [{ a: 2 }, { a: 3 }] }), j({ r: [{ a: 1 }, { a: 2 }, { a: 4 }] })));
    expect(doc).toEqual({ r: [{ a: 2 }, { a: 3 }, { a: 4 }] });
  });
});

describe('mergeJson: feedback.json', () => {
  const entry = (feedback: string, reviewer: string, updatedAt: string) => ({ feedback, reviewer, updated_at: updatedAt });
  const base = j({ entries: { t0: entry('fine', 'ann', T1) }, updated_at: T1 });

  it('merges two reviewers commenting on different tests cleanly', () => {
    const ours = j({ entries: { t0: entry('fine', 'ann', T1), t1: entry('flaky', 'ann', T2) }, updated_at: T2 });
    const theirs = j({ entries: { t0: entry('fine', 'ann', T1), t2: entry('wrong tool', 'bob', T3) }, updated_at: T3 });
    expect(merged(mergeJson(base, ours, theirs))).toEqual({
      entries: { t0: entry('fine', 'ann', T1), t1: entry('flaky', 'ann', T2), t2: entry('wrong tool', 'bob', T3) },
      updated_at: T3,
    });
  });

  it('reports the same reviewer editing the same test differently on both sides', () => {
    const ours = j({ entries: { t0: entry('actually broken', 'ann', T2) }, updated_at: T2 });
    const theirs = j({ entries: { t0: entry('fine, but slow', 'ann', T3) }, updated_at: T3 });
    const result = mergeJson(base, ours, theirs);
    expect(conflicts(result)).toEqual([
      { reason: 'both-modified', path: ['entries', 't0', 'feedback'], base: 'fine', ours: 'actually broken', theirs: 'fine, but slow' },
    ]);
    // The readable file puts markers around the one conflicting value and resolves the rest.
    expect(result.text).toBe(
      [
        '{',
        '  "entries": {',
        '    "t0": {',
        '<<<<<<< ours',
        '      "feedback": "actually broken",',
        '||||||| base',
        '      "feedback": "fine",',
        '=======',
        '      "feedback": "fine, but slow",',
        '>>>>>>> theirs',
        '      "reviewer": "ann",',
        `      "updated_at": "${T3}"`,
        '    }',
        '  },',
        `  "updated_at": "${T3}"`,
        '}',
        '',
      ].join('\n'),
    );
  });

  it('reports a test entry deleted on one side and edited on the other', () => {
    const ours = j({ entries: {}, updated_at: T2 });
    const theirs = j({ entries: { t0: entry('changed', 'ann', T3) }, updated_at: T3 });
    expect(conflicts(mergeJson(base, ours, theirs)).map((c) => c.path)).toEqual([['entries', 't0']]);
  });
});

describe('validateTags', () => {
  it('accepts a valid list', () => {
    expect(validateTags(['baseline', 'release-2.1'])).toEqual({ ok: true, tags: ['baseline', 'release-2.1'] });
  });

  it(`rejects more than ${MAX_TAGS} tags`, () => {
    const result = validateTags(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`));
    expect(result).toEqual({ ok: false, errors: [`${MAX_TAGS + 1} tags given; at most ${MAX_TAGS} are allowed — remove 1`] });
    expect(validateTags(Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`)).ok).toBe(true);
  });

  it(`rejects a tag longer than ${MAX_TAG_LENGTH} characters, counting code points`, () => {
    expect(validateTags(['x'.repeat(MAX_TAG_LENGTH)]).ok).toBe(true);
    expect(validateTags(['é'.repeat(MAX_TAG_LENGTH)]).ok).toBe(true);
    expect(validateTags(['😀'.repeat(MAX_TAG_LENGTH)]).ok).toBe(true); // 120 UTF-16 units, 60 characters
    const result = validateTags(['ok', 'x'.repeat(MAX_TAG_LENGTH + 1)]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatch(/^tag #2 "x{24}…" is 61 characters long; at most 60 are allowed$/);
  });

  it('rejects empty, padded, control-character, duplicate and non-string tags, reporting each', () => {
    const result = validateTags(['', ' pad', 'line\nbreak', 'dup', 'dup', 7]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      'tag #1 is empty',
      'tag #2 " pad" has leading or trailing whitespace',
      'tag #3 "line\\nbreak" contains a control character (e.g. a newline)',
      'tag #5 "dup" is a duplicate',
      'tag #6 must be a string, got number',
    ]);
  });

  it('rejects a value that is not an array', () => {
    expect(validateTags('baseline')).toEqual({ ok: false, errors: ['tags must be an array of strings'] });
  });
});

describe('computeTagRevision', () => {
  it('is 16 hex digits, ignores tag_revision and key order, and changes with content', () => {
    const a = computeTagRevision({ tags: ['a'], updated_at: T1, tag_revision: 'x' });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(computeTagRevision({ updated_at: T1, tags: ['a'] })).toBe(a);
    expect(computeTagRevision({ tags: ['a'], updated_at: T1, tag_revision: 'other' })).toBe(a);
    expect(computeTagRevision({ tags: ['b'], updated_at: T1 })).not.toBe(a);
  });
});
