/**
 * Run-level aggregates as a fold over index rows: summary.json, benchmark.json and timing.json.
 *
 * summary.json and timing.json are running sums (constant memory per target). benchmark.json's
 * statistics follow skill-creator's aggregate_benchmark.py to the digit (see benchmark-series.ts),
 * which needs one small entry per run, as its runs[] does anyway.
 */
import { SUMMARY_SCHEMA_VERSION, type IndexRow } from '../../model/artifacts.js';
import { ConfigurationSeries } from './benchmark-series.js';
import { pyStats } from './python-numbers.js';
import { passRate, round4 } from '../../model/pass-rate.js';

/**
 * Where a row sits in the skill-creator layout. The layout numbers rows as it writes them (first
 * pass, duplicates included); without a slot the aggregator numbers them itself, in emit order.
 */
export interface BenchmarkSlot {
  evalId: number;
  runNumber: number;
  /** The configuration folder's name. */
  configuration: string;
}

/** The tokens skill-creator counts for a run: total tokens, or the answer's characters when there are none. */
export function benchmarkTokens(row: Pick<IndexRow, 'total_tokens' | 'output_chars'>): number {
  return row.total_tokens || row.output_chars || 0;
}

interface TargetAcc {
  total: number;
  passed: number;
  failed: number;
  errors: number;
  scoreSum: number;
  duration: number;
  tokens: number;
  cost: number;
  toolCalls: number;
}

function newTarget(): TargetAcc {
  return {
    total: 0,
    passed: 0,
    failed: 0,
    errors: 0,
    scoreSum: 0,
    duration: 0,
    tokens: 0,
    cost: 0,
    toolCalls: 0,
  };
}

export interface RunMeta {
  run_id: string;
  experiment: string;
  timestamp: string | null;
  eval_file: string;
  threshold: number;
  export_metadata?: Record<string, unknown>;
}

/** A target's pass rate as AgentV writes it: the mean of its rows' verdicts (1 pass, 0 not) and their standard deviation. */
export function passRateStat(passed: number, total: number): { mean: number; stddev: number } {
  if (total === 0) return { mean: 0, stddev: 0 };
  const p = passed / total;
  return { mean: round4(p), stddev: round4(Math.sqrt(p * (1 - p))) };
}

export class RunAggregator {
  private readonly targets = new Map<string, TargetAcc>();
  private readonly suites = new Set<string>();
  private readonly evaluators = new Map<string, number[]>();
  private readonly series = new ConfigurationSeries();
  private readonly evalIds = new Map<string, number>();
  private readonly runNumbers = new Map<string, number>();
  private readonly runs: unknown[] = [];
  private readonly usageSources: Record<string, number> = {};
  private tokenIn = 0;
  private tokenOut = 0;
  private tokenCached = 0;
  private maxRun = 0;

  add(row: IndexRow, slot?: BenchmarkSlot): void {
    const t = this.targets.get(row.target) ?? newTarget();
    this.targets.set(row.target, t);
    this.suites.add(row.suite);
    t.total++;
    if (row.verdict === 'pass') t.passed++;
    else if (row.verdict === 'error') t.errors++;
    else t.failed++;
    t.scoreSum += row.score;
    t.duration += row.duration_ms ?? 0;
    t.tokens += row.total_tokens ?? 0;
    t.cost += row.cost_usd ?? 0;
    t.toolCalls += typeof row.total_tool_calls === 'number' ? row.total_tool_calls : 0;
    for (const s of row.scores) {
      const e = this.evaluators.get(s.name) ?? [];
      this.evaluators.set(s.name, e);
      e.push(s.score);
    }
    const source = row.total_tokens === null ? 'unavailable' : 'provider_reported';
    this.usageSources[source] = (this.usageSources[source] ?? 0) + 1;
    const usage = row.token_usage as { input?: number; output?: number; cached?: number } | null | undefined;
    if (usage) {
      this.tokenIn += usage.input ?? 0;
      this.tokenOut += usage.output ?? 0;
      this.tokenCached += usage.cached ?? 0;
    }
    this.addBenchmarkRun(row, slot ?? this.slotOf(row));
  }

  private slotOf(row: IndexRow): BenchmarkSlot {
    const evalId = this.evalIds.get(row.test_id) ?? this.evalIds.size + 1;
    this.evalIds.set(row.test_id, evalId);
    const runKey = `${row.test_id}\u0000${row.target}`;
    const runNumber = (this.runNumbers.get(runKey) ?? 0) + 1;
    this.runNumbers.set(runKey, runNumber);
    return { evalId, runNumber, configuration: row.target };
  }

  /** One run as skill-creator reads it back: the values of its grading.json and timing.json. */
  private addBenchmarkRun(row: IndexRow, slot: BenchmarkSlot): void {
    if (!this.evalIds.has(row.test_id)) this.evalIds.set(row.test_id, slot.evalId);
    this.maxRun = Math.max(this.maxRun, slot.runNumber);
    const a = row.assertions_summary;
    const result = {
      pass_rate: passRate(a.passed, a.total),
      passed: a.passed,
      failed: a.failed,
      total: a.total,
      time_seconds: round4((row.duration_ms ?? 0) / 1000),
      tokens: benchmarkTokens(row),
      tool_calls: typeof row.total_tool_calls === 'number' ? row.total_tool_calls : 0,
      errors: typeof row.errors_encountered === 'number' ? row.errors_encountered : 0,
    };
    const values = {
      pass_rate: result.pass_rate,
      time_seconds: result.time_seconds,
      tokens: result.tokens,
      tool_calls: result.tool_calls,
      cost_usd: row.cost_usd ?? 0,
      score: row.score,
    };
    this.series.add(slot.configuration, { evalId: slot.evalId, runNumber: slot.runNumber, values });
    this.runs.push({
      eval_id: slot.evalId,
      eval_name: row.test_id,
      configuration: slot.configuration,
      run_number: slot.runNumber,
      result,
      score: row.score,
      verdict: row.verdict,
      notes: row.error ? [row.error] : [],
    });
  }

  get rowCount(): number {
    let n = 0;
    for (const t of this.targets.values()) n += t.total;
    return n;
  }

  summary(meta: RunMeta) {
    let total = 0,
      passed = 0,
      failed = 0,
      errors = 0,
      scoreSum = 0,
      duration = 0,
      tokens = 0,
      cost = 0;
    const runSummary: Record<string, unknown> = {};
    for (const [name, t] of this.targets) {
      total += t.total;
      passed += t.passed;
      failed += t.failed;
      errors += t.errors;
      scoreSum += t.scoreSum;
      duration += t.duration;
      tokens += t.tokens;
      cost += t.cost;
      runSummary[name] = {
        total: t.total,
        passed: t.passed,
        failed: t.failed,
        errors: t.errors,
        // AgentV's shape: its Dashboard lists a run's pass rate as the mean of these means.
        pass_rate: passRateStat(t.passed, t.total),
        mean_score: t.total === 0 ? 0 : round4(t.scoreSum / t.total),
        duration_ms: t.duration,
        total_tokens: t.tokens,
        cost_usd: round6(t.cost),
        tool_calls: t.toolCalls,
      };
    }
    const doc: Record<string, unknown> = {
      schema_version: SUMMARY_SCHEMA_VERSION,
      run_id: meta.run_id,
      experiment: meta.experiment,
      timestamp: meta.timestamp,
      threshold: meta.threshold,
      total,
      passed,
      failed,
      errors,
      pass_rate: passRate(passed, total),
      mean_score: total === 0 ? 0 : round4(scoreSum / total),
      duration_ms: duration,
      total_tokens: tokens,
      cost_usd: round6(cost),
      targets: [...this.targets.keys()],
      suites: [...this.suites],
      run_summary: runSummary,
    };
    if (meta.export_metadata) doc.export_metadata = meta.export_metadata;
    // Where AgentV looks for a run's experiment and eval file.
    doc.metadata = { experiment: meta.experiment, timestamp: meta.timestamp };
    return doc;
  }

  benchmark(meta: RunMeta) {
    const perEvaluator: Record<string, unknown> = {};
    for (const [name, scores] of this.evaluators) perEvaluator[name] = { ...pyStats(scores), n: scores.length };
    return {
      metadata: {
        eval_file: meta.eval_file,
        run_id: meta.run_id,
        experiment: meta.experiment,
        timestamp: meta.timestamp,
        targets: [...this.targets.keys()],
        tests_run: [...this.evalIds.keys()],
        evals_run: [...this.evalIds.values()],
        runs_per_configuration: this.maxRun,
      },
      runs: this.runs,
      run_summary: this.series.runSummary(),
      per_evaluator_summary: perEvaluator,
      notes: [],
    };
  }

  timing() {
    let duration = 0,
      tokens = 0,
      cost = 0,
      tests = 0;
    for (const t of this.targets.values()) {
      duration += t.duration;
      tokens += t.tokens;
      cost += t.cost;
      tests += t.total;
    }
    const reported = this.usageSources.provider_reported ?? 0;
    return {
      total_tokens: tokens,
      duration_ms: duration,
      total_duration_seconds: round4(duration / 1000),
      token_usage: { input: this.tokenIn, output: this.tokenOut, cached: this.tokenCached },
      cost_usd: round6(cost),
      usage_source: reported > 0 ? 'aggregate' : 'unavailable',
      usage_sources: { ...this.usageSources },
      tests,
    };
  }
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
