/**
 * A run's derived documents recomputed from its rows: summary.json, benchmark.json and
 * timing.json are functions of index.jsonl, so after a merge changed the rows they are computed
 * again (the same aggregator as export) instead of merged as text. What the previous documents
 * carry beyond the aggregates (the run's identity, eval file, threshold, provenance, fields of
 * other writers) is kept; the numbers are replaced.
 */
import { IndexRowSchema, type IndexRow } from '../../model/artifacts.js';
import { RunAggregator, type RunMeta } from './aggregate.js';
import { DEFAULT_THRESHOLD } from './normalize.js';

type Doc = Record<string, unknown>;

export interface RunDocs {
  summary: Doc;
  benchmark: Doc;
  timing: Doc;
  rows: IndexRow[];
}

/** The rows of an index.jsonl; null when a line is not a row (the documents cannot be recomputed then). */
export function parseIndexRows(text: string): IndexRow[] | null {
  const rows: IndexRow[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // unparsable: not a row
      return null;
    }
    const r = IndexRowSchema.safeParse(value);
    if (!r.success) return null;
    rows.push(r.data);
  }
  return rows;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const obj = (v: unknown): Doc => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Doc) : {});

export function rederiveRunDocs(rows: IndexRow[], previous: { summary: Doc | null; benchmark: Doc | null; timing: Doc | null; runId: string }): RunDocs {
  const prevSummary = previous.summary ?? {};
  const prevBenchmark = previous.benchmark ?? {};
  const earliest =
    rows
      .map((r) => r.timestamp)
      .filter((t): t is string => typeof t === 'string' && !Number.isNaN(Date.parse(t)))
      .sort()[0] ?? null;
  const meta: RunMeta = {
    run_id: str(prevSummary.run_id) ?? previous.runId,
    experiment: str(prevSummary.experiment) ?? str(obj(prevSummary.metadata).experiment) ?? 'default',
    timestamp: str(prevSummary.timestamp) ?? earliest,
    eval_file: str(obj(prevBenchmark.metadata).eval_file) ?? '',
    threshold: typeof prevSummary.threshold === 'number' ? prevSummary.threshold : DEFAULT_THRESHOLD,
  };
  if (prevSummary.export_metadata && typeof prevSummary.export_metadata === 'object') meta.export_metadata = prevSummary.export_metadata as Doc;
  const agg = new RunAggregator();
  for (const r of rows) agg.add(r);
  const summary = agg.summary(meta);
  const benchmark = agg.benchmark(meta) as Doc;
  return {
    summary: { ...prevSummary, ...summary, metadata: { ...obj(prevSummary.metadata), ...obj(summary.metadata) } },
    benchmark: { ...prevBenchmark, ...benchmark, metadata: { ...obj(prevBenchmark.metadata), ...obj(benchmark.metadata) } },
    timing: { ...(previous.timing ?? {}), ...(agg.timing() as Doc) },
    rows,
  };
}
