/**
 * What archive and expire read of a live results tip: our catalog files line by line, every run on
 * it whoever wrote it (catalogued runs, then run directories no catalog line names, read through
 * the foreign catalog or their own files), and where each run's trees are on a tip.
 */
import { lsTree, readBlobs, readObjects, type Repo } from '../git/index.js';
import { CATALOG_DIR, CATALOG_PREFIX, overlayDirOf, type BranchRunDir } from '../layout/branch-layout.js';
import { readRunFiles, runDirsOn, type RunFilesRow } from '../layout/run-index.js';
import { foreignCatalogDay, readForeignCatalog, type ForeignCatalog } from '../layout/foreign-catalog.js';

export interface CatalogLine {
  file: string;
  day: string;
  lines: string[];
  rows: ({ run_id: string; path: string; timestamp: string; archived?: string } | null)[];
}

export interface TipCatalogs {
  catalogs: CatalogLine[];
  foreign: ForeignCatalog;
}

/**
 * The catalogs on a results tip: ours (each file with its lines and the rows we can read, null for
 * a line we cannot) and the foreign catalog of runs another tool published. One `ls-tree` of
 * `.indexes/`, one batch read of both kinds of file.
 */
export async function readTipCatalogs(repo: Repo, tip: string): Promise<TipCatalogs> {
  const listed = await lsTree(repo, tip, { path: `${CATALOG_DIR}/` });
  const ours = listed.filter((e) => e.type === 'blob' && e.path.startsWith(`${CATALOG_DIR}/${CATALOG_PREFIX}`) && e.path.endsWith('.jsonl'));
  const theirs = listed.filter((e) => e.type === 'blob' && foreignCatalogDay(e.path) !== null);
  const blobs = await readBlobs(repo, [...new Set([...ours, ...theirs].map((e) => e.sha))]);
  const catalogs = ours.map((e) => {
    const text = blobs.get(e.sha)?.toString('utf8') ?? '';
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const rows = lines.map((l) => {
      try {
        const v = JSON.parse(l) as Record<string, unknown>;
        return typeof v.run_id === 'string' && typeof v.path === 'string'
          ? { run_id: v.run_id, path: v.path, timestamp: String(v.timestamp ?? ''), archived: typeof v.archived === 'string' ? v.archived : undefined }
          : null;
      } catch {
        return null; // a line we cannot read stays as it is
      }
    });
    return { file: e.path, day: e.path.slice(CATALOG_DIR.length + 1 + CATALOG_PREFIX.length, -'.jsonl'.length), lines, rows };
  });
  return { catalogs, foreign: await readForeignCatalog(repo, theirs, blobs) };
}

/** A run on the live results tip, whichever tool wrote it. */
export interface TipRun {
  run_id: string;
  path: string;
  day: string;
  timestamp: string;
  archived?: string;
  /** Set for a run with no catalog line (AgentV's auto_push): what its own files say. */
  files?: RunFilesRow;
  /** With `files`: the run directory's tree id (what its foreign-catalog line is keyed by). */
  tree?: string;
}

/**
 * Every run of the live tip: the catalogued ones (archived rows included), then each run directory
 * no catalog line names, read from its own files (src/layout/run-index.ts: one batch, cached).
 */
export async function runsOnTip(repo: Repo, tip: string, catalogs: CatalogLine[], foreign?: ForeignCatalog): Promise<TipRun[]> {
  const out: TipRun[] = [];
  const seen = new Set<string>();
  const paths = new Set<string>();
  for (const c of catalogs)
    for (const r of c.rows) {
      if (!r || seen.has(r.run_id)) continue;
      seen.add(r.run_id);
      paths.add(r.path);
      out.push({ run_id: r.run_id, path: r.path, day: c.day, timestamp: r.timestamp, ...(r.archived !== undefined ? { archived: r.archived } : {}) });
    }
  const trees = new Map<string, BranchRunDir>();
  // Every layout: 5.x runs at the root and AgentV 4.42's runs/<exp>/<ts>/ (moved with their
  // overlays under metadata/runs/: runDirTrees).
  for (const d of await runDirsOn(repo, tip)) if (!paths.has(d.path)) trees.set(d.sha, d);
  const known = (foreign ?? (await readTipCatalogs(repo, tip)).foreign).rows;
  const { rows } = await readRunFiles(repo, trees, { known });
  for (const [tree, row] of rows) {
    if (seen.has(row.run_id)) continue;
    seen.add(row.run_id);
    out.push({ run_id: row.run_id, path: row.path, day: row.day, timestamp: row.timestamp, files: row, tree });
  }
  return out;
}

/**
 * The trees to move for each run path on `tip`: the run's directory and, for AgentV 4.42's
 * `runs/<exp>/<ts>`, its overlay directory `metadata/runs/<exp>/<ts>` (layout.ts overlayDirOf),
 * each kept at its path.
 */
export async function runDirTrees(repo: Repo, tip: string, paths: string[]): Promise<Map<string, { path: string; tree: string }[]>> {
  const wanted = (p: string) => [...new Set([p, overlayDirOf(p)])];
  const treeAt = await runTreeIndex(repo, [tip], paths.flatMap(wanted));
  const out = new Map<string, { path: string; tree: string }[]>();
  for (const p of paths) {
    const found = wanted(p).flatMap((w) => {
      const tree = treeAt(tip, w);
      return tree ? [{ path: w, tree }] : [];
    });
    if (found.length > 0) out.set(p, found);
  }
  return out;
}

/** A parent folder with at least this many wanted children is listed once instead of looked up per child. */
const LIST_PARENT_AT = 8;

/**
 * A lookup of run directories: `(tip, path) -> tree id or null`. Runs at the branch root (every
 * layout we write on the live branch) come from one `ls-tree` of each tip's root; nested paths (a
 * day folder of an archive branch, the older layout's `runs/<experiment>/<day>/<ts>`) from one
 * `ls-tree` of each folder many of them share, the rest from one `cat-file` for all. `paths` are
 * looked up on every tip, `pathsOn` only on the tip they are listed under.
 */
export async function runTreeIndex(
  repo: Repo,
  tips: string[],
  paths: string[],
  pathsOn: Map<string, string[]> = new Map(),
): Promise<(tip: string | null, path: string) => string | null> {
  const unique = [...new Set([...tips, ...pathsOn.keys()])];
  const roots = new Map<string, Map<string, string>>();
  await Promise.all(
    unique.map(async (tip) => {
      const entries = await lsTree(repo, tip);
      roots.set(tip, new Map(entries.filter((e) => e.type === 'tree').map((e) => [e.path, e.sha])));
    }),
  );
  const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/'));
  const listed = new Map<string, Map<string, string>>(); // `${tip}:${parent}` -> path -> tree
  const specs: string[] = [];
  for (const tip of unique) {
    const nested = [...new Set([...paths, ...(pathsOn.get(tip) ?? [])].filter((p) => p.includes('/')))];
    const byParent = new Map<string, string[]>();
    for (const p of nested) {
      const list = byParent.get(parentOf(p)) ?? [];
      list.push(p);
      byParent.set(parentOf(p), list);
    }
    for (const [parent, ps] of byParent) {
      // The parent must exist for any child to: a root-level parent absent from the root is skipped.
      if (!parent.includes('/') && !roots.get(tip)?.has(parent)) continue;
      if (ps.length < LIST_PARENT_AT) {
        specs.push(...ps.map((p) => `${tip}:${p}`));
        continue;
      }
      const entries = await lsTree(repo, tip, { path: `${parent}/` });
      listed.set(`${tip}:${parent}`, new Map(entries.filter((e) => e.type === 'tree').map((e) => [e.path, e.sha])));
    }
  }
  const objects = specs.length > 0 ? await readObjects(repo, specs) : new Map();
  return (tip, path) => {
    if (tip === null) return null;
    if (!path.includes('/')) return roots.get(tip)?.get(path) ?? null;
    const folder = listed.get(`${tip}:${parentOf(path)}`);
    if (folder) return folder.get(path) ?? null;
    const o = objects.get(`${tip}:${path}`);
    return o?.type === 'tree' ? o.sha : null;
  };
}
