/**
 * The overlays of listed runs: each run's tags and how many reviewer notes it has, read for all
 * runs in one `cat-file --batch` (two blob lookups per run, no tree walk), so `list` can show them
 * and `list --tag baseline` can find the baseline run.
 */
import { readBlobs, type Repo } from '../git/index.js';
import { feedbackNotes, normalizeFeedbackEntries } from '../merge/index.js';

export interface RunOverlaySummary {
  tags: string[];
  feedback_notes: number;
}

function parseObject(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    const doc: unknown = JSON.parse(text);
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : null;
  } catch {
    return null; // a malformed overlay lists as none; `validate` reports it
  }
}

/**
 * Overlays of each run, keyed by run id; `dirOf` names the run's directory as a tree-ish: its tree
 * id when the caller has it (from the root listing), else `<tip>:<path>`. A tree id matters at
 * scale: `<tip>:<path>/tags.json` makes git search the root tree for every run, which was
 * quadratic in the runs on the branch (29 s for 5,000 runs, against well under a second by tree id).
 */
export async function readListOverlays(
  repo: Repo,
  runs: { run_id: string; path: string }[],
  dirOf: (run: { run_id: string; path: string }) => string | null,
): Promise<Map<string, RunOverlaySummary>> {
  const specs: { id: string; tags: string; feedback: string }[] = [];
  for (const r of runs) {
    const dir = dirOf(r);
    // A tree id takes `<id>:<file>`; `<tip>:<path>` already names a path, so its files are `/<file>`.
    const sep = dir?.includes(':') ? '/' : ':';
    if (dir) specs.push({ id: r.run_id, tags: `${dir}${sep}tags.json`, feedback: `${dir}${sep}feedback.json` });
  }
  const blobs =
    specs.length > 0
      ? await readBlobs(
          repo,
          specs.flatMap((s) => [s.tags, s.feedback]),
        )
      : new Map<string, Buffer>();
  const out = new Map<string, RunOverlaySummary>();
  for (const s of specs) {
    const tagsDoc = parseObject(blobs.get(s.tags)?.toString('utf8'));
    const feedbackDoc = parseObject(blobs.get(s.feedback)?.toString('utf8'));
    const tags = Array.isArray(tagsDoc?.tags) ? (tagsDoc.tags as unknown[]).filter((t): t is string => typeof t === 'string') : [];
    const notes = feedbackDoc ? feedbackNotes({ entries: normalizeFeedbackEntries(feedbackDoc.entries) }).length : 0;
    out.set(s.id, { tags, feedback_notes: notes });
  }
  return out;
}
