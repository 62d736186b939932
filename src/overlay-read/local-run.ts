/**
 * The overlays of a local run directory (`tags.json`, `feedback.json`, as `pull` brings them down
 * from the results branch): what `show`, `failures` and `report` display next to the rows.
 * Both files are optional; a malformed one becomes a warning, never a failure of the command, and
 * a symlink is not followed (a run directory is untrusted input).
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { feedbackNotes, normalizeFeedbackEntries, type FeedbackNote } from '../merge/index.js';
import { readRegularText, unreadableFile } from '../util/safe-open.js';
import { absentAs } from '../errors/errors.js';

export interface RunOverlays {
  tags: string[];
  tag_revision: string | null;
  notes: FeedbackNote[];
  warnings: string[];
}

async function readOverlayJson(dir: string, name: string, warnings: string[]): Promise<Record<string, unknown> | null> {
  const path = join(dir, name);
  try {
    const st = await lstat(path);
    if (!st.isFile()) {
      warnings.push(`${name} is not a regular file (a symlink?); ignored`);
      return null;
    }
  } catch (err) {
    // absent: no overlay file; anything else propagates
    return absentAs(null)(err);
  }
  // A file that cannot be read is said (its error); one that does not parse is reported below.
  const text = await readRegularText(path, { kind: 'run-file' }).catch((err: unknown) => {
    throw unreadableFile(path, {}, err);
  });
  try {
    const doc: unknown = JSON.parse(text);
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch {
    // unparsable: reported below
  }
  warnings.push(`${name} is not a JSON object; ignored (run \`agentv-results validate\`)`);
  return null;
}

export async function readRunOverlays(dir: string): Promise<RunOverlays> {
  const warnings: string[] = [];
  const [tagsDoc, feedbackDoc] = await Promise.all([readOverlayJson(dir, 'tags.json', warnings), readOverlayJson(dir, 'feedback.json', warnings)]);
  const tags = Array.isArray(tagsDoc?.tags) ? (tagsDoc.tags as unknown[]).filter((t): t is string => typeof t === 'string') : [];
  const tag_revision = typeof tagsDoc?.tag_revision === 'string' ? tagsDoc.tag_revision : null;
  const notes = feedbackDoc ? feedbackNotes({ entries: normalizeFeedbackEntries(feedbackDoc.entries) }) : [];
  return { tags, tag_revision, notes, warnings };
}

/** Notes grouped by test id, for views that show them under each case. */
export function notesByTest(notes: FeedbackNote[]): Map<string, FeedbackNote[]> {
  const map = new Map<string, FeedbackNote[]>();
  for (const n of notes) {
    const list = map.get(n.test_id);
    if (list) list.push(n);
    else map.set(n.test_id, [n]);
  }
  return map;
}

/** What a case view needs: the run's tags, each test's notes, and the warnings to pass on. */
export async function overlaysForCases(dir: string): Promise<{ tags: string[]; notesOf: (testId: string) => FeedbackNote[]; warnings: string[] }> {
  const overlays = await readRunOverlays(dir);
  const byTest = notesByTest(overlays.notes);
  return { tags: overlays.tags, notesOf: (testId) => byTest.get(testId) ?? [], warnings: overlays.warnings };
}
