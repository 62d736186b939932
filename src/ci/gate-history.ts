/**
 * The gate's history: the last N published runs of the baseline's experiment, up to and including
 * the baseline, as light rows (attempts counted) — what ../compare/gate-decision.ts judges each
 * test's noise by.
 *
 * Cost (issue 49 item 5): the listing is the one the baseline's name was resolved with (kept in
 * this process, or on disk by the catalog cache: a commit names its tree), and only the N runs'
 * result manifests are read, in one `cat-file --batch`. No run is pulled, no tree walked: the cost
 * does not grow with the branch beyond the catalog read the gate does anyway.
 */
import { manifestRows } from '../compare/score-rows.js';
import type { GateHistoryInput } from '../compare/gate.js';
import { listRuns, readListedManifests, type ListOptions } from '../results-branch/read/list.js';
import type { TargetOptions } from '../results-branch/repo/target.js';

export interface GateHistoryOptions extends TargetOptions {
  /** The baseline's published run id (null: a local path, no history). */
  baselineRunId: string | null;
  /** How many runs (the baseline counts as one). */
  count: number;
  /** Narrow the rows to these targets (the gate's baseline narrowing). */
  targets?: string[];
  list?: Omit<ListOptions, 'experiment' | 'limit' | keyof TargetOptions>;
}

/** The baseline line's last `count` runs, newest first, with their rows; an explanation when there are fewer. */
export async function readGateHistory(opts: GateHistoryOptions): Promise<GateHistoryInput> {
  const requested = opts.count;
  if (requested === 0) return { requested, runs: [] };
  if (opts.baselineRunId === null) return { requested, runs: [], note: 'the baseline is a local path, not a published run: it has no line to read' };
  const { baselineRunId, targets, list, count, ...target } = opts;
  const listed = await listRuns({ ...target, ...list });
  const base = listed.runs.find((r) => r.run_id === baselineRunId);
  if (!base) return { requested, runs: [], note: `the baseline ${baselineRunId} is not in the listing` };
  const line = listed.runs.filter((r) => r.experiment === base.experiment);
  // Newest first: the baseline, then the runs before it.
  const from = line.indexOf(base);
  const chosen = line.slice(from, from + count);
  const live = chosen.filter((r) => r.archived === undefined);
  const manifests = await readListedManifests(target, listed, live);
  const keep = targets && targets.length > 0 ? new Set(targets) : null;
  const runs: GateHistoryInput['runs'] = [];
  let unread = chosen.length - live.length;
  for (const r of live) {
    const m = manifests.get(r.run_id);
    const parsed = m ? manifestRows(m.text, r.run_id) : null;
    if (!parsed || parsed.rows.length === 0) {
      unread++;
      continue;
    }
    runs.push({ run_id: r.run_id, rows: keep ? parsed.rows.filter((x) => keep.has(x.target ?? '')) : parsed.rows });
  }
  const notes: string[] = [];
  if (chosen.length < count) notes.push(`experiment ${base.experiment} has ${chosen.length} published run${chosen.length === 1 ? '' : 's'} up to the baseline`);
  if (unread > 0) notes.push(`${unread} run${unread === 1 ? '' : 's'} without light rows on the live branch skipped (archived, or another layout)`);
  return notes.length > 0 ? { requested, runs, note: notes.join('; ') } : { requested, runs };
}
