import { bold, green, int, money, pct, red, seconds, table } from './format.js';
import { targetPassRate } from '../model/artifacts.js';

interface TargetRow {
  total: number;
  passed: number;
  failed: number;
  errors: number;
  pass_rate: unknown;
  mean_score: number;
  duration_ms: number;
  total_tokens: number;
  cost_usd: number;
}

/** The per-target summary table (the agentv-bench skill style) printed after export, publish and `summary`. */
export function printRunSummary(summary: Record<string, unknown>): void {
  const runSummary = (summary.run_summary ?? {}) as Record<string, TargetRow>;
  const rows = Object.entries(runSummary).map(([target, t]) => [
    target,
    t.total,
    t.passed,
    t.failed + t.errors,
    pct(targetPassRate(t.pass_rate) ?? 0),
    t.mean_score.toFixed(3),
    seconds(t.duration_ms),
    int(t.total_tokens),
    money(t.cost_usd),
  ]);
  process.stdout.write(table(['Target', 'Tests', 'Passed', 'Failed', 'Pass rate', 'Mean score', 'Duration', 'Tokens', 'Cost'], rows) + '\n');
  const total = Number(summary.total ?? 0);
  const passed = Number(summary.passed ?? 0);
  const rate = Number(summary.pass_rate ?? 0);
  const line = `${passed}/${total} passed (${pct(rate)})`;
  process.stdout.write('\n' + bold(rate >= 0.8 ? green(line) : red(line)) + '\n');
}
