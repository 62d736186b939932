/** What `validate` reports: one entry per problem, located as precisely as the file allows. */
export interface ValidationProblem {
  /** Relative to the run directory (`index.jsonl`, `summary.json`, a sidecar path). */
  file: string;
  /** 1-based line, for line-oriented files (index.jsonl). */
  line?: number;
  message: string;
}
