/**
 * The gate's history: the last N published runs of the baseline's experiment, up to and including
 * the baseline, as light rows (attempts counted) — what gate-decision.ts judges each
 * test's noise by.
 *
 * Cost (issue 49 item 5): the newest page of the listing (kept in this process, or on disk by the
 * catalog cache, which answers the first HEAD_ROWS runs without parsing the rest), the whole
 * listing only when the baseline's line reaches further back, and the N runs' result manifests in
 * one `cat-file --batch`. No run is pulled, no tree walked: the cost does not grow with the branch.
 */
import { manifestRows } from '../compare/score-rows.js';
import type { GateHistoryInput } from './gate.js';
import { MIN_HISTORY_RUNS } from './gate-decision.js';
import { listRuns, readListedManifests, type ListOptions, type ListResult } from '../branch-read/list.js';
import { HEAD_ROWS } from '../branch-read/catalog-cache.js';
import type { TargetOptions } from '../repo/target.js';

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
  // The rule judges no test by fewer runs: the listing and the manifests would be read for nothing.
  if (requested < MIN_HISTORY_RUNS) return { requested, runs: [], note: `fewer than ${MIN_HISTORY_RUNS} runs asked for: none read` };
  if (opts.baselineRunId === null) return { requested, runs: [], note: 'the baseline is a local path, not a published run: it has no line to read' };
  const { baselineRunId, targets, list, count, ...target } = opts;
  // The newest runs first (a page the catalog cache answers from its head, HEAD_ROWS runs, without
  // parsing the rest): a baseline near the tip finds its line there. Otherwise, the whole listing.
  const pick = (l: ListResult, complete: boolean) => {
    const base = l.runs.find((r) => r.run_id === baselineRunId);
    if (!base) return null;
    const line = l.runs.filter((r) => r.experiment === base.experiment);
    // Newest first: the baseline, then the runs before it.
    const from = line.indexOf(base);
    const chosen = line.slice(from, from + count);
    return complete || chosen.length === count ? { listed: l, base, chosen } : null;
  };
  const page = await listRuns({ ...target, ...list, limit: HEAD_ROWS });
  const found = pick(page, page.matched <= page.runs.length) ?? pick(await listRuns({ ...target, ...list }), true);
  if (!found) return { requested, runs: [], note: `the baseline ${baselineRunId} is not in the listing` };
  const { listed, base, chosen } = found;
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
