/**
 * Canonical JSON: the one serialization used to decide whether two JSON values are "the same".
 *
 * Object keys are sorted (UTF-16 code unit order, like `Array.prototype.sort`) and no whitespace
 * is emitted, so two documents that differ only in key order or formatting compare equal. Every
 * merge in this directory decides "same content" through this function; equal raw text is only a
 * shortcut.
 */

/** A JSON object as produced by `JSON.parse` (or built by the merges, possibly null-prototype). */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not an array, not null). Accepts null-prototype objects. */
export function isJsonObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** True when every object in the value already lists its keys in sorted order. */
function keysSortedDeep(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every((item: unknown) => keysSortedDeep(item));
  const obj = value as JsonObject;
  const keys = Object.keys(obj);
  // Check this level's order first: an unsorted object fails without walking its children.
  for (let i = 1; i < keys.length; i++) if (!((keys[i - 1] as string) < (keys[i] as string))) return false;
  return keys.every((key) => keysSortedDeep(obj[key]));
}

/**
 * Canonical JSON of a parsed JSON value: sorted keys, no whitespace. A recursive merge asks for
 * the same subtrees again at every level; passing a `memo` (keyed by object identity, one per
 * merge) makes each object serialize once instead of once per ancestor.
 */
export function canonicalJson(value: unknown, memo?: WeakMap<object, string>): string {
  // undefined never comes out of JSON.parse; map it to "null" so the function is total.
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const cached = memo?.get(value);
  if (cached !== undefined) return cached;
  let out: string;
  // Fast path: subtrees whose keys are already sorted (scalar arrays, small nested objects, rows
  // written by a sorting serializer) go through the native JSON.stringify, several times faster
  // than concatenating strings by hand.
  if (keysSortedDeep(value)) out = JSON.stringify(value);
  else if (Array.isArray(value)) out = `[${value.map((item: unknown) => canonicalJson(item, memo)).join(',')}]`;
  else {
    const obj = value as JsonObject;
    const keys = Object.keys(obj).sort();
    out = `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(obj[key], memo)}`).join(',')}}`;
  }
  memo?.set(value, out);
  return out;
}

/** Structural equality of two JSON values (key order and formatting ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * A fresh object without a prototype. Merged objects are built this way so that a key literally
 * named `__proto__` (legal in JSON) is stored as data instead of re-pointing the prototype.
 */
export function newJsonObject(): JsonObject {
  return Object.create(null) as JsonObject;
}

/** Strip a UTF-8 byte order mark, which `JSON.parse` would otherwise reject. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode UTF-8 strictly, or null. Replacing invalid bytes with U+FFFD and writing the text back
 * would silently corrupt a file, so callers treat non-UTF-8 input as "cannot merge".
 */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    // not UTF-8: the caller treats the bytes as binary
    return null;
  }
}
