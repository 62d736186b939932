/**
 * json-union: recursive three-way merge of small JSON overlays (`tags.json`, `feedback.json`).
 *
 * For every position (the root, then each object key, then each array element by identity):
 * - unchanged on one side -> the other side's value (a change, an addition or a deletion);
 * - changed identically on both -> that value;
 * - changed differently on both:
 *   - a key named `updated_at` holding two valid dates -> the later one (ties: the greater string);
 *   - two objects -> recurse over the union of keys (a missing base counts as `{}`);
 *   - two arrays -> three-way set merge by element identity (a missing base counts as `[]`):
 *     additions from both kept, removals respected, base order then ours' then theirs'; elements
 *     that are objects with an `id`, `test_id` or `name` are matched by it and merged recursively,
 *     other elements (scalars included) by their canonical JSON;
 *   - anything else (scalars, type changes, deleted on one side and changed on the other) -> conflict.
 * - The root `tag_revision` is never merged: it is dropped from the inputs and recomputed with
 *   computeTagRevision on the result (written last) whenever ours or theirs had one.
 * - Unparseable JSON on any side is a conflict; an empty base means "added on both sides".
 * Output: pretty JSON, 2-space indent, trailing newline; merged objects keep base key order, then
 * ours' new keys, then theirs'. A value taken whole from one side keeps that side's key order.
 */
import { canonicalJson, isJsonObject, jsonEqual, newJsonObject, stripBom, type JsonObject } from '../util/canonical-json.js';
import { wholeFileConflict } from './conflict-markers.js';
import { ConflictNode, renderJson } from './json-render.js';
import { groupByKey, mergeKeyed, type KeyedConflictReason } from './keyed-merge.js';
import { computeTagRevision } from '../overlays/document.js';

export type JsonSide = 'base' | 'ours' | 'theirs';

/**
 * One unresolved position. `path` is the list of object keys from the root; an array element is
 * a segment `[<identity>]`, e.g. `["entries", "t1", "feedback"]` or `["items", "[id=\"a\"]"]`.
 * `undefined` in base/ours/theirs means the value is absent on that side.
 */
export type JsonConflict =
  | {
      readonly reason: KeyedConflictReason;
      readonly path: string[];
      readonly base: unknown;
      readonly ours: unknown;
      readonly theirs: unknown;
    }
  | { readonly reason: 'invalid-json'; readonly path: []; readonly side: JsonSide; readonly message: string };

export interface JsonMergeOptions {
  /**
   * Optional clock (ISO-8601). When given and the merge produced a document that neither side had,
   * the root `updated_at` (if present) is moved to the later of its merged value and now(). Absent
   * by default so merges stay deterministic.
   */
  readonly now?: () => string;
}

export type JsonMergeResult =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      readonly conflicts: JsonConflict[];
      /** Best effort for a human: the merged document with marker blocks holding every version. */
      readonly text: string;
    };

const MISSING: unique symbol = Symbol('missing');
type Slot = unknown;

const sideValues = (slot: Slot): unknown[] => (slot === MISSING ? [] : [slot]);
const publicValue = (slot: Slot): unknown => (slot === MISSING ? undefined : slot);
const own = (obj: JsonObject, key: string): Slot => (Object.hasOwn(obj, key) ? obj[key] : MISSING);

/** The later of two timestamps, or undefined unless both are strings that parse as dates. */
export function laterTimestamp(a: unknown, b: unknown): string | undefined {
  if (typeof a !== 'string' || typeof b !== 'string') return undefined;
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  if (Number.isNaN(ta) || Number.isNaN(tb)) return undefined;
  if (ta !== tb) return ta > tb ? a : b;
  return a > b ? a : b; // same instant written differently: any fixed choice keeps the merge symmetric
}

const IDENTITY_FIELDS = ['id', 'test_id', 'name'] as const;

function elementIdentity(value: unknown, memo: WeakMap<object, string>): string {
  if (isJsonObject(value)) {
    for (const field of IDENTITY_FIELDS) {
      const id = value[field];
      if (typeof id === 'string' || typeof id === 'number') return `${field}=${JSON.stringify(id)}`;
    }
  }
  return canonicalJson(value, memo);
}

interface Element {
  readonly value: unknown;
}
const toElements = (values: readonly unknown[]): Element[] => values.map((value) => ({ value }));

class JsonMerger {
  readonly conflicts: JsonConflict[] = [];
  /** Canonical forms computed so far: every level of the recursion compares the same subtrees. */
  private readonly memo = new WeakMap<object, string>();

  private same(a: Slot, b: Slot): boolean {
    if (a === MISSING || b === MISSING) return a === b;
    return a === b || canonicalJson(a, this.memo) === canonicalJson(b, this.memo);
  }

  mergeValue(path: string[], b: Slot, o: Slot, t: Slot): Slot {
    if (this.same(o, t)) return o;
    if (this.same(b, o)) return t;
    if (this.same(b, t)) return o;
    if (o !== MISSING && t !== MISSING) {
      if (path[path.length - 1] === 'updated_at') {
        const later = laterTimestamp(o, t);
        if (later !== undefined) return later;
      }
      if (isJsonObject(o) && isJsonObject(t) && (b === MISSING || isJsonObject(b))) {
        return this.mergeObjects(path, b === MISSING ? newJsonObject() : b, o, t);
      }
      if (Array.isArray(o) && Array.isArray(t) && (b === MISSING || Array.isArray(b))) {
        return this.mergeArrays(path, b === MISSING ? [] : (b as unknown[]), o, t);
      }
    }
    return this.conflict(path, b, o, t);
  }

  private conflict(path: string[], b: Slot, o: Slot, t: Slot): ConflictNode {
    const reason: KeyedConflictReason = b === MISSING ? 'both-added' : o === MISSING || t === MISSING ? 'modify-delete' : 'both-modified';
    this.conflicts.push({ reason, path, base: publicValue(b), ours: publicValue(o), theirs: publicValue(t) });
    return new ConflictNode(sideValues(b), sideValues(o), sideValues(t));
  }

  private mergeObjects(path: string[], b: JsonObject, o: JsonObject, t: JsonObject): JsonObject {
    const keys = Object.keys(b);
    const seen = new Set(keys);
    for (const key of [...Object.keys(o), ...Object.keys(t)]) {
      if (!seen.has(key)) {
        seen.add(key);
        keys.push(key);
      }
    }
    const result = newJsonObject();
    for (const key of keys) {
      const merged = this.mergeValue([...path, key], own(b, key), own(o, key), own(t, key));
      if (merged !== MISSING) result[key] = merged;
    }
    return result;
  }

  private mergeArrays(path: string[], b: readonly unknown[], o: readonly unknown[], t: readonly unknown[]): unknown[] {
    // Matching by id only works when an id names one element per side; if some side repeats an id
    // with different content, match every element of this array by its whole content instead.
    const sameElement = (x: Element, y: Element): boolean => this.same(x.value, y.value);
    let keyOf = (element: Element): string => elementIdentity(element.value, this.memo);
    const group = (values: readonly unknown[]) => groupByKey(toElements(values), keyOf, sameElement);
    let sides = [group(b), group(o), group(t)] as const;
    if (sides.some((side) => [...side.groups.values()].some((items) => items.length > 1))) {
      keyOf = (element) => canonicalJson(element.value, this.memo);
      sides = [group(b), group(o), group(t)] as const;
    }
    const steps = mergeKeyed(sides[0], sides[1], sides[2], {
      same: sameElement,
      mergeBoth: (key, bItems, oItems, tItems) => {
        const at = [...path, `[${key}]`];
        return [{ value: this.mergeValue(at, bItems?.[0]?.value ?? MISSING, oItems[0]?.value ?? MISSING, tItems[0]?.value ?? MISSING) }];
      },
    });
    return steps.map((step) => {
      if (step.kind === 'take') return step.items[0]?.value;
      const slotOf = (items: readonly Element[]): Slot => (items.length === 0 ? MISSING : items[0]?.value);
      return this.conflict([...path, `[${step.key}]`], slotOf(step.base), slotOf(step.ours), slotOf(step.theirs));
    });
  }
}

type Parsed = { ok: true; value: Slot } | { ok: false; message: string };

/**
 * The merge recurses once per nesting level; overlays are a few levels deep, so anything deeper
 * than this is refused up front instead of overflowing the stack half-way through a merge.
 */
const MAX_DEPTH = 500;

function tooDeep(root: unknown): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [value, depth] = top;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_DEPTH) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

function parseSide(text: string, emptyIsMissing: boolean): Parsed {
  const body = stripBom(text);
  if (body.trim() === '') return emptyIsMissing ? { ok: true, value: MISSING } : { ok: false, message: 'empty document' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  return tooDeep(value) ? { ok: false, message: `nested deeper than ${MAX_DEPTH} levels` } : { ok: true, value };
}

function withoutTagRevision(value: Slot): Slot {
  if (!isJsonObject(value) || !Object.hasOwn(value, 'tag_revision')) return value;
  const copy = newJsonObject();
  for (const key of Object.keys(value)) if (key !== 'tag_revision') copy[key] = value[key];
  return copy;
}

const hasTagRevision = (value: Slot): boolean => isJsonObject(value) && Object.hasOwn(value, 'tag_revision');

function stampNow(merged: Slot, o: Slot, t: Slot, now: () => string): Slot {
  if (!isJsonObject(merged) || !Object.hasOwn(merged, 'updated_at')) return merged;
  if (jsonEqual(merged, o) || jsonEqual(merged, t)) return merged;
  const stamp = now();
  const later = laterTimestamp(merged['updated_at'], stamp) ?? (Number.isNaN(Date.parse(stamp)) ? undefined : stamp);
  if (later === undefined) return merged;
  const copy = newJsonObject();
  for (const key of Object.keys(merged)) copy[key] = key === 'updated_at' ? later : merged[key];
  return copy;
}

/** Three-way merge of JSON texts. Pure (apart from the optional clock); never throws on bad input. */
export function mergeJson(base: string, ours: string, theirs: string, opts: JsonMergeOptions = {}): JsonMergeResult {
  const parsed = { base: parseSide(base, true), ours: parseSide(ours, false), theirs: parseSide(theirs, false) };
  const invalid: JsonConflict[] = [];
  for (const side of ['base', 'ours', 'theirs'] as const) {
    const p = parsed[side];
    if (!p.ok) invalid.push({ reason: 'invalid-json', path: [], side, message: p.message });
  }
  if (invalid.length > 0 || !parsed.base.ok || !parsed.ours.ok || !parsed.theirs.ok) {
    return { ok: false, conflicts: invalid, text: wholeFileConflict(base, ours, theirs) };
  }

  const o = withoutTagRevision(parsed.ours.value);
  const t = withoutTagRevision(parsed.theirs.value);
  const merger = new JsonMerger();
  let merged = merger.mergeValue([], withoutTagRevision(parsed.base.value), o, t);
  if (merger.conflicts.length > 0) return { ok: false, conflicts: merger.conflicts, text: renderJson(merged) };

  if (opts.now) merged = stampNow(merged, o, t, opts.now);
  if (isJsonObject(merged) && (hasTagRevision(parsed.ours.value) || hasTagRevision(parsed.theirs.value))) {
    const withRevision = newJsonObject();
    for (const key of Object.keys(merged)) withRevision[key] = merged[key];
    withRevision['tag_revision'] = computeTagRevision(merged);
    merged = withRevision;
  }
  // No conflict nodes left: the native serializer prints the same bytes as renderJson, much faster.
  return { ok: true, text: `${JSON.stringify(merged, null, 2)}\n` };
}
