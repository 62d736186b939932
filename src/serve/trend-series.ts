/**
 * Trend series per experiment x target for the Dashboard's charts: pass rate, mean score, cost and
 * duration of each run over time, from the catalog (which runs, in what order) and each run's
 * summary.json (its per-target `run_summary`), read in one batch.
 *
 * Regression marker: a point is marked when its mean score falls more than `scoreDrop` (0.05)
 * below, or its pass rate more than `rateDrop` (0.10) below, the median of the up to five points
 * before it. A median of recent runs rather than the previous run alone, so one noisy run does
 * not mark its successor as well.
 *
 * (H3 is building a trend classifier in src/results/trend.ts; when it lands, the Dashboard should
 * take its classification from there. These series only feed the charts.)
 */
import type { ListedRun, ListResult } from '../history/list.js';
import { targetPassRate } from '../model/artifacts.js';

export interface TrendPoint {
  run_id: string;
  timestamp: string;
  total: number;
  pass_rate: number;
  mean_score: number | null;
  cost_usd: number | null;
  duration_ms: number | null;
  regression: boolean;
}

export interface TrendSeries {
  experiment: string;
  target: string;
  points: TrendPoint[];
}

export const REGRESSION = { window: 5, scoreDrop: 0.05, rateDrop: 0.1 } as const;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function markRegressions(points: TrendPoint[]): void {
  for (let i = 1; i < points.length; i++) {
    const prev = points.slice(Math.max(0, i - REGRESSION.window), i);
    const p = points[i]!;
    const rate = median(prev.map((x) => x.pass_rate));
    const scores = prev.map((x) => x.mean_score).filter((x): x is number => x !== null);
    const scoreDrop = p.mean_score !== null && scores.length > 0 && median(scores) - p.mean_score > REGRESSION.scoreDrop + 1e-9;
    p.regression = scoreDrop || rate - p.pass_rate > REGRESSION.rateDrop + 1e-9;
  }
}

export function buildSeries(
  runs: ListedRun[],
  summaries: Map<string, Record<string, unknown>>,
  filter: { experiment?: string; target?: string } = {},
): TrendSeries[] {
  const byKey = new Map<string, TrendSeries>();
  // Oldest first: a chart reads left to right.
  const ordered = [...runs].sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.run_id < b.run_id ? -1 : 1));
  for (const run of ordered) {
    if (filter.experiment !== undefined && run.experiment !== filter.experiment) continue;
    const summary = summaries.get(run.run_id);
    const perTarget = (summary?.run_summary ?? null) as Record<string, Record<string, unknown>> | null;
    for (const target of run.targets) {
      if (filter.target !== undefined && target !== filter.target) continue;
      const t = perTarget && typeof perTarget === 'object' ? perTarget[target] : undefined;
      // A single-target run without a per-target block: the run's own figures are the target's.
      const src = t ?? (run.targets.length === 1 ? summary : undefined);
      const total = num(src?.total) ?? (run.targets.length === 1 ? run.total : 0);
      const passRate = targetPassRate(src?.pass_rate) ?? (run.targets.length === 1 ? run.pass_rate : null);
      if (passRate === null) continue;
      const key = `${run.experiment}\0${target}`;
      let s = byKey.get(key);
      if (!s) {
        s = { experiment: run.experiment, target, points: [] };
        byKey.set(key, s);
      }
      s.points.push({
        run_id: run.run_id,
        timestamp: run.timestamp,
        total,
        pass_rate: passRate,
        mean_score: num(src?.mean_score),
        cost_usd: num(src?.cost_usd),
        duration_ms: num(src?.duration_ms),
        regression: false,
      });
    }
  }
  const out = [...byKey.values()].sort((a, b) => (a.experiment === b.experiment ? (a.target < b.target ? -1 : 1) : a.experiment < b.experiment ? -1 : 1));
  for (const s of out) markRegressions(s.points);
  return out;
}

export type Tips = ListResult['tips'];
