/**
 * The AgentV result row as it arrives on disk.
 *
 * Real files are not uniform: older writers use camelCase (`testId`, `durationMs`, `tokenUsage`,
 * `costUsd`, `executionStatus`), `output` may be a string or a message list, `scores[]` nest
 * (assert-set graders carry their own `scores[]`), and trace summaries come in both spellings.
 * The schema here is deliberately lenient about shape and strict only about what every later
 * step depends on: a usable `test_id` and a numeric `score`.
 */
import * as z from 'zod';
import { isJsonObject } from './json-object.js';

export const AssertionSchema = z.looseObject({
  text: z.string(),
  passed: z.boolean(),
  evidence: z.string().optional(),
});
export type Assertion = z.infer<typeof AssertionSchema>;

export interface EvaluatorResult {
  name: string;
  type: string;
  score: number;
  weight?: number;
  verdict?: string;
  reasoning?: string;
  assertions?: Assertion[];
  hits?: string[];
  misses?: string[];
  details?: unknown;
  scores?: EvaluatorResult[];
  [extra: string]: unknown;
}

export const EvaluatorResultSchema: z.ZodType<EvaluatorResult> = z.lazy(() =>
  z.looseObject({
    name: z.string().default('unnamed'),
    type: z.string().default('unknown'),
    score: z.number(),
    weight: z.number().optional(),
    verdict: z.string().optional(),
    reasoning: z.string().optional(),
    assertions: z.array(AssertionSchema).optional(),
    hits: z.array(z.string()).optional(),
    misses: z.array(z.string()).optional(),
    details: z.unknown().optional(),
    scores: z.array(EvaluatorResultSchema).optional(),
  }),
) as z.ZodType<EvaluatorResult>;

export const ToolCallSchema = z.looseObject({
  tool: z.string().optional(),
  tool_name: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  duration_ms: z.number().optional(),
});

export const MessageSchema = z.looseObject({
  role: z.string().default('assistant'),
  content: z.unknown().optional(),
  tool_calls: z.array(ToolCallSchema).optional(),
  duration_ms: z.number().optional(),
  token_usage: z.record(z.string(), z.unknown()).optional(),
});
export type Message = z.infer<typeof MessageSchema>;

export const TokenUsageSchema = z.looseObject({
  input: z.number().optional(),
  output: z.number().optional(),
  cached: z.number().optional(),
  total: z.number().optional(),
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
  total_tokens: z.number().optional(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

export const TraceSummarySchema = z.looseObject({
  event_count: z.number().optional(),
  tool_names: z.array(z.string()).optional(),
  tool_calls_by_name: z.record(z.string(), z.number()).optional(),
  error_count: z.number().optional(),
  token_usage: TokenUsageSchema.optional(),
  cost_usd: z.number().optional(),
  duration_ms: z.number().optional(),
  llm_call_count: z.number().optional(),
  tool_durations: z.record(z.string(), z.array(z.number())).optional(),
});
export type TraceSummary = z.infer<typeof TraceSummarySchema>;

const MessagesOrText = z.union([z.string(), z.array(MessageSchema)]);

export const InputRowSchema = z.looseObject({
  test_id: z.string({ error: 'test_id is missing or not a string' }).min(1, 'test_id is empty'),
  score: z.number({ error: 'score is missing or not a number' }).finite(),
  timestamp: z.string().optional(),
  suite: z.string().optional(),
  /** AgentV's category of the test (its Dashboard groups a run by it). */
  category: z.string().optional(),
  eval_set: z.string().optional(),
  eval_path: z.string().optional(),
  target: z.string().optional(),
  source_target: z.string().optional(),
  attempt: z.number().int().nonnegative().optional(),
  variant: z.union([z.string(), z.number()]).nullable().optional(),
  envelope_id: z.string().optional(),
  trace_id: z.string().optional(),
  root_span_id: z.string().optional(),
  conversation_id: z.string().optional(),
  execution_status: z.string().optional(),
  verdict: z.string().optional(),
  assertions: z.array(AssertionSchema).optional(),
  scores: z.array(EvaluatorResultSchema).optional(),
  input: MessagesOrText.optional(),
  output: MessagesOrText.optional(),
  answer: z.string().optional(),
  token_usage: TokenUsageSchema.optional(),
  cost_usd: z.number().optional(),
  duration_ms: z.number().optional(),
  start_time: z.string().optional(),
  end_time: z.string().optional(),
  trace: TraceSummarySchema.optional(),
  attempts: z.array(z.looseObject({ attempt: z.number().optional(), score: z.number().optional(), verdict: z.string().optional() })).optional(),
  aggregation: z.record(z.string(), z.unknown()).optional(),
  error: z.string().optional(),
  file_changes: z.string().optional(),
  mode: z.string().optional(),
});
export type InputRow = z.infer<typeof InputRowSchema>;

/** camelCase spellings real writers use, mapped to the canonical snake_case keys. */
const TOP_LEVEL_ALIASES: Record<string, string> = {
  testId: 'test_id',
  durationMs: 'duration_ms',
  tokenUsage: 'token_usage',
  costUsd: 'cost_usd',
  executionStatus: 'execution_status',
  conversationId: 'conversation_id',
  evalSet: 'eval_set',
  evalPath: 'eval_path',
  sourceTarget: 'source_target',
  envelopeId: 'envelope_id',
  traceId: 'trace_id',
  rootSpanId: 'root_span_id',
  startTime: 'start_time',
  endTime: 'end_time',
  fileChanges: 'file_changes',
};

const TRACE_ALIASES: Record<string, string> = {
  eventCount: 'event_count',
  toolNames: 'tool_names',
  toolCalls: 'tool_calls_by_name',
  toolCallsByName: 'tool_calls_by_name',
  errorCount: 'error_count',
  tokenUsage: 'token_usage',
  costUsd: 'cost_usd',
  durationMs: 'duration_ms',
  llmCallCount: 'llm_call_count',
  toolDurations: 'tool_durations',
};

const TOKEN_ALIASES: Record<string, string> = {
  promptTokens: 'prompt_tokens',
  completionTokens: 'completion_tokens',
  totalTokens: 'total_tokens',
  cachedTokens: 'cached',
};

/** Rename aliased keys; the snake_case spelling wins when a row carries both. */
function renameKeys(obj: Record<string, unknown>, aliases: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    const canonical = aliases[key];
    if (canonical === undefined) out[key] = value;
    else if (!(canonical in obj)) out[canonical] = value;
  }
  return out;
}

/**
 * Only the keys AgentV owns are renamed. User data (grader `details`, tool inputs) is left alone:
 * a blanket camel->snake conversion would silently rewrite what graders reported.
 */
export function canonicalizeKeys(raw: Record<string, unknown>): Record<string, unknown> {
  const row = renameKeys(raw, TOP_LEVEL_ALIASES);
  if (isJsonObject(row.token_usage)) row.token_usage = renameKeys(row.token_usage, TOKEN_ALIASES);
  if (isJsonObject(row.trace)) {
    const trace = renameKeys(row.trace, TRACE_ALIASES);
    if (isJsonObject(trace.token_usage)) trace.token_usage = renameKeys(trace.token_usage, TOKEN_ALIASES);
    row.trace = trace;
  }
  return row;
}

export type ParseRowResult = { ok: true; row: InputRow } | { ok: false; problem: string };

/** Validate one decoded JSON value as a result row; the problem text names the failing field. */
export function parseInputRow(value: unknown): ParseRowResult {
  if (!isJsonObject(value)) return { ok: false, problem: 'a result row must be a JSON object' };
  const parsed = InputRowSchema.safeParse(canonicalizeKeys(value));
  if (parsed.success) return { ok: true, row: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'row';
  const message = issue?.message ?? 'invalid row';
  return { ok: false, problem: message.includes(String(issue?.path[0] ?? '\u0000')) ? message : `${where}: ${message}` };
}
