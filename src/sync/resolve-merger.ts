/**
 * The resolver `sync --resolve` uses when re-merging a sync branch into the results branch after a
 * human fixed the conflict there. Everything that merges cleanly still merges (ARCHITECTURE.md, merge semantics); only
 * what STILL contradicts takes the results branch's value: the human has looked at both versions
 * (the compare link) and what is now on the branch is their decision. The sync branch's version
 * stays in history as the merge's second parent, so nothing is lost.
 *
 * The decision is made per value, not per file: in a feedback.json where the sync branch also
 * added feedback on another test, that addition is kept and only the contested entry follows the
 * branch. Technique: for each conflicting position, pretend the base already had the sync side's
 * value there; the three-way merge then sees "unchanged on the sync side" and takes main's.
 *
 * In the resolver's terms, `ours` = the results branch (first parent), `theirs` = the sync branch.
 */
import { isJsonObject } from '../util/canonical-json.js';
import {
  mergeJson,
  mergeJsonl,
  mergeOwnedText,
  ownedMergeKind,
  resolveConflictedPath,
  rowIdentityForPath,
  type ConflictedPathInput,
  type TreeResolution,
} from '../merge/index.js';

const take = (data: Buffer | null): TreeResolution => (data === null ? { action: 'delete' } : { action: 'write', data });

function text(b: Buffer | null): string | null {
  return b === null ? null : b.toString('utf8');
}

/** Base with the sync side's value planted at every conflicting JSON position; null when not applicable. */
export function plantJson(base: string, ours: string, theirs: string): string | null {
  const merged = mergeJson(base, ours, theirs);
  if (merged.ok) return base;
  let baseDoc: unknown;
  let theirsDoc: unknown;
  try {
    baseDoc = base.trim() === '' ? {} : JSON.parse(base);
    theirsDoc = JSON.parse(theirs);
  } catch {
    // unparsable: no JSON preference possible; the caller merges as usual
    return null;
  }
  if (!isJsonObject(baseDoc)) baseDoc = {};
  for (const c of merged.conflicts) {
    if (c.reason === 'invalid-json') return null;
    // Array elements are addressed by identity ("[id=...]"): plant the whole array instead.
    const cut = c.path.findIndex((s) => s.startsWith('['));
    const path = cut < 0 ? c.path : c.path.slice(0, cut);
    if (path.length === 0) return JSON.stringify(theirsDoc);
    plantAt(baseDoc as Record<string, unknown>, theirsDoc, path);
  }
  return JSON.stringify(baseDoc);
}

function plantAt(base: Record<string, unknown>, theirs: unknown, path: string[]): void {
  let b: Record<string, unknown> = base;
  let t: unknown = theirs;
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string;
    const tv = isJsonObject(t) && Object.hasOwn(t, key) ? t[key] : undefined;
    if (i === path.length - 1) {
      if (tv === undefined) delete b[key];
      else b[key] = tv;
      return;
    }
    if (!isJsonObject(b[key])) b[key] = {};
    b = b[key] as Record<string, unknown>;
    t = tv;
  }
}

/** Base with each conflicting row replaced by the sync side's version of it. */
export function plantJsonl(path: string, base: string, ours: string, theirs: string): string {
  const merged = mergeJsonl(base, ours, theirs, { identity: rowIdentityForPath(path) });
  if (merged.ok) return base;
  const drop = new Set(merged.conflicts.flatMap((c) => [...c.base]));
  const kept = base.split('\n').filter((l) => l.trim() !== '' && !drop.has(l.replace(/\r$/, '')));
  const planted = merged.conflicts.flatMap((c) => [...c.theirs]);
  const lines = [...kept, ...planted];
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** resolveConflictedPath, except that remaining contradictions take `ours` (the results branch). */
export function preferMainResolver(input: ConflictedPathInput): TreeResolution {
  const first = resolveConflictedPath(input);
  if (first.action !== 'conflict') return first;
  const kind = ownedMergeKind(input.path);
  const [base, ours, theirs] = [text(input.base), text(input.ours), text(input.theirs)];
  if (kind === 'jsonl') {
    const planted = plantJsonl(input.path, base ?? '', ours ?? '', theirs ?? '');
    const again = mergeOwnedText('jsonl', input.path, planted, ours ?? '', theirs ?? '');
    if (again.ok) return again.text === '' && input.ours === null ? { action: 'delete' } : { action: 'write', data: Buffer.from(again.text, 'utf8') };
  } else if (kind === 'json' && ours !== null && theirs !== null) {
    const planted = plantJson(base ?? '', ours, theirs);
    if (planted !== null) {
      const again = mergeOwnedText('json', input.path, planted, ours, theirs);
      if (again.ok) return { action: 'write', data: Buffer.from(again.text, 'utf8') };
    }
  }
  // Not mergeable value by value (another file, invalid JSON, a deletion, tag limits): the
  // results branch's whole file is the decision.
  return take(input.ours);
}
