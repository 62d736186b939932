import { describe, expect, it } from 'vitest';
import { catalogRowIdentity, defaultRowIdentity, indexRowIdentity, mergeJsonl, type JsonlMergeResult, type RowIdentity } from '../src/merge/index.js';

/** An index.jsonl row with a projection identity. */
const row = (id: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ projection_identity: { id }, test_id: id, score: 1, ...extra });
const file = (...lines: string[]): string => lines.map((line) => `${line}\n`).join('');

function clean(result: JsonlMergeResult): string {
  if (!result.ok) throw new Error(`expected a clean merge, got ${JSON.stringify(result.conflicts)}`);
  return result.text;
}

describe('mergeJsonl: set semantics', () => {
  it('keeps rows appended on both sides once each, base first, then ours, then theirs', () => {
    const base = file(row('a'), row('b'));
    const ours = file(row('a'), row('b'), row('o1'), row('o2'));
    const theirs = file(row('a'), row('b'), row('t1'));
    expect(clean(mergeJsonl(base, ours, theirs))).toBe(file(row('a'), row('b'), row('o1'), row('o2'), row('t1')));
  });

  it('respects a deletion on one side when the other side left the row alone (no resurrection)', () => {
    const base = file(row('a'), row('b'), row('c'));
    const ours = file(row('a'), row('c'));
    const theirs = file(row('a'), row('b'), row('c'), row('t1'));
    expect(clean(mergeJsonl(base, ours, theirs))).toBe(file(row('a'), row('c'), row('t1')));
  });

  it('deletes a row deleted on both sides', () => {
    const base = file(row('a'), row('b'));
    expect(clean(mergeJsonl(base, file(row('a')), file(row('a'))))).toBe(file(row('a')));
  });

  it('does not duplicate a row both sides appended identically', () => {
    const base = file(row('a'));
    const both = file(row('a'), row('n'));
    expect(clean(mergeJsonl(base, both, both))).toBe(both);
  });

  it('treats a re-formatted row (key order, spaces) as unchanged, not as a new row', () => {
    const base = file('{"projection_identity":{"id":"a"},"x":1,"y":2}');
    const ours = file('{ "y": 2, "x": 1, "projection_identity": { "id": "a" } }');
    const theirs = file('{"projection_identity":{"id":"a"},"x":1,"y":2}', row('t'));
    const merged = clean(mergeJsonl(base, ours, theirs));
    expect(merged.trim().split('\n')).toHaveLength(2);
  });

  it('collapses identical duplicate lines within one side (a row is kept once)', () => {
    const merged = clean(mergeJsonl('', file(row('a'), row('a')), file(row('b'))));
    expect(merged).toBe(file(row('a'), row('b')));
  });

  it('takes a one-sided edit of a row', () => {
    const base = file(row('a'), row('b'));
    const ours = file(row('a', { score: 0 }), row('b'));
    const theirs = file(row('a'), row('b'), row('t'));
    expect(clean(mergeJsonl(base, ours, theirs))).toBe(file(row('a', { score: 0 }), row('b'), row('t')));
  });

  it('accepts an identical edit made on both sides', () => {
    const base = file(row('a'));
    const edited = file(row('a', { score: 0.5 }));
    expect(clean(mergeJsonl(base, edited, edited))).toBe(edited);
  });

  it('returns an empty text (no newline) when every row is gone', () => {
    expect(clean(mergeJsonl(file(row('a')), '', file(row('a'))))).toBe('');
  });
});

describe('mergeJsonl: conflicts', () => {
  it('reports the same row changed differently on both sides, keeping both versions in the text', () => {
    const base = file(row('a'), row('b'));
    const ours = file(row('a', { score: 0.1 }), row('b'));
    const theirs = file(row('a', { score: 0.9 }), row('b'));
    const result = mergeJsonl(base, ours, theirs);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.conflicts).toEqual([
      { identity: 'projection_identity.id:a', reason: 'both-modified', base: [row('a')], ours: [row('a', { score: 0.1 })], theirs: [row('a', { score: 0.9 })] },
    ]);
    expect(result.text).toBe(
      ['<<<<<<< ours', row('a', { score: 0.1 }), '||||||| base', row('a'), '=======', row('a', { score: 0.9 }), '>>>>>>> theirs', row('b'), ''].join('\n'),
    );
  });

  it('reports the same identity added on both sides with different content', () => {
    const result = mergeJsonl('', file(row('n', { score: 0 })), file(row('n', { score: 1 })));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.conflicts.map((c) => c.reason)).toEqual(['both-added']);
    expect(result.text).toContain(row('n', { score: 0 }));
    expect(result.text).toContain(row('n', { score: 1 }));
  });

  it('reports a row changed on one side and deleted on the other', () => {
    const base = file(row('a'), row('b'));
    const result = mergeJsonl(base, file(row('b')), file(row('a', { score: 0 }), row('b')));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.conflicts).toHaveLength(1);
    expect(result.conflicts[0]).toMatchObject({ reason: 'modify-delete', ours: [], theirs: [row('a', { score: 0 })] });
  });

  it('still merges the clean rows around a conflict in the best-effort text', () => {
    const base = file(row('a'));
    const result = mergeJsonl(base, file(row('a', { v: 1 }), row('o')), file(row('a', { v: 2 }), row('t')));
    expect(result.ok).toBe(false);
    expect(result.text).toContain(`${row('o')}\n`);
    expect(result.text).toContain(`${row('t')}\n`);
  });
});

describe('mergeJsonl: robustness', () => {
  it('keeps a line that is not JSON as an opaque row and never throws', () => {
    const base = file(row('a'));
    const ours = file(row('a'), '{not json', 'plain text');
    const theirs = file(row('a'), '{"half":');
    expect(clean(mergeJsonl(base, ours, theirs))).toBe(file(row('a'), '{not json', 'plain text', '{"half":'));
  });

  it('respects the deletion of an opaque line', () => {
    const base = file('garbage line', row('a'));
    expect(clean(mergeJsonl(base, file(row('a')), base))).toBe(file(row('a')));
  });

  it('keeps a row nested too deeply to canonicalize as an opaque row instead of crashing', () => {
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    expect(clean(mergeJsonl('', file(deep), file(row('t'))))).toBe(file(deep, row('t')));
  });

  it('ignores blank and whitespace-only lines', () => {
    const base = `${row('a')}\n\n   \n`;
    const ours = `\n${row('a')}\n \t\n\u00a0\n${row('o')}\n\n`;
    expect(clean(mergeJsonl(base, ours, base))).toBe(file(row('a'), row('o')));
  });

  it('handles CRLF input and writes LF with a trailing newline', () => {
    const base = `${row('a')}\r\n`;
    const ours = `${row('a')}\r\n${row('o')}\r\n`;
    const theirs = `${row('a')}\n${row('t')}`; // no final newline
    expect(clean(mergeJsonl(base, ours, theirs))).toBe(file(row('a'), row('o'), row('t')));
  });

  it('handles an empty base (file added on both sides)', () => {
    expect(clean(mergeJsonl('', file(row('o')), file(row('t'))))).toBe(file(row('o'), row('t')));
  });

  /**
   * Each line is parsed and keyed at most once, whatever the size: the identity function is called
   * no more often than there are lines in base, ours and theirs together (the shared prefix of an
   * append-only file is keyed once, through base). Counted, not timed: how fast a merge runs is
   * measured by bench/sync.bench.mjs, where a load spike cannot fail a test.
   */
  function expectKeyedOnce(merge: (identity: RowIdentity) => unknown, identity: RowIdentity, texts: readonly string[]): void {
    let calls = 0;
    merge((value, line) => {
      calls++;
      return identity(value, line);
    });
    const lines = texts.reduce((n, text) => n + text.split('\n').filter((line) => line !== '').length, 0);
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(lines);
  }

  it('merges 10,000 appended index rows per side (projection identity), keying each line once', () => {
    const mk = (p: string, n: number) => Array.from({ length: n }, (_, i) => row(`${p}${i}`, { suite: 's', target: 't' }));
    const baseRows = mk('b', 2_000);
    const base = file(...baseRows);
    const ours = file(...baseRows, ...mk('o', 10_000));
    const theirs = file(...baseRows, ...mk('t', 10_000));
    expect(clean(mergeJsonl(base, ours, theirs, { identity: indexRowIdentity })).split('\n')).toHaveLength(22_001);
    expectKeyedOnce((identity) => mergeJsonl(base, ours, theirs, { identity }), indexRowIdentity, [base, ours, theirs]);
  });

  it('merges 10,000 appended catalog rows per side (run_id identity), keying each line once', () => {
    const mk = (p: string) =>
      Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ run_id: `${p}/2026-01-01T00-00-${i}Z`, pass_rate: 1, counts: { total: 3 } }));
    const ours = file(...mk('o'));
    const theirs = file(...mk('t'));
    expect(clean(mergeJsonl('', ours, theirs, { identity: catalogRowIdentity })).split('\n')).toHaveLength(20_001);
    expectKeyedOnce((identity) => mergeJsonl('', ours, theirs, { identity }), catalogRowIdentity, [ours, theirs]);
  });

  it('keys each line once with content identity too (rows without ids): 10,000 rows per side', () => {
    const plain = (p: string, i: number): string => JSON.stringify({ test_id: `${p}${i}`, score: i % 2, target: 'x' });
    const ours = file(...Array.from({ length: 10_000 }, (_, i) => plain('o', i)));
    const theirs = file(...Array.from({ length: 10_000 }, (_, i) => plain('t', i)));
    expect(clean(mergeJsonl('', ours, theirs)).split('\n')).toHaveLength(20_001);
    expectKeyedOnce((identity) => mergeJsonl('', ours, theirs, { identity }), defaultRowIdentity, [ours, theirs]);
  });
});

describe('row identities', () => {
  const catalog = (runId: string, passRate: number): string => JSON.stringify({ run_id: runId, experiment: 'e', pass_rate: passRate });

  it('indexRowIdentity uses projection_identity.id, else the canonical JSON (never run_id)', () => {
    expect(indexRowIdentity({ projection_identity: { id: 'p1' }, x: 1 }, '')).toBe('projection_identity.id:p1');
    expect(indexRowIdentity({ run_id: 'e/1', b: 2, a: 1 }, '')).toBe('json:{"a":1,"b":2,"run_id":"e/1"}');
  });

  it('catalogRowIdentity uses run_id, else the canonical JSON', () => {
    expect(catalogRowIdentity({ run_id: 'e/2026-01-01T00-00-00Z', pass_rate: 1 }, '')).toBe('run_id:e/2026-01-01T00-00-00Z');
    expect(catalogRowIdentity({ other: true }, '')).toBe('json:{"other":true}');
  });

  it('defaultRowIdentity prefers the projection id, then run_id only for catalog-shaped rows', () => {
    expect(defaultRowIdentity({ projection_identity: { id: 'p' }, run_id: 'r' }, '')).toBe('projection_identity.id:p');
    expect(defaultRowIdentity({ run_id: 'r', pass_rate: 1 }, '')).toBe('run_id:r');
    // An index row without a projection id still carries its run_id: keying it by run_id would
    // collapse a whole run into one row, so content identity is used instead.
    expect(defaultRowIdentity({ run_id: 'r', test_id: 't' }, '')).toBe('json:{"run_id":"r","test_id":"t"}');
  });

  it('with catalog identity, two writers re-publishing one run differently conflict', () => {
    const result = mergeJsonl('', file(catalog('e/1', 0.5)), file(catalog('e/1', 0.7)), { identity: catalogRowIdentity });
    expect(result.ok).toBe(false);
  });

  it('with catalog identity, a one-sided update of a run line replaces it instead of adding one', () => {
    const base = file(catalog('e/1', 0.5));
    const merged = clean(mergeJsonl(base, file(catalog('e/1', 0.6)), file(catalog('e/1', 0.5), catalog('e/2', 1)), { identity: catalogRowIdentity }));
    expect(merged).toBe(file(catalog('e/1', 0.6), catalog('e/2', 1)));
  });

  it('a custom identity function is honoured', () => {
    const byTest = (value: unknown): string => String((value as { test_id?: unknown }).test_id);
    const result = mergeJsonl('', file('{"test_id":"x","v":1}'), file('{"test_id":"x","v":2}'), { identity: byTest });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.conflicts[0]?.identity).toBe('x');
  });
});
