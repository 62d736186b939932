/**
 * Fast path for the overwhelmingly common JSONL divergence: both sides only APPENDED rows to the
 * same base (two CI shards, two publishers adding catalog lines). Then jsonl-union's answer is
 * simply our file followed by the rows they appended, provided no identity occurs twice anywhere
 * (a repeated identity means a changed, duplicated or re-added row: the general merge decides
 * those). Checking that needs each row's identity, i.e. one JSON.parse per row, but none of the
 * general merge's grouping, canonical comparisons, re-joining and re-encoding: the output is the
 * input bytes, concatenated.
 *
 * It only applies to files already in jsonl-union's output form (LF line ends, no blank lines, no
 * BOM, a final newline), so the bytes are exactly mergeOwnedText's (a property test holds it to
 * that). Anything else returns null and the caller runs the general resolver.
 */
import { isUtf8 } from 'node:buffer';
import { ownedMergeKind, rowIdentityForPath, type ConflictedPathInput, type TreeResolution } from '../merge/index.js';

const LF = 0x0a;
const CR = 0x0d;

/** Already normalized JSONL bytes: what jsonl-union would write for these lines. */
function normalized(b: Buffer): boolean {
  if (b.length === 0) return true;
  if (b[b.length - 1] !== LF || b[0] === LF || b.indexOf(CR) >= 0 || b.indexOf('\n\n') >= 0) return false;
  return !(b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf); // BOM
}

/**
 * The byte-level half: when both sides are normalized and extend the base, the only possible fast
 * answer (ours + their appended bytes); null otherwise. Cheap, so a caller may start writing it
 * while appendRowsUnique() checks the rows.
 */
export function appendCandidate(input: ConflictedPathInput): Buffer | null {
  const { path, base, ours, theirs } = input;
  if (base === null || ours === null || theirs === null || ownedMergeKind(path) !== 'jsonl') return null;
  // One side added nothing: the general rules ("take the side that changed") are just as fast.
  if (ours.length <= base.length || theirs.length <= base.length) return null;
  if (!ours.subarray(0, base.length).equals(base) || !theirs.subarray(0, base.length).equals(base)) return null;
  if (!normalized(ours) || !normalized(theirs) || !isUtf8(ours) || !isUtf8(theirs)) return null;
  return Buffer.concat([ours, theirs.subarray(base.length)]);
}

/** The row-level half: every row parses and no identity occurs twice across base and both additions. */
export function appendRowsUnique(input: ConflictedPathInput): boolean {
  const { path, base, ours, theirs } = input;
  if (base === null || ours === null || theirs === null) return false;
  const identity = rowIdentityForPath(path);
  const seen = new Set<string>();
  const allUnique = (bytes: Buffer): boolean => {
    const text = bytes.toString('utf8');
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf('\n', start);
      const line = text.slice(start, end);
      start = end + 1;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        return false; // an opaque (or blank-looking) line: leave it to the general merge
      }
      const key = identity(row, line);
      if (seen.has(key)) return false;
      seen.add(key);
    }
    return true;
  };
  return allUnique(base) && allUnique(ours.subarray(base.length)) && allUnique(theirs.subarray(base.length));
}

/** Both halves: the merged bytes, or null when the general resolver must decide. */
export function appendOnlyMerge(input: ConflictedPathInput): TreeResolution | null {
  const candidate = appendCandidate(input);
  return candidate !== null && appendRowsUnique(input) ? { action: 'write', data: candidate } : null;
}
