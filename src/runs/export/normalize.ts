/**
 * One input row -> the facts every artifact is built from. Pure; no I/O.
 *
 * Defaults follow AgentV's results docs: attempt 0, variant null, source_target = target. Expectations follow
 * the companion-artifacts spec: row assertions first, else grader assertions and hits/misses with the grader's
 * reasoning as evidence, else one expectation per grader.
 */
import type { Assertion, EvaluatorResult, InputRow, Message } from '../../model/input-row.js';
import { ATTEMPT_PASS_THRESHOLD, attemptsOf, hasRepeats } from '../../model/attempts.js';

/** AgentV's pass threshold (model/attempts.ts holds the number): `--threshold`'s default. */
export const DEFAULT_THRESHOLD = ATTEMPT_PASS_THRESHOLD;

export interface Expectation {
  text: string;
  passed: boolean;
  evidence: string;
}

export interface ToolCall {
  tool_name: string;
  input?: unknown;
  output?: unknown;
  duration_ms?: number;
}

export interface TranscriptMessage {
  role: string;
  content: string;
  tool_calls: ToolCall[];
}

export interface Usage {
  input: number;
  output: number;
  cached: number;
  total: number;
  source: 'provider_reported' | 'unavailable';
}

export interface RowMetrics {
  tool_calls: Record<string, number>;
  total_tool_calls: number;
  total_steps: number;
  errors_encountered: number;
  output_chars: number;
  transcript_chars: number;
  files_created: string[];
  files_deleted: string[];
  files_modified: string[];
  total_turns: number;
}

export interface NormalizedRow {
  test_id: string;
  suite: string;
  /** AgentV's category of the test, when the source row has one. */
  category: string | null;
  eval_path: string | null;
  target: string;
  source_target: string;
  attempt: number;
  variant: string | null;
  envelope_id: string | null;
  trace_id: string | null;
  root_span_id: string | null;
  conversation_id: string | null;
  timestamp: string | null;
  score: number;
  verdict: 'pass' | 'fail' | 'error';
  execution_status: string;
  error: string | null;
  expectations: Expectation[];
  evaluators: EvaluatorResult[];
  input_messages: TranscriptMessage[];
  messages: TranscriptMessage[];
  answer: string | null;
  file_changes: string | null;
  usage: Usage;
  cost_usd: number | null;
  duration_ms: number | null;
  start_time: string | null;
  end_time: string | null;
  metrics: RowMetrics;
  /**
   * The row's repeated attempts as written, under the key they came with (AgentV 5 `samples`, 4.42
   * `trials`, older `attempts`): every field kept, each attempt's own answer and transcript pulled
   * out (`messages`, `answer`) for the files the bundle writes beside the row. Null when the row ran once.
   */
  samples: { key: 'samples' | 'trials' | 'attempts'; list: AttemptEntry[] } | null;
  aggregation: Record<string, unknown> | null;
}

/** One repeated attempt: what the source wrote (minus its answer), and its answer and transcript. */
export interface AttemptEntry {
  fields: Record<string, unknown>;
  messages: TranscriptMessage[];
  answer: string | null;
}

function contentToText(content: unknown): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block) => {
        if (typeof block === 'string') return block;
        if (block && typeof block === 'object' && typeof (block as { text?: unknown }).text === 'string') {
          return (block as { text: string }).text;
        }
        return JSON.stringify(block);
      })
      .join('\n');
  }
  return JSON.stringify(content);
}

function toMessages(value: string | Message[] | undefined, role: string): TranscriptMessage[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [{ role, content: value, tool_calls: [] }];
  return value.map((m) => ({
    role: m.role,
    content: contentToText(m.content),
    tool_calls: (m.tool_calls ?? []).map((c) => {
      const call: ToolCall = { tool_name: c.tool_name ?? c.tool ?? c.name ?? 'unknown' };
      if (c.input !== undefined) call.input = c.input;
      if (c.output !== undefined) call.output = c.output;
      if (c.duration_ms !== undefined) call.duration_ms = c.duration_ms;
      return call;
    }),
  }));
}

function finalAnswer(row: InputRow, messages: TranscriptMessage[]): string | null {
  if (typeof row.output === 'string') return row.output;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.content.length > 0) return m.content;
  }
  return row.answer ?? null;
}

function flattenEvaluators(scores: EvaluatorResult[]): EvaluatorResult[] {
  const out: EvaluatorResult[] = [];
  for (const s of scores) {
    out.push(s);
    if (s.scores && s.scores.length > 0) out.push(...flattenEvaluators(s.scores));
  }
  return out;
}

function evaluatorPassed(e: EvaluatorResult, threshold: number): boolean {
  if (e.verdict === 'pass') return true;
  if (e.verdict === 'fail') return false;
  // AgentV 5 graders say it themselves.
  if (typeof e.pass === 'boolean') return e.pass;
  return e.score >= threshold;
}

export function deriveExpectations(row: InputRow, threshold: number): Expectation[] {
  const evaluators = flattenEvaluators(row.scores ?? []);
  const reasoningByText = new Map<string, string>();
  for (const e of evaluators) {
    for (const a of e.assertions ?? []) {
      if (a.evidence && !reasoningByText.has(a.text)) reasoningByText.set(a.text, a.evidence);
    }
  }
  const fromAssertion = (a: Assertion): Expectation => ({
    text: a.text,
    passed: a.passed,
    evidence: a.evidence ?? reasoningByText.get(a.text) ?? '',
  });
  if (row.assertions && row.assertions.length > 0) return row.assertions.map(fromAssertion);

  const out: Expectation[] = [];
  for (const e of evaluators) {
    // Composite graders carry their children's results; counting both would double count.
    if (e.scores && e.scores.length > 0) continue;
    const reasoning = e.reasoning ?? (typeof e.reason === 'string' ? e.reason : '');
    const before = out.length;
    for (const a of e.assertions ?? []) out.push({ text: a.text, passed: a.passed, evidence: a.evidence ?? reasoning });
    for (const hit of e.hits ?? []) out.push({ text: hit, passed: true, evidence: reasoning });
    for (const miss of e.misses ?? []) out.push({ text: miss, passed: false, evidence: reasoning });
    if (out.length === before) {
      out.push({ text: e.name, passed: evaluatorPassed(e, threshold), evidence: reasoning || `${e.type} scored ${e.score}` });
    }
  }
  if (out.length > 0) return out;
  return [
    {
      text: `score ${row.score} meets threshold ${threshold}`,
      passed: row.score >= threshold,
      evidence: 'derived from the row score: the row carried no assertions or graders',
    },
  ];
}

function usageOf(row: InputRow): Usage {
  const u = row.token_usage ?? row.trace?.token_usage;
  if (!u) return { input: 0, output: 0, cached: 0, total: 0, source: 'unavailable' };
  const input = u.input ?? u.prompt_tokens ?? 0;
  const output = u.output ?? u.completion_tokens ?? 0;
  const cached = u.cached ?? 0;
  const total = u.total_tokens ?? u.total ?? input + output;
  return { input, output, cached, total, source: 'provider_reported' };
}

function durationOf(row: InputRow): number | null {
  if (row.duration_ms !== undefined) return row.duration_ms;
  if (row.trace?.duration_ms !== undefined) return row.trace.duration_ms;
  if (row.start_time && row.end_time) {
    const ms = Date.parse(row.end_time) - Date.parse(row.start_time);
    if (Number.isFinite(ms) && ms >= 0) return ms;
  }
  return null;
}

/** Files touched by a unified diff, from its `---`/`+++` headers. */
export function diffFiles(diff: string): { created: string[]; deleted: string[]; modified: string[] } {
  const created: string[] = [];
  const deleted: string[] = [];
  const modified: string[] = [];
  const lines = diff.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    const minus = lines[i]!;
    const plus = lines[i + 1]!;
    if (!minus.startsWith('--- ') || !plus.startsWith('+++ ')) continue;
    const from = minus.slice(4).trim().replace(/^a\//, '');
    const to = plus.slice(4).trim().replace(/^b\//, '');
    if (from === '/dev/null') created.push(to);
    else if (to === '/dev/null') deleted.push(from);
    else modified.push(to);
    i++;
  }
  return { created, deleted, modified };
}

function metricsOf(row: InputRow, messages: TranscriptMessage[], inputMessages: TranscriptMessage[], answer: string | null): RowMetrics {
  const toolCalls: Record<string, number> = {};
  let total = 0;
  for (const m of messages) {
    for (const c of m.tool_calls) {
      toolCalls[c.tool_name] = (toolCalls[c.tool_name] ?? 0) + 1;
      total++;
    }
  }
  if (total === 0 && row.trace?.tool_calls_by_name) {
    for (const [name, n] of Object.entries(row.trace.tool_calls_by_name)) {
      toolCalls[name] = n;
      total += n;
    }
  }
  const files = row.file_changes ? diffFiles(row.file_changes) : { created: [], deleted: [], modified: [] };
  const transcriptChars = [...inputMessages, ...messages].reduce((n, m) => n + m.content.length, 0);
  const assistantSteps = messages.filter((m) => m.role === 'assistant').length;
  return {
    tool_calls: toolCalls,
    total_tool_calls: total,
    total_steps: assistantSteps || row.trace?.llm_call_count || 0,
    errors_encountered: row.trace?.error_count ?? (row.execution_status === 'execution_error' ? 1 : 0),
    output_chars: answer?.length ?? 0,
    transcript_chars: transcriptChars,
    files_created: files.created,
    files_deleted: files.deleted,
    files_modified: files.modified,
    total_turns: inputMessages.filter((m) => m.role === 'user').length + messages.filter((m) => m.role === 'user').length || (messages.length > 0 ? 1 : 0),
  };
}

function samplesOf(row: InputRow): NormalizedRow['samples'] {
  const raw = row as Record<string, unknown>;
  const key = (['samples', 'trials', 'attempts'] as const).find((k) => Array.isArray(raw[k]) && (raw[k] as unknown[]).length > 0);
  if (!key) return null;
  const list = raw[key] as unknown[];
  if (list.length < 2 && !(raw.aggregation && typeof raw.aggregation === 'object')) return null;
  return {
    key,
    list: list.map((item) => {
      const fields: Record<string, unknown> =
        item && typeof item === 'object' && !Array.isArray(item) ? { ...(item as Record<string, unknown>) } : { value: item };
      const output = fields.output as string | Message[] | undefined;
      delete fields.output;
      const messages = typeof output === 'string' || Array.isArray(output) ? toMessages(output as string | Message[], 'assistant') : [];
      let answer: string | null = typeof fields.answer === 'string' ? fields.answer : null;
      delete fields.answer;
      for (let i = messages.length - 1; answer === null && i >= 0; i--) {
        const m = messages[i]!;
        if (m.role === 'assistant' && m.content.length > 0) answer = m.content;
      }
      return { fields, messages, answer };
    }),
  };
}

function verdictOf(row: InputRow, threshold: number): 'pass' | 'fail' | 'error' {
  // A repeated test's verdict is AgentV's for its strategy (model/attempts.ts), not one attempt's.
  const attempts = attemptsOf(row as Record<string, unknown>);
  if (hasRepeats(attempts)) return attempts.verdict;
  if (row.execution_status === 'execution_error' || (row.error && row.execution_status !== 'ok')) return 'error';
  if (row.verdict === 'pass' || row.verdict === 'fail') return row.verdict;
  return row.score >= threshold ? 'pass' : 'fail';
}

function suiteOf(row: InputRow): string {
  if (row.suite) return row.suite;
  if (row.eval_set) return row.eval_set;
  if (row.eval_path) {
    const base = row.eval_path.split(/[\\/]/).pop() ?? row.eval_path;
    return base.replace(/\.(eval\.)?(ya?ml|json)$/i, '') || 'default';
  }
  return 'default';
}

export function normalizeRow(row: InputRow, threshold = DEFAULT_THRESHOLD): NormalizedRow {
  const target = row.target && row.target.length > 0 ? row.target : 'default';
  const inputMessages = toMessages(row.input, 'user');
  const messages = toMessages(row.output, 'assistant');
  if (messages.length === 0 && row.answer !== undefined) messages.push({ role: 'assistant', content: row.answer, tool_calls: [] });
  const answer = finalAnswer(row, messages);
  const verdict = verdictOf(row, threshold);
  return {
    test_id: row.test_id,
    suite: suiteOf(row),
    category: row.category ?? null,
    eval_path: row.eval_path ?? null,
    target,
    source_target: row.source_target ?? target,
    attempt: row.attempt ?? 0,
    variant: row.variant === undefined || row.variant === null ? null : String(row.variant),
    envelope_id: row.envelope_id ?? null,
    trace_id: row.trace_id ?? null,
    root_span_id: row.root_span_id ?? null,
    conversation_id: row.conversation_id ?? null,
    timestamp: row.timestamp ?? null,
    score: row.score,
    verdict,
    execution_status: row.execution_status ?? (verdict === 'error' ? 'execution_error' : verdict === 'pass' ? 'ok' : 'quality_failure'),
    error: row.error ?? null,
    expectations: deriveExpectations(row, threshold),
    evaluators: row.scores ?? [],
    input_messages: inputMessages,
    messages,
    answer,
    file_changes: row.file_changes ?? null,
    usage: usageOf(row),
    cost_usd: row.cost_usd ?? row.trace?.cost_usd ?? null,
    duration_ms: durationOf(row),
    start_time: row.start_time ?? null,
    end_time: row.end_time ?? null,
    metrics: metricsOf(row, messages, inputMessages, answer),
    samples: samplesOf(row),
    aggregation: row.aggregation ?? null,
  };
}
