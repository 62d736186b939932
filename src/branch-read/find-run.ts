/**
 * One run as `list` shows it, found by its id without reading the listing: the Dashboard's
 * `GET /api/runs/:id` (and every request naming one run) asks this, not `listRuns`.
 *
 * Per tip (the local branch and its remote-tracking mirror, newest first, as `list` reads them),
 * one `ls-tree` of exactly those paths finds every place the id can be (layout/branch-layout.ts
 * `runLocationCandidates`: its root directory, the older layout's `runs/<exp>/<day>/<ts>`, AgentV
 * 4.42's `runs/<exp>/<ts>`) and the catalog files of the day those places name (ours in
 * `.indexes/`, the older one in `catalog/`), and one `cat-file` reads that catalog file (parsed once
 * per blob in the process): one day's catalog, never every day's. A run with a
 * catalog line is that line's row; a directory no line names (AgentV's `auto_push`) is read as
 * `list` reads it (run-index.ts `readRunFiles`, or the line an `archive` wrote for its tree in that
 * day's foreign catalog), after checking that the day's catalog names no other run there.
 *
 * The answer must be the row `list` gives, byte for byte. Where this read cannot be sure of that
 * — the id is in none of the places it names (an unknown, expired or mistyped id), the run is held
 * in two layouts at once, a line names the directory under another id, the two tips disagree on
 * what the run is — it answers null and the caller asks the listing, which decides as it always
 * did. What was found on a pair of tips is kept for the process (commit ids name exact trees).
 */
import { lsTree, readObjects, type GitObject, type Repo } from '../git/index.js';
import {
  CATALOG_DIR,
  CATALOG_PREFIX,
  STABLE_RUNS_DIR,
  runIdentityKey,
  runLocationCandidates,
  stableRunId,
  type BranchRunDir,
  type RunLocation,
} from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import { foreignCatalogPath, parseForeignCatalog } from '../layout/foreign-catalog.js';
import { readRunFiles, runDirKey } from '../layout/run-index.js';
import { branchRefs, readView, type ReadView } from '../repo/remote-view.js';
import { resolveTarget, withRefView, type TargetOptions } from '../repo/target.js';
import { parseCatalog } from './catalog-lines.js';
import type { ListedRun, RunWhere } from './list-types.js';

type Row = Omit<ListedRun, 'where'>;

/** What one tip says of the id: its row, nothing (none of the places), or "ask the listing". */
type TipAnswer = { row: Row } | 'absent' | 'unsure';

export interface FoundRun {
  run: ListedRun;
  tips: ReadView['tips'];
}

/** Parsed catalog blobs by blob id (a blob never changes): a day's file is parsed once per process, not per request. */
const parsedBlobs = new Map<string, Row[]>();
const PARSED_BLOBS_KEPT = 64;

function catalogRows(sha: string, day: string, read: ReadonlyMap<string, GitObject | null>): Row[] {
  const key = `${sha}\0${day}`;
  let rows = parsedBlobs.get(key);
  if (!rows) {
    rows = parseCatalog(read.get(sha)?.data.toString('utf8') ?? '', day).rows;
    parsedBlobs.set(key, rows);
    if (parsedBlobs.size > PARSED_BLOBS_KEPT) parsedBlobs.delete(parsedBlobs.keys().next().value as string);
  }
  return rows;
}

/** The day a catalog path names (`.indexes/agentv-results.<day>.jsonl`, `catalog/<day>.jsonl`). */
function catalogDay(loc: RunLocation): string {
  return loc.catalogPath.startsWith(`${CATALOG_DIR}/${CATALOG_PREFIX}`)
    ? loc.catalogPath.slice(CATALOG_DIR.length + 1 + CATALOG_PREFIX.length, -'.jsonl'.length)
    : loc.catalogPath.slice('catalog/'.length, -'.jsonl'.length);
}

/** A root directory `list` can take for a run (isRootRunDir's names). */
const ROOT_RESERVED = new Set([STABLE_RUNS_DIR, 'catalog', 'metadata']);

async function lookOnTip(repo: Repo, tip: string, runId: string, candidates: RunLocation[]): Promise<TipAnswer> {
  // Ours first, then the older catalog: the order `list` reads a tip's catalog files in.
  const catalogs = [
    ...candidates.filter((c) => c.catalogPath.startsWith(`${CATALOG_DIR}/`)),
    ...candidates.filter((c) => c.catalogPath.startsWith('catalog/')),
  ];
  // One ls-tree names every place at once: git reads the root tree (one entry per run: 100,000 on
  // a big branch) once, where a cat-file resolving each `<tip>:<path>` would read it per path.
  const entries = await lsTree(repo, tip, { paths: [...new Set([...candidates.map((c) => c.path), ...catalogs.map((c) => c.catalogPath)])] });
  const at = new Map(entries.map((e) => [e.path, e]));
  const trees = new Map<string, string>(); // path -> tree id, of the candidate places that exist
  for (const c of candidates) {
    const e = at.get(c.path);
    if (e?.type === 'tree') trees.set(c.path, e.sha);
  }
  const blobs = catalogs.flatMap((c) => {
    const e = at.get(c.catalogPath);
    return e?.type === 'blob' ? [{ sha: e.sha, day: catalogDay(c) }] : [];
  });
  const unread = blobs.filter((b) => !parsedBlobs.has(`${b.sha}\0${b.day}`)).map((b) => b.sha);
  const catalogText = unread.length > 0 ? await readObjects(repo, unread) : new Map<string, GitObject | null>();
  let row: Row | null = null;
  for (const b of blobs) {
    for (const r of catalogRows(b.sha, b.day, catalogText)) {
      // A line naming one of these places under another id: the listing decides which run it is.
      if (r.run_id !== runId && trees.has(r.path)) return 'unsure';
      if (r.run_id === runId && row === null) row = r;
    }
  }
  if (row !== null) {
    // The run held in a second place as well (two layouts): one run to the listing, which picks.
    for (const path of trees.keys()) if (path !== row.path) return 'unsure';
    return { row };
  }
  // No line: a directory another writer put there, listed under its directory's id.
  const dirs: BranchRunDir[] = [];
  for (const c of candidates) {
    const sha = trees.get(c.path);
    if (sha === undefined) continue;
    const parts = c.path.split('/');
    if (parts.length === 1 && c.path === runId && !c.path.startsWith('.') && !ROOT_RESERVED.has(c.path)) dirs.push({ layout: 'root', path: c.path, sha });
    else if (parts.length === 3 && parts[0] === STABLE_RUNS_DIR && stableRunId(parts[1]!, parts[2]!) === runId)
      dirs.push({ layout: 'stable', path: c.path, sha, experiment: parts[1], timestamp: parts[2] });
  }
  if (dirs.length === 0) return trees.size === 0 ? 'absent' : 'unsure';
  if (dirs.length > 1 || trees.size > 1) return 'unsure';
  const dir = dirs[0]!;
  const read = await readRunFiles(repo, new Map([[dir.sha, dir]]), { cache: false });
  const files = read.rows.get(dir.sha);
  if (!files) return 'unsure';
  // That day's catalog must not name the directory (a run of ours, listed by its line), and the
  // line an archive wrote for this tree, when there is one, is what the listing shows.
  const ours = `${tip}:${CATALOG_DIR}/${CATALOG_PREFIX}${files.day}.jsonl`;
  const theirs = `${tip}:${foreignCatalogPath(files.day)}`;
  const day = await readObjects(repo, [ours, theirs]);
  const oursBlob = day.get(ours);
  if (oursBlob?.type === 'blob' && catalogRows(oursBlob.sha, files.day, new Map([[oursBlob.sha, oursBlob]])).some((r) => r.path === dir.path)) return 'unsure';
  const theirsBlob = day.get(theirs);
  if (theirsBlob?.type === 'blob') {
    const known = parseForeignCatalog(theirsBlob.data.toString('utf8'), files.day);
    if (known.has(runDirKey(dir.sha, dir.path))) {
      const again = (await readRunFiles(repo, new Map([[dir.sha, dir]]), { cache: false, known })).rows.get(dir.sha);
      return again ? { row: again } : 'unsure';
    }
  }
  return { row: files };
}

/** What was found per (repository, tips, id): kept while the tips stay (bounded). */
const answers = new Map<string, Promise<ListedRun | null>>();
const ANSWERS_KEPT = 512;

/**
 * The run `runId` as `list` shows it (its row and which tips hold it), read from the places its id
 * names; null when this read cannot be sure (see above): ask the listing then.
 */
export async function findListedRun(opts: TargetOptions & { runId: string }): Promise<FoundRun | null> {
  let candidates: RunLocation[];
  try {
    candidates = runLocationCandidates(opts.runId);
  } catch (err) {
    if (err instanceof LayoutError) return null; // not a run id: the listing words the 404
    throw err;
  }
  const resolved = await resolveTarget(opts);
  const target = await withRefView(resolved);
  const view = await readView(target, branchRefs(target, 'results'), { fetched: false });
  const { tips } = view;
  // The sources as `list` orders them: the newest tip first; one tip both refs point at is read once.
  const sources: { tip: string; where: RunWhere }[] = [];
  if (tips.local !== null && tips.local === tips.remote) sources.push({ tip: tips.local, where: 'both' });
  else {
    if (tips.local) sources.push({ tip: tips.local, where: 'local' });
    if (tips.remote) sources.push({ tip: tips.remote, where: 'remote' });
    if (view.newest === 'remote') sources.reverse();
  }
  if (sources.length === 0) return null;
  const key = JSON.stringify([target.repo.gitDir, sources, opts.runId]);
  let p = answers.get(key);
  if (!p) {
    p = (async () => {
      const said = await Promise.all(sources.map((s) => lookOnTip(target.repo, s.tip, opts.runId, candidates)));
      if (said.some((a) => a === 'unsure')) return null;
      const rows = said.map((a, i) => (a === 'absent' || a === 'unsure' ? null : { row: a.row, where: sources[i]!.where }));
      const first = rows.find((r) => r !== null);
      if (!first) return null;
      const other = rows.find((r) => r !== null && r !== first);
      let where = first.where;
      if (other) {
        // The same run on both tips is one listed run; two different rows under one id are the listing's to order.
        if (runIdentityKey(other.row.experiment, other.row.run_id) !== runIdentityKey(first.row.experiment, first.row.run_id)) return null;
        where = 'both';
      }
      return { ...first.row, where };
    })();
    answers.set(key, p);
    if (answers.size > ANSWERS_KEPT) answers.delete(answers.keys().next().value as string);
    // observed: the caller awaits p and gets the error; this only forgets the failed read
    p.catch(() => answers.delete(key));
  }
  const run = await p;
  // A copy: the caller may extend what it gets; the kept row stays as read.
  return run === null ? null : { run: { ...run }, tips };
}
