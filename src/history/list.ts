/**
 * `list`: the runs on the results branch.
 *
 * Runs we published are read from our per-day catalog files (`.indexes/agentv-results.<day>.jsonl`,
 * and `catalog/<day>.jsonl` of the older layout): run trees are never walked for them. Runs another
 * writer put at the branch root (AgentV's own `auto_push`) have no catalog line; for those only, the
 * run's `summary.json` and index are read, all in one `cat-file --batch`. Run directories of every
 * layout (5.x at the root, AgentV 4.42's `runs/<experiment>/<timestamp>/`) come from
 * `listRunDirs` (branch/layout.ts).
 *
 * Cost per distinct tip (the local branch and, when it differs, its remote-tracking mirror): one
 * `ls-tree` of the root, one of `.indexes/` (and of `catalog/` when the branch has the old layout),
 * then one `cat-file --batch` for every catalog blob and foreign run file, each read once.
 */
import { missingRunsWarning, runsMissingFromCatalog } from '../branch/catalog-check.js';
import { readListOverlays } from './list-overlays.js';
import { foreignCacheKey, loadForeignCache, saveForeignCache } from './foreign-cache.js';
import { jsonlObjects } from '../util/jsonl-objects.js';
import { lsTree, readBlobs, type Repo } from '../git/index.js';
import { CATALOG_DIR, CATALOG_PREFIX, LEGACY_CATALOG_DIR, listRunDirs, stableRunId, type BranchRunDir } from '../branch/layout.js';
import { ReadError } from '../branch/read-errors.js';
import { branchRefs, branchTips, fetchBranches } from './remote-view.js';
import { resolveTarget, type TargetOptions } from '../branch/target.js';
import { checkOptions, ListOptionsSchema } from '../util/verb-options.js';

export type RunWhere = 'local' | 'remote' | 'both';

export interface ListedRun {
  run_id: string;
  experiment: string;
  /** The catalog day (YYYY-MM-DD, or "undated"). */
  day: string;
  timestamp: string;
  /** The run's directory on both branches. */
  path: string;
  targets: string[];
  total: number;
  passed: number;
  failed: number;
  pass_rate: number;
  /** Which tip lists it: only local = not pushed yet; only remote = published elsewhere, not merged here. */
  where: RunWhere;
  /** Who wrote it: our publish (catalogued), or another writer such as AgentV's auto_push. */
  writer?: 'agentv-results' | 'agentv';
  /** The run's tags (tags.json), when listed with `withOverlays` or `tag`. */
  tags?: string[];
  /** How many reviewer notes feedback.json holds, when listed with `withOverlays` or `tag`. */
  feedback_notes?: number;
  /** Set when archive rollover moved the run off the live branch: the month of its archive branch. */
  archived?: string;
}

export interface CatalogSource {
  tip: string;
  where: 'local' | 'remote';
}

export interface CatalogRead {
  /** Every run listed by any source, newest first. */
  runs: ListedRun[];
  /** Catalog lines (or foreign run summaries) that could not be read. */
  unreadable: number;
  /** Tips whose root has the older layout's `runs/` directory (only those need the catalog check). */
  legacyRunsOn?: Set<string>;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

type Row = Omit<ListedRun, 'where'>;

/** Newest first; runs without a day ("undated") after every dated one, whatever their timestamp field holds. */
function newestFirst(a: Row, b: Row): number {
  const dated = Number(DAY.test(b.day)) - Number(DAY.test(a.day));
  if (dated !== 0) return dated;
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
      return { tip, runDirs, entries: [...indexes, ...legacy] };
    }),
  );
  const wanted = new Map<string, string>(); // blob sha -> day
  const perTip: { tip: string; blobs: { sha: string; day: string }[]; dirs: BranchRunDir[] }[] = [];
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
  const contents = await readBlobs(repo, [...wanted.keys()]);

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
  const foreign = await readForeignRuns(repo, foreignTrees);
  unreadable += foreign.bad;

  const runs = new Map<string, ListedRun>();
  const add = (row: Row, where: RunWhere) => {
    const seen = runs.get(row.run_id);
    // The local row wins when both list a run (it may carry a republished summary).
    if (!seen) runs.set(row.run_id, { ...row, where });
    else if (seen.where !== where) runs.set(row.run_id, seen.where === 'local' ? { ...seen, where: 'both' } : { ...row, where: 'both' });
  };
  for (const { tip, blobs, dirs } of perTip) {
    const whereSet = byTip.get(tip)!;
    const where: RunWhere = whereSet.size === 2 ? 'both' : whereSet.has('local') ? 'local' : 'remote';
    for (const b of blobs) for (const row of parsed.get(b.sha) ?? []) add(row, where);
    for (const d of dirs) {
      const row = foreign.rows.get(d.sha);
      if (row && !catalogued.has(d.path) && (opts.since === undefined || row.day >= opts.since)) add(row, where);
    }
  }
  const sorted = [...runs.values()].sort(newestFirst);
  return { runs: sorted, unreadable, legacyRunsOn };
}

/**
 * Rows for run directories without a catalog line: their summary.json (AgentV's counts and
 * metadata) and their index (AgentV 5 `.internal/index.jsonl`, else `index.jsonl`), one batch for all.
 */
async function readForeignRuns(repo: Repo, trees: Map<string, BranchRunDir>): Promise<{ rows: Map<string, Row>; bad: number }> {
  const rows = new Map<string, Row>();
  if (trees.size === 0) return { rows, bad: 0 };
  // Rows derived before (foreign-cache.ts: keyed by tree and path, so never stale) are not read again.
  const cache = await loadForeignCache<Row>(repo.commonDir);
  const used = new Set<string>();
  const toRead = new Map<string, BranchRunDir>();
  for (const [sha, dir] of trees) {
    const key = foreignCacheKey(sha, dir.path);
    used.add(key);
    const hit = cache.get(key);
    if (hit) rows.set(sha, hit);
    else toRead.set(sha, dir);
  }
  if (toRead.size === 0) return { rows, bad: 0 };
  const specs: string[] = [];
  // 4.42 runs keep only a root index.jsonl (no summary.json, no .internal/).
  for (const [sha, dir] of toRead)
    if (dir.layout === 'stable') specs.push(`${sha}:index.jsonl`);
    else specs.push(`${sha}:summary.json`, `${sha}:.internal/index.jsonl`, `${sha}:index.jsonl`);
  let blobs: Map<string, Buffer | null>;
  try {
    blobs = await readBlobs(repo, specs);
  } catch {
    return { rows, bad: toRead.size };
  }
  let bad = 0;
  let added = 0;
  for (const [sha, dir] of toRead) {
    const summaryText = blobs.get(`${sha}:summary.json`)?.toString('utf8');
    const indexText = (blobs.get(`${sha}:.internal/index.jsonl`) ?? blobs.get(`${sha}:index.jsonl`))?.toString('utf8');
    if (summaryText === undefined && indexText === undefined) continue; // not a run: some other directory
    const row =
      dir.layout === 'stable'
        ? foreignRow(stableRunId(dir.experiment!, dir.timestamp!), summaryText, indexText, { path: dir.path, experiment: dir.experiment })
        : foreignRow(dir.path, summaryText, indexText);
    if (row) {
      rows.set(sha, row);
      cache.set(foreignCacheKey(sha, dir.path), row);
      added++;
    } else bad++;
  }
  if (added > 0) await saveForeignCache(repo.commonDir, cache, used);
  return { rows, bad };
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** One listed run from AgentV's files; counts are AgentV's own (summary.json `counts`) when present. */
export function foreignRow(
  dir: string,
  summaryText: string | undefined,
  indexText: string | undefined,
  at: { path?: string; experiment?: string } = {},
): Row | null {
  let summary: Record<string, unknown> = {};
  if (summaryText !== undefined) {
    try {
      const v = JSON.parse(summaryText) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) summary = v as Record<string, unknown>;
    } catch {
      if (indexText === undefined) return null;
    }
  }
  // A bad line costs only itself.
  const lines = jsonlObjects(indexText ?? '');
  const meta = (summary.metadata && typeof summary.metadata === 'object' ? summary.metadata : {}) as Record<string, unknown>;
  const counts = (summary.counts && typeof summary.counts === 'object' ? summary.counts : {}) as Record<string, unknown>;
  const sep = dir.lastIndexOf('::');
  const experiment =
    (typeof meta.experiment === 'string' && meta.experiment.trim()) ||
    (typeof summary.experiment === 'string' && summary.experiment) ||
    at.experiment ||
    (sep === -1 ? 'default' : dir.slice(0, sep));
  const timestamp =
    (typeof meta.timestamp === 'string' && meta.timestamp) ||
    (typeof summary.timestamp === 'string' && summary.timestamp) ||
    (typeof lines[0]?.timestamp === 'string' ? (lines[0].timestamp as string) : dir);
  const rowPass = (r: Record<string, unknown>) =>
    typeof r.verdict === 'string' ? r.verdict === 'pass' : r.execution_status !== 'execution_error' && (num(r.score) ?? 0) >= 1;
  const total = num(counts.total_tests) ?? lines.length;
  const passed = num(counts.passed_tests) ?? lines.filter(rowPass).length;
  const targets = [...new Set(lines.map((r) => r.target).filter((t): t is string => typeof t === 'string'))].sort();
  const m = /(\d{4}-\d{2}-\d{2})/.exec(timestamp);
  return {
    run_id: dir,
    experiment,
    day: m ? (m[1] as string) : 'undated',
    timestamp,
    path: at.path ?? dir,
    targets,
    total,
    passed,
    failed: total - passed,
    pass_rate: total === 0 ? 0 : Math.round((passed / total) * 10000) / 10000,
    writer: 'agentv',
  };
}

/**
 * Parses one catalog blob. The usual case (every line valid) is a single JSON.parse of the lines
 * joined as an array, with a structural check per row: a JSON.parse plus a zod parse per line cost
 * 4-9 ms per 3,000 rows here against 3-4 ms (measured), and `list` exists to stay flat as the
 * catalog grows. A blob with a bad line falls back to line by line, so a bad line costs only itself.
 */
function parseCatalog(text: string, day: string): { rows: Row[]; bad: number } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  let values: unknown[] | null = null;
  try {
    values = JSON.parse(`[${lines.join(',')}]`) as unknown[];
    if (values.length !== lines.length) values = null; // a line holding two values: be careful
  } catch {
    values = null;
  }
  if (values === null) {
    values = lines.map((l) => {
      try {
        return JSON.parse(l) as unknown;
      } catch {
        return undefined;
      }
    });
  }
  const rows: Row[] = [];
  let bad = 0;
  for (const v of values) {
    const row = catalogEntry(v, day);
    if (row) rows.push(row);
    else bad++;
  }
  return { rows, bad };
}

/** The fields of CatalogRowSchema that `list` shows, checked structurally (see parseCatalog). */
function catalogEntry(v: unknown, day: string): Row | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const r = v as Record<string, unknown>;
  const { run_id, experiment, timestamp, path, targets, total, passed, failed, pass_rate } = r;
  if (typeof run_id !== 'string' || typeof experiment !== 'string' || typeof timestamp !== 'string' || typeof path !== 'string') return null;
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) return null;
  if (typeof total !== 'number' || typeof passed !== 'number' || typeof failed !== 'number' || typeof pass_rate !== 'number') return null;
  const row: Row = { run_id, experiment, day, timestamp, path, targets: targets as string[], total, passed, failed, pass_rate, writer: 'agentv-results' };
  if (typeof r.archived === 'string') row.archived = r.archived;
  return row;
}

export interface ListOptions extends TargetOptions {
  experiment?: string;
  /** Only runs of this day or later (YYYY-MM-DD). */
  since?: string;
  /** At most this many runs (newest first). */
  limit?: number;
  /** Only what the remote has (its tracking ref, as of the last fetch), not the local branch. */
  remoteOnly?: boolean;
  /** Refresh the remote-tracking ref first. */
  fetch?: boolean;
  timeoutMs?: number;
  /** Only runs carrying every one of these tags (reads each run's tags.json, in one batch). */
  tag?: string[];
  /** Read each listed run's tags and feedback count (one batch for all runs). */
  withOverlays?: boolean;
}

export interface ListResult {
  branch: string;
  remote: string | null;
  tips: { local: string | null; remote: string | null };
  /** Runs matching the filters before --limit. */
  matched: number;
  runs: ListedRun[];
  unreadable: number;
  /** Runs whose folders are on the local branch but that no catalog line lists (catalog-check.ts). */
  missingFromCatalog?: string[];
  warnings?: string[];
}

export async function listRuns(opts: ListOptions = {}): Promise<ListResult> {
  checkOptions('listRuns', ListOptionsSchema, opts);
  if (opts.since !== undefined && !(DAY.test(opts.since) && !Number.isNaN(Date.parse(opts.since)))) {
    throw new ReadError(`--since ${JSON.stringify(opts.since)}: expected a day as YYYY-MM-DD`, 'input');
  }
  if (opts.limit !== undefined && !(Number.isInteger(opts.limit) && opts.limit > 0)) {
    throw new ReadError(`--limit ${JSON.stringify(opts.limit)}: expected a positive whole number`, 'input');
  }
  const target = await resolveTarget(opts);
  const results = branchRefs(target, 'results');
  if (opts.remoteOnly && target.remote === null) {
    throw new ReadError(`--remote-only: ${target.repo.workTree ?? target.repo.gitDir} has no remote (add one, or set results.remote)`, 'input');
  }
  if (opts.fetch) await fetchBranches(target, [results], { timeoutMs: opts.timeoutMs });
  const tips = await branchTips(target, results);
  const sources: CatalogSource[] = [];
  if (tips.local && !opts.remoteOnly) sources.push({ tip: tips.local, where: 'local' });
  if (tips.remote) sources.push({ tip: tips.remote, where: 'remote' });
  const read = sources.length > 0 ? await readCatalog(target.repo, sources, { since: opts.since }) : { runs: [], unreadable: 0 };
  let filtered = opts.experiment === undefined ? read.runs : read.runs.filter((r) => r.experiment === opts.experiment);
  const wantTags = (opts.tag ?? []).filter((t) => t !== '');
  if (opts.withOverlays || wantTags.length > 0) {
    // A run listed by both tips is read at the local one: that is where a tag edit lands first.
    const overlays = await readListOverlays(target.repo, filtered, (r) => {
      const where = (r as ListedRun).where;
      return where === 'remote' ? tips.remote : tips.local;
    });
    filtered = filtered.map((r) => ({ ...r, ...(overlays.get(r.run_id) ?? { tags: [], feedback_notes: 0 }) }));
    if (wantTags.length > 0) filtered = filtered.filter((r) => wantTags.every((t) => r.tags!.includes(t)));
  }
  // Only a branch with the older layout's runs/ can hold runs its catalog misses (catalog-check.ts):
  // a root-layout branch is never walked.
  const hasLegacyRuns = tips.local !== null && 'legacyRunsOn' in read && read.legacyRunsOn?.has(tips.local) === true;
  const missing =
    tips.local && hasLegacyRuns && !opts.remoteOnly && opts.since === undefined
      ? await runsMissingFromCatalog(target.repo, tips.local, new Set(read.runs.map((r) => r.run_id)))
      : [];
  return {
    missingFromCatalog: missing,
    warnings: missing.length > 0 ? [missingRunsWarning(results.name, missing)] : [],
    branch: results.name,
    remote: target.remote,
    tips,
    matched: filtered.length,
    runs: opts.limit === undefined ? filtered : filtered.slice(0, opts.limit),
    unreadable: read.unreadable,
  };
}
