/**
 * Adoption takes runs, never branches (issue 48): the one implementation behind taking in a sync
 * branch (`agentv/results-sync/*`, ours or AgentV's) and a checkpoint branch (`agentv/wip/...`).
 *
 * A branch offered for adoption is read as what it may hold, relative to its merge base with the
 * current results tip (adopt-tree.ts reads every tree it brings as `git fsck` would):
 *
 *   run directories of either AgentV branch layout (5.x `<run>/` at the root; 4.42
 *     `runs/<exp>/<ts>/`, and our older `runs/<exp>/<day>/<ts>/`) that the results branch does
 *     not hold: taken whole, their checked trees grafted as they are;
 *   in a run the results branch holds: its manifest (`index.jsonl`, `.internal/index.jsonl`) and
 *     overlays (`tags.json`, `feedback.json`), merged by the row merge; any other file only when
 *     the results branch already has the same bytes;
 *   4.42's overlays (`metadata/runs/<exp>/<ts>/{tags,feedback}.json`) of a run the results branch
 *     holds or that this adoption brings; catalog and index lines (`.indexes/*.jsonl`,
 *     `catalog/*.jsonl`), merged by the row merge;
 *   `.gitattributes` and AgentV's `.cache/` are never taken (the results branch keeps its own:
 *     AgentV 5.x rewrites the first in every commit it makes, derives the second), nor a reason
 *     to refuse.
 *
 * Anything else refuses the branch, with the reason: a deleted or changed published run, a foreign
 * root (no common history, or a root commit of its own), a file outside the run layout, a
 * malformed tree. Nothing of a refused branch is written.
 *
 * What is taken becomes ONE commit on the current results tip (fast-import: the grafted run trees,
 * the merged files), with that tip as its only parent: the offered branch's commits never join
 * the results branch's history. Before the caller moves the ref, `lostRuns` checks that the new tip
 * holds every run the old one held (its directory and its catalog line): a failed check writes and
 * pushes nothing.
 */
import { type FileChange, type Ident, lsTree, mergeBases, readBlobs, readObjects, type Repo, rootsNotIn, writeCommit } from '../git/index.js';
import { ownedMergeKind, resolveConflictedPath } from '../merge/index.js';
import { isLegacyDayDir, listRunDirs } from '../layout/branch-layout.js';
import { isSafeSegment } from '../model/path-segments.js';
import { offeredChanges, TreeRefusal, type OfferedChange } from './adopt-tree.js';

export interface TakeRunsInput {
  /** The current results tip (the new commit's only parent). */
  tip: string;
  /** The offered branch's tip. */
  offered: string;
  message: string;
  author: Ident;
  /**
   * A checkpoint branch: only these run directories count, every other difference is the base the
   * checkpoint was taken on (AgentV amends the results tip) and is ignored; a missing common
   * history is then read against the empty tree (nothing of its history is taken either way).
   */
  onlyRuns?: readonly string[];
}

export type TakeRunsResult =
  /** Nothing to take: the results tip already holds all of it (`commit` = the tip). */
  | { kind: 'contained'; commit: string }
  /** One new commit on the tip holding what was taken. `runs`: run directories added or merged into. */
  | { kind: 'taken'; commit: string; runs: string[] }
  | { kind: 'refused'; reason: string };

/** Where a path of the results branch belongs. */
type Place =
  | { kind: 'run'; run: string }
  | { kind: 'overlay'; run: string }
  | { kind: 'catalog' }
  | { kind: 'attributes' }
  /** AgentV's `.cache/`: what it derives from the branch for its own listing; never taken. */
  | { kind: 'cache' }
  | { kind: 'outside' };

const RESERVED_ROOTS = new Set(['runs', 'metadata', 'catalog']);
const OVERLAYS = new Set(['tags.json', 'feedback.json']);
/** What makes a new directory a run: AgentV 5.x's summary and manifest, ours, 4.42's benchmark. */
const RUN_MANIFESTS = new Set(['summary.json', 'index.jsonl', '.internal/index.jsonl', 'benchmark.json']);

/** The run directory a path belongs to (of either layout), or its other place on the branch. */
export function placeOf(path: string): Place {
  const p = path.split('/');
  if (p.length === 1) return p[0] === '.gitattributes' ? { kind: 'attributes' } : { kind: 'outside' };
  if (p.length === 2 && (p[0] === '.indexes' || p[0] === 'catalog') && p[1]!.endsWith('.jsonl')) return { kind: 'catalog' };
  if (p[0] === '.cache') return { kind: 'cache' };
  if (p[0] === 'runs') {
    const [, exp, child] = p;
    if (!exp || !child || !isSafeSegment(exp) || !isSafeSegment(child)) return { kind: 'outside' };
    if (isLegacyDayDir(child)) return p.length >= 5 && isSafeSegment(p[3]!) ? { kind: 'run', run: p.slice(0, 4).join('/') } : { kind: 'outside' };
    return p.length >= 4 ? { kind: 'run', run: p.slice(0, 3).join('/') } : { kind: 'outside' };
  }
  if (p[0] === 'metadata') {
    const ok = p.length === 5 && p[1] === 'runs' && isSafeSegment(p[2]!) && isSafeSegment(p[3]!) && !isLegacyDayDir(p[3]!) && OVERLAYS.has(p[4]!);
    return ok ? { kind: 'overlay', run: `runs/${p[2]}/${p[3]}` } : { kind: 'outside' };
  }
  const root = p[0]!;
  if (root.startsWith('.') || RESERVED_ROOTS.has(root) || !isSafeSegment(root)) return { kind: 'outside' };
  return { kind: 'run', run: root };
}

/** The run directories a path is, or is the parent of (a deleted directory). */
function runOfDir(path: string): string | null {
  const p = path.split('/');
  if (p[0] === 'runs') {
    if (p.length === 3 && !isLegacyDayDir(p[2]!)) return path;
    if (p.length === 4 && isLegacyDayDir(p[2]!)) return path;
    return null;
  }
  if (p.length === 1 && !p[0]!.startsWith('.') && !RESERVED_ROOTS.has(p[0]!)) return path;
  return null;
}

/** Take the runs a branch offers onto the current results tip, or refuse it (see the header). */
export async function takeRuns(repo: Repo, input: TakeRunsInput): Promise<TakeRunsResult> {
  const { tip, offered } = input;
  if (tip === offered) return { kind: 'contained', commit: tip };
  const bases = await mergeBases(repo, tip, offered);
  if (bases.includes(offered)) return { kind: 'contained', commit: tip };
  const checkpoint = input.onlyRuns !== undefined;
  if (!checkpoint) {
    if (bases.length === 0) return { kind: 'refused', reason: 'its history shares no commit with the results branch (a foreign root): nothing of it is taken' };
    const roots = await rootsNotIn(repo, offered, tip);
    if (roots.length > 0) return { kind: 'refused', reason: `its history holds a root commit of its own (${roots[0]!.slice(0, 12)}): nothing of it is taken` };
  }
  const base = bases[0] ?? null;
  const commits = await readObjects(repo, [offered, tip, ...(base ? [base] : [])]);
  const treeOf = (c: string): string | null => {
    const o = commits.get(c);
    const m = o && o.type === 'commit' ? /^tree ([0-9a-f]{40,64})$/m.exec(o.data.toString('latin1')) : null;
    return m ? m[1]! : null;
  };
  const offeredTree = treeOf(offered);
  if (offeredTree === null) return { kind: 'refused', reason: 'its tip is not a readable commit' };
  const diff = await offeredChanges(repo, base ? treeOf(base) : null, offeredTree, input.onlyRuns);
  if (diff instanceof TreeRefusal) return { kind: 'refused', reason: diff.reason };

  // What the results tip holds at every path that matters: its run directories first, then the
  // files (two listings: a pathspec inside a directory makes ls-tree list its content, not it).
  const runPaths = new Set<string>();
  const filePaths = new Set<string>();
  for (const c of diff.changes) {
    const place = placeOf(c.path);
    if (place.kind === 'run' || place.kind === 'overlay') runPaths.add(place.run);
    if (c.kind === 'delete' && c.tree) runPaths.add(c.path);
    else filePaths.add(c.path);
  }
  const atTip = new Map<string, { sha: string; type: string }>();
  const runsAtTip = new Set<string>();
  for (const e of runPaths.size > 0 ? await lsTree(repo, tip, { paths: [...runPaths] }) : []) if (e.type === 'tree') runsAtTip.add(e.path);
  // Files of a run the tip does not hold need no lookup (a new run can be thousands of files).
  const lookups = [...filePaths].filter((f) => {
    const place = placeOf(f);
    return place.kind !== 'run' || runsAtTip.has(place.run);
  });
  for (const e of lookups.length > 0 ? await lsTree(repo, tip, { paths: lookups }) : []) atTip.set(e.path, { sha: e.sha, type: e.type });
  const tipHasRun = (run: string): boolean => runsAtTip.has(run);
  const baseHadRun = (run: string): boolean => baseTouchesRun(diff.changes, run);
  // Runs this branch brings that the results branch does not hold (their overlays may come along).
  const newRuns = new Set<string>();
  const manifests = new Set<string>();
  for (const c of diff.changes) {
    const place = placeOf(c.path);
    if (c.kind !== 'write' || place.kind !== 'run' || tipHasRun(place.run) || baseHadRun(place.run)) continue;
    newRuns.add(place.run);
    if (RUN_MANIFESTS.has(c.path.slice(place.run.length + 1))) manifests.add(place.run);
  }

  const grafts = new Map<string, string>();
  const merges: { path: string; base: string | null; ours: string | null; theirs: string; mode: '100644' | '100755' }[] = [];
  const taken = new Set<string>();
  const refuse = (reason: string): TakeRunsResult => ({ kind: 'refused', reason });

  for (const c of diff.changes) {
    const place = placeOf(c.path);
    const here = atTip.get(c.path) ?? null;
    // `.gitattributes` is the results branch's own (ours and AgentV’s lines, layout/):
    // AgentV 5.x rewrites it to its lines alone in every commit it makes, so a side branch's
    // version is never taken, and never a reason to refuse the branch.
    // Nor is AgentV's `.cache/` (what it derives from the branch for its own listing).
    if (place.kind === 'attributes' || place.kind === 'cache') continue;
    if (c.kind === 'delete') {
      // Deleting what the results branch no longer holds changes nothing; anything else is refused.
      if (here === null && !(c.tree && runsAtTip.has(c.path))) continue;
      const run = c.tree ? runOfDir(c.path) : null;
      return refuse(run ? `it deletes the published run ${run}` : `it deletes ${c.path}${place.kind === 'run' ? ` of the published run ${place.run}` : ''}`);
    }
    if (here !== null && here.type === 'blob' && here.sha === c.sha) continue; // the results branch has these bytes
    switch (place.kind) {
      case 'outside':
        return refuse(`${c.path} is outside the run layout`);
      case 'catalog':
        merges.push({ path: c.path, base: c.baseSha, ours: here?.type === 'blob' ? here.sha : null, theirs: c.sha, mode: '100644' });
        break;
      case 'overlay': {
        if (!tipHasRun(place.run) && !newRuns.has(place.run))
          return refuse(`${c.path} is an overlay of ${place.run}, a run neither the results branch nor this branch holds`);
        merges.push({ path: c.path, base: c.baseSha, ours: here?.type === 'blob' ? here.sha : null, theirs: c.sha, mode: '100644' });
        break;
      }
      case 'run': {
        if (!tipHasRun(place.run)) {
          if (baseHadRun(place.run)) return refuse(`it changes ${c.path} of ${place.run}, a run the results branch no longer holds (archived or expired)`);
          // A directory is a run by what it holds (AgentV lists any root directory): a manifest.
          if (!manifests.has(place.run))
            return refuse(`${c.path} is outside the run layout (${place.run}/ holds no run: no summary.json, benchmark.json or index)`);
          // A run new to the results branch: taken whole, as its (checked) tree.
          const whole = diff.addedDirs.get(place.run);
          if (whole !== undefined) grafts.set(place.run, whole);
          else merges.push({ path: c.path, base: null, ours: null, theirs: c.sha, mode: c.mode });
          taken.add(place.run);
          break;
        }
        if (ownedMergeKind(c.path) === null) return refuse(`it changes ${c.path} of the published run ${place.run}`);
        merges.push({ path: c.path, base: c.baseSha, ours: here?.type === 'blob' ? here.sha : null, theirs: c.sha, mode: '100644' });
        taken.add(place.run);
        break;
      }
    }
  }

  // The row merge of every file both sides may hold (manifests, overlays, catalog lines).
  const files: FileChange[] = [];
  const graftedUnder = (path: string): boolean => [...grafts.keys()].some((g) => path.startsWith(`${g}/`));
  const blobs = await readBlobs(repo, [...new Set(merges.flatMap((m) => [m.base, m.ours, m.theirs].filter((s): s is string => s !== null)))]);
  for (const m of merges) {
    if (graftedUnder(m.path)) continue;
    const get = (s: string | null): Buffer | null => (s === null ? null : (blobs.get(s) ?? null));
    const r = resolveConflictedPath({ path: m.path, base: get(m.base), ours: get(m.ours), theirs: get(m.theirs)! });
    if (r.action === 'conflict') return refuse(`${m.path}: ${r.reason}`);
    if (r.action === 'delete') {
      if (m.ours !== null) return refuse(`its merge would delete ${m.path}`);
      continue;
    }
    if (m.ours !== null && get(m.ours)?.equals(r.data)) continue;
    files.push({ path: m.path, data: r.data, mode: m.mode });
  }
  if (grafts.size === 0 && files.length === 0) return { kind: 'contained', commit: tip };
  const written = await writeCommit(repo, {
    parent: tip,
    trees: [...grafts].map(([path, tree]) => ({ path, tree })),
    files,
    message: input.message,
    author: input.author,
  });
  return { kind: 'taken', commit: written.commit, runs: [...taken].sort() };
}

/** Whether the base (not the offered branch) had this run: a change under it that is not an addition of the whole directory. */
function baseTouchesRun(changes: readonly OfferedChange[], run: string): boolean {
  return changes.some((c) => (c.kind === 'delete' || c.baseSha !== null) && (c.path === run || c.path.startsWith(`${run}/`)));
}

/**
 * The runs `before` holds that `after` does not (a run directory of either layout gone, or a run a
 * catalog line listed no longer listed). Empty when nothing was lost: the check an adoption passes
 * before its ref moves.
 */
export async function lostRuns(repo: Repo, before: string, after: string): Promise<string[]> {
  if (before === after) return [];
  const [b, a] = await Promise.all([listRunDirs(repo, before), listRunDirs(repo, after)]);
  const have = new Set(a.dirs.map((d) => d.path));
  const lost = b.dirs.filter((d) => !have.has(d.path)).map((d) => d.path);
  // Catalog lines: every run id a catalog file of `before` lists is still listed by `after`.
  const catalogs = async (tip: string): Promise<Map<string, string>> => {
    const entries = await lsTree(repo, tip, { paths: ['.indexes/', 'catalog/'] });
    return new Map(entries.filter((e) => e.type === 'blob' && e.path.endsWith('.jsonl')).map((e) => [e.path, e.sha]));
  };
  const [cb, ca] = await Promise.all([catalogs(before), catalogs(after)]);
  const changed = [...cb].filter(([p, sha]) => ca.get(p) !== sha);
  if (changed.length > 0) {
    const text = await readBlobs(repo, [...new Set(changed.flatMap(([p, sha]) => [sha, ...(ca.has(p) ? [ca.get(p)!] : [])]))]);
    for (const [p, sha] of changed) {
      const was = runIdsOf(text.get(sha));
      const now = runIdsOf(ca.has(p) ? text.get(ca.get(p)!) : undefined);
      for (const id of was) if (!now.has(id)) lost.push(`${id} (catalog ${p})`);
    }
  }
  return lost;
}

function runIdsOf(data: Buffer | null | undefined): Set<string> {
  const ids = new Set<string>();
  if (!data) return ids;
  for (const line of data.toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const row = JSON.parse(line) as { run_id?: unknown } | null;
      if (row && typeof row === 'object' && typeof row.run_id === 'string') ids.add(row.run_id);
    } catch {
      // a torn or foreign line lists no run
    }
  }
  return ids;
}
