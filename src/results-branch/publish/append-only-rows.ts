/**
 * A run's index.jsonl on the branch is append-only: publishing a workspace again never removes
 * rows the branch has and the workspace lacks. Those are another machine's shard of the run
 * (fetched by a `sync` since this workspace was exported), and dropping them would lose them
 * from the run. Rows are removed from the branch only whole-run, by archive or retention.
 *
 * So a republish unions the workspace's rows with the branch's (the workspace's version wins for
 * a row both have), keeps the files of the rows it keeps, and recomputes what is derived from the
 * rows (summary, benchmark, timing, catalog counts) over the union.
 */
import { indexRowIdentity } from '../../merge/index.js';
import { json } from '../../runs/export/row-files.js';
import { parseIndexRows, rederiveRunDocs } from '../../runs/export/derived-docs.js';
import type { IndexRow } from '../../model/artifacts.js';
import type { SplitFile } from './split.js';
import { ROW_PATH_FIELDS } from '../../model/path-segments.js';

export interface KeptRows {
  /** The run's files with index.jsonl and the derived documents over the union. */
  metadata: SplitFile[];
  /** All rows after the union. */
  rows: IndexRow[];
  /** How many branch rows the workspace lacked. */
  kept: number;
  /** Paths (relative to the run) of the kept rows' files: a republish must not delete them. */
  keepPaths: Set<string>;
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

/** Null when the branch has no row the workspace lacks (or rows we cannot read: nothing is dropped then either, see below). */
export function keepBranchRows(metadata: SplitFile[], branchIndex: Buffer | null, runId: string): KeptRows | null {
  const ours = metadata.find((f) => f.path === 'index.jsonl');
  if (!ours || !branchIndex) return null;
  const oursText = ours.data.toString('utf8');
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
  if (extra.length === 0) return null;
  const indexText = (oursText.endsWith('\n') || oursText === '' ? oursText : oursText + '\n') + extra.join('\n') + '\n';
  const rows = parseIndexRows(indexText);
  const keepPaths = new Set<string>();
  for (const l of extra) {
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(l) as Record<string, unknown>;
    } catch {
      // unparsable: a line with no paths to keep
      continue;
    }
    for (const field of ROW_PATH_FIELDS) if (typeof r[field] === 'string') keepPaths.add(r[field] as string);
  }
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
