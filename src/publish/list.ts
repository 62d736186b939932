/**
 * `list`: the runs on the results branch, read from the per-day catalog files only.
 *
 * Cost is a fixed number of git processes whatever the history: one `ls-tree` of `catalog/` per
 * distinct tip (the local branch and, when it differs, its remote-tracking mirror) and one
 * `cat-file --batch` for every catalog blob, each blob read once even when both tips share it.
 * Run trees are never walked: a catalog line carries what the table shows.
 */
import { missingRunsWarning, runsMissingFromCatalog } from './catalog-check.js';
import type { Repo } from '../git/index.js';
import { lsTree, readBlobs } from '../git/index.js';
import { CATALOG_DIR } from './layout.js';
import { ReadError } from './read-errors.js';
import { branchRefs, branchTips, fetchBranches } from './remote-view.js';
import { resolveTarget, type TargetOptions } from './target.js';

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
}

export interface CatalogSource {
  tip: string;
  where: 'local' | 'remote';
}

export interface CatalogRead {
  /** Every run listed by any source, newest first. */
  runs: ListedRun[];
  /** Catalog lines that could not be read (not JSON, or missing fields). */
  unreadable: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Reads the catalogs of `sources` (deduplicated by tip). Days before `since` (YYYY-MM-DD) are not
 * read at all: their blobs never leave the object store.
 */
export async function readCatalog(repo: Repo, sources: CatalogSource[], opts: { since?: string } = {}): Promise<CatalogRead> {
  const byTip = new Map<string, Set<'local' | 'remote'>>();
  for (const s of sources) byTip.set(s.tip, (byTip.get(s.tip) ?? new Set()).add(s.where));
  // One listing per distinct tip; in sync (the usual case) that is a single ls-tree.
  const listings = await Promise.all(
    [...byTip.keys()].map(async (tip) => ({ tip, entries: await lsTree(repo, tip, { path: `${CATALOG_DIR}/` }) })),
  );
  const wanted = new Map<string, string>(); // blob sha -> day
  const perTip: { tip: string; blobs: { sha: string; day: string }[] }[] = [];
  for (const { tip, entries } of listings) {
    const blobs: { sha: string; day: string }[] = [];
    for (const e of entries) {
      const m = /^catalog\/([^/]+)\.jsonl$/.exec(e.path);
      if (e.type !== 'blob' || !m) continue;
      const day = m[1] as string;
      if (opts.since !== undefined && !(DAY.test(day) && day >= opts.since)) continue;
      blobs.push({ sha: e.sha, day });
      wanted.set(e.sha, day);
    }
    perTip.push({ tip, blobs });
  }
  const contents = await readBlobs(repo, [...wanted.keys()]);

  let unreadable = 0;
  const parsed = new Map<string, Omit<ListedRun, 'where'>[]>();
  for (const [sha, day] of wanted) {
    const { rows, bad } = parseCatalog(contents.get(sha)?.toString('utf8') ?? '', day);
    parsed.set(sha, rows);
    unreadable += bad;
  }

  const runs = new Map<string, ListedRun>();
  for (const { tip, blobs } of perTip) {
    const whereSet = byTip.get(tip)!;
    const where: RunWhere = whereSet.size === 2 ? 'both' : whereSet.has('local') ? 'local' : 'remote';
    for (const b of blobs) {
      for (const row of parsed.get(b.sha) ?? []) {
        const seen = runs.get(row.run_id);
        // The local row wins when both list a run (it may carry a republished summary).
        if (!seen) runs.set(row.run_id, { ...row, where });
        else if (seen.where !== where) runs.set(row.run_id, seen.where === 'local' ? { ...seen, where: 'both' } : { ...row, where: 'both' });
      }
    }
  }
  const sorted = [...runs.values()].sort((a, b) => (a.timestamp === b.timestamp ? (a.run_id < b.run_id ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1));
  return { runs: sorted, unreadable };
}

/**
 * Parses one catalog blob. The usual case (every line valid) is a single JSON.parse of the lines
 * joined as an array, with a structural check per row: a JSON.parse plus a zod parse per line cost
 * 4-9 ms per 3,000 rows here against 3-4 ms (measured), and `list` exists to stay flat as the
 * catalog grows. A blob with a bad line falls back to line by line, so a bad line costs only itself.
 */
function parseCatalog(text: string, day: string): { rows: Omit<ListedRun, 'where'>[]; bad: number } {
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
  const rows: Omit<ListedRun, 'where'>[] = [];
  let bad = 0;
  for (const v of values) {
    const row = catalogEntry(v, day);
    if (row) rows.push(row);
    else bad++;
  }
  return { rows, bad };
}

/** The fields of CatalogRowSchema that `list` shows, checked structurally (see parseCatalog). */
function catalogEntry(v: unknown, day: string): Omit<ListedRun, 'where'> | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const r = v as Record<string, unknown>;
  const { run_id, experiment, timestamp, path, targets, total, passed, failed, pass_rate } = r;
  if (typeof run_id !== 'string' || typeof experiment !== 'string' || typeof timestamp !== 'string' || typeof path !== 'string') return null;
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) return null;
  if (typeof total !== 'number' || typeof passed !== 'number' || typeof failed !== 'number' || typeof pass_rate !== 'number') return null;
  return { run_id, experiment, day, timestamp, path, targets: targets as string[], total, passed, failed, pass_rate };
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
  const filtered = opts.experiment === undefined ? read.runs : read.runs.filter((r) => r.experiment === opts.experiment);
  const missing = tips.local && !opts.remoteOnly && opts.since === undefined ? await runsMissingFromCatalog(target.repo, tips.local, new Set(read.runs.map((r) => r.run_id))) : [];
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
