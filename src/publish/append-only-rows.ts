/**
 * A run's index.jsonl on the branch is append-only: publishing a workspace again never removes
 * rows the branch has and the workspace lacks. Those are another machine's shard of the run
 * (fetched by a `sync` since this workspace was exported), and dropping them would lose them
 * from the run. Rows are removed from the branch only whole-run, by archive or retention.
 *
 * So a republish unions the workspace's rows with the branch's (the workspace's version wins for
 * a row both have), keeps the files of the rows it keeps, and recomputes what is derived from the
 * rows (summary, benchmark, timing, catalog counts) over the union.
 *
 * A run AgentV wrote (its 5.x workspace, published as its auto_push lays it out: agentv-run.ts)
 * follows the same rule: AgentV's own publish replaces the run's directory, but a directory that
 * already holds another machine's shard of the run (a depth-1 clone commits on the team's tip)
 * keeps those rows, their files, and gets AgentV's summary.json recomputed over the union as a
 * merge recomputes it (sync/recompute-derived.ts), so both tools' validate accept the run.
 */
import { indexRowIdentity } from '../merge/index.js';
import { json } from '../runs/export/row-files.js';
import { parseIndexRows, rederiveRunDocs } from '../runs/export/derived-docs.js';
import type { IndexRow } from '../model/artifacts.js';
import type { SplitFile } from './split.js';
import { ROW_PATH_FIELDS } from '../model/path-segments.js';
import { agentvCatalogCounts } from '../layout/catalog-rows.js';
import { agentvRunSummary } from '../runs/export/agentv-summary.js';
import type { CatalogRow } from '../model/artifacts.js';

export interface KeptRows {
  /** The run's files with index.jsonl and the derived documents over the union. */
  metadata: SplitFile[];
  /** All rows after the union. */
  rows: IndexRow[];
  /** How many branch rows the workspace lacked. */
  kept: number;
  /** Paths (relative to the run) of the kept rows' files: a republish must not delete them. */
  keepPaths: Set<string>;
  /** The catalog line's counts over the union when they do not come from `rows` (a run AgentV wrote: its summary's). */
  counts?: Pick<CatalogRow, 'targets' | 'total' | 'passed' | 'failed' | 'pass_rate'>;
}

const lineIdentity = (line: string): string | null => {
  try {
    return indexRowIdentity(JSON.parse(line), line);
  } catch {
    // unparsable: not a row we can key; kept by its bytes
    return null;
  }
};

const doc = (files: SplitFile[], name: string): Record<string, unknown> | null => {
  const f = files.find((x) => x.path === name);
  if (!f) return null;
  try {
    return JSON.parse(f.data.toString('utf8')) as Record<string, unknown>;
  } catch {
    // unparsable: a document that does not parse is not kept
    return null;
  }
};

/** The workspace's manifest text with the branch's lines it lacks appended (keyed as a merge keys rows), and those lines. */
export function unionLines(oursText: string, branchIndex: Buffer): { text: string; extra: string[] } {
  const have = new Set(
    oursText
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map(lineIdentity),
  );
  const extra = branchIndex
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !have.has(lineIdentity(l)));
  return { text: (oursText.endsWith('\n') || oursText === '' ? oursText : oursText + '\n') + extra.join('\n') + '\n', extra };
}

/** The files (relative to the run) the kept lines name: a republish must not delete them. */
export function pathsOf(lines: string[]): Set<string> {
  const keepPaths = new Set<string>();
  for (const l of lines) {
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(l) as Record<string, unknown>;
    } catch {
      // unparsable: a line with no paths to keep
      continue;
    }
    for (const field of ROW_PATH_FIELDS) if (typeof r[field] === 'string') keepPaths.add(r[field] as string);
  }
  return keepPaths;
}

/** A file of a row the branch keeps: named by the row, or under its result directory. */
export function keptFile(rel: string, keep: ReadonlySet<string>): boolean {
  if (keep.size === 0) return false;
  if (keep.has(rel)) return true;
  for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) if (keep.has(rel.slice(0, i))) return true;
  return false;
}

/** Null when the branch has no row the workspace lacks (or rows we cannot read: nothing is dropped then either, see below). */
export function keepBranchRows(metadata: SplitFile[], branchIndex: Buffer | null, runId: string): KeptRows | null {
  const ours = metadata.find((f) => f.path === 'index.jsonl');
  if (!ours || !branchIndex) return null;
  const { text: indexText, extra } = unionLines(ours.data.toString('utf8'), branchIndex);
  if (extra.length === 0) return null;
  const rows = parseIndexRows(indexText);
  const keepPaths = pathsOf(extra);
  const files = metadata.map((f) => (f.path === 'index.jsonl' ? { path: f.path, data: Buffer.from(indexText) } : f));
  // Rows we cannot parse are still kept verbatim; only the recount needs them parsed.
  if (rows === null) return { metadata: files, rows: [], kept: extra.length, keepPaths };
  const docs = rederiveRunDocs(rows, {
    summary: doc(metadata, 'summary.json'),
    benchmark: doc(metadata, 'benchmark.json'),
    timing: doc(metadata, 'timing.json'),
    runId,
  });
  const derived: Record<string, unknown> = { 'summary.json': docs.summary, 'benchmark.json': docs.benchmark, 'timing.json': docs.timing };
  return {
    metadata: files.map((f) => (f.path in derived ? { path: f.path, data: Buffer.from(json(derived[f.path])) } : f)),
    rows,
    kept: extra.length,
    keepPaths,
  };
}

/** Where an AgentV 5.x run keeps its rows: `.internal/index.jsonl`, or `index.jsonl` in an older workspace. */
export const AGENTV_MANIFESTS = ['.internal/index.jsonl', 'index.jsonl'] as const;

/**
 * The same for a run AgentV wrote: `branch` holds the run's files already on the branch (its
 * manifest and summary.json, by path relative to the run); `runName` is the run's directory name.
 * Null when the branch has no row the workspace lacks.
 */
export function keepAgentvBranchRows(metadata: SplitFile[], branch: ReadonlyMap<string, Buffer>, runName: string): KeptRows | null {
  const ours = AGENTV_MANIFESTS.map((m) => metadata.find((f) => f.path === m)).find((f) => f !== undefined);
  const theirs = ours ? branch.get(ours.path) : undefined;
  if (!ours || !theirs) return null;
  const { text: indexText, extra } = unionLines(ours.data.toString('utf8'), theirs);
  if (extra.length === 0) return null;
  const files = metadata.map((f) => (f.path === ours.path ? { path: f.path, data: Buffer.from(indexText) } : f));
  const branchSummary = branch.get('summary.json');
  const previous = [doc(metadata, 'summary.json'), branchSummary ? doc([{ path: 'summary.json', data: branchSummary }], 'summary.json') : null];
  const kept = { rows: [] as IndexRow[], kept: extra.length, keepPaths: pathsOf(extra) };
  // A workspace without AgentV's summary.json has nothing of AgentV's to recompute; the rows are kept.
  if (!files.some((f) => f.path === 'summary.json')) return { metadata: files, ...kept };
  const summary = agentvRunSummary(indexText, previous, runName);
  return {
    metadata: files.map((f) => (f.path === 'summary.json' ? { path: f.path, data: Buffer.from(json(summary)) } : f)),
    ...kept,
    counts: agentvCatalogCounts(summary),
  };
}
