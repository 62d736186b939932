/**
 * Tree-level decision for one path that `git merge-tree` reported as conflicted on the results
 * branch. Pure: the caller (src/sync) reads the three blobs, calls this, and applies the action.
 *
 * - Whole-file rules first, for every path: both sides identical (add/add identical, same edit,
 *   deleted on both) -> take it; one side unchanged from base -> take the other side.
 * - Owned JSONL (`index.jsonl`, `catalog/*.jsonl`): a deleted side counts as an empty file, so its
 *   rows are "deleted" row by row: rows the other side left alone disappear, rows it appended are
 *   kept, rows it changed conflict. An empty result where a side deleted the file is a deletion.
 * - Owned JSON (`tags.json`, `feedback.json`): deleted on one side and changed on the other is a
 *   conflict (a reformat only is not a change); otherwise json-union.
 * - Anything else changed differently on both sides (a run's summary.json, a file we do not own)
 *   is a genuine conflict.
 */
import { canonicalJson, decodeUtf8, stripBom } from '../util/canonical-json.js';
import { mergeOwnedText } from './owned-text.js';
import { ownedMergeKind, unionLines, unionMergePath } from './owned-paths.js';

export interface ConflictedPathInput {
  readonly path: string;
  /** Blob contents; null when the path does not exist in that tree. */
  readonly base: Buffer | null;
  readonly ours: Buffer | null;
  readonly theirs: Buffer | null;
}

export type TreeResolution =
  | { readonly action: 'write'; readonly data: Buffer }
  | { readonly action: 'delete' }
  | { readonly action: 'conflict'; readonly reason: string };

const sameBytes = (a: Buffer | null, b: Buffer | null): boolean => (a === null || b === null ? a === b : a.equals(b));
const take = (data: Buffer | null): TreeResolution => (data === null ? { action: 'delete' } : { action: 'write', data });

function describeDivergence(base: Buffer | null, ours: Buffer | null, theirs: Buffer | null): string {
  if (base === null) return 'added on both sides with different content';
  if (ours === null) return 'deleted on our side and modified on theirs';
  if (theirs === null) return 'modified on our side and deleted on theirs';
  return 'changed differently on both sides';
}

/** Same JSON content (formatting aside)? False when either side is not JSON. */
function sameJsonContent(a: string, b: string): boolean {
  try {
    return canonicalJson(JSON.parse(stripBom(a))) === canonicalJson(JSON.parse(stripBom(b)));
  } catch {
    // unparsable: not the same JSON
    return false;
  }
}

export function resolveConflictedPath(input: ConflictedPathInput): TreeResolution {
  const { path, base, ours, theirs } = input;
  if (sameBytes(ours, theirs)) return take(ours);
  if (sameBytes(base, ours)) return take(theirs);
  if (sameBytes(base, theirs)) return take(ours);

  const divergence = describeDivergence(base, ours, theirs);
  if (unionMergePath(path) && ours !== null && theirs !== null) {
    const o = decodeUtf8(ours);
    const t = decodeUtf8(theirs);
    if (o === null || t === null) return { action: 'conflict', reason: `${path}: ${divergence}, and a version is not UTF-8 text` };
    return { action: 'write', data: Buffer.from(unionLines(o, t), 'utf8') };
  }
  const kind = ownedMergeKind(path);
  if (kind === null) return { action: 'conflict', reason: `${path}: ${divergence}; not a file agentv-results merges — resolve it by hand` };

  const decoded = [base, ours, theirs].map((blob) => (blob === null ? null : decodeUtf8(blob)));
  if (decoded.some((text, i) => text === null && [base, ours, theirs][i] !== null)) {
    return { action: 'conflict', reason: `${path}: ${divergence}, and a version is not UTF-8 text` };
  }
  const [baseText, oursText, theirsText] = decoded as [string | null, string | null, string | null];

  if (kind === 'json' && (oursText === null || theirsText === null)) {
    // Here base exists (otherwise the whole-file rules decided) and one side deleted the file.
    const kept = oursText ?? theirsText ?? '';
    if (baseText !== null && sameJsonContent(baseText, kept)) return { action: 'delete' };
    return { action: 'conflict', reason: `${path}: ${divergence}` };
  }

  const result = mergeOwnedText(kind, path, baseText ?? '', oursText ?? '', theirsText ?? '');
  if (!result.ok) return { action: 'conflict', reason: `${path}: ${result.summary}` };
  if (result.text === '' && (ours === null || theirs === null)) return { action: 'delete' };
  return { action: 'write', data: Buffer.from(result.text, 'utf8') };
}
