import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, computeTagRevision, mergeJson, mergeJsonl, type JsonMergeResult, type JsonlMergeResult } from '../src/merge/index.js';
import { renderJson } from '../src/merge/json-render.js';

const RUNS = { numRuns: 200 };

// ---------------------------------------------------------------------------------------------
// JSONL: files are sets of rows drawn from a small universe, so sides overlap and collide often.
// ---------------------------------------------------------------------------------------------

/** One row: an identified index row in one of three versions, a row without id, or a non-JSON line. */
const rowLine = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), fc.integer({ min: 0, max: 2 }))
      .map(([id, v]) => JSON.stringify({ projection_identity: { id }, v })),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 5 }).map((n) => JSON.stringify({ plain: n })) },
  { weight: 1, arbitrary: fc.constantFrom('not json', '{"half":') },
);

/** Identity as the default merge sees it, to build files with one version per identity. */
function identityOf(line: string): string {
  try {
    const value = JSON.parse(line) as { projection_identity?: { id: string } };
    return value.projection_identity ? `id:${value.projection_identity.id}` : line;
  } catch {
    return line;
  }
}

/** A JSONL file: distinct identities, random order, LF or CRLF, with or without a final newline. */
const jsonlFile = fc
  .tuple(fc.uniqueArray(rowLine, { selector: identityOf, maxLength: 8 }), fc.boolean(), fc.boolean())
  .map(([lines, crlf, finalNewline]) => ({ lines, text: lines.join(crlf ? '\r\n' : '\n') + (finalNewline && lines.length > 0 ? '\n' : '') }));

type JsonlFile = { lines: string[]; text: string };

const linesOf = (text: string): string[] => text.split('\n').filter((line) => line !== '');
const setOf = (lines: readonly string[]): string[] => [...new Set(lines)].sort();

function assertWellFormed(result: JsonlMergeResult): void {
  expect(result.text === '' || result.text.endsWith('\n')).toBe(true);
  expect(result.text).not.toContain('\r');
}

describe('jsonl-union properties', () => {
  it('merge(base, x, x) has exactly the rows of x', () => {
    fc.assert(
      fc.property(jsonlFile, jsonlFile, (base: JsonlFile, x: JsonlFile) => {
        const result = mergeJsonl(base.text, x.text, x.text);
        expect(result.ok).toBe(true);
        assertWellFormed(result);
        expect(setOf(linesOf(result.text))).toEqual(setOf(x.lines));
        expect(linesOf(result.text)).toHaveLength(x.lines.length); // each row once
      }),
      RUNS,
    );
  });

  it('merge(base, base, y) has exactly the rows of y', () => {
    fc.assert(
      fc.property(jsonlFile, jsonlFile, (base: JsonlFile, y: JsonlFile) => {
        const result = mergeJsonl(base.text, base.text, y.text);
        expect(result.ok).toBe(true);
        expect(setOf(linesOf(result.text))).toEqual(setOf(y.lines));
        // ...and symmetrically when theirs is the unchanged side.
        expect(setOf(linesOf(mergeJsonl(base.text, y.text, base.text).text))).toEqual(setOf(y.lines));
      }),
      RUNS,
    );
  });

  it('is commutative up to order: same rows, same verdict, same conflicting identities', () => {
    fc.assert(
      fc.property(jsonlFile, jsonlFile, jsonlFile, (base: JsonlFile, x: JsonlFile, y: JsonlFile) => {
        const xy = mergeJsonl(base.text, x.text, y.text);
        const yx = mergeJsonl(base.text, y.text, x.text);
        assertWellFormed(xy);
        expect(xy.ok).toBe(yx.ok);
        if (xy.ok && yx.ok) expect(setOf(linesOf(xy.text))).toEqual(setOf(linesOf(yx.text)));
        if (!xy.ok && !yx.ok) expect(setOf(xy.conflicts.map((c) => c.identity))).toEqual(setOf(yx.conflicts.map((c) => c.identity)));
      }),
      RUNS,
    );
  });

  it('never drops a row either side added or changed, and a clean merge invents nothing', () => {
    fc.assert(
      fc.property(jsonlFile, jsonlFile, jsonlFile, (base: JsonlFile, x: JsonlFile, y: JsonlFile) => {
        const result = mergeJsonl(base.text, x.text, y.text);
        const out = new Set(linesOf(result.text));
        const baseLines = new Set(base.lines);
        // Holds for clean and conflicted results alike: a conflict keeps both versions in the text.
        for (const line of [...x.lines, ...y.lines]) if (!baseLines.has(line)) expect(out.has(line)).toBe(true);
        if (result.ok) {
          const inputs = new Set([...base.lines, ...x.lines, ...y.lines]);
          for (const line of out) expect(inputs.has(line)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('respects deletions: a base row one side deleted and the other kept unchanged is gone', () => {
    fc.assert(
      fc.property(jsonlFile, jsonlFile, (base: JsonlFile, x: JsonlFile) => {
        const y = base; // theirs keeps every base row unchanged
        const result = mergeJsonl(base.text, x.text, y.text);
        const xIdentities = new Set(x.lines.map(identityOf));
        const out = new Set(linesOf(result.text));
        for (const line of base.lines) if (!xIdentities.has(identityOf(line))) expect(out.has(line)).toBe(false);
      }),
      RUNS,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// json-union: overlay-like documents from small domains.
// ---------------------------------------------------------------------------------------------

const TIMES = ['2026-03-14T10:00:00.000Z', '2026-03-14T11:00:00.000Z', '2026-03-14T12:00:00+01:00', 'not a date'];
const scalar = fc.constantFrom<unknown>(0, 1, 'a', 'b', true, null);
const entry = fc.record(
  { feedback: fc.constantFrom('x', 'y'), reviewer: fc.constantFrom('ann', 'bob'), updated_at: fc.constantFrom(...TIMES) },
  { requiredKeys: [] },
);
const doc = fc.record(
  {
    tags: fc.array(fc.constantFrom('t1', 't2', 't3', 't4'), { maxLength: 5 }),
    entries: fc.dictionary(fc.constantFrom('t1', 't2', 't3'), entry, { maxKeys: 3 }),
    items: fc.array(fc.record({ id: fc.constantFrom('i1', 'i2', 'i3'), v: scalar }), { maxLength: 3 }),
    title: scalar,
    updated_at: fc.constantFrom(...TIMES),
    tag_revision: fc.constantFrom('r1', 'r2'),
  },
  { requiredKeys: [] },
);
const docText = doc.map((value) => JSON.stringify(value, null, 2));
const baseText = fc.option(docText, { nil: '' }); // '' = file added on both sides

function withoutRevision(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const { tag_revision: _ignored, ...rest } = value as Record<string, unknown>;
  return rest;
}

function parsedClean(result: JsonMergeResult): Record<string, unknown> {
  expect(result.ok).toBe(true);
  expect(result.text.endsWith('}\n')).toBe(true);
  return JSON.parse(result.text) as Record<string, unknown>;
}

/** Sort every array by canonical JSON: compares two merges that differ only in addition order. */
function orderless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(orderless).sort((a, b) => (canonicalJson(a) < canonicalJson(b) ? -1 : 1));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, orderless(v)]));
  return value;
}

describe('json-union properties', () => {
  it('merge(base, x, x) = x, with tag_revision recomputed', () => {
    fc.assert(
      fc.property(baseText, docText, (base: string, x: string) => {
        const out = parsedClean(mergeJson(base, x, x));
        const expected = JSON.parse(x) as Record<string, unknown>;
        expect(withoutRevision(out)).toEqual(withoutRevision(expected));
        expect('tag_revision' in out).toBe('tag_revision' in expected);
        if ('tag_revision' in out) expect(out['tag_revision']).toBe(computeTagRevision(out));
      }),
      RUNS,
    );
  });

  it('merge(base, base, y) = y and merge(base, y, base) = y, tag_revision aside', () => {
    fc.assert(
      fc.property(docText, docText, (base: string, y: string) => {
        const expected = withoutRevision(JSON.parse(y));
        expect(withoutRevision(parsedClean(mergeJson(base, base, y)))).toEqual(expected);
        expect(withoutRevision(parsedClean(mergeJson(base, y, base)))).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('is commutative up to order: same verdict, same conflicting paths, same content', () => {
    fc.assert(
      fc.property(baseText, docText, docText, (base: string, x: string, y: string) => {
        const xy = mergeJson(base, x, y);
        const yx = mergeJson(base, y, x);
        expect(xy.ok).toBe(yx.ok);
        if (xy.ok && yx.ok) {
          // tag_revision hashes the merged order, which legitimately differs; compare the rest.
          expect(orderless(withoutRevision(JSON.parse(xy.text)))).toEqual(orderless(withoutRevision(JSON.parse(yx.text))));
        }
        if (!xy.ok && !yx.ok) {
          const paths = (r: typeof xy) => (r.ok ? [] : r.conflicts.map((c) => JSON.stringify(c.path)).sort());
          expect(paths(xy)).toEqual(paths(yx));
        }
      }),
      RUNS,
    );
  });

  it('never loses a tag added on either side when the merge is clean', () => {
    fc.assert(
      fc.property(docText, docText, docText, (base: string, x: string, y: string) => {
        const result = mergeJson(base, x, y);
        if (!result.ok) return;
        const tagsOf = (text: string): string[] => (JSON.parse(text) as { tags?: string[] }).tags ?? [];
        const baseTags = new Set(tagsOf(base));
        const out = new Set(tagsOf(result.text));
        for (const tag of [...tagsOf(x), ...tagsOf(y)]) if (!baseTags.has(tag)) expect(out.has(tag)).toBe(true);
      }),
      RUNS,
    );
  });
});

describe('rendering and canonical form', () => {
  it('renderJson matches JSON.stringify(value, null, 2) for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const normalized: unknown = JSON.parse(JSON.stringify(value));
        expect(renderJson(normalized)).toBe(`${JSON.stringify(normalized, null, 2)}\n`);
      }),
      RUNS,
    );
  });

  it('canonicalJson ignores key order and round-trips to the same value', () => {
    const reversed = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reversed);
      if (value !== null && typeof value === 'object')
        return Object.fromEntries(
          Object.entries(value)
            .reverse()
            .map(([k, v]) => [k, reversed(v)]),
        );
      return value;
    };
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const normalized: unknown = JSON.parse(JSON.stringify(value));
        const canon = canonicalJson(normalized);
        expect(canonicalJson(reversed(normalized))).toBe(canon);
        expect(JSON.parse(canon)).toEqual(normalized);
      }),
      RUNS,
    );
  });
});
