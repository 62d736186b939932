/**
 * Where things live on the results and artifacts branches (ARCHITECTURE.md, the path of a run). The layout is AgentV's
 * (5.x, `results-repo.ts`): AgentV's Dashboard and `auto_push` read and write the same branches.
 *
 *   agentv/results/v1
 *     .gitattributes                              AgentV's union lines, then ours
 *     <run_dir>/...                               one run: summary.json, index (AgentV's
 *                                                 `.internal/index.jsonl` or our `index.jsonl`),
 *                                                 per-test metadata (result/grading/metrics/summary)
 *     .indexes/agentv-results.<YYYY-MM-DD>.jsonl  our catalog: one line per run we published that
 *                                                 day, so `list` never walks the runs
 *   agentv/artifacts/v1
 *     <run_dir>/<path>                            payloads moved off the results branch; a pointer's
 *                                                 `key` is this path (AgentV's sidecar key)
 *
 * AgentV lists runs as the single-segment, non-dot directories at the branch root and reserves
 * `.indexes/` (union-merged JSONL catalogs, which it never rewrites) and `.cache/`: our catalog
 * lives in `.indexes/` under a name of our own, so AgentV's listing skips it and its merges keep
 * every line of it. The catalog is split per day so a publish rewrites one small blob whatever the
 * branch holds.
 *
 * The older layout (`runs/<experiment>/<day>/<timestamp>/`, catalog in `catalog/<day>.jsonl`) is
 * still read by `list` and `pull`; nothing writes it any more.
 */
import { isSafeSegment, slugToIso } from '../model/paths.js';
import { AgentvResultsError } from '../util/errors.js';

export const CATALOG_DIR = '.indexes';
export const CATALOG_PREFIX = 'agentv-results.';
/** The layout before AgentV's: read only. */
export const LEGACY_CATALOG_DIR = 'catalog';
export const LEGACY_RUNS_DIR = 'runs';

export class LayoutError extends AgentvResultsError {
  readonly code = 'layout';
}

export interface RunLocation {
  runId: string;
  experiment: string;
  timestamp: string;
  day: string;
  /** The run's directory on both branches: `<run_dir>` at the root (or a legacy `runs/...` path when read). */
  path: string;
  catalogPath: string;
}

/**
 * The run's directory name at the branch root. An AgentV run id (one segment, e.g.
 * `2026-11-24T07-27-55-252Z`) is used as is, like AgentV does. Our older two-segment ids
 * (`<experiment>/<timestamp>`) become `<experiment>--<timestamp>`: one segment, no character a
 * Windows checkout refuses (AgentV's `::` would be), and still unique per experiment.
 */
export function runDirName(runId: string): string {
  const parts = runId.split('/');
  if (parts.length === 1) return parts[0] as string;
  if (parts.length === 2) return `${parts[0]}--${parts[1]}`;
  throw new LayoutError(`run id ${JSON.stringify(runId)} is neither <run_id> nor <experiment>/<timestamp>`);
}

function dayOf(timestamp: string): string {
  const iso = slugToIso(timestamp);
  if (iso) return iso.slice(0, 10);
  const m = /(\d{4}-\d{2}-\d{2})T/.exec(timestamp) ?? /^(\d{4}-\d{2}-\d{2})/.exec(timestamp);
  return m ? (m[1] as string) : 'undated';
}

export function catalogPathFor(day: string): string {
  return `${CATALOG_DIR}/${CATALOG_PREFIX}${day}.jsonl`;
}

/**
 * Map a run id to its branch location; refuses anything that could escape the branch root or land
 * in a reserved dot directory. `experiment` names the run's experiment when the id does not carry
 * it (AgentV ids are bare timestamps; the experiment lives in summary.json).
 */
export function runLocation(runId: string, opts: { experiment?: string; timestamp?: string } = {}): RunLocation {
  const parts = runId.split('/');
  if (parts.length < 1 || parts.length > 2) throw new LayoutError(`run id ${JSON.stringify(runId)} is neither <run_id> nor <experiment>/<timestamp>`);
  for (const seg of parts) {
    if (!isSafeSegment(seg)) throw new LayoutError(`run id ${JSON.stringify(runId)} has an unsafe segment ${JSON.stringify(seg)}`);
  }
  const dir = runDirName(runId);
  if (dir.startsWith('.') || dir === LEGACY_RUNS_DIR || dir === LEGACY_CATALOG_DIR) {
    throw new LayoutError(`run id ${JSON.stringify(runId)} would land on a reserved path of the results branch`);
  }
  const experiment = parts.length === 2 ? (parts[0] as string) : (opts.experiment ?? 'default');
  const timestamp = parts.length === 2 ? (parts[1] as string) : (opts.timestamp ?? (parts[0] as string));
  const day = dayOf(timestamp);
  return { runId, experiment, timestamp, day, path: dir, catalogPath: catalogPathFor(day) };
}

/** Where a run of the older layout lived (read only: `list`/`pull` of a branch written before). */
export function legacyRunLocation(runId: string): RunLocation | null {
  const parts = runId.split('/');
  if (parts.length !== 2 || !parts.every(isSafeSegment)) return null;
  const [experiment, timestamp] = parts as [string, string];
  const day = dayOf(timestamp);
  return { runId, experiment, timestamp, day, path: `${LEGACY_RUNS_DIR}/${experiment}/${day}/${timestamp}`, catalogPath: `${LEGACY_CATALOG_DIR}/${day}.jsonl` };
}

/** AgentV's own `.gitattributes` lines, kept first and byte for byte: its publish compares the whole file. */
export const AGENTV_GITATTRIBUTES = `# Managed by AgentV. Artifact-aware merge so results sync never force-pushes.
.indexes/*.jsonl merge=union
*/.internal/index.jsonl merge=union
`;

/** Our lines after AgentV's: a later rule wins in git, so a run's index uses our identity-keyed driver when installed. */
export const OUR_GITATTRIBUTES = `# agentv-results: identity-keyed drivers (\`agentv-results drivers install\`); without them the lines above apply.
*/index.jsonl merge=agentv-jsonl
*/.internal/index.jsonl merge=agentv-jsonl
.indexes/agentv-results.*.jsonl merge=agentv-jsonl
*/tags.json merge=agentv-json
*/feedback.json merge=agentv-json
`;

export const RESULTS_GITATTRIBUTES = AGENTV_GITATTRIBUTES + OUR_GITATTRIBUTES;

/**
 * The `.gitattributes` a commit of ours should carry given the one on the branch, or null to leave
 * it. AgentV rewrites the file to exactly its own lines on each of its publishes; re-adding ours
 * after every such commit would make the file churn (and conflict) between the two writers, so we
 * only write it when AgentV's lines are missing. Lines someone else added are kept.
 */
export function gitattributesUpdate(existing: string | null): string | null {
  if (existing === null || existing === '') return RESULTS_GITATTRIBUTES;
  const have = new Set(existing.split('\n'));
  const missing = AGENTV_GITATTRIBUTES.split('\n').filter((l) => l !== '' && !have.has(l));
  if (missing.length === 0) return null;
  return (
    AGENTV_GITATTRIBUTES +
    existing
      .split('\n')
      .filter((l) => l !== '' && !AGENTV_GITATTRIBUTES.includes(l))
      .join('\n') +
    '\n'
  );
}
