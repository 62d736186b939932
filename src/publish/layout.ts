/**
 * Where things live on the results and artifacts branches (DESIGN.md 3).
 *
 *   catalog/<YYYY-MM-DD>.jsonl                       one line per published run
 *   runs/<experiment>/<YYYY-MM-DD>/<timestamp>/...   the run (same path on both branches)
 *
 * The day level keeps every tree a publish rewrites to a few thousand entries, so a publish
 * costs O(size of the run), not O(history).
 */
import { isSafeSegment, slugToIso } from '../model/paths.js';

export const CATALOG_DIR = 'catalog';
export const RUNS_DIR = 'runs';

export class LayoutError extends Error {}

export interface RunLocation {
  runId: string;
  experiment: string;
  timestamp: string;
  day: string;
  /** `runs/<experiment>/<day>/<timestamp>` */
  path: string;
  catalogPath: string;
}

/** Map a run id (`<experiment>/<timestamp>`) to its branch location; refuses anything that could escape `runs/`. */
export function runLocation(runId: string): RunLocation {
  const parts = runId.split('/');
  if (parts.length !== 2) throw new LayoutError(`run id ${JSON.stringify(runId)} is not <experiment>/<timestamp>`);
  const [experiment, timestamp] = parts as [string, string];
  for (const seg of parts) {
    if (!isSafeSegment(seg)) throw new LayoutError(`run id ${JSON.stringify(runId)} has an unsafe segment ${JSON.stringify(seg)}`);
  }
  const iso = slugToIso(timestamp);
  const day = iso ? iso.slice(0, 10) : /^\d{4}-\d{2}-\d{2}/.test(timestamp) ? timestamp.slice(0, 10) : 'undated';
  return {
    runId,
    experiment,
    timestamp,
    day,
    path: `${RUNS_DIR}/${experiment}/${day}/${timestamp}`,
    catalogPath: `${CATALOG_DIR}/${day}.jsonl`,
  };
}

/** The .gitattributes kept on the results branch so that humans merging by hand get our drivers. */
export const RESULTS_GITATTRIBUTES = `# Maintained by agentv-results: merge drivers for the append-only and overlay files.
# Install the drivers with \`agentv-results drivers install\`; without them git falls back to a text merge.
catalog/*.jsonl merge=agentv-jsonl
index.jsonl merge=agentv-jsonl
tags.json merge=agentv-json
feedback.json merge=agentv-json
`;

export const ARTIFACTS_GITATTRIBUTES = `# Maintained by agentv-results: heavy payloads, never merged by content.
* -diff -merge
`;
