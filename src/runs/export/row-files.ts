/**
 * One normalized row -> its attempt directory (relative path -> bytes) and its index row.
 * Pure. Only files the row has data for are produced ("only what the row carries").
 */
import { createHash } from 'node:crypto';
import type * as z from 'zod';
import { IndexRowSchema, METRICS_SCHEMA_VERSION } from '../../model/artifacts.js';
import { normalizedTranscript } from '../../model/transcript.js';
import { sanitizeSegment } from '../../model/path-segments.js';
import { attemptsOf } from '../../model/attempts.js';
import { round4 } from '../../model/pass-rate.js';
import { agentvGradingDoc, graderPassed, graderReason } from './grading-docs.js';
import { DEFAULT_THRESHOLD, type NormalizedRow } from './normalize.js';

export interface DerivedFile {
  path: string;
  data: string | Buffer;
}

/**
 * The index row before the run id is known (run_id, experiment and projection_identity are added at
 * the end): the published row's own schema minus those, so the two cannot drift apart.
 */
// What readers accept as optional (older rows) the writer always writes: required here.
export const PendingIndexRowSchema = IndexRowSchema.omit({ run_id: true, experiment: true, projection_identity: true, artifact_pointers: true }).required({
  eval_path: true,
  envelope_id: true,
  trace_id: true,
  root_span_id: true,
  token_usage: true,
  total_tool_calls: true,
  errors_encountered: true,
  output_chars: true,
  conversation_id: true,
  error: true,
});
export type PendingIndexRow = z.infer<typeof PendingIndexRowSchema>;

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

/** AgentV's per-test summary.json, for one attempt. */
export function testSummaryDoc(row: NormalizedRow) {
  const ms = row.duration_ms ?? 0;
  // A repeated test counts its attempts (model/attempts.ts), as AgentV's own per-test summary does.
  const a = row.samples ? attemptsOf({ [row.samples.key]: row.samples.list.map((x) => x.fields), aggregation: row.aggregation, score: row.score }) : null;
  const passedSamples = a ? a.passed : row.verdict === 'pass' ? 1 : 0;
  const totalSamples = a ? a.total : 1;
  return {
    total_samples: totalSamples,
    passed_samples: passedSamples,
    pass_rate: `${Math.round((passedSamples / totalSamples) * 100)}%`,
    mean_duration_ms: ms,
    mean_duration_seconds: round4(ms / 1000),
    test_id: row.test_id,
    target: row.target,
    attempt: row.attempt,
    verdict: row.verdict,
    score: row.score,
    execution: { status: row.execution_status },
  };
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

/**
 * metrics.json exactly in AgentV's `agentv.metrics.v2` shape: AgentV's reader is strict (no
 * field beyond its own), so this file carries nothing of ours. Deterministic: `generated_at` is
 * the row's own end time or timestamp (empty when it has neither), `artifact_id` a hash of the
 * row's identity.
 */
export function metricsDoc(row: NormalizedRow) {
  const m = row.metrics;
  const ms = Math.max(0, row.duration_ms ?? 0);
  const unavailable = row.usage.source === 'unavailable';
  const int = (n: number) => Math.max(0, Math.round(n));
  const id = createHash('sha256')
    .update(JSON.stringify([row.suite, row.test_id, row.target, row.source_target, row.attempt, row.variant]))
    .digest('hex')
    .slice(0, 20);
  const doc: Record<string, unknown> = {
    schema_version: METRICS_SCHEMA_VERSION,
    artifact_id: `metrics-${id}`,
    generated_at: row.end_time ?? row.timestamp ?? '',
    test_id: row.test_id,
    target: row.target,
    suite: row.suite,
    source_artifacts: {
      grading_path: 'grading.json',
      ...(row.messages.length > 0 || row.input_messages.length > 0 ? { transcript_path: 'transcript.json' } : {}),
      ...(row.file_changes !== null ? { file_changes_path: 'outputs/file_changes.diff' } : {}),
    },
    tool_calls: m.tool_calls,
    tool_call_counts: m.tool_calls,
    tool_category_counts: {},
    total_tool_calls: int(m.total_tool_calls),
    total_steps: int(m.total_steps),
    total_turns: int(m.total_turns),
    tool_call_events: [],
    shell_commands: [],
    files_read: [],
    files_modified: m.files_modified.map((path) => ({ path, source: 'file_changes' })),
    files_created: m.files_created,
    files_deleted: m.files_deleted,
    web_fetches: [],
    errors: [],
    errors_encountered: int(m.errors_encountered),
    output_chars: int(m.output_chars),
    transcript_chars: int(m.transcript_chars),
    reasoning_blocks: [],
    thinking_blocks: 0,
    duration: { total_ms: ms, total_seconds: round4(ms / 1000), source: row.duration_ms === null ? 'unavailable' : 'provider_reported' },
    tokens: {
      total: int(row.usage.total),
      input: int(row.usage.input),
      output: int(row.usage.output),
      reasoning: 0,
      source: unavailable ? 'unavailable' : 'provider_reported',
    },
    cost: { usd: row.cost_usd === null ? null : Math.max(0, row.cost_usd), source: row.cost_usd === null ? 'unavailable' : 'provider_reported' },
    execution: { status: row.execution_status },
    trajectory: { total_turns: int(m.total_turns), total_tool_calls: int(m.total_tool_calls), tool_calls: m.tool_calls },
  };
  return doc;
}

export interface RowFilesOptions {
  /** The row's original line; written as transcript-raw.jsonl only when raw content is requested. */
  rawLine?: string;
  includeRawContent: boolean;
}

/** Where one attempt's optional files go (null: the row has nothing to put there). */
interface AttemptPaths {
  dir: string;
  transcript: string | null;
  raw: string | null;
  answer: string | null;
  diff: string | null;
  /** The input messages as AgentV writes them (`input.md`, read by its `results show` and Dashboard). */
  input: string | null;
}

function attemptPaths(row: NormalizedRow, opts: RowFilesOptions): AttemptPaths {
  const dir = attemptDir(row);
  const hasTranscript = row.messages.length > 0 || row.input_messages.length > 0;
  return {
    dir,
    transcript: hasTranscript ? `${dir}/transcript.json` : null,
    raw: opts.includeRawContent && opts.rawLine !== undefined ? `${dir}/transcript-raw.jsonl` : null,
    answer: row.answer !== null ? `${dir}/outputs/answer.md` : null,
    diff: row.file_changes !== null ? `${dir}/outputs/file_changes.diff` : null,
    input: row.input_messages.length > 0 ? `${dir}/input.md` : null,
  };
}

/**
 * The input as AgentV's `input.md`: each message as an `@[role]:` line and its text, messages
 * apart by a blank line (the shape AgentV's manifest reader splits back into messages).
 */
export function inputMarkdown(messages: { role: string; content: string }[]): string {
  return messages.map((m) => `@[${m.role}]:\n${m.content}`).join('\n\n');
}

/** The attempt's result.json: its verdict and the names of its sibling files (relative to the attempt). */
function resultDoc(row: NormalizedRow, p: AttemptPaths): Record<string, unknown> {
  return {
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
    summary_path: 'summary.json',
    transcript: p.transcript ? 'transcript.json' : null,
    transcript_raw_path: p.raw ? 'transcript-raw.jsonl' : null,
    output: p.answer ? 'outputs/answer.md' : null,
    file_changes_path: p.diff ? 'outputs/file_changes.diff' : null,
    ...attemptFields(row),
    // The full grader results and expectations (grading.json holds AgentV's verdict tree).
    scores: row.evaluators,
    expectations: row.expectations,
  };
}

function transcriptDoc(row: NormalizedRow): Record<string, unknown> {
  const messages = [...row.input_messages, ...row.messages];
  return normalizedTranscript({
    testId: row.test_id,
    target: row.target,
    messages,
    summary: {
      messages: messages.length,
      turns: row.metrics.total_turns,
      tool_calls: row.metrics.total_tool_calls,
      chars: row.metrics.transcript_chars,
    },
  });
}

/** The run's index.jsonl line for this attempt: what AgentV lists, with paths from the run's root. */
function indexRowOf(row: NormalizedRow, p: AttemptPaths): PendingIndexRow {
  const at = (name: string) => `${p.dir}/${name}`;
  const passed = row.expectations.filter((e) => e.passed).length;
  return {
    test_id: row.test_id,
    suite: row.suite,
    ...(row.category !== null ? { category: row.category } : {}),
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
    output_chars: row.metrics.output_chars,
    conversation_id: row.conversation_id,
    error: row.error,
    assertions_summary: { passed, failed: row.expectations.length - passed, total: row.expectations.length },
    ...indexAttemptFields(row),
    scores: row.evaluators.map((e) => {
      const s: PendingIndexRow['scores'][number] = {
        name: e.name,
        type: e.type,
        score: e.score,
        pass: graderPassed(e, DEFAULT_THRESHOLD),
        reason: graderReason(e),
      };
      if (e.weight !== undefined) s.weight = e.weight;
      if (e.verdict !== undefined) s.verdict = e.verdict;
      return s;
    }),
    result_dir: p.dir,
    summary_path: at('summary.json'),
    result_path: at('result.json'),
    grading_path: at('grading.json'),
    metrics_path: at('metrics.json'),
    timing_path: at('timing.json'),
    transcript_path: p.transcript,
    transcript_raw_path: p.raw,
    answer_path: p.answer,
    file_changes_path: p.diff,
    // AgentV's names for the files its readers open: the input, and the answer as `output_path`.
    ...(p.input ? { input_path: p.input } : {}),
    ...(p.answer ? { output_path: p.answer } : {}),
    ...attemptFields(row),
  };
}

/** AgentV's folder of the attempt at `position` (its `sample-K/`, K from 1). */
function sampleDir(position: number): string {
  return `sample-${position + 1}`;
}

/**
 * A repeated row's attempts under the key they came with, every field kept, each pointing at its
 * own folder (`sample_path`, relative to the row's directory as AgentV 5 writes it) when it has an
 * answer or transcript there; and the aggregation as written. Nothing for a row that ran once.
 */
function attemptFields(row: NormalizedRow): Record<string, unknown> {
  if (!row.samples) return {};
  const list = row.samples.list.map((a, i) => ({ ...a.fields, sample_path: sampleDir(i) }));
  return { [row.samples.key]: list, ...(row.aggregation ? { aggregation: row.aggregation } : {}) };
}

/**
 * A repeated row's attempts in its index line, as AgentV 5 keeps them there (every attempt, its
 * answer and transcript left in its own folder, and the aggregation): the light rows that the
 * gate's history and `flaky` count attempts from. Nothing for a row that ran once.
 */
function indexAttemptFields(row: NormalizedRow): Record<string, unknown> {
  if (!row.samples) return {};
  return { [row.samples.key]: row.samples.list.map((a) => a.fields), ...(row.aggregation ? { aggregation: row.aggregation } : {}) };
}

/**
 * Each repeated attempt's folder under the row's (`sample-K/`, as AgentV 5 lays them out): its
 * `result.json` (the attempt as written) and `grading.json` (an AgentV grading node of its verdict
 * and score), which AgentV's `results validate` requires of every sample, and its answer and
 * transcript when it has them.
 */
function attemptFiles(row: NormalizedRow, dir: string): DerivedFile[] {
  const files: DerivedFile[] = [];
  const parsed = row.samples ? attemptsOf({ [row.samples.key]: row.samples.list.map((x) => x.fields), aggregation: row.aggregation, score: row.score }) : null;
  row.samples?.list.forEach((a, i) => {
    const at = `${dir}/${sampleDir(i)}`;
    if (a.messages.length > 0) {
      const doc = normalizedTranscript({
        testId: row.test_id,
        target: row.target,
        messages: a.messages,
        summary: {
          messages: a.messages.length,
          turns: a.messages.filter((m) => m.role === 'user').length,
          tool_calls: 0,
          chars: a.messages.reduce((n, m) => n + m.content.length, 0),
        },
      });
      files.push({ path: `${at}/transcript.json`, data: json(doc) });
    }
    if (a.answer !== null) files.push({ path: `${at}/outputs/answer.md`, data: a.answer });
    const one = parsed?.attempts[i];
    files.push({ path: `${at}/result.json`, data: json({ ...a.fields, test_id: row.test_id, target: row.target, sample_path: sampleDir(i) }) });
    const pass = one?.verdict === 'pass';
    const score = one?.score ?? (pass ? 1 : 0);
    files.push({
      path: `${at}/grading.json`,
      data: json({ pass, score, reason: `attempt ${i + 1} of ${row.samples!.list.length}: ${one?.verdict ?? 'fail'}${one?.error ? ` (${one.error})` : ''}` }),
    });
  });
  return files;
}

export function deriveRowFiles(row: NormalizedRow, opts: RowFilesOptions): { dir: string; files: DerivedFile[]; index: PendingIndexRow } {
  const p = attemptPaths(row, opts);
  const at = (name: string) => `${p.dir}/${name}`;
  const files: DerivedFile[] = [
    { path: at('result.json'), data: json(resultDoc(row, p)) },
    { path: at('grading.json'), data: json(agentvGradingDoc(row)) },
    { path: at('summary.json'), data: json(testSummaryDoc(row)) },
    { path: at('metrics.json'), data: json(metricsDoc(row)) },
    { path: at('timing.json'), data: json(attemptTimingDoc(row)) },
  ];
  if (p.transcript) files.push({ path: p.transcript, data: json(transcriptDoc(row)) });
  if (p.raw) files.push({ path: p.raw, data: opts.rawLine!.endsWith('\n') ? opts.rawLine! : opts.rawLine + '\n' });
  if (p.answer) files.push({ path: p.answer, data: row.answer! });
  if (p.diff) files.push({ path: p.diff, data: row.file_changes! });
  if (p.input) files.push({ path: p.input, data: inputMarkdown(row.input_messages) });
  files.push(...attemptFiles(row, p.dir));
  return { dir: p.dir, files, index: indexRowOf(row, p) };
}
