// The public types use Buffer, NodeJS.ProcessEnv and node:http (a Node.js library); @types/node is a dependency.
/// <reference types="node" preserve="true" />
/**
 * Pure three-way merges for the files agentv-results owns on its git branches (ARCHITECTURE.md, merge semantics):
 * jsonl-union for append-only row files, json-union for the tags/feedback overlays, a tree-level
 * resolver for paths `git merge-tree` reports as conflicted, and the git merge-driver entry.
 *
 * @module agentv-results/merge
 */
export { canonicalJson, jsonEqual } from '../util/canonical-json.js';
export { MARKER_BASE, MARKER_OURS, MARKER_SEP, MARKER_THEIRS } from './conflict-markers.js';
export { catalogRowIdentity, contentRowIdentity, defaultRowIdentity, indexRowIdentity, type RowIdentity } from './row-identity.js';
export { mergeJsonl, type JsonlConflict, type JsonlMergeOptions, type JsonlMergeResult } from './jsonl-union.js';
export type { KeyedConflictReason } from './keyed-merge.js';
export { laterTimestamp, mergeJson, type JsonConflict, type JsonMergeOptions, type JsonMergeResult, type JsonSide } from './json-union.js';
export {
  computeFeedbackRevision,
  computeTagRevision,
  feedbackNotes,
  normalizeFeedbackEntries,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  validateTags,
  type FeedbackDocument,
  type FeedbackEntry,
  type FeedbackNote,
  type TagsDocument,
  type TagValidation,
} from '../overlays/document.js';
export { driverKindForPath, ownedMergeKind, rowIdentityForPath, type MergeKind } from './owned-paths.js';
export { mergeOwnedText, type OwnedMergeResult } from './owned-text.js';
export { DRIVER_CLEAN, DRIVER_CONFLICT, runMergeDriver } from './driver.js';
export { resolveConflictedPath, type ConflictedPathInput, type TreeResolution } from './tree-resolve.js';
