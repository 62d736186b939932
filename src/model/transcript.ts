/**
 * transcript.json, the one home of its shape. We write AgentV's normalized transcript
 * (`agentv.normalized_transcript.v1`: `turns[]` of content blocks), the schema our artifact
 * pointers name and AgentV's Dashboard parses. Every reader goes through `transcriptMessages`,
 * which accepts that shape and our earlier `agentv.transcript.v1` (`messages[]`), so bundles
 * already on a branch still read.
 */
import * as z from 'zod';
import { isJsonObject } from './json-object.js';

export const TRANSCRIPT_SCHEMA_VERSION = 'agentv.normalized_transcript.v1';
/** The schema of transcript.json in bundles written before we wrote AgentV's shape. */
export const LEGACY_TRANSCRIPT_SCHEMA_VERSION = 'agentv.transcript.v1';

export const TranscriptMessageSchema = z.looseObject({
  role: z.string(),
  content: z.string(),
  tool_calls: z.array(
    z.looseObject({ tool_name: z.string(), input: z.unknown().optional(), output: z.unknown().optional(), duration_ms: z.number().optional() }),
  ),
});
/** A message as the writer takes it (normalize's messages). */
interface MessageIn {
  role: string;
  content: string;
  tool_calls: { tool_name: string; input?: unknown; output?: unknown; duration_ms?: number }[];
}

const SummarySchema = z.looseObject({ messages: z.number(), turns: z.number(), tool_calls: z.number(), chars: z.number() });

const NormalizedTurnSchema = z.looseObject({
  v: z.literal(1),
  agent: z.string(),
  type: z.enum(['system', 'user', 'assistant']),
  content: z.array(z.looseObject({ type: z.string() })),
});

export const NormalizedTranscriptSchema = z.looseObject({
  schema_version: z.literal(TRANSCRIPT_SCHEMA_VERSION),
  provider_id: z.string(),
  target: z.string(),
  transcript_summary: z.looseObject({}),
  turns: z.array(NormalizedTurnSchema),
});

export const LegacyTranscriptSchema = z.looseObject({
  schema_version: z.literal(LEGACY_TRANSCRIPT_SCHEMA_VERSION),
  messages: z.array(TranscriptMessageSchema),
  transcript_summary: SummarySchema,
});

/** What a transcript.json of ours may be: AgentV's normalized shape (written now) or our earlier one. */
export const TranscriptSchema = z.union([NormalizedTranscriptSchema, LegacyTranscriptSchema]);

const TURN_TYPES = new Set(['system', 'user', 'assistant']);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * Messages as AgentV's normalized transcript: one turn per message, its text as one text block and
 * each tool call as a `tool_use` block carrying its result. A role AgentV has no turn type for
 * (`tool`, `function`) rides as a user turn that keeps its `role`, so reading it back loses nothing.
 */
export function normalizedTranscript(opts: {
  testId: string;
  target: string;
  messages: MessageIn[];
  summary: z.infer<typeof SummarySchema>;
}): Record<string, unknown> {
  const turns = opts.messages.map((m, i) => {
    const content: Record<string, unknown>[] = [];
    if (m.content.length > 0) content.push({ type: 'text', text: m.content });
    m.tool_calls.forEach((c, j) => {
      const block: Record<string, unknown> = { type: 'tool_use', id: `call_${i}_${j}`, tool_name: c.tool_name, name: c.tool_name, input: c.input ?? null };
      if (c.output !== undefined || c.duration_ms !== undefined) {
        const result: Record<string, unknown> = { status: 'unknown' };
        if (c.output !== undefined) result.output = c.output;
        if (c.duration_ms !== undefined) result.duration_ms = c.duration_ms;
        block.result = result;
      }
      content.push(block);
    });
    const turn: Record<string, unknown> = { v: 1, agent: opts.target, type: TURN_TYPES.has(m.role) ? m.role : 'user', content };
    if (!TURN_TYPES.has(m.role)) turn.role = m.role;
    return turn;
  });
  return {
    schema_version: TRANSCRIPT_SCHEMA_VERSION,
    provider_id: opts.target,
    target: opts.target,
    metadata: { test_id: opts.testId },
    transcript_summary: opts.summary,
    turns,
  };
}

/** One normalized turn -> a role/content message (text blocks joined, tool_use blocks as tool calls). */
function turnToMessage(t: Record<string, unknown>): Record<string, unknown> {
  const blocks = Array.isArray(t.content) ? t.content : [t.content];
  const text: string[] = [];
  const toolCalls: Record<string, unknown>[] = [];
  for (const b of blocks) {
    if (typeof b === 'string') text.push(b);
    else if (isJsonObject(b) && typeof b.text === 'string') text.push(b.text);
    else if (isJsonObject(b) && /tool/.test(String(b.type)) && (str(b.name) ?? str(b.tool_name))) {
      const call: Record<string, unknown> = { tool_name: str(b.name) ?? str(b.tool_name), input: b.input };
      const result = isJsonObject(b.result) ? b.result : undefined;
      if (result?.output !== undefined) call.output = result.output;
      if (typeof result?.duration_ms === 'number') call.duration_ms = result.duration_ms;
      toolCalls.push(call);
    }
  }
  const m: Record<string, unknown> = { role: str(t.role) ?? str(t.type) ?? 'assistant', content: text.join('\n') };
  m.tool_calls = toolCalls;
  return m;
}

/**
 * The role/content messages of a transcript document, whichever schema: ours (`messages[]`),
 * AgentV's normalized one (`turns[]`), or anything else (no messages).
 */
export function transcriptMessages(doc: unknown): Record<string, unknown>[] {
  if (!isJsonObject(doc)) return [];
  if (Array.isArray(doc.messages)) return doc.messages.filter(isJsonObject);
  if (Array.isArray(doc.turns)) return doc.turns.filter(isJsonObject).map(turnToMessage);
  return [];
}
