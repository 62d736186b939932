/**
 * Publishing in AgentV 4.42's branch layout (layout/branch-layout.ts): a run of its own local layout
 * (`.agentv/results/runs/<experiment>/<timestamp>/`) is committed to
 * `runs/<experiment>/<timestamp>/` on the results branch byte for byte, as its `auto_push` does —
 * every file of the directory, the executable bit kept, the directory's previous content replaced —
 * with its commit title (`feat(results): <experiment> - <passed>/<total> PASS (<mean>)`, passed
 * meaning a score of 1 as 4.42 counts it) and `AgentV-Run: <experiment>::<timestamp>` trailer. Its
 * Dashboard then lists the run with the numbers it would show for its own publish.
 *
 * Nothing goes to the artifacts branch (4.42 has none) and no catalog line is written (our `list`
 * reads 4.42 runs from their own index). One commit on the results ref, moved compare-and-swap;
 * publishing the same directory again makes no commit.
 *
 * Rows are append-only here too (append-only-rows.ts): when the branch already holds the run with
 * rows the directory lacks (another machine's shard, met on the team's tip by a depth-1 clone), its
 * index.jsonl is the union and those rows' files stay. The run's benchmark.json and timing.json are
 * the directory's own: 4.42's documents are not recomputed over the union (docs/branches.md). Beside the 5.x path (publish/commit-run.ts),
 * not through it: the two layouts share only the branch.
 */
import { blobId } from '../git/hash.js';
import { type FileChange, type FileMode, type Ident, lsTree, readBlobs, type Repo, resolveRef, updateRefs, writeCommit } from '../git/index.js';
import { keptFile, pathsOf, unionLines } from './append-only-rows.js';
import { stableRunId, stableRunLocation, type RunLocation } from '../layout/branch-layout.js';
import { InputError } from '../errors/input-error.js';
import { rootCommit } from './commit-run.js';
import { stableCounts, type StableRunCounts } from '../layout/run-index.js';
import { readRunFolder, type RunFolderFile } from '../runs/read/run-files.js';

/** 4.42's commit message for a run it publishes. */
export function stableCommitMessage(experiment: string, timestamp: string, counts: StableRunCounts, custom?: string): string {
  const title = custom ?? `feat(results): ${experiment} - ${counts.passed}/${counts.total} PASS (${counts.meanScore.toFixed(3)})`;
  return `${title}\n\nAgentV-Run: ${stableRunId(experiment, timestamp)}\n`;
}

export interface StableCommitOptions {
  repo: Repo;
  resultsRef: string;
  /** The run directory of 4.42's local layout. */
  runDir: string;
  experiment: string;
  timestamp: string;
  author: Ident;
  message?: string;
  /** The run's files when they are not 4.42's own directory as it is (a run of ours in 4.42's shape: stable-shape.ts). */
  files?: RunFolderFile[];
  /** Called just before the ref moves (the publish lock's check). */
  beforeRefUpdate?: () => void;
}

export interface StableCommitResult {
  location: RunLocation;
  status: 'published' | 'already-published';
  before: string | null;
  after: string;
  counts: StableRunCounts;
  files: number;
}

export async function commitStableRun(opts: StableCommitOptions): Promise<StableCommitResult> {
  const { repo } = opts;
  const location = stableRunLocation(opts.experiment, opts.timestamp);
  let files = opts.files ?? (await readRunFolder(opts.runDir));
  const index = files.find((f) => f.rel === 'index.jsonl');
  if (!index) throw new InputError(`${opts.runDir}: no index.jsonl — not a run of AgentV 4.42`);

  const before = await resolveRef(repo, opts.resultsRef);
  // Rows the branch has and the directory lacks are kept (append-only-rows.ts), with their files.
  const indexSpec = `${before}:${location.path}/index.jsonl`;
  const branchIndex = before ? (await readBlobs(repo, [indexSpec])).get(indexSpec) : null;
  const union = branchIndex ? unionLines(index.data.toString('utf8'), branchIndex) : null;
  const grown = union !== null && union.extra.length > 0;
  const keep = grown ? pathsOf(union.extra) : new Set<string>();
  if (grown) files = files.map((f) => (f === index ? { ...f, data: Buffer.from(union.text) } : f));
  const counts = stableCounts(grown ? union.text : index.data.toString('utf8'));
  const existing = new Map<string, string>();
  if (before)
    for (const e of await lsTree(repo, before, { path: `${location.path}/`, recursive: true }))
      if (e.type === 'blob') existing.set(e.path, `${e.mode} ${e.sha}`);
  const changes: FileChange[] = [];
  const wanted = new Set<string>();
  for (const f of files) {
    const path = `${location.path}/${f.rel}`;
    const mode: FileMode = f.executable ? '100755' : '100644';
    wanted.add(path);
    if (existing.get(path) !== `${mode} ${blobId(repo, f.data)}`) changes.push({ path, data: f.data, mode });
  }
  // The directory holds exactly the run's files, as 4.42's publish leaves it.
  for (const path of existing.keys()) if (!wanted.has(path) && !keptFile(path.slice(location.path.length + 1), keep)) changes.push({ path, delete: true });
  if (before && changes.length === 0) return { location, status: 'already-published', before, after: before, counts, files: files.length };

  const parent = before ?? (await rootCommit(repo));
  const written = await writeCommit(repo, {
    parent,
    files: changes,
    message: stableCommitMessage(opts.experiment, opts.timestamp, counts, opts.message),
    author: opts.author,
  });
  opts.beforeRefUpdate?.();
  await updateRefs(repo, [{ ref: opts.resultsRef, new: written.commit, old: before }], { message: `agentv-results: publish ${location.runId}` });
  return { location, status: 'published', before, after: written.commit, counts, files: files.length };
}
