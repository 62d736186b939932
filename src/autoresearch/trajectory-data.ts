/**
 * What the trajectory shows, computed once from the iterations so the standalone page, the
 * Dashboard and tests all read the same numbers.
 */
import type { Iteration } from './iterations.js';

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

const round = (x: number, d = 6) => Number(x.toFixed(d));

export function trajectoryData(iterations: Iteration[]): TrajectoryData {
  // Sorted by cycle: a loop restarted by hand may have appended out of order.
  const sorted = [...iterations].sort((a, b) => a.cycle - b.cycle);
  let cumulative = 0;
  let best: number | null = null;
  let bestCycle: number | null = null;
  const points: TrajectoryPoint[] = [];
  for (const it of sorted) {
    cumulative += Number.isFinite(it.cost_usd) ? it.cost_usd : 0;
    if (it.decision === 'keep' && (best === null || it.score > best)) {
      best = it.score;
      bestCycle = it.cycle;
    }
    points.push({
      cycle: it.cycle,
      score: it.score,
      decision: it.decision,
      cost_usd: it.cost_usd,
      cumulative_cost_usd: round(cumulative),
      best_score: best ?? it.score,
      mutation: it.mutation,
      run_dir: it.run_dir,
      timestamp: it.timestamp,
    });
  }
  const names = [...new Set(sorted.flatMap((it) => Object.keys(it.assertions)))].sort();
  const rates: Record<string, (number | null)[]> = {};
  for (const name of names) rates[name] = sorted.map((it) => (typeof it.assertions[name] === 'number' ? it.assertions[name]! : null));
  const original = points[0]?.score ?? null;
  return {
    points,
    assertions: names,
    rates,
    summary: {
      cycles: points.length,
      keeps: points.filter((p) => p.decision === 'keep').length,
      drops: points.filter((p) => p.decision === 'drop').length,
      original_score: original,
      best_score: best,
      best_cycle: bestCycle,
      improvement: best !== null && original !== null ? round(best - original) : null,
      total_cost_usd: round(cumulative),
    },
  };
}
