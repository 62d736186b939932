/**
 * The two mutable JSON overlays of a published run, and the helpers their writers share with the
 * merge. The zod schemas live in src/model; this file documents the shape the merge relies on.
 *
 * tags.json
 * ```json
 * { "tags": ["baseline", "release-2.1"], "updated_at": "2026-03-14T10:32:00.000Z", "tag_revision": "9f2c0a7d41b3e5c8" }
 * ```
 * - `tags`: at most MAX_TAGS unique strings of 1..MAX_TAG_LENGTH characters (see validateTags).
 *   Merged as a three-way set: a tag added on either side is kept, a tag removed on one side stays
 *   removed, order is base order then ours' additions then theirs'.
 * - `updated_at`: ISO-8601 time of the last change; the merge keeps the later of the two.
 * - `tag_revision`: computeTagRevision(document) — a content hash, never merged, always recomputed.
 *
 * feedback.json
 * ```json
 * {
 *   "entries": {
 *     "<test_id>": {
 *       "<reviewer>": { "feedback": "text", "reviewer": "name", "updated_at": "…", "revision": "1f0c…", "replaces": "9a3e…" }
 *     }
 *   },
 *   "updated_at": "2026-03-14T10:40:00.000Z"
 * }
 * ```
 * - `entries` is keyed by test_id, then by reviewer: OBJECTS, not arrays, so the recursive merge
 *   sees two reviewers of one test (or two tests) as different keys and keeps both. A team where
 *   several people review the same failing test never loses a note.
 * - One reviewer's concurrent, divergent edits of one entry change its `feedback` (and `revision`)
 *   two ways: a genuine conflict, set aside on a sync branch with both versions. The entry's
 *   `updated_at` alone never conflicts (later wins).
 * - `revision` is computeFeedbackRevision(test, reviewer, text, updated_at); a sequential edit
 *   records the revision it replaced in `replaces`, and an edit made with an expected revision is
 *   refused when the entry moved on (optimistic concurrency, like `tag_revision`).
 * - Top-level `updated_at`: the later of both sides.
 * - Documents written before entries were keyed by reviewer (`entries.<test>` = one entry) are
 *   read as that one reviewer's entry (normalizeFeedbackEntries).
 */
import { createHash } from 'node:crypto';
import { canonicalJson, isJsonObject, newJsonObject } from '../util/canonical-json.js';

export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 60;

/** The shape of `tags.json` (model/artifacts.ts owns it). */
export type { TagsDocument } from '../model/artifacts.js';

/** One reviewer's note on one test in `feedback.json`. */
export interface FeedbackEntry {
  feedback: string;
  reviewer: string;
  updated_at: string;
  revision: string;
  /** The revision this edit replaced (absent on a reviewer's first note on a test). */
  replaces?: string;
}

/**
 * `feedback.json` as merged, read and written: entries keyed by test_id, then by reviewer (the one
 * definition; overlay-write/write.ts names it FeedbackDoc). Unknown keys are kept.
 */
export interface FeedbackDocument {
  entries: Record<string, Record<string, FeedbackEntry>>;
  updated_at: string | null;
  [key: string]: unknown;
}

/**
 * The revision of one feedback entry: 16 hex digits of sha256 over what identifies this version
 * (test, reviewer, text, time). Deterministic, so every machine computes the same revision.
 */
export function computeFeedbackRevision(testId: string, reviewer: string, feedback: string, updatedAt: string): string {
  return createHash('sha256')
    .update(canonicalJson([testId, reviewer, feedback, updatedAt]), 'utf8')
    .digest('hex')
    .slice(0, 16);
}

const isOneEntry = (value: unknown): value is Record<string, unknown> => isJsonObject(value) && typeof value['feedback'] === 'string';

/**
 * The entries of a feedback document as test -> reviewer -> entry. Tolerates the earlier shape
 * (test -> one entry) and drops anything that is not an entry, so a reader never crashes on a
 * hand-edited file. Entries without a revision get one computed from their content.
 */
export function normalizeFeedbackEntries(entries: unknown): Record<string, Record<string, FeedbackEntry>> {
  const out = Object.create(null) as Record<string, Record<string, FeedbackEntry>>;
  if (!isJsonObject(entries)) return out;
  const entry = (testId: string, reviewerKey: string, raw: Record<string, unknown>): FeedbackEntry => {
    const reviewer = typeof raw['reviewer'] === 'string' && raw['reviewer'] !== '' ? (raw['reviewer'] as string) : reviewerKey;
    const updatedAt = typeof raw['updated_at'] === 'string' ? (raw['updated_at'] as string) : '';
    const feedback = raw['feedback'] as string;
    const revision = typeof raw['revision'] === 'string' ? (raw['revision'] as string) : computeFeedbackRevision(testId, reviewer, feedback, updatedAt);
    return { ...(raw as object), feedback, reviewer, updated_at: updatedAt, revision } as FeedbackEntry;
  };
  for (const testId of Object.keys(entries)) {
    const value = entries[testId];
    const byReviewer = Object.create(null) as Record<string, FeedbackEntry>;
    if (isOneEntry(value)) {
      const e = entry(testId, 'unknown', value);
      byReviewer[e.reviewer] = e;
    } else if (isJsonObject(value)) {
      for (const reviewer of Object.keys(value)) {
        const raw = value[reviewer];
        if (isOneEntry(raw)) byReviewer[reviewer] = entry(testId, reviewer, raw);
      }
    }
    if (Object.keys(byReviewer).length > 0) out[testId] = byReviewer;
  }
  return out;
}

/**
 * The tag revision: first 16 hex digits of sha256 over the canonical JSON (sorted keys, no
 * whitespace) of the document without its top-level `tag_revision`. Deterministic, so the merge
 * and the tag command produce the same revision for the same content.
 */
export function computeTagRevision(document: unknown): string {
  let content = document;
  if (isJsonObject(document) && Object.hasOwn(document, 'tag_revision')) {
    const copy = newJsonObject();
    for (const key of Object.keys(document)) if (key !== 'tag_revision') copy[key] = document[key];
    content = copy;
  }
  return createHash('sha256').update(canonicalJson(content), 'utf8').digest('hex').slice(0, 16);
}

export type TagValidation = { readonly ok: true; readonly tags: string[] } | { readonly ok: false; readonly errors: string[] };

function preview(tag: string): string {
  const chars = [...tag];
  return JSON.stringify(chars.length > 24 ? `${chars.slice(0, 24).join('')}…` : tag);
}

/**
 * Check a tag list against the limits: an array of at most MAX_TAGS strings, each non-empty,
 * without leading/trailing whitespace or control characters, at most MAX_TAG_LENGTH characters
 * (Unicode code points), and no duplicates. Every problem is reported, each naming the tag.
 */
export function validateTags(tags: unknown): TagValidation {
  if (!Array.isArray(tags)) return { ok: false, errors: ['tags must be an array of strings'] };
  const errors: string[] = [];
  if (tags.length > MAX_TAGS) errors.push(`${tags.length} tags given; at most ${MAX_TAGS} are allowed — remove ${tags.length - MAX_TAGS}`);
  const seen = new Set<string>();
  tags.forEach((tag: unknown, i) => {
    const where = `tag #${i + 1}`;
    if (typeof tag !== 'string') {
      errors.push(`${where} must be a string, got ${tag === null ? 'null' : typeof tag}`);
      return;
    }
    const length = [...tag].length;
    if (tag.trim() === '') errors.push(`${where} is empty`);
    else if (tag.trim() !== tag) errors.push(`${where} ${preview(tag)} has leading or trailing whitespace`);
    if (/\p{Cc}/u.test(tag)) errors.push(`${where} ${preview(tag)} contains a control character (e.g. a newline)`);
    if (length > MAX_TAG_LENGTH) errors.push(`${where} ${preview(tag)} is ${length} characters long; at most ${MAX_TAG_LENGTH} are allowed`);
    if (seen.has(tag)) errors.push(`${where} ${preview(tag)} is a duplicate`);
    seen.add(tag);
  });
  return errors.length === 0 ? { ok: true, tags: tags as string[] } : { ok: false, errors };
}

/** One note, flattened for printing, reports and the Dashboard. */
export interface FeedbackNote extends FeedbackEntry {
  test_id: string;
}

/** Every note of a document (optionally of one test) in a stable order: test, then time, then reviewer. */
export function feedbackNotes(doc: { entries: Record<string, Record<string, FeedbackEntry>> }, testId?: string): FeedbackNote[] {
  const notes: FeedbackNote[] = [];
  for (const test of Object.keys(doc.entries)) {
    if (testId !== undefined && test !== testId) continue;
    for (const entry of Object.values(doc.entries[test]!)) notes.push({ test_id: test, ...entry });
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return notes.sort((a, b) => cmp(a.test_id, b.test_id) || cmp(a.updated_at, b.updated_at) || cmp(a.reviewer, b.reviewer));
}
