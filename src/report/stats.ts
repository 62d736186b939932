/**
 * The figures the report prints, folded from the same per-test records the table shows, so the
 * page can never disagree with itself. They use summary.json's rules (aggregate.ts): `failed`
 * excludes errors, the pass rate is passed / total, durations, tokens and cost are sums of what
 * the rows report.
 */
import type { ReportData, ReportTest } from './types.js';

export interface Tally {
  total: number;
  passed: number;
  failed: number;
  errors: number;
  pass_rate: number;
  mean_score: number;
  duration_ms: number;
  tokens: number;
  cost_usd: number;
}

export interface ReportStats {
  overall: Tally;
  /** Same order as ReportData.groups. */
  groups: Tally[];
  /** Same order as ReportData.targets. */
  targets: Tally[];
  scores: number[];
}

function emptyTally(): Tally {
  return { total: 0, passed: 0, failed: 0, errors: 0, pass_rate: 0, mean_score: 0, duration_ms: 0, tokens: 0, cost_usd: 0 };
}

function add(t: Tally, test: ReportTest): void {
  t.total++;
  if (test.verdict === 'pass') t.passed++;
  else if (test.verdict === 'error') t.errors++;
  else t.failed++;
  t.mean_score += test.score; // a sum until finish()
  t.duration_ms += test.duration_ms ?? 0;
  t.tokens += test.tokens ?? 0;
  t.cost_usd += test.cost_usd ?? 0;
}

function finish(t: Tally): Tally {
  t.pass_rate = t.total === 0 ? 0 : t.passed / t.total;
  t.mean_score = t.total === 0 ? 0 : t.mean_score / t.total;
  // Summing many floats drifts in the last digits; round like summary.json does.
  t.cost_usd = Math.round(t.cost_usd * 1e6) / 1e6;
  return t;
}

export function computeStats(data: ReportData): ReportStats {
  const overall = emptyTally();
  const groups = data.groups.map(emptyTally);
  const targets = data.targets.map(emptyTally);
  const scores: number[] = [];
  for (const test of data.tests) {
    add(overall, test);
    add(groups[test.group]!, test);
    add(targets[test.target]!, test);
    scores.push(test.score);
  }
  return { overall: finish(overall), groups: groups.map(finish), targets: targets.map(finish), scores };
}
