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
 *
 * AgentV's stable release (4.42) has a layout of its own on the same branch (same genesis commit):
 *
 *   runs/<experiment>/<timestamp>/...             one run, byte for byte its local run directory
 *                                                 (index.jsonl, benchmark.json, timing.json,
 *                                                 <suite>/<test>/...); its Dashboard lists a run by
 *                                                 its benchmark.json and only under `runs/`
 *   metadata/runs/<experiment>/<timestamp>/       editable overlays (its tags.json; our feedback.json)
 *
 * Its run id is `<experiment>::<timestamp>` (a bare `<timestamp>` in the `default` experiment), as
 * the 4.42 Dashboard names it. `runs/<experiment>/<child>/` is one of ours of the older layout when
 * `<child>` is a day (`YYYY-MM-DD`, `undated`), else a 4.42 run. Every reader enumerates a tip's runs
 * of all three layouts with `listRunDirs`, and finds one run with `locateRun`.
 */
import { readObjects, lsTree, type Repo, type TreeEntry } from '../git/index.js';
import { isSafeSegment, slugToIso } from '../model/path-segments.js';
import { LayoutError } from '../errors/read-errors.js';

export const CATALOG_DIR = '.indexes';
export const CATALOG_PREFIX = 'agentv-results.';
/** The layout before AgentV's: read only. */
export const LEGACY_CATALOG_DIR = 'catalog';
export const LEGACY_RUNS_DIR = 'runs';

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

/** AgentV 4.42's run directories on the results branch (the same name as the older layout's). */
export const STABLE_RUNS_DIR = 'runs';
/** AgentV 4.42's overlay tree: `metadata/runs/<experiment>/<timestamp>/tags.json`. */
export const STABLE_METADATA_DIR = 'metadata/runs';

/** Which AgentV a layout is read and written by: `next` = 5.x (runs at the root), `stable` = 4.42 (`runs/<exp>/<ts>/`). */
export type BranchLayout = 'next' | 'stable';

/** AgentV 4.42's id of a run: `<experiment>::<timestamp>`, a bare timestamp in the `default` experiment. */
export function stableRunId(experiment: string, timestamp: string): string {
  return experiment === 'default' ? timestamp : `${experiment}::${timestamp}`;
}

/** `<experiment>::<timestamp>` (or a bare timestamp: `default`) -> its parts, or null when a segment is unsafe. */
export function parseStableRunId(runId: string): { experiment: string; timestamp: string } | null {
  const sep = runId.lastIndexOf('::');
  const experiment = sep === -1 ? 'default' : runId.slice(0, sep);
  const timestamp = sep === -1 ? runId : runId.slice(sep + 2);
  return isSafeSegment(experiment) && isSafeSegment(timestamp) ? { experiment, timestamp } : null;
}

/**
 * The AgentV 4.42 run an id can name, in every spelling we accept: its own `<experiment>::<timestamp>`
 * (a bare timestamp: `default`), or `<experiment>/<timestamp>` as our other run ids spell it; null
 * when a segment is unsafe or the timestamp would read as a day folder of the older layout.
 */
export function stableRunParts(runId: string): { experiment: string; timestamp: string } | null {
  const parts = runId.split('/');
  const at =
    parts.length === 2 && parts.every(isSafeSegment) && !parts[0]!.includes('::') ? { experiment: parts[0]!, timestamp: parts[1]! } : parseStableRunId(runId);
  return at && !isLegacyDayDir(at.timestamp) ? at : null;
}

/** A day folder of the older layout (`runs/<experiment>/<day>/<timestamp>/`), never a 4.42 run. */
export function isLegacyDayDir(name: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(name) || name === 'undated';
}

/** Where AgentV 4.42 keeps a run: `runs/<experiment>/<timestamp>` (no catalog of ours). */
export function stableRunLocation(experiment: string, timestamp: string): RunLocation {
  for (const seg of [experiment, timestamp]) {
    if (!isSafeSegment(seg))
      throw new LayoutError(`AgentV 4.42 run ${JSON.stringify(`${experiment}/${timestamp}`)} has an unsafe segment ${JSON.stringify(seg)}`);
  }
  if (isLegacyDayDir(timestamp)) throw new LayoutError(`AgentV 4.42 run timestamp ${JSON.stringify(timestamp)} would read as a day folder of the older layout`);
  const day = dayOf(timestamp);
  return { runId: stableRunId(experiment, timestamp), experiment, timestamp, day, path: `${STABLE_RUNS_DIR}/${experiment}/${timestamp}`, catalogPath: '' };
}

/** True for AgentV 4.42's `runs/<experiment>/<timestamp>` (the older layout's paths have four segments). */
export function isStableRunPath(path: string): boolean {
  const parts = path.split('/');
  return parts.length === 3 && parts[0] === STABLE_RUNS_DIR && !isLegacyDayDir(parts[2]!);
}

/**
 * Where a run's overlays (tags.json, feedback.json) live given its directory: AgentV 4.42 keeps
 * its runs immutable and their overlays under `metadata/runs/<exp>/<ts>/`; every other run has
 * them in its own directory.
 */
export function overlayDirOf(runPath: string): string {
  return isStableRunPath(runPath) ? `metadata/${runPath}` : runPath;
}

/** One run directory of a tip, of any layout. */
export interface BranchRunDir {
  layout: 'root' | 'stable';
  /** Its path on the branch (`<run_dir>` or `runs/<experiment>/<timestamp>`). */
  path: string;
  /** Its tree. */
  sha: string;
  /** 4.42 runs: the experiment and timestamp the path names. */
  experiment?: string;
  timestamp?: string;
}

export interface BranchRunDirs {
  /** The tip's root entries (one `ls-tree`). */
  root: TreeEntry[];
  /** Candidate run directories: single-segment non-dot roots (5.x and ours) and 4.42's `runs/<exp>/<ts>`. */
  dirs: BranchRunDir[];
  /** The tip holds the older layout's `runs/<exp>/<day>/` folders (only those need the catalog check). */
  legacyRuns: boolean;
}

/** A root entry that can be a run directory (AgentV 5: single segment, no leading dot, not a reserved name). */
export function isRootRunDir(e: TreeEntry): boolean {
  return e.type === 'tree' && !e.path.startsWith('.') && e.path !== LEGACY_RUNS_DIR && e.path !== LEGACY_CATALOG_DIR && e.path !== 'metadata';
}

/** Entries of a raw tree object (`<mode> <name>\0<binary id>`), trees only. */
function subtrees(data: Buffer, idBytes: number): { name: string; sha: string }[] {
  const out: { name: string; sha: string }[] = [];
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    const nul = data.indexOf(0, space);
    if (space === -1 || nul === -1) break;
    const mode = data.toString('latin1', i, space);
    const name = data.toString('utf8', space + 1, nul);
    const sha = data.toString('hex', nul + 1, nul + 1 + idBytes);
    if (mode === '40000') out.push({ name, sha });
    i = nul + 1 + idBytes;
  }
  return out;
}

/**
 * Every run directory on `tip`, whichever AgentV wrote it: one `ls-tree` of the root and, when the
 * tip has `runs/`, one `cat-file --batch` for it and one for all its experiment trees (never a
 * recursive walk, whatever the number of runs).
 */
export async function listRunDirs(repo: Repo, tip: string, root?: TreeEntry[]): Promise<BranchRunDirs> {
  const entries = root ?? (await lsTree(repo, tip));
  const dirs: BranchRunDir[] = entries.filter(isRootRunDir).map((e) => ({ layout: 'root', path: e.path, sha: e.sha }));
  const runsTree = entries.find((e) => e.path === STABLE_RUNS_DIR && e.type === 'tree');
  let legacyRuns = false;
  if (runsTree) {
    const idBytes = runsTree.sha.length / 2;
    const top = await readObjects(repo, [runsTree.sha]);
    const experiments = subtrees(top.get(runsTree.sha)?.data ?? Buffer.alloc(0), idBytes).filter((e) => isSafeSegment(e.name));
    const trees = await readObjects(
      repo,
      experiments.map((e) => e.sha),
    );
    for (const exp of experiments) {
      for (const child of subtrees(trees.get(exp.sha)?.data ?? Buffer.alloc(0), idBytes)) {
        if (isLegacyDayDir(child.name)) legacyRuns = true;
        else if (isSafeSegment(child.name))
          dirs.push({ layout: 'stable', path: `${STABLE_RUNS_DIR}/${exp.name}/${child.name}`, sha: child.sha, experiment: exp.name, timestamp: child.name });
      }
    }
  }
  return { root: entries, dirs, legacyRuns };
}

/**
 * Where a run id would live before looking at a tip: its root directory, or for an
 * `<experiment>::<timestamp>` id (which no root directory can have) AgentV 4.42's
 * `runs/<experiment>/<timestamp>`. Throws the root layout's LayoutError for an id neither can take.
 */
export function presumedRunLocation(runId: string): RunLocation {
  try {
    return runLocation(runId);
  } catch (err) {
    const stable = runId.includes('::') ? parseStableRunId(runId) : null;
    if (stable && !isLegacyDayDir(stable.timestamp)) return stableRunLocation(stable.experiment, stable.timestamp);
    throw err;
  }
}

/**
 * Every place a run id may be on a branch, most likely first: the presumed location, the older
 * layout's, and AgentV 4.42's for a bare timestamp (its `default` experiment). Readers that look
 * at a tree (pull, pull --at) try them in this order.
 */
export function runLocationCandidates(runId: string): RunLocation[] {
  const presumed = presumedRunLocation(runId);
  const out = [presumed];
  const legacy = legacyRunLocation(runId);
  if (legacy) out.push(legacy);
  const stable = stableRunParts(runId);
  if (stable) {
    const at = stableRunLocation(stable.experiment, stable.timestamp);
    if (at.path !== presumed.path) out.push(at);
  }
  return out;
}

/**
 * Where a run id lives on `tip`: its root directory (5.x, ours), else AgentV 4.42's
 * `runs/<experiment>/<timestamp>` when the id is `<experiment>::<timestamp>`, `<experiment>/<timestamp>`
 * (or a bare timestamp of its `default` experiment) and that directory exists; null when neither does.
 */
export async function locateRun(repo: Repo, tip: string, runId: string): Promise<RunLocation | null> {
  const stable = stableRunParts(runId);
  let root: RunLocation | null = null;
  try {
    root = runLocation(runId);
  } catch {
    root = null; // an `<experiment>::<timestamp>` id: only 4.42's layout can hold it
  }
  const specs = [...(root ? [`${tip}:${root.path}`] : []), ...(stable ? [`${tip}:${STABLE_RUNS_DIR}/${stable.experiment}/${stable.timestamp}`] : [])];
  if (specs.length === 0) return null;
  const found = await readObjects(repo, specs);
  if (root && found.get(`${tip}:${root.path}`)?.type === 'tree') return root;
  if (stable && found.get(`${tip}:${STABLE_RUNS_DIR}/${stable.experiment}/${stable.timestamp}`)?.type === 'tree')
    return stableRunLocation(stable.experiment, stable.timestamp);
  return null;
}

/**
 * A run's identity whichever layout holds it: its experiment and its id without the experiment
 * (`<experiment>::<timestamp>` for AgentV 4.42's, `<experiment>/<timestamp>` and
 * `<experiment>--<timestamp>` for our older ids, AgentV 5.x's bare run id). Two listed runs with
 * the same key are one run held twice (`list` shows it once; `sync` repairs it).
 */
export function runIdentityKey(experiment: string, runId: string): string {
  let id = runId;
  const sep = runId.lastIndexOf('::');
  if (sep !== -1 && runId.slice(0, sep) === experiment) id = runId.slice(sep + 2);
  else if (runId.startsWith(`${experiment}/`)) id = runId.slice(experiment.length + 1);
  else if (runId.startsWith(`${experiment}--`)) id = runId.slice(experiment.length + 2);
  return `${experiment}\u0000${id}`;
}
