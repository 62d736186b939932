/**
 * One normalized row -> its attempt directory (relative path -> bytes) and its index row.
 * Pure. Only files the row has data for are produced ("only what the row carries").
 */
import { METRICS_SCHEMA_VERSION, TRANSCRIPT_SCHEMA_VERSION } from '../model/artifacts.js';
import { sanitizeSegment } from '../model/paths.js';
import type { NormalizedRow } from './normalize.js';

export interface DerivedFile {
  path: string;
  data: string | Buffer;
}

/** The index row before the run id is known (run_id and projection_identity are added at the end). */
export interface PendingIndexRow {
  test_id: string;
  suite: string;
  eval_path: string | null;
  target: string;
  source_target: string;
  attempt: number;
  variant: string | null;
  envelope_id: string | null;
  trace_id: string | null;
  root_span_id: string | null;
  timestamp: string | null;
  score: number;
  verdict: 'pass' | 'fail' | 'error';
  execution_status: string;
  duration_ms: number | null;
  total_tokens: number | null;
  token_usage: { input: number; output: number; cached: number } | null;
  cost_usd: number | null;
  total_tool_calls: number;
  errors_encountered: number;
  conversation_id: string | null;
  error: string | null;
  assertions_summary: { passed: number; failed: number; total: number };
  scores: { name: string; type: string; score: number; weight?: number; verdict?: string }[];
  result_dir: string;
  result_path: string;
  grading_path: string;
  metrics_path: string;
  timing_path: string;
  transcript_path: string | null;
  transcript_raw_path: string | null;
  answer_path: string | null;
  file_changes_path: string | null;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/** `<suite>/<test_id>/<target>/attempt-<n>[-v<variant>][-from-<source>]`, every segment sanitized. */
export function attemptDir(row: NormalizedRow): string {
  let leaf = `attempt-${row.attempt}`;
  if (row.variant !== null) leaf += `-v${row.variant}`;
  if (row.source_target !== row.target) leaf += `-from-${row.source_target}`;
  return [row.suite, row.test_id, row.target, leaf].map(sanitizeSegment).join('/');
}

export function gradingDoc(row: NormalizedRow) {
  const passed = row.expectations.filter((e) => e.passed).length;
  const total = row.expectations.length;
  const doc: Record<string, unknown> = {
    expectations: row.expectations,
    assertions: row.expectations,
    summary: { passed, failed: total - passed, total, pass_rate: total === 0 ? 0 : round4(passed / total) },
    execution_metrics: {
      tool_calls: row.metrics.tool_calls,
      total_tool_calls: row.metrics.total_tool_calls,
      total_steps: row.metrics.total_steps,
      errors_encountered: row.metrics.errors_encountered,
      output_chars: row.metrics.output_chars,
      transcript_chars: row.metrics.transcript_chars,
    },
    evaluators: row.evaluators,
  };
  if (row.file_changes !== null) {
    const m = row.metrics;
    const parts = [
      m.files_modified.length ? `modified ${m.files_modified.join(', ')}` : '',
      m.files_created.length ? `created ${m.files_created.join(', ')}` : '',
      m.files_deleted.length ? `deleted ${m.files_deleted.join(', ')}` : '',
    ].filter(Boolean);
    doc.workspace_changes = {
      files_modified: m.files_modified.length,
      files_created: m.files_created.length,
      files_deleted: m.files_deleted.length,
      diff_summary: parts.join('; '),
    };
  }
  if (row.conversation_id !== null || row.input_messages.length > 1) {
    doc.conversation = { turns: row.metrics.total_turns, conversation_id: row.conversation_id };
  }
  return doc;
}

export function attemptTimingDoc(row: NormalizedRow) {
  const duration = row.duration_ms ?? 0;
  return {
    total_tokens: row.usage.total,
    duration_ms: duration,
    total_duration_seconds: round4(duration / 1000),
    token_usage: { input: row.usage.input, output: row.usage.output, cached: row.usage.cached },
    cost_usd: row.cost_usd,
    usage_source: row.usage.source,
    executor_start: row.start_time,
    executor_end: row.end_time,
  };
}

export function metricsDoc(row: NormalizedRow) {
  const m = row.metrics;
  return {
    schema_version: METRICS_SCHEMA_VERSION,
    tool_calls: m.tool_calls,
    total_tool_calls: m.total_tool_calls,
    total_steps: m.total_steps,
    errors_encountered: m.errors_encountered,
    output_chars: m.output_chars,
    transcript_chars: m.transcript_chars,
    files_created: m.files_created,
    files_deleted: m.files_deleted,
    files_modified: m.files_modified,
    tool_call_counts: m.tool_calls,
    total_turns: m.total_turns,
    errors: m.errors_encountered,
  };
}

export function round4(n: number): number {
  return Math.round(n * 10000) / 10000;
}

export interface RowFilesOptions {
  /** The row's original line; written as transcript-raw.jsonl only when raw content is requested. */
  rawLine?: string;
  includeRawContent: boolean;
}

export function deriveRowFiles(row: NormalizedRow, opts: RowFilesOptions): { dir: string; files: DerivedFile[]; index: PendingIndexRow } {
  const dir = attemptDir(row);
  const at = (name: string) => `${dir}/${name}`;
  const files: DerivedFile[] = [];

  const hasTranscript = row.messages.length > 0 || row.input_messages.length > 0;
  const transcriptPath = hasTranscript ? at('transcript.json') : null;
  const rawPath = opts.includeRawContent && opts.rawLine !== undefined ? at('transcript-raw.jsonl') : null;
  const answerPath = row.answer !== null ? at('outputs/answer.md') : null;
  const diffPath = row.file_changes !== null ? at('outputs/file_changes.diff') : null;

  const result = {
    test_id: row.test_id,
    suite: row.suite,
    target: row.target,
    source_target: row.source_target,
    attempt: row.attempt,
    variant: row.variant,
    score: row.score,
    verdict: row.verdict,
    execution_status: row.execution_status,
    timestamp: row.timestamp,
    error: row.error,
    conversation_id: row.conversation_id,
    grading_path: 'grading.json',
    metrics_path: 'metrics.json',
    timing_path: 'timing.json',
    transcript: transcriptPath ? 'transcript.json' : null,
    transcript_raw_path: rawPath ? 'transcript-raw.jsonl' : null,
    output: answerPath ? 'outputs/answer.md' : null,
    file_changes_path: diffPath ? 'outputs/file_changes.diff' : null,
    attempts: row.attempts,
    aggregation: row.aggregation,
  };
  files.push({ path: at('result.json'), data: json(result) });
  files.push({ path: at('grading.json'), data: json(gradingDoc(row)) });
  files.push({ path: at('metrics.json'), data: json(metricsDoc(row)) });
  files.push({ path: at('timing.json'), data: json(attemptTimingDoc(row)) });
  if (transcriptPath) {
    const messages = [...row.input_messages, ...row.messages];
    files.push({
      path: transcriptPath,
      data: json({
        schema_version: TRANSCRIPT_SCHEMA_VERSION,
        messages,
        transcript_summary: {
          messages: messages.length,
          turns: row.metrics.total_turns,
          tool_calls: row.metrics.total_tool_calls,
          chars: row.metrics.transcript_chars,
        },
      }),
    });
  }
  if (rawPath) files.push({ path: rawPath, data: opts.rawLine!.endsWith('\n') ? opts.rawLine! : opts.rawLine + '\n' });
  if (answerPath) files.push({ path: answerPath, data: row.answer! });
  if (diffPath) files.push({ path: diffPath, data: row.file_changes! });

  const passed = row.expectations.filter((e) => e.passed).length;
  const index: PendingIndexRow = {
    test_id: row.test_id,
    suite: row.suite,
    eval_path: row.eval_path,
    target: row.target,
    source_target: row.source_target,
    attempt: row.attempt,
    variant: row.variant,
    envelope_id: row.envelope_id,
    trace_id: row.trace_id,
    root_span_id: row.root_span_id,
    timestamp: row.timestamp,
    score: row.score,
    verdict: row.verdict,
    execution_status: row.execution_status,
    duration_ms: row.duration_ms,
    total_tokens: row.usage.source === 'unavailable' ? null : row.usage.total,
    token_usage: row.usage.source === 'unavailable' ? null : { input: row.usage.input, output: row.usage.output, cached: row.usage.cached },
    cost_usd: row.cost_usd,
    total_tool_calls: row.metrics.total_tool_calls,
    errors_encountered: row.metrics.errors_encountered,
    conversation_id: row.conversation_id,
    error: row.error,
    assertions_summary: { passed, failed: row.expectations.length - passed, total: row.expectations.length },
    scores: row.evaluators.map((e) => {
      const s: PendingIndexRow['scores'][number] = { name: e.name, type: e.type, score: e.score };
      if (e.weight !== undefined) s.weight = e.weight;
      if (e.verdict !== undefined) s.verdict = e.verdict;
      return s;
    }),
    result_dir: dir,
    result_path: at('result.json'),
    grading_path: at('grading.json'),
    metrics_path: at('metrics.json'),
    timing_path: at('timing.json'),
    transcript_path: transcriptPath,
    transcript_raw_path: rawPath,
    answer_path: answerPath,
    file_changes_path: diffPath,
  };
  return { dir, files, index };
}
