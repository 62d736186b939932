/**
 * Catalog lines for runs another tool wrote (AgentV's own `auto_push`), kept on the results branch
 * so that only the first of the team's machines reads their files.
 *
 * A run we publish has its line in our catalog (`.indexes/agentv-results.<day>.jsonl`), written
 * with the run. A run AgentV committed has none, and `list` reads its `summary.json` (run-index.ts):
 * git inflating tens of thousands of those is most of a first `list`, on every machine. `archive`
 * reads every live run anyway, so it writes what it read here, one line per run directory:
 *
 *     .indexes/agentv-results-foreign.<day>.jsonl
 *     {"tree":"<the run directory's tree id>","run_id":…,"experiment":…,"timestamp":…,"path":…,
 *      "targets":[…],"total":…,"passed":…,"failed":…,"pass_rate":…}
 *
 * A line is used only while the directory at `path` still has that tree: AgentV may add rows to
 * its run, and then the run's files are read again as before (and the next `archive` replaces the
 * line). The files are union-merged (AgentV's `.gitattributes` marks `.indexes/*.jsonl`
 * `merge=union`, and so does our resolver), so two machines writing lines at once lose nothing;
 * a line left behind by an older tree is never used and is dropped the next time its day is
 * rewritten. The file is not ours to trust more than our catalog: a crafted line can show other
 * counts, as a crafted summary.json could; it cannot move a run, whose place comes from the tree.
 */
import { type FileChange, readBlobs, type Repo, type TreeEntry } from '../git/index.js';
import { CATALOG_DIR } from './branch-layout.js';
import { runDirKey, type RunFilesRow } from './run-index.js';

export const FOREIGN_CATALOG_PREFIX = 'agentv-results-foreign.';

const DAY = /^(\d{4}-\d{2}-\d{2}|undated)$/;

/** The day of a foreign-catalog file at `path` (a `.indexes/` entry), or null for any other file. */
export function foreignCatalogDay(path: string): string | null {
  const head = `${CATALOG_DIR}/${FOREIGN_CATALOG_PREFIX}`;
  if (!path.startsWith(head) || !path.endsWith('.jsonl')) return null;
  const day = path.slice(head.length, -'.jsonl'.length);
  return DAY.test(day) ? day : null;
}

export function foreignCatalogPath(day: string): string {
  return `${CATALOG_DIR}/${FOREIGN_CATALOG_PREFIX}${day}.jsonl`;
}

/** One run's line, its members always in one order (two machines writing it write the same bytes). */
export function foreignLine(tree: string, row: RunFilesRow): string {
  return JSON.stringify({
    tree,
    run_id: row.run_id,
    experiment: row.experiment,
    timestamp: row.timestamp,
    path: row.path,
    targets: row.targets,
    total: row.total,
    passed: row.passed,
    failed: row.failed,
    pass_rate: row.pass_rate,
  });
}

function lineRow(v: unknown, day: string): { tree: string; row: RunFilesRow } | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const r = v as Record<string, unknown>;
  const { tree, run_id, experiment, timestamp, path, targets, total, passed, failed, pass_rate } = r;
  if (typeof tree !== 'string' || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(tree)) return null;
  if (typeof run_id !== 'string' || typeof experiment !== 'string' || typeof timestamp !== 'string' || typeof path !== 'string') return null;
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) return null;
  for (const n of [total, passed, failed, pass_rate]) if (typeof n !== 'number' || !Number.isFinite(n)) return null;
  return {
    tree,
    row: {
      run_id,
      experiment,
      day,
      timestamp,
      path,
      targets: targets as string[],
      total: total as number,
      passed: passed as number,
      failed: failed as number,
      pass_rate: pass_rate as number,
      writer: 'agentv',
    },
  };
}

/** The rows of one foreign-catalog file by key; a line that cannot be read is skipped (the run's files are read instead). */
export function parseForeignCatalog(text: string, day: string, into: Map<string, RunFilesRow> = new Map()): Map<string, RunFilesRow> {
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      // unreadable line: that run is read from its files, as if it had none
      continue;
    }
    const got = lineRow(v, day);
    if (got) into.set(runDirKey(got.tree, got.row.path), got.row);
  }
  return into;
}

export interface ForeignCatalog {
  /** Each file: its path, day and text. */
  files: { path: string; day: string; text: string }[];
  /** Every readable line's row, by run-index.ts `runDirKey` (tree id and path). */
  rows: Map<string, RunFilesRow>;
}

/**
 * The foreign-catalog files among a tip's `.indexes/` entries, read in one `cat-file --batch` (or
 * from `blobs`, when the caller already read them with its own catalog).
 */
export async function readForeignCatalog(repo: Repo, indexEntries: readonly TreeEntry[], blobs?: ReadonlyMap<string, Buffer | null>): Promise<ForeignCatalog> {
  const mine = indexEntries.flatMap((e) => {
    const day = e.type === 'blob' ? foreignCatalogDay(e.path) : null;
    return day === null ? [] : [{ path: e.path, day, sha: e.sha }];
  });
  const missing = mine.filter((f) => !blobs?.has(f.sha)).map((f) => f.sha);
  const read = missing.length > 0 ? await readBlobs(repo, missing) : new Map<string, Buffer | null>();
  const rows = new Map<string, RunFilesRow>();
  const files = mine.map((f) => {
    const text = (blobs?.get(f.sha) ?? read.get(f.sha))?.toString('utf8') ?? '';
    parseForeignCatalog(text, f.day, rows);
    return { path: f.path, day: f.day, text };
  });
  return { files, rows };
}

/**
 * The writes that make the foreign catalog hold exactly one line per run in `live` (its
 * directory's tree id and row): new runs gain a line, a run whose tree changed gets its new one,
 * lines of runs no longer live (archived, deleted) or of an older tree go. Days whose bytes would
 * not change are not written, and a file left with no line is deleted.
 */
export function foreignCatalogChanges(current: ForeignCatalog, live: readonly { tree: string; row: RunFilesRow }[]): { changes: FileChange[]; added: number } {
  const byDay = new Map<string, string[]>();
  let added = 0;
  const sorted = [...live].sort((a, b) => (a.row.path === b.row.path ? (a.tree < b.tree ? -1 : 1) : a.row.path < b.row.path ? -1 : 1));
  for (const { tree, row } of sorted) {
    if (!current.rows.has(runDirKey(tree, row.path))) added++;
    const lines = byDay.get(row.day) ?? [];
    lines.push(foreignLine(tree, row));
    byDay.set(row.day, lines);
  }
  const changes: FileChange[] = [];
  const had = new Map(current.files.map((f) => [f.day, f]));
  for (const [day, lines] of byDay) {
    const text = `${lines.join('\n')}\n`;
    if (had.get(day)?.text !== text) changes.push({ path: foreignCatalogPath(day), data: text });
  }
  for (const f of current.files) if (!byDay.has(f.day)) changes.push({ path: f.path, delete: true });
  return { changes, added };
}
