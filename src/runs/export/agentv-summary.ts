/**
 * AgentV 5's own run summary (`<run_id>/summary.json` beside `.internal/index.jsonl`), recomputed
 * from the run's index rows as AgentV recomputes it (`agentv eval aggregate <run-dir>`: rows
 * deduplicated by test, target and variant, the last one kept), for a run whose rows a merge
 * united. AgentV's Dashboard, `results summary` and `validate` read this file, so it must count
 * the merged rows in AgentV's shape, not ours.
 *
 * What the rows do not hold is carried from the summaries the run had before (`previous`, the
 * first one that has it): the run id and index path, the eval file, experiment, runtime source,
 * planned count, tags and environments, each test's eval path, and the parts of `metrics` that
 * come from traces AgentV does not put in the index (turns, tool calls, where each figure came
 * from). `agentv eval aggregate` loses those; a merge keeps them.
 */
import { ATTEMPT_PASS_THRESHOLD as PASS_AT } from '../../model/attempts.js';
import { jsonlObjects } from '../../util/jsonl-objects.js';

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function stats(values: number[]): { mean: number; stddev: number } {
  if (values.length === 0) return { mean: 0, stddev: 0 };
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return { mean: round3(mean), stddev: round3(Math.sqrt(variance)) };
}

const percentage = (count: number, total: number) => (total > 0 ? round3(count / total) : 0);

/** Drops keys whose value is undefined, keeping the order of the rest (AgentV's dropUndefined). */
function defined(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

interface Row {
  raw: Obj;
  testId: string;
  target: string;
  variant: string | undefined;
  scores: Obj[];
  error: boolean;
}

function rowOf(raw: Obj): Row {
  return {
    raw,
    testId: str(raw.test_id) ?? 'unknown',
    target: str(raw.target) ?? 'unknown',
    variant: str(raw.variant),
    scores: Array.isArray(raw.scores) ? raw.scores.map(obj) : [],
    error: raw.execution_status === 'execution_error',
  };
}

const keyOf = (r: { testId: string; target: string; variant?: string }) => `${r.testId}\u0000${r.target}\u0000${r.variant ?? ''}`;

/** A row's verdict as AgentV gives it: skipped when every grader skipped, else passed only when it executed ok. */
function verdictOf(r: Row): 'pass' | 'fail' | 'skip' {
  if (r.scores.length > 0 && r.scores.every((s) => s.verdict === 'skip')) return 'skip';
  return r.raw.execution_status === 'ok' ? 'pass' : 'fail';
}

/** The share of a row's graders at or over the threshold (its score alone when it has none). */
function passRate(r: Row): number {
  if (r.scores.length > 0) return r.scores.filter((s) => (num(s.score) ?? 0) >= PASS_AT).length / r.scores.length;
  return (num(r.raw.score) ?? 0) >= PASS_AT ? 1 : 0;
}

function tokenUsage(r: Row): { input?: number; output?: number; reasoning?: number } | undefined {
  const u = r.raw.token_usage;
  return u !== null && typeof u === 'object' ? (u as { input?: number; output?: number; reasoning?: number }) : undefined;
}

function toolCalls(r: Row): Record<string, number> {
  const calls = obj(obj(r.raw.trace).tool_calls);
  return Object.fromEntries(Object.entries(calls).filter((e): e is [string, number] => num(e[1]) !== undefined));
}

/** The rows AgentV summarizes: the last row of each test, target and variant, in the order the kept rows appear. */
export function agentvSummaryRows(indexText: string): Obj[] {
  const rows = jsonlObjects(indexText);
  const last = new Map<string, number>();
  rows.forEach((r, i) => {
    last.set(keyOf(rowOf(r)), i);
  });
  return rows.filter((r, i) => last.get(keyOf(rowOf(r))) === i);
}

/** AgentV's summary.json of the run whose index is `indexText`, carrying from `previous` what the rows do not hold. */
export function agentvRunSummary(indexText: string, previous: readonly (Obj | null)[], runId: string): Obj {
  const rows = agentvSummaryRows(indexText).map(rowOf);
  const prevDocs = previous.filter((p): p is Obj => p !== null);
  const carried = (pick: (doc: Obj) => unknown) => prevDocs.map(pick).find((v) => v !== undefined);
  const prevTests = new Map<string, Obj>();
  for (const doc of [...prevDocs].reverse())
    for (const t of Array.isArray(doc.tests) ? doc.tests.map(obj) : [])
      prevTests.set(keyOf({ testId: str(t.test_id) ?? 'unknown', target: str(t.target) ?? 'unknown', variant: str(t.variant) }), t);

  const targets = [...new Set(rows.map((r) => r.target))].sort();
  const variants = [...new Set(rows.map((r) => r.variant).filter((v): v is string => !!v))].sort();
  const testIds = [...new Set(rows.map((r) => r.testId))].sort();

  const runSummary: Obj = {};
  for (const target of targets) {
    const of = rows.filter((r) => r.target === target);
    const entry: Obj = {
      pass_rate: stats(of.filter((r) => !r.error).map(passRate)),
      time_seconds: stats(of.flatMap((r) => (num(r.raw.duration_ms) === undefined ? [] : [(r.raw.duration_ms as number) / 1000]))),
      tokens: stats(of.flatMap((r) => (tokenUsage(r) ? [(tokenUsage(r)!.input ?? 0) + (tokenUsage(r)!.output ?? 0)] : []))),
    };
    const calls = of.map((r) => Object.values(toolCalls(r)).reduce((s, n) => s + n, 0));
    if (calls.some((n) => n > 0)) entry.tool_calls = stats(calls);
    const costs = of.flatMap((r) => (num(r.raw.cost_usd) === undefined ? [] : [r.raw.cost_usd as number]));
    if (costs.length > 0) entry.cost_usd = stats(costs);
    runSummary[target] = entry;
  }

  const graderScores = new Map<string, number[]>();
  for (const r of rows) {
    if (r.error) continue;
    for (const s of r.scores) {
      const key = `${String(s.name)}:${String(s.type)}`;
      graderScores.set(key, [...(graderScores.get(key) ?? []), num(s.score) ?? 0]);
    }
  }
  const perGrader = graderScores.size > 0 ? Object.fromEntries([...graderScores].map(([k, v]) => [k, stats(v)])) : undefined;

  const targetErrors: Record<string, number> = {};
  for (const r of rows) {
    const kind = str(obj(r.raw.target_execution).error_kind);
    if (kind) targetErrors[kind] = (targetErrors[kind] ?? 0) + 1;
  }
  const errorCount = rows.filter((r) => r.error).length;
  const notes: string[] = [];
  if (errorCount > 0) notes.push(`${errorCount} test(s) had execution errors and are excluded from quality pass_rate`);
  if (Object.keys(targetErrors).length > 0) notes.push('Target runtime errors are reported separately from AgentV orchestrator errors');
  if (rows.length === 0) notes.push('No results to summarize');

  // One sample per row: rows read back from an index hold no trial results of their own.
  const tests = new Map<string, Obj & { samples: Obj[]; status_counts: Record<string, number>; total_samples: number; passed_samples: number }>();
  const samples: Obj[] = [];
  for (const r of rows) {
    const verdict = verdictOf(r);
    const status = str(r.raw.execution_status);
    const before = prevTests.get(keyOf(r));
    const evalPath = str(before?.eval_path);
    const key = keyOf(r);
    const entry = tests.get(key) ?? {
      test_id: r.testId,
      suite: str(r.raw.suite),
      eval_path: evalPath,
      target: r.target,
      variant: r.variant,
      total_samples: 0,
      passed_samples: 0,
      status_counts: {},
      samples: [],
    };
    entry.total_samples += 1;
    if (verdict === 'pass') entry.passed_samples += 1;
    entry.status_counts[status ?? 'unknown'] = (entry.status_counts[status ?? 'unknown'] ?? 0) + 1;
    const sample = defined({
      test_id: r.testId,
      suite: str(r.raw.suite),
      eval_path: evalPath,
      target: r.target,
      variant: r.variant,
      sample_index: 1,
      retry_index: num(obj(r.raw.metadata).retry_index),
      status: verdict === 'pass' ? 'passed' : verdict === 'skip' ? 'skipped' : 'failed',
      score: num(r.raw.score),
      execution_status: status,
      failure_stage: r.raw.failure_stage,
      failure_reason_code: r.raw.failure_reason_code,
      duration_ms: num(r.raw.duration_ms),
      cost_usd: num(r.raw.cost_usd),
    });
    entry.samples.push(sample);
    samples.push(sample);
    tests.set(key, entry);
  }
  const testSummaries = [...tests.values()].map((t) =>
    defined({ ...t, pass_rate: percentage(t.passed_samples, t.total_samples), pass_any: t.passed_samples > 0 }),
  );
  const passedTests = [...tests.values()].filter((t) => t.passed_samples > 0).length;
  const erroredSamples = samples.filter((s) => s.execution_status === 'execution_error').length;
  const failedTests = tests.size - passedTests;
  const infra = new Map<string, number>();
  for (const s of samples) {
    const reason = typeof s.failure_reason_code === 'string' ? s.failure_reason_code : s.execution_status === 'execution_error' ? 'execution_error' : undefined;
    if (reason) infra.set(reason, (infra.get(reason) ?? 0) + 1);
  }

  // Run totals (AgentV's timing artifact), from the rows; where each came from and the trace-only
  // figures are carried.
  let input = 0;
  let output = 0;
  let reasoning = 0;
  let durationMs = 0;
  let cost = 0;
  let hasCost = false;
  for (const r of rows) {
    const u = tokenUsage(r);
    if (u) {
      input += u.input ?? 0;
      output += u.output ?? 0;
      reasoning += u.reasoning ?? 0;
    }
    durationMs += num(r.raw.duration_ms) ?? 0;
    const c = num(r.raw.cost_usd);
    if (c !== undefined) {
      hasCost = true;
      cost += c;
    }
  }
  const prevMetrics = obj(carried((d) => (d.metrics === undefined ? undefined : d.metrics)));
  const first = rows[0]?.raw;
  const metrics = defined({
    ...prevMetrics,
    duration: { total_ms: durationMs, total_seconds: round3(durationMs / 1000), source: obj(prevMetrics.duration).source ?? 'aggregate' },
    tokens: { total: input + output, input, output, reasoning, source: obj(prevMetrics.tokens).source ?? 'unavailable' },
    cost: { usd: hasCost ? cost : null, source: obj(prevMetrics.cost).source ?? 'unavailable' },
    execution: first
      ? defined({ status: first.execution_status, failure_stage: first.failure_stage, failure_reason_code: first.failure_reason_code })
      : undefined,
  });

  const meta = (k: string) => carried((d) => obj(d.metadata)[k]);
  return defined({
    index_path: carried((d) => d.index_path) ?? '.internal/index.jsonl',
    run_id: carried((d) => d.run_id) ?? runId,
    status: {
      passed: { count: passedTests, percentage: percentage(passedTests, tests.size) },
      failed: { count: failedTests, percentage: percentage(failedTests, tests.size) },
      errored: { count: erroredSamples, percentage: percentage(erroredSamples, samples.length) },
      skipped: { count: 0, percentage: 0 },
    },
    counts: { total_tests: tests.size, passed_tests: passedTests, failed_tests: failedTests, total_samples: samples.length, errored_samples: erroredSamples },
    usage: { total_tokens: input + output, input_tokens: input, output_tokens: output, reasoning_tokens: reasoning, cost_usd: hasCost ? cost : null },
    infra_failures: {
      total: [...infra.values()].reduce((s, n) => s + n, 0),
      reasons: [...infra].sort(([a], [b]) => a.localeCompare(b)).map(([reason, count]) => ({ reason, count })),
    },
    tests: testSummaries,
    metadata: defined({
      eval_file: meta('eval_file') ?? '',
      timestamp: str(first?.timestamp) ?? meta('timestamp'),
      targets,
      variants: variants.length > 0 ? variants : undefined,
      tests_run: testIds,
      experiment: meta('experiment'),
      runtime_source: meta('runtime_source'),
      planned_test_count: meta('planned_test_count'),
      tags: meta('tags'),
      environments: meta('environments'),
    }),
    run_summary: runSummary,
    per_grader_summary: perGrader,
    target_error_summary: Object.keys(targetErrors).length > 0 ? targetErrors : undefined,
    metrics,
    notes,
  });
}
