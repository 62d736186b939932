/**
 * How much text a report embeds.
 *
 * A report has to stay openable with 10,000 tests, and agent transcripts can be megabytes each,
 * so text is capped twice: every field at `fieldChars` (default 20,000 characters), and every
 * test at `testChars` in total (default 100,000). The order in which a test's fields are taken
 * (projection.ts) puts what a reviewer needs first — error, assertions, graders, answer — and
 * the transcript last, so a huge transcript loses its tail, never the verdicts. Clipped text
 * keeps its original size so the page can say "truncated (N bytes)"; the full text stays in
 * the run workspace.
 */
import type { ClippedText } from './types.js';

export const DEFAULT_FIELD_CHARS = 20_000;
export const DEFAULT_TEST_CHARS = 100_000;
export const PROMPT_CHARS = 200;

/** Cut at `limit` UTF-16 units without splitting a surrogate pair. */
export function cutAt(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = Math.max(0, limit);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}

/** One line of at most `limit` characters: whitespace runs folded, an ellipsis when cut. */
export function oneLine(text: string, limit = PROMPT_CHARS): string {
  const folded = text.replace(/\s+/g, ' ').trim();
  return folded.length <= limit ? folded : cutAt(folded, limit - 1) + '…';
}

export class TextBudget {
  /** Fields this budget clipped (reported as one warning per report). */
  truncated = 0;
  private remaining: number;

  constructor(
    private readonly fieldChars = DEFAULT_FIELD_CHARS,
    testChars = DEFAULT_TEST_CHARS,
  ) {
    this.remaining = testChars;
  }

  get exhausted(): boolean {
    return this.remaining <= 0;
  }

  clip(text: string): ClippedText {
    const limit = Math.min(this.fieldChars, Math.max(0, this.remaining));
    if (text.length <= limit) {
      this.remaining -= text.length;
      return text;
    }
    const head = cutAt(text, limit);
    this.remaining -= head.length;
    this.truncated++;
    return { head, bytes: Buffer.byteLength(text, 'utf8') };
  }

  clipOrNull(text: string | null | undefined): ClippedText | null {
    return typeof text === 'string' ? this.clip(text) : null;
  }
}

/** Tool inputs/outputs are arbitrary JSON: strings are kept as they are, the rest pretty-printed. */
export function stringify(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    // fallback: a value JSON cannot render (a cycle) is shown as text
    return String(value);
  }
}
