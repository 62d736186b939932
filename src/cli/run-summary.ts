import { bold, green, int, money, pct, red, seconds, table } from './format.js';
import { targetPassRate } from '../model/artifacts.js';
import { formatAttemptRate, formatPassK, type RunAttemptStats } from '../model/attempt-stats.js';

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

/**
 * A repeated run's attempts: per target attempts passed/total and the mean attempt success rate,
 * then each (test, target) whose attempts disagree (some passed, some not), lowest rate first.
 */
export function printAttempts(a: RunAttemptStats): void {
  const rows = Object.entries(a.targets).map(([target, t]) => [target, `${t.passed_samples}/${t.total_samples}`, pct(t.mean_pass_rate)]);
  rows.push(['(run)', `${a.passed_samples}/${a.total_samples}`, pct(a.mean_pass_rate)]);
  process.stdout.write('\n' + table(['Target', 'Attempts passed', 'Mean attempt success'], rows) + '\n');
  const mixed = a.tests.filter((t) => t.passed_samples > 0 && t.passed_samples < t.total_samples).sort((x, y) => x.pass_rate - y.pass_rate);
  if (mixed.length === 0) return;
  process.stdout.write(`\n${mixed.length} test${mixed.length === 1 ? '' : 's'} passed only some attempts:\n`);
  for (const t of mixed) process.stdout.write(`  ${t.test_id} (${t.target})  ${formatAttemptRate(t.passed_samples, t.total_samples)}  ${formatPassK(t)}\n`);
}
