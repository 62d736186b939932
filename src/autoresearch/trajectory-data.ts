/**
 * What the trajectory shows, computed once from the iterations so the standalone page, the
 * Dashboard and tests all read the same numbers.
 */
import type { Iteration } from './iterations.js';
import type { TrajectoryData, TrajectoryPoint } from './trajectory-types.js';

export type { TrajectoryData, TrajectoryPoint } from './trajectory-types.js';

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
