/**
 * The one home for a result row's attempts: how many times AgentV ran the test, what each attempt
 * scored, and the verdict AgentV gives the test for its aggregation strategy.
 *
 * AgentV repeats a test when its eval asks for it and writes every attempt into the test's row:
 * - 5.x (`evaluate_options: {repeat: N}`): `samples: [{sample, sample_index, sample_path, score,
 *   status: passed | failed | skipped, execution_status, error, ...}]` and
 *   `aggregation: {strategy: pass_any, passed_samples, total_samples, pass_rate}` (every 5.x row
 *   carries `samples`, one entry when the test ran once, and no `aggregation` then);
 * - 4.42 (`execution.trials: {count, strategy: pass_at_k | mean | confidence_interval}`) and older
 *   writers: `trials` or `attempts: [{attempt, score, verdict, execution_status, ...}]` with
 *   `aggregation: {strategy, passed_attempts, total_attempts}` (or `mean`/`ci95_lower` for the
 *   score strategies).
 * In both lines the row's `score` is the aggregate (the best attempt's for pass_any/pass_at_k, the
 * mean for `mean`, the interval's lower bound for 4.42's `confidence_interval`), and the test
 * passes when any attempt ran clean and passed (the aggregate's execution status is `ok` when one
 * attempt's is: 5.x orchestrator, 4.42 the same), except `pass_all`, which needs every attempt.
 *
 * Pure: no I/O, no Node imports (the Dashboard's browser script may use it).
 */
import { objectArg } from './number-args.js';

/** The verdict of one attempt, or of a test over its attempts. */
export type AttemptVerdict = 'pass' | 'fail' | 'error';

/** One attempt of a test, in the order AgentV ran them. */
export interface Attempt {
  /** 0-based position (AgentV 5.x's `sample` is 1-based: `sample - 1`; 4.42's `attempt` is 0-based). */
  index: number;
  verdict: AttemptVerdict;
  score: number | null;
  /** AgentV's execution status of the attempt (`ok`, `quality_failure`, `execution_error`), when written. */
  execution_status: string | null;
  error: string | null;
  /** The attempt's folder relative to the test's result directory (5.x `sample_path`, e.g. `sample-2`), when written. */
  path: string | null;
  cost_usd: number | null;
}

export interface Attempts {
  /** Attempts that passed. */
  passed: number;
  /** Attempts run (>= 1). */
  total: number;
  /** AgentV's aggregation strategy (5.x `pass_any`, 4.42 `pass_at_k` | `mean` | `confidence_interval`); null when the row has no repeats. */
  strategy: string | null;
  /** In order; a row without repeats is one attempt built from the row itself. */
  attempts: Attempt[];
  /** The test's verdict as AgentV gives it for the strategy. */
  verdict: AttemptVerdict;
  /** The test's score as AgentV wrote it (the aggregate for the strategy); null when the row has no numeric score. */
  score: number | null;
}

/** AgentV's pass threshold for a score with no verdict beside it. */
export const ATTEMPT_PASS_THRESHOLD = 0.8;

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

function field(o: Obj, snake: string, camel: string): unknown {
  return o[snake] !== undefined ? o[snake] : o[camel];
}

/** The list of attempts a row carries, whichever writer wrote it; null when none. */
export function attemptList(row: Obj): unknown[] | null {
  for (const key of ['samples', 'trials', 'attempts']) {
    const v = row[key];
    if (Array.isArray(v) && v.length > 0) return v;
  }
  return null;
}

/** One item's verdict: an execution error first, then a written verdict or status, then the score. */
function verdictOf(o: Obj): AttemptVerdict {
  const exec = str(field(o, 'execution_status', 'executionStatus'));
  if (exec === 'execution_error') return 'error';
  const v = str(o.verdict) ?? str(o.status);
  if (v === 'pass' || v === 'passed') return 'pass';
  if (v === 'fail' || v === 'failed' || v === 'skip' || v === 'skipped') return 'fail';
  if (v === 'error') return 'error';
  if (exec === 'ok') return 'pass';
  if (exec === 'quality_failure') return 'fail';
  if (str(o.error) !== null) return 'error';
  const score = num(o.score);
  return score !== null && score >= ATTEMPT_PASS_THRESHOLD ? 'pass' : 'fail';
}

function attemptOf(item: unknown, position: number): Attempt {
  const o = isObj(item) ? item : {};
  const sample = num(o.sample);
  const attempt = num(o.attempt);
  const sampleIndex = num(field(o, 'sample_index', 'sampleIndex'));
  const index =
    attempt !== null && Number.isInteger(attempt) && attempt >= 0
      ? attempt
      : sample !== null && Number.isInteger(sample) && sample >= 1
        ? sample - 1
        : sampleIndex !== null && Number.isInteger(sampleIndex) && sampleIndex >= 0
          ? sampleIndex
          : position;
  return {
    index,
    verdict: verdictOf(o),
    score: num(o.score),
    execution_status: str(field(o, 'execution_status', 'executionStatus')),
    error: str(o.error),
    path: str(field(o, 'sample_path', 'samplePath')),
    cost_usd: num(field(o, 'cost_usd', 'costUsd')),
  };
}

/** The test's verdict for its strategy, as AgentV gives it. */
function aggregateVerdict(strategy: string | null, attempts: Attempt[], row: Obj): AttemptVerdict {
  if (strategy === null) return attempts.length === 1 ? verdictOf(row) : anyPass(attempts);
  if (strategy === 'pass_all') {
    if (attempts.every((a) => a.verdict === 'error')) return 'error';
    return attempts.every((a) => a.verdict === 'pass') ? 'pass' : 'fail';
  }
  return anyPass(attempts);
}

function anyPass(attempts: Attempt[]): AttemptVerdict {
  if (attempts.some((a) => a.verdict === 'pass')) return 'pass';
  if (attempts.length > 0 && attempts.every((a) => a.verdict === 'error')) return 'error';
  return 'fail';
}

/** AgentV's attempts of one result row, as AgentV reads them (5.x `samples` + `aggregation`; 4.42 `trials`). */
export function attemptsOf(row: Record<string, unknown>): Attempts {
  objectArg('attemptsOf', 'row', row);
  const list = attemptList(row);
  const aggregation = isObj(row.aggregation) ? row.aggregation : null;
  const strategy = aggregation ? str(aggregation.strategy) : null;
  const attempts = list ? list.map(attemptOf) : [];
  if (attempts.length === 0) {
    const self = attemptOf(row, 0);
    attempts.push({ ...self, index: 0, path: null });
  }
  const passed = attempts.filter((a) => a.verdict === 'pass').length;
  // Repeats without a written strategy are AgentV's default, pass_any.
  const effective = strategy ?? (attempts.length > 1 ? 'pass_any' : null);
  return {
    passed,
    total: attempts.length,
    strategy: effective,
    attempts,
    verdict: aggregateVerdict(effective, attempts, row),
    score: num(row.score),
  };
}

/** True when the row was repeated (more than one attempt, or an aggregation strategy written). */
export function hasRepeats(a: Attempts): boolean {
  return a.total > 1 || a.strategy !== null;
}
