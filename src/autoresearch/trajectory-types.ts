/**
 * The shape of what a trajectory shows (trajectory-data.ts computes it): Node-free, so the
 * Dashboard's browser client reads the same type its server answers with (serve/api-types.ts).
 */

export interface TrajectoryPoint {
  cycle: number;
  score: number;
  decision: 'keep' | 'drop';
  cost_usd: number;
  cumulative_cost_usd: number;
  /** Best kept score up to and including this cycle. */
  best_score: number;
  mutation: string;
  run_dir: string;
  timestamp: string;
}

export interface TrajectoryData {
  points: TrajectoryPoint[];
  /** Every assertion seen, sorted; `rates[name][i]` is its pass rate at points[i] (null when absent). */
  assertions: string[];
  rates: Record<string, (number | null)[]>;
  summary: {
    cycles: number;
    keeps: number;
    drops: number;
    /** Score of the first cycle. */
    original_score: number | null;
    /** Highest score among kept cycles. */
    best_score: number | null;
    best_cycle: number | null;
    improvement: number | null;
    total_cost_usd: number;
  };
}
