/**
 * What `trend` answers, as types only and with no Node imports: the library's TrendReport, the CLI's
 * --json, and the Dashboard's `GET /api/trend` (serve/api-types.ts extends it; the browser client
 * compiles against it) are this one definition.
 */

export type TrendDirection = 'improving' | 'stable' | 'degrading';

/** One run of a series (AgentV's `runs[]` entry, plus ours). */
export interface TrendRunPoint {
  label: string;
  path: string;
  timestamp?: string;
  matched_test_count: number;
  mean_score: number;
  /** Ours: the run id, when the run came from the results branch or a summary.json names it. */
  run_id?: string;
  /** Ours, for charts: of the rows counted, the share that passed (their verdict, else AgentV's pass threshold on the score; null with no row). */
  pass_rate: number | null;
  /** Ours, for charts: the counted rows' total cost and duration (null when no row carries one). */
  cost_usd: number | null;
  duration_ms: number | null;
  /** Ours: the regression mark of this point (see the module comment). */
  regression: boolean;
}

export interface TrendSeries {
  /** The experiment of a series split by experiment (or filtered to one); null: every experiment selected. */
  experiment: string | null;
  /** The target of a series split by target (or filtered to one); null: every target pooled, as agentv trend without --target. */
  target: string | null;
  /** The targets whose rows the series holds. */
  targets: string[];
  runs: TrendRunPoint[];
  summary: {
    run_count: number;
    matched_test_count: number;
    date_range: { start?: string; end?: string };
    slope: number;
    intercept: number;
    r_squared: number;
    direction: TrendDirection;
  };
  regression: { slope_threshold: number; fail_on_degrading: boolean; triggered: boolean };
}

export interface SkippedSeries {
  experiment: string | null;
  target: string | null;
  runs: number;
  reason: string;
}

export interface TrendReport {
  series: TrendSeries[];
  skipped: SkippedSeries[];
  filters: {
    experiment?: string;
    target?: string;
    suite?: string;
    allow_missing_tests: boolean;
    last?: number;
    by_target: boolean;
    by_experiment: boolean;
  };
  source: 'paths' | 'local' | 'published';
  slope_threshold: number;
  fail_on_degrading: boolean;
  /** True when failOnDegrading and some series is degrading (the CLI exits 1). */
  triggered: boolean;
  warnings: string[];
  /** With published runs: which tip of the results branch was read, and how fresh the remote side is. */
  read?: string;
}
