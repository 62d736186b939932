/**
 * The three-way keyed set merge shared by jsonl-union (rows of a file) and json-union (elements
 * of an array). Items are grouped by an identity key; each key is then resolved on its own:
 *
 *   ours == theirs          -> that content (also covers "deleted on both" and "added identically")
 *   base == ours            -> theirs (only theirs touched it: change, addition or deletion)
 *   base == theirs          -> ours
 *   otherwise               -> changed differently on both sides: a conflict, unless the caller
 *                              can merge the two versions itself (json-union recurses into objects)
 *
 * Output order is deterministic: keys in base order, then keys new in ours (ours' order), then
 * keys new only in theirs (theirs' order). Everything is Map based: O(n) in the number of items.
 */

export type KeyedConflictReason = 'both-modified' | 'both-added' | 'modify-delete';

/** Items of one side grouped by key. `keys` is the first-occurrence order. */
export interface KeyedSide<T> {
  readonly keys: readonly string[];
  readonly groups: ReadonlyMap<string, readonly T[]>;
}

export type KeyedStep<T> =
  | { readonly key: string; readonly kind: 'take'; readonly items: readonly T[] }
  | {
      readonly key: string;
      readonly kind: 'conflict';
      readonly reason: KeyedConflictReason;
      /** Empty when the key is absent on that side. */
      readonly base: readonly T[];
      readonly ours: readonly T[];
      readonly theirs: readonly T[];
    };

export interface KeyedMergeOptions<T> {
  /** Content equality of two items that share a key. */
  readonly same: (a: T, b: T) => boolean;
  /**
   * Called when both sides still have the key and changed it differently. Return the merged
   * items, or null for a genuine conflict. Absent: always a conflict.
   */
  readonly mergeBoth?: (key: string, base: readonly T[] | undefined, ours: readonly T[], theirs: readonly T[]) => readonly T[] | null;
}

/**
 * Group items by key. Items identical to one already in their group are dropped: this is a set
 * merge, a row is kept once. Items sharing a key with *different* content are all kept (never lose
 * data), in order of appearance; such a group only equals another group with the same contents.
 */
export function groupByKey<T>(items: Iterable<T>, keyOf: (item: T) => string, same: (a: T, b: T) => boolean): KeyedSide<T> {
  const keys: string[] = [];
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) {
      keys.push(key);
      groups.set(key, [item]);
    } else if (!group.some((existing) => same(existing, item))) {
      group.push(item);
    }
  }
  return { keys, groups };
}

function groupsEqual<T>(a: readonly T[] | undefined, b: readonly T[] | undefined, same: (x: T, y: T) => boolean): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!same(a[i] as T, b[i] as T)) return false;
  }
  return true;
}

/** Resolve one key; undefined result means the key is absent from the merge. */
function resolveKey<T>(
  key: string,
  b: readonly T[] | undefined,
  o: readonly T[] | undefined,
  t: readonly T[] | undefined,
  opts: KeyedMergeOptions<T>,
): KeyedStep<T> | undefined {
  const { same } = opts;
  let chosen: readonly T[] | undefined;
  if (groupsEqual(o, t, same)) chosen = o;
  else if (groupsEqual(b, o, same)) chosen = t;
  else if (groupsEqual(b, t, same)) chosen = o;
  else {
    if (o !== undefined && t !== undefined && opts.mergeBoth) {
      const merged = opts.mergeBoth(key, b, o, t);
      if (merged !== null) return { key, kind: 'take', items: merged };
    }
    const reason: KeyedConflictReason = b === undefined ? 'both-added' : o === undefined || t === undefined ? 'modify-delete' : 'both-modified';
    return { key, kind: 'conflict', reason, base: b ?? [], ours: o ?? [], theirs: t ?? [] };
  }
  return chosen === undefined ? undefined : { key, kind: 'take', items: chosen };
}

/** Three-way merge of keyed sides; returns the surviving keys in the documented order. */
export function mergeKeyed<T>(base: KeyedSide<T>, ours: KeyedSide<T>, theirs: KeyedSide<T>, opts: KeyedMergeOptions<T>): KeyedStep<T>[] {
  const steps: KeyedStep<T>[] = [];
  const visit = (key: string): void => {
    const step = resolveKey(key, base.groups.get(key), ours.groups.get(key), theirs.groups.get(key), opts);
    if (step !== undefined) steps.push(step);
  };
  for (const key of base.keys) visit(key);
  for (const key of ours.keys) if (!base.groups.has(key)) visit(key);
  for (const key of theirs.keys) if (!base.groups.has(key) && !ours.groups.has(key)) visit(key);
  return steps;
}
