/**
 * One run's row as `list` and the Dashboard's run list show it: a type of its own, with no Node
 * imports, so the run index (layout/run-index.ts) and the Dashboard API's answer
 * types (serve/api-types.ts, which the browser client compiles) share one definition.
 */
/** What `list` shows of a run, whichever source it came from (a catalog line, or the run's own files). */
export interface RunSummaryRow {
  run_id: string;
  experiment: string;
  /** The catalog day (YYYY-MM-DD of the run's timestamp, or "undated"). */
  day: string;
  timestamp: string;
  /** The run's directory on both branches. */
  path: string;
  targets: string[];
  total: number;
  passed: number;
  failed: number;
  pass_rate: number;
}
