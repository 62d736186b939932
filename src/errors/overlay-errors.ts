/** Errors of editing a run's overlays (tags, feedback): bad input, an unknown run or test, a stale revision. */
import { AgentvResultsError } from './errors.js';

/** Which run, test and field an overlay edit was about, where known. */
export interface OverlayWhere {
  runId?: string;
  testId?: string;
  field?: string;
}

/** Wrong input (invalid tag, text) or, with `notFound`, an unknown run or test (code `not-found`): exit 2. */
export class OverlayInputError extends AgentvResultsError<OverlayWhere & { notFound: boolean }> {
  readonly code: 'overlay-input' | 'not-found';
  constructor(message: string, opts: { notFound?: boolean } & OverlayWhere = {}) {
    const { notFound = false, ...where } = opts;
    super(message, { data: { notFound, ...where } });
    this.code = notFound ? 'not-found' : 'overlay-input';
  }
}

/** `expectRevision` did not match: someone changed the tags since the caller read them (exit 1). */
export class TagRevisionMismatch extends AgentvResultsError<{ expected: string; actual: string | null; runId?: string }> {
  readonly code = 'tag-revision-mismatch';
  /** `runId`: the run whose tags changed (an optional last parameter; kept in `data`). */
  constructor(
    readonly expected: string,
    readonly actual: string | null,
    runId?: string,
  ) {
    super(`tags changed since revision ${expected} (now ${actual ?? 'no tags.json'}); read them again and retry`, {
      data: { expected, actual, ...(runId !== undefined ? { runId } : {}) },
    });
  }
}

/** `expectRevision` of a feedback edit did not match the reviewer's current entry (exit 1). */
export class FeedbackRevisionMismatch extends AgentvResultsError<{ testId: string; reviewer: string; expected: string; actual: string | null }> {
  readonly code = 'feedback-revision-mismatch';
  constructor(
    readonly testId: string,
    readonly reviewer: string,
    readonly expected: string,
    readonly actual: string | null,
  ) {
    super(
      `${reviewer}'s feedback on ${testId} changed since revision ${expected} (now ${actual ?? 'no entry'}); read it again (\`feedback <run> ${testId}\`) and retry`,
      { data: { testId, reviewer, expected, actual } },
    );
  }
}
