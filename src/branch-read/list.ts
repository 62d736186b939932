/**
 * `list`: the runs on the results branch.
 *
 * Runs we published are read from our per-day catalog files (`.indexes/agentv-results.<day>.jsonl`,
 * and `catalog/<day>.jsonl` of the older layout): run trees are never walked for them. Runs another
 * writer put at the branch root (AgentV's own `auto_push`) have no catalog line; for those only, the
 * line an `archive` wrote for the directory's tree is used (foreign-catalog.ts), else the run's
 * `summary.json` and index are read, all in one `cat-file --batch`. Run directories of every
 * layout (5.x at the root, AgentV 4.42's `runs/<experiment>/<timestamp>/`) come from
 * `listRunDirs` (layout/branch-layout.ts).
 *
 * Cost per distinct tip (the local branch and, when it differs, its remote-tracking mirror): one
 * `ls-tree` of the root, one of `.indexes/` (and of `catalog/` when the branch has the old layout),
 * then one `cat-file --batch` for every catalog blob and foreign run file, each read once.
 */
import { missingRunsWarning, runsMissingFromCatalog } from '../layout/catalog-check.js';
import { readListOverlays } from '../overlay-read/listed-runs.js';
import { lsTree, readBlobs, type Repo } from '../git/index.js';
import {
  CATALOG_DIR,
  CATALOG_PREFIX,
  LEGACY_CATALOG_DIR,
  isStableRunPath,
  listRunDirs,
  overlayDirOf,
  runIdentityKey,
  type BranchRunDir,
} from '../layout/branch-layout.js';
import { readRunFiles } from '../layout/run-index.js';
import { foreignCatalogDay, readForeignCatalog } from '../layout/foreign-catalog.js';
import { ReadError } from '../errors/read-errors.js';
import { branchRefs, fetchBranches, readView, type ReadView } from '../repo/remote-view.js';
import { resolveTarget, withRefView, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { syncStatusSection, type SyncBranchStatus } from '../sync/sync-branch-status.js';
import { flag, objectOf, parseOptions, TargetFieldsDirLast } from '../options/verb-options.js';
import * as z from 'zod';
import { cacheKey, facetsOfRuns, loadCatalogRead, saveCatalogRead, type CatalogView } from './catalog-cache.js';
import { parseCatalog } from './catalog-lines.js';

export type { CatalogRead, CatalogSource, ListedRun, RunWhere } from './list-types.js';
import type { CatalogRead, CatalogSource, ListedRun, RunWhere } from './list-types.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

type Row = Omit<ListedRun, 'where'>;

/** Newest first by timestamp, then run id (the listing puts undated runs after every dated one first: readCatalog). */
function newestFirst(a: Row, b: Row): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? 1 : -1;
  return a.run_id === b.run_id ? 0 : a.run_id < b.run_id ? 1 : -1;
}

function catalogFile(path: string): string | null {
  if (path.startsWith(`${CATALOG_DIR}/${CATALOG_PREFIX}`) && path.endsWith('.jsonl'))
    return path.slice(CATALOG_DIR.length + 1 + CATALOG_PREFIX.length, -'.jsonl'.length);
  const m = /^catalog\/([^/]+)\.jsonl$/.exec(path);
  return m ? (m[1] as string) : null;
}

/**
 * Reads the catalogs of `sources` (deduplicated by tip). Days before `since` (YYYY-MM-DD) are not
 * read at all: their blobs never leave the object store.
 */
export async function readCatalog(repo: Repo, sources: CatalogSource[], opts: { since?: string } = {}): Promise<CatalogRead> {
  const byTip = new Map<string, Set<'local' | 'remote'>>();
  for (const s of sources) byTip.set(s.tip, (byTip.get(s.tip) ?? new Set()).add(s.where));
  const listings = await Promise.all(
    [...byTip.keys()].map(async (tip) => {
      const root = await lsTree(repo, tip);
      const has = (name: string) => root.some((e) => e.path === name && e.type === 'tree');
      const [indexes, legacy, runDirs] = await Promise.all([
        has(CATALOG_DIR) ? lsTree(repo, tip, { path: `${CATALOG_DIR}/` }) : Promise.resolve([]),
        has(LEGACY_CATALOG_DIR) ? lsTree(repo, tip, { path: `${LEGACY_CATALOG_DIR}/` }) : Promise.resolve([]),
        listRunDirs(repo, tip, root),
      ]);
      return { tip, runDirs, entries: [...indexes, ...legacy], indexes };
    }),
  );
  const wanted = new Map<string, string>(); // blob sha -> day
  const perTip: { tip: string; blobs: { sha: string; day: string }[]; dirs: BranchRunDir[] }[] = [];
  // Lines a teammate's `archive` wrote for runs another tool published (foreign-catalog.ts): read in
  // the same batch as the catalog, every day (they stand in for reading those runs' files).
  // (A file both tips hold is the same blob: parsed once.)
  const foreignEntries = [
    ...new Map(listings.flatMap((l) => l.indexes.filter((e) => e.type === 'blob' && foreignCatalogDay(e.path) !== null)).map((e) => [e.sha, e])).values(),
  ];
  for (const { tip, runDirs, entries } of listings) {
    const blobs: { sha: string; day: string }[] = [];
    for (const e of entries) {
      const day = catalogFile(e.path);
      if (e.type !== 'blob' || day === null) continue;
      if (opts.since !== undefined && !(DAY.test(day) && day >= opts.since)) continue;
      blobs.push({ sha: e.sha, day });
      wanted.set(e.sha, day);
    }
    perTip.push({ tip, blobs, dirs: runDirs.dirs });
  }
  const legacyRunsOn = new Set(listings.filter(({ runDirs }) => runDirs.legacyRuns).map((l) => l.tip));
  const contents = await readBlobs(repo, [...new Set([...wanted.keys(), ...foreignEntries.map((e) => e.sha)])]);

  let unreadable = 0;
  const parsed = new Map<string, Row[]>();
  for (const [sha, day] of wanted) {
    const { rows, bad } = parseCatalog(contents.get(sha)?.toString('utf8') ?? '', day);
    parsed.set(sha, rows);
    unreadable += bad;
  }

  // Run directories no catalog line names were written by someone else (AgentV's auto_push, 5.x
  // at the root or 4.42 under runs/).
  const catalogued = new Set<string>();
  for (const rows of parsed.values()) for (const r of rows) catalogued.add(r.path);
  const foreignTrees = new Map<string, BranchRunDir>(); // tree sha -> its directory
  for (const { dirs } of perTip) for (const d of dirs) if (!catalogued.has(d.path)) foreignTrees.set(d.sha, d);
  const known = (await readForeignCatalog(repo, foreignEntries, contents)).rows;
  const foreign = await readRunFiles(repo, foreignTrees, { known });
  unreadable += foreign.bad;

  // Sources come newest first (listRuns orders them): the first tip listing a run gives its row,
  // so a run that changed on the newer tip is shown as it is there.
  const runs = new Map<string, ListedRun>();
  // A catalog row is this read's own object (parsed above): it is listed as it is, not copied.
  // Keyed by the run's identity (experiment and id, whichever layout holds it): a run held twice,
  // at the root and under AgentV 4.42's runs/, is one run, listed once (`sync` removes the copy).
  const add = (row: Row, where: RunWhere, own: boolean) => {
    const key = runIdentityKey(row.experiment, row.run_id);
    const seen = runs.get(key);
    if (!seen) runs.set(key, own ? Object.assign(row, { where }) : { ...row, where });
    else if (seen.where !== where) seen.where = 'both';
  };
  const dirTrees = new Map<string, Map<string, string>>();
  for (const { tip, blobs, dirs } of perTip) {
    const whereSet = byTip.get(tip)!;
    const where: RunWhere = whereSet.size === 2 ? 'both' : whereSet.has('local') ? 'local' : 'remote';
    dirTrees.set(tip, new Map(dirs.map((d) => [d.path, d.sha])));
    for (const b of blobs) for (const row of parsed.get(b.sha) ?? []) add(row, where, true);
    for (const d of dirs) {
      const row = foreign.rows.get(d.sha);
      if (row && !catalogued.has(d.path) && (opts.since === undefined || row.day >= opts.since)) add(row, where, false);
    }
  }
  // Runs without a day ("undated") after every dated one, whatever their timestamp field holds;
  // whether a run is dated is decided once per run, not per comparison (100,000 runs: 1.7 million).
  const sorted = [...runs.values()]
    .map((r) => ({ r, dated: Number(DAY.test(r.day)) }))
    .sort((a, b) => b.dated - a.dated || newestFirst(a.r, b.r))
    .map((x) => x.r);
  return { runs: sorted, unreadable, legacyRunsOn, dirTrees };
}

/**
 * What readCatalog read, kept in this process for the last few (repository, tips, since) asked, and
 * on disk (catalog-cache.ts) for the next process: a commit id names the exact tree, so a kept read
 * is never stale, and a server listing a branch of 100,000 runs page by page reads and sorts its
 * catalog once per tip, not once per page. `need`: the listing needs only its first `need` runs
 * (no filter): the head of a read kept on disk answers without parsing the rest. Callers must not
 * change the rows they get (listRuns copies what it adds overlays to).
 */
const catalogReads = new Map<string, Promise<CatalogView>>();
const CATALOG_READS_KEPT = 4;

async function catalogView(repo: Repo, sources: CatalogSource[], since: string | undefined, need: number | null): Promise<CatalogView> {
  const key = cacheKey(sources, since);
  let p = catalogReads.get(key);
  if (p) {
    // Most recently used last: the oldest read is the one dropped.
    catalogReads.delete(key);
    catalogReads.set(key, p);
    return p;
  }
  if (need !== null) {
    const head = await loadCatalogRead(repo, key, 'head');
    if (head && (head.complete || need <= head.runs.length)) return head;
  }
  p = catalogReads.get(key);
  if (p) return p;
  p = (async (): Promise<CatalogView> => {
    const kept = await loadCatalogRead(repo, key, 'all');
    if (kept) return kept;
    const read = await readCatalog(repo, sources, { since });
    const facets = facetsOfRuns(read.runs);
    // Kept on disk once this answer is out (the next process's first page): not awaited, so the
    // request that read the branch does not also wait for the file. A CLI process exits when it is written.
    setImmediate(() => void saveCatalogRead(repo, key, read, facets));
    const { runs, unreadable, legacyRunsOn = new Set(), dirTrees = new Map() } = read;
    return { runs, total: runs.length, facets, unreadable, legacyRunsOn, dirTrees, complete: true };
  })();
  catalogReads.set(key, p);
  if (catalogReads.size > CATALOG_READS_KEPT) catalogReads.delete(catalogReads.keys().next().value as string);
  // observed: the caller awaits p and gets the error; this only forgets the failed read
  p.catch(() => catalogReads.delete(key));
  return p;
}

/** `listRuns`'s options, parsed at its door (the `list` command's flags come from the same fields, in this order). */
export const ListOptionsSchema = z.strictObject({
  /** Only runs of this experiment. */
  experiment: z.string().optional().meta(flag('--experiment <name>', 'Only runs of this experiment')),
  /** Only runs holding this target. */
  target: z.string().optional().meta(flag('--target <name>', 'Only runs holding this target')),
  /** Only runs of this day or later (YYYY-MM-DD). */
  since: z.string().optional().meta(flag('--since <day>', 'Only runs of this day or later (YYYY-MM-DD)')),
  /** Only runs of this day or earlier (YYYY-MM-DD). */
  until: z.string().optional().meta(flag('--until <day>', 'Only runs of this day or earlier (YYYY-MM-DD)')),
  /** At most this many runs (newest first). */
  limit: z.number().optional().meta(flag('--limit <n>', 'At most n runs, newest first')),
  /** Skip this many matching runs first (a page of the listing: offset, then limit). */
  offset: z.number().optional().meta(flag('--offset <n>', 'Skip the n newest matching runs first (with --limit: one page)')),
  /** Only runs carrying every one of these tags (reads each run's tags.json, in one batch). */
  tag: z.array(z.string()).optional().meta(flag('--tag <tag>', 'Only runs with this tag (repeatable: runs with every one), e.g. --tag baseline')),
  /** Only what the remote has (its tracking ref, as of the last fetch), not the local branch. */
  remoteOnly: z
    .boolean()
    .default(false)
    .meta(flag('--remote-only', 'List what the remote has (its tracking ref as of the last fetch) instead of this machine and the remote together')),
  /** Refresh the remote-tracking ref first. */
  fetch: z.boolean().default(false).meta(flag('--fetch', 'Fetch the results branch from the remote first')),
  ...TargetFieldsDirLast,
  timeoutMs: z.number().optional(),
  /** Read each listed run's tags and feedback count (one batch for all runs). */
  withOverlays: z.boolean().default(false),
  /** @internal A target resolved once by a reader that asks many questions (repo/target.ts `resolved`). */
  resolved: objectOf<PublishTarget>().optional(),
});

/** What a caller passes (a target resolved once is the package's own: internal). */
export interface ListOptions extends Omit<z.input<typeof ListOptionsSchema>, 'resolved'> {
  /** @internal */
  resolved?: PublishTarget;
}

export interface ListResult {
  branch: string;
  remote: string | null;
  tips: { local: string | null; remote: string | null };
  /** Runs read (since --since), before the other filters. */
  total: number;
  /** Runs matching the filters before --limit. */
  matched: number;
  /** The filter choices over every run read: experiments and targets, sorted. */
  facets: { experiments: string[]; targets: string[] };
  runs: ListedRun[];
  unreadable: number;
  /** Runs whose folders are on the local branch but that no catalog line lists (catalog-check.ts). */
  missingFromCatalog?: string[];
  warnings?: string[];
  /** What was read: the newest of the local branch and the remote-tracking ref, and how fresh the remote side is. */
  read: ReadView;
  /**
   * Runs waiting on a sync branch (`status`'s sync-branches section: AgentV's parked runs that do
   * not merge, conflicts set aside here): not on the results branch, so not in `runs`.
   */
  syncBranches: SyncBranchStatus[];
}

/** The published runs, newest first, filtered and paged, as `agentv-results list` shows them. */
export async function listRuns(options: ListOptions = {}): Promise<ListResult> {
  const opts = parseOptions('listRuns', ListOptionsSchema, options);
  if (opts.since !== undefined && !(DAY.test(opts.since) && !Number.isNaN(Date.parse(opts.since)))) {
    throw new ReadError(`--since ${JSON.stringify(opts.since)}: expected a day as YYYY-MM-DD`, 'input');
  }
  if (opts.until !== undefined && !(DAY.test(opts.until) && !Number.isNaN(Date.parse(opts.until)))) {
    throw new ReadError(`--until ${JSON.stringify(opts.until)}: expected a day as YYYY-MM-DD`, 'input');
  }
  if (opts.limit !== undefined && !(Number.isInteger(opts.limit) && opts.limit > 0)) {
    throw new ReadError(`--limit ${JSON.stringify(opts.limit)}: expected a positive whole number`, 'input');
  }
  if (opts.offset !== undefined && !(Number.isInteger(opts.offset) && opts.offset >= 0)) {
    throw new ReadError(`--offset ${JSON.stringify(opts.offset)}: expected a whole number`, 'input');
  }
  const resolved = await resolveTarget(opts);
  const results = branchRefs(resolved, 'results');
  if (opts.remoteOnly && resolved.remote === null) {
    throw new ReadError(`--remote-only: ${resolved.repo.workTree ?? resolved.repo.gitDir} has no remote (add one, or set results.remote)`, 'input');
  }
  if (opts.fetch) await fetchBranches(resolved, [results], { timeoutMs: opts.timeoutMs });
  // Every ref the listing reads, in one process (after the fetch: that moved some).
  const target = await withRefView(resolved);
  const view = await readView(target, results, { fetched: opts.fetch });
  const tips = view.tips;
  const sources: CatalogSource[] = [];
  if (tips.local && !opts.remoteOnly) sources.push({ tip: tips.local, where: 'local' });
  if (tips.remote) sources.push({ tip: tips.remote, where: 'remote' });
  // The newest tip first: where both list a run, its row is the one shown.
  if (view.newest === 'remote') sources.reverse();
  const unfiltered = opts.experiment === undefined && opts.target === undefined && opts.until === undefined;
  const wantTags = (opts.tag ?? []).filter((t) => t !== '');
  // Unfiltered, the listing needs only the runs up to the end of its page.
  const need = unfiltered && wantTags.length === 0 ? (opts.offset ?? 0) + (opts.limit ?? Number.POSITIVE_INFINITY) : null;
  const empty: CatalogView = {
    runs: [],
    total: 0,
    facets: { experiments: [], targets: [] },
    unreadable: 0,
    legacyRunsOn: new Set(),
    dirTrees: new Map(),
    complete: true,
  };
  let read = sources.length > 0 ? await catalogView(target.repo, sources, opts.since, need) : empty;
  // Only a branch with the older layout's runs/ can hold runs its catalog misses (catalog-check.ts):
  // a root-layout branch is never walked; the check needs every run read.
  const hasLegacyRuns = tips.local !== null && read.legacyRunsOn.has(tips.local);
  const checkMissing = tips.local !== null && hasLegacyRuns && !opts.remoteOnly && opts.since === undefined;
  if (!read.complete && checkMissing) read = await catalogView(target.repo, sources, opts.since, null);
  let filtered = unfiltered
    ? read.runs
    : read.runs.filter(
        (r) =>
          (opts.experiment === undefined || r.experiment === opts.experiment) &&
          (opts.target === undefined || r.targets.includes(opts.target)) &&
          (opts.until === undefined || r.day <= opts.until),
      );
  const offset = opts.offset ?? 0;
  const page = <T>(xs: T[]): T[] => xs.slice(offset, opts.limit === undefined ? undefined : offset + opts.limit);
  const matchedBeforeLimit = wantTags.length > 0 ? null : unfiltered ? read.total : filtered.length;
  // Without a tag filter, the page is cut first: only the runs shown have their overlays read.
  if (matchedBeforeLimit !== null) filtered = page(filtered);
  if (opts.withOverlays || wantTags.length > 0) {
    // A run is read where its row came from: the newest tip that lists it.
    const first = sources[0]?.tip ?? null;
    const other = sources[1]?.tip ?? null;
    const dirOf = (r: { path: string }): string | null => {
      // AgentV 4.42 keeps a run's overlays beside it, under metadata/runs/<exp>/<ts>/.
      if (isStableRunPath(r.path)) return first ? `${first}:${overlayDirOf(r.path)}` : null;
      for (const tip of [first, other]) {
        if (tip === null) continue;
        const tree = read.dirTrees?.get(tip)?.get(r.path);
        if (tree) return tree;
      }
      return r.path.includes('/') && first ? `${first}:${r.path}` : null;
    };
    const overlays = await readListOverlays(target.repo, filtered, dirOf);
    filtered = filtered.map((r) => ({ ...r, ...(overlays.get(r.run_id) ?? { tags: [], feedback_notes: 0 }) }));
    if (wantTags.length > 0) filtered = filtered.filter((r) => wantTags.every((t) => r.tags!.includes(t)));
  }
  const missing = checkMissing ? await runsMissingFromCatalog(target.repo, tips.local!, new Set(read.runs.map((r) => r.run_id))) : [];
  return {
    missingFromCatalog: missing,
    warnings: missing.length > 0 ? [missingRunsWarning(results.name, missing)] : [],
    branch: results.name,
    remote: target.remote,
    tips,
    total: read.total,
    matched: matchedBeforeLimit ?? filtered.length,
    // A copy: callers may sort or extend what they get.
    facets: { experiments: [...read.facets.experiments], targets: [...read.facets.targets] },
    runs: matchedBeforeLimit === null ? page(filtered) : filtered,
    unreadable: read.unreadable,
    read: view,
    syncBranches: (await syncStatusSection(target))?.open ?? [],
  };
}

/** The tip a listed run is read from: the one that lists it, the newest when both do (as `list` shows it). */
export function tipOfListed(run: ListedRun, listed: Pick<ListResult, 'tips' | 'read'>): string | null {
  const { tips } = listed;
  if (run.where === 'remote') return tips.remote;
  if (run.where === 'both' && listed.read.newest === 'remote') return tips.remote ?? tips.local;
  return tips.local ?? tips.remote;
}

/**
 * Each listed run's result manifest as the branch holds it (`.internal/index.jsonl`, else
 * `index.jsonl`, as a reader resolves a run directory), all in one `cat-file --batch` — the rows
 * `trend` reads, without materializing the runs. A run whose manifest is not found here (archived,
 * or another layout) is absent from the map: the caller pulls it.
 */
export async function readListedManifests(
  opts: TargetOptions,
  listed: Pick<ListResult, 'tips' | 'read'>,
  runs: ListedRun[],
): Promise<Map<string, { path: string; text: string }>> {
  const out = new Map<string, { path: string; text: string }>();
  const specs: { runId: string; path: string; spec: string }[] = [];
  for (const r of runs) {
    const tip = tipOfListed(r, listed);
    if (tip === null || r.archived !== undefined) continue;
    for (const name of ['.internal/index.jsonl', 'index.jsonl']) specs.push({ runId: r.run_id, path: `${r.path}/${name}`, spec: `${tip}:${r.path}/${name}` });
  }
  if (specs.length === 0) return out;
  const blobs = await readBlobs(
    (await resolveTarget(opts)).repo,
    specs.map((s) => s.spec),
  );
  for (const s of specs) {
    const b = blobs.get(s.spec);
    if (b && !out.has(s.runId)) out.set(s.runId, { path: s.path, text: b.toString('utf8') });
  }
  return out;
}
