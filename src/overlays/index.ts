/** Tags and feedback of a published run: the documents and their merge rules, reading them, writing them through the push loop. */
export {
  computeFeedbackRevision,
  computeTagRevision,
  feedbackNotes,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  validateTags,
  type FeedbackDocument,
  type FeedbackEntry,
  type FeedbackNote,
  type TagsDocument,
} from './document.js';
export { readRunOverlays } from './read/local-run.js';
export { readListOverlays } from './read/listed-runs.js';
export {
  editTags,
  FeedbackRevisionMismatch,
  readFeedback,
  readTags,
  setFeedback,
  TagRevisionMismatch,
  type FeedbackDoc,
  type FeedbackOptions,
  type OverlayReadOptions,
  type TagOptions,
  type TagsDoc,
} from './write.js';
export { moveTag } from './move-tag.js';
