/**
 * Git-style conflict blocks (diff3 flavour, with the base section) for the human-readable
 * conflicted files. Markers start at column 0 so editors and `git diff --check` recognize them.
 */

export const MARKER_OURS = '<<<<<<< ours';
export const MARKER_BASE = '||||||| base';
export const MARKER_SEP = '=======';
export const MARKER_THEIRS = '>>>>>>> theirs';

/** The three versions of a conflicting region, one array entry per line; empty = absent. */
export interface ConflictSides {
  readonly base: readonly string[];
  readonly ours: readonly string[];
  readonly theirs: readonly string[];
}

/** The lines of one conflict block. Both sides are always present in full. */
export function conflictBlockLines(sides: ConflictSides): string[] {
  return [MARKER_OURS, ...sides.ours, MARKER_BASE, ...sides.base, MARKER_SEP, ...sides.theirs, MARKER_THEIRS];
}

/** Split a text into lines without their terminators (LF or CRLF); no trailing empty line. */
function textLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** A whole-file conflict: used when a file cannot be merged structurally (e.g. invalid JSON). */
export function wholeFileConflict(base: string, ours: string, theirs: string): string {
  const lines = conflictBlockLines({ base: textLines(base), ours: textLines(ours), theirs: textLines(theirs) });
  return `${lines.join('\n')}\n`;
}
