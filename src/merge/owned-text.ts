/**
 * Path-aware merge of one owned file's text: picks the row identity for JSONL files, and applies
 * the tag limits to a merged `tags.json`. Shared by the git driver entry and the tree resolver so
 * that humans and the in-process sync get the same answer for the same three inputs.
 */
import { isJsonObject, jsonEqual } from '../util/canonical-json.js';
import { wholeFileConflict } from './conflict-markers.js';
import { mergeJson, type JsonConflict } from './json-union.js';
import { mergeJsonl, type JsonlConflict } from './jsonl-union.js';
import { validateTags } from '../overlays/document.js';
import { rowIdentityForPath, type MergeKind } from './owned-paths.js';

export type OwnedMergeResult =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      /** The human-readable conflicted file: every version kept, git-style markers. */
      readonly text: string;
      /** One line saying what conflicted, for logs and fallback-branch messages. */
      readonly summary: string;
    };

const SHOWN = 3;

function listSome(items: readonly string[]): string {
  const more = items.length > SHOWN ? `, and ${items.length - SHOWN} more` : '';
  return items.slice(0, SHOWN).join('; ') + more;
}

function describeJsonlConflicts(conflicts: readonly JsonlConflict[]): string {
  const rows = conflicts.map((c) => `${c.identity} (${c.reason})`);
  return `${conflicts.length} conflicting row${conflicts.length === 1 ? '' : 's'}: ${listSome(rows)}`;
}

function describeJsonConflicts(conflicts: readonly JsonConflict[]): string {
  const items = conflicts.map((c) =>
    c.reason === 'invalid-json' ? `${c.side} is not valid JSON (${c.message})` : `${c.path.length === 0 ? '<root>' : c.path.join('.')} (${c.reason})`,
  );
  return `${conflicts.length} conflicting value${conflicts.length === 1 ? '' : 's'}: ${listSome(items)}`;
}

function tagsOf(text: string): unknown {
  try {
    const doc: unknown = JSON.parse(text);
    return isJsonObject(doc) ? doc['tags'] : undefined;
  } catch {
    // unparsable: no tags to read
    return undefined;
  }
}

/**
 * A union of two valid tag lists can exceed the limits (15 + 15 new tags > 20). Which tags to drop
 * is a human decision, so that is a conflict. A list that was already invalid on one side is passed
 * through: the merge did not create the problem and must not block unrelated syncs.
 */
function checkMergedTags(base: string, ours: string, theirs: string, merged: string): OwnedMergeResult {
  const tags = tagsOf(merged);
  if (tags === undefined) return { ok: true, text: merged };
  const check = validateTags(tags);
  if (check.ok || jsonEqual(tags, tagsOf(ours)) || jsonEqual(tags, tagsOf(theirs))) return { ok: true, text: merged };
  return { ok: false, text: wholeFileConflict(base, ours, theirs), summary: `merged tags break the limits: ${check.errors.join('; ')}` };
}

/** Merge the three versions of `pathname` (an owned file of the given kind). */
export function mergeOwnedText(kind: MergeKind, pathname: string, base: string, ours: string, theirs: string): OwnedMergeResult {
  if (kind === 'jsonl') {
    const result = mergeJsonl(base, ours, theirs, { identity: rowIdentityForPath(pathname) });
    return result.ok ? result : { ok: false, text: result.text, summary: describeJsonlConflicts(result.conflicts) };
  }
  const result = mergeJson(base, ours, theirs);
  if (!result.ok) return { ok: false, text: result.text, summary: describeJsonConflicts(result.conflicts) };
  const name = pathname.split('/').pop();
  return name === 'tags.json' ? checkMergedTags(base, ours, theirs, result.text) : result;
}
