/**
 * The head every per-case report of one run starts with (`failures`, `show`): which run, where it
 * was read, its layout and tags, and the overlays the cases' feedback comes from.
 */
import { overlaysForCases } from '../../overlay-read/local-run.js';
import type { LoadedRun } from './run-reader.js';

export interface CaseListHead {
  run_id: string;
  experiment: LoadedRun['experiment'];
  /** The run's directory (a run read from a copy: the name it is known by, `shownAs`). */
  dir: string;
  layout: LoadedRun['layout'];
  tags: string[];
}

export async function caseListHead(run: LoadedRun, shownAs?: string): Promise<{ head: CaseListHead; overlays: Awaited<ReturnType<typeof overlaysForCases>> }> {
  const dir = run.sourceDir ?? run.dir!;
  const overlays = await overlaysForCases(dir);
  return { head: { run_id: run.runId, experiment: run.experiment, dir: shownAs ?? dir, layout: run.layout, tags: overlays.tags }, overlays };
}
