/**
 * Schemas of every artifact this tool writes. Field names shared with skill-creator
 * (expectations[].text/passed/evidence, summary.pass_rate, run_summary.*.mean/stddev,
 * runs[].result.*) are exact; AgentV additions are additive, so every object is loose:
 * readers keep fields they do not know.
 */
import * as z from 'zod';
import { AssertionSchema, EvaluatorResultSchema, TokenUsageSchema } from './input-row.js';

export { TRANSCRIPT_SCHEMA_VERSION, TranscriptMessageSchema, TranscriptSchema } from './transcript.js';

export const METRICS_SCHEMA_VERSION = 'agentv.metrics.v2';
export const SUMMARY_SCHEMA_VERSION = 'agentv.summary.v1';
export const PROJECTION_FORMAT = 'agentv.projection';
export const PROJECTION_VERSION = 1;

export const StatSchema = z.looseObject({
  mean: z.number(),
  stddev: z.number(),
  min: z.number(),
  max: z.number(),
});
export type Stat = z.infer<typeof StatSchema>;

export const ProjectionIdentitySchema = z.looseObject({
  id: z.string().regex(/^pi_[0-9a-f]{32}$/),
  format: z.literal(PROJECTION_FORMAT),
  version: z.literal(PROJECTION_VERSION),
  run_id: z.string(),
  suite: z.string(),
  eval_path: z.string().nullable(),
  test_id: z.string(),
  target: z.string(),
  source_target: z.string(),
  attempt: z.number().int().nonnegative(),
  variant: z.string().nullable(),
  envelope_id: z.string().nullable(),
  trace_id: z.string().nullable(),
  root_span_id: z.string().nullable(),
});
export type ProjectionIdentity = z.infer<typeof ProjectionIdentitySchema>;

// AgentV's families (result-artifact-contract: transcripts, outputs, raw-logs, traces, screenshots)
// are what publish writes now; the older names are still read.
export const ArtifactFamilySchema = z.enum([
  'transcript',
  'transcript_raw',
  'output',
  'file_changes',
  'sidecar',
  'transcripts',
  'outputs',
  'raw-logs',
  'traces',
  'screenshots',
]);
export const ArtifactPointerSchema = z.looseObject({
  ref: z.string(),
  key: z.string(),
  path: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  media_type: z.string(),
  family: ArtifactFamilySchema,
});
export type ArtifactPointer = z.infer<typeof ArtifactPointerSchema>;

const nullableString = z.string().nullable();

/** `artifact_pointers` as a list whatever its shape (AgentV's object keyed by kind, or our older array). */
export function pointerList(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const p of Object.values(value as Record<string, unknown>)) {
    const path = (p as { path?: unknown } | null)?.path;
    if (typeof path === 'string') {
      if (seen.has(path)) continue;
      seen.add(path);
    }
    out.push(p);
  }
  return out;
}

export const IndexRowSchema = z.looseObject({
  run_id: z.string(),
  experiment: z.string(),
  test_id: z.string(),
  suite: z.string(),
  // AgentV's category of the test: its Dashboard's categories view groups by it (absent: "Uncategorized").
  category: z.string().optional(),
  eval_path: nullableString.optional(),
  target: z.string(),
  source_target: z.string(),
  attempt: z.number().int().nonnegative(),
  variant: nullableString,
  envelope_id: nullableString.optional(),
  trace_id: nullableString.optional(),
  root_span_id: nullableString.optional(),
  timestamp: nullableString,
  score: z.number(),
  verdict: z.enum(['pass', 'fail', 'error']),
  execution_status: z.string(),
  duration_ms: z.number().nullable(),
  total_tokens: z.number().nullable(),
  token_usage: z.looseObject({ input: z.number(), output: z.number(), cached: z.number() }).nullable().optional(),
  total_tool_calls: z.number().optional(),
  errors_encountered: z.number().optional(),
  /** The answer's length in characters: the tokens skill-creator counts for a run without token usage. */
  output_chars: z.number().optional(),
  cost_usd: z.number().nullable(),
  conversation_id: nullableString.optional(),
  error: nullableString.optional(),
  assertions_summary: z.looseObject({ passed: z.number(), failed: z.number(), total: z.number() }),
  scores: z.array(z.looseObject({ name: z.string(), type: z.string(), score: z.number(), weight: z.number().optional(), verdict: z.string().optional() })),
  result_dir: z.string(),
  result_path: z.string(),
  grading_path: z.string(),
  metrics_path: z.string(),
  timing_path: z.string(),
  transcript_path: nullableString,
  transcript_raw_path: nullableString,
  answer_path: nullableString,
  file_changes_path: nullableString,
  // AgentV's names: the input file (`input.md`) and the answer again as `output_path` (its readers try both).
  input_path: z.string().optional(),
  output_path: z.string().optional(),
  projection_identity: ProjectionIdentitySchema,
  // AgentV writes an object (`{transcript: {...}}`); publish writes that shape with one more key per
  // moved payload. Read either shape as the list of pointers.
  artifact_pointers: z.preprocess(pointerList, z.array(ArtifactPointerSchema)).optional(),
});
export type IndexRow = z.infer<typeof IndexRowSchema>;

/**
 * A target's pass rate in summary.json's `run_summary`: AgentV's shape (`{mean, stddev}`, what its
 * Dashboard averages into a run's pass rate), or a plain number as summaries written before it.
 */
export const TargetPassRateSchema = z.union([z.number(), z.looseObject({ mean: z.number(), stddev: z.number() })]);

/** The number a target pass rate of either shape stands for (null when it is neither). */
export function targetPassRate(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const mean = value !== null && typeof value === 'object' ? (value as { mean?: unknown }).mean : undefined;
  return typeof mean === 'number' && Number.isFinite(mean) ? mean : null;
}

export const TargetSummarySchema = z.looseObject({
  total: z.number(),
  passed: z.number(),
  failed: z.number(),
  errors: z.number(),
  pass_rate: TargetPassRateSchema,
  mean_score: z.number(),
  duration_ms: z.number(),
  total_tokens: z.number(),
  cost_usd: z.number(),
  tool_calls: z.number(),
});

export const SummarySchema = z.looseObject({
  schema_version: z.literal(SUMMARY_SCHEMA_VERSION),
  run_id: z.string(),
  experiment: z.string(),
  timestamp: nullableString,
  threshold: z.number(),
  total: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  pass_rate: z.number(),
  mean_score: z.number(),
  duration_ms: z.number(),
  total_tokens: z.number(),
  cost_usd: z.number(),
  targets: z.array(z.string()),
  suites: z.array(z.string()),
  run_summary: z.record(z.string(), TargetSummarySchema),
});
export type Summary = z.infer<typeof SummarySchema>;

export const BenchmarkRunSchema = z.looseObject({
  eval_id: z.number().int(),
  eval_name: z.string(),
  configuration: z.string(),
  run_number: z.number().int().positive(),
  result: z.looseObject({
    pass_rate: z.number(),
    passed: z.number(),
    failed: z.number(),
    total: z.number(),
    time_seconds: z.number(),
    tokens: z.number(),
    tool_calls: z.number(),
    errors: z.number(),
  }),
  notes: z.array(z.string()),
});

export const TargetStatsSchema = z.looseObject({
  pass_rate: StatSchema,
  time_seconds: StatSchema,
  tokens: StatSchema,
  tool_calls: StatSchema,
  cost_usd: StatSchema,
  score: StatSchema,
});

export const BenchmarkSchema = z.looseObject({
  metadata: z.looseObject({
    eval_file: z.string(),
    run_id: z.string(),
    experiment: z.string(),
    timestamp: nullableString,
    targets: z.array(z.string()),
    tests_run: z.array(z.string()),
    evals_run: z.array(z.number().int()),
    runs_per_configuration: z.number().int(),
  }),
  runs: z.array(BenchmarkRunSchema),
  run_summary: z.record(z.string(), z.union([TargetStatsSchema, z.record(z.string(), z.string())])),
  per_evaluator_summary: z.record(z.string(), StatSchema.extend({ n: z.number().int() })),
  notes: z.array(z.string()),
});
export type Benchmark = z.infer<typeof BenchmarkSchema>;

export const UsageSourceSchema = z.enum(['provider_reported', 'token_estimated', 'aggregate', 'unavailable']);

export const RunTimingSchema = z.looseObject({
  total_tokens: z.number(),
  duration_ms: z.number(),
  total_duration_seconds: z.number(),
  token_usage: z.looseObject({ input: z.number(), output: z.number(), cached: z.number() }),
  cost_usd: z.number(),
  usage_source: UsageSourceSchema,
  usage_sources: z.record(z.string(), z.number()),
  tests: z.number().int(),
});

export const AttemptTimingSchema = z.looseObject({
  total_tokens: z.number(),
  duration_ms: z.number(),
  total_duration_seconds: z.number(),
  token_usage: TokenUsageSchema,
  cost_usd: z.number().nullable(),
  usage_source: UsageSourceSchema,
  executor_start: nullableString,
  executor_end: nullableString,
});

export const ExpectationSchema = z.looseObject({ text: z.string(), passed: z.boolean(), evidence: z.string() });

export const ExecutionMetricsSchema = z.looseObject({
  tool_calls: z.record(z.string(), z.number()),
  total_tool_calls: z.number(),
  total_steps: z.number(),
  errors_encountered: z.number(),
  output_chars: z.number(),
  transcript_chars: z.number(),
});

/** A node of AgentV's grading tree: every node says pass, score and reason. */
export interface GradingNode {
  pass: boolean;
  score: number;
  reason: string;
  component_results?: GradingNode[];
  [extra: string]: unknown;
}
export const GradingNodeSchema: z.ZodType<GradingNode> = z.lazy(() =>
  z.looseObject({ pass: z.boolean(), score: z.number(), reason: z.string(), component_results: z.array(GradingNodeSchema).optional() }),
) as z.ZodType<GradingNode>;

/** Field names AgentV rejects anywhere in grading.json (they belong to skill-creator's grading). */
export const AGENTV_LEGACY_GRADING_FIELDS = ['assertion_results', 'assertions', 'passed', 'evidence', 'verdict', 'graders', 'checks'] as const;

function legacyFieldIn(value: unknown): string | null {
  if (Array.isArray(value)) {
    for (const v of value) {
      const hit = legacyFieldIn(v);
      if (hit) return hit;
    }
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  for (const [k, v] of Object.entries(value)) {
    if ((AGENTV_LEGACY_GRADING_FIELDS as readonly string[]).includes(k)) return k;
    const hit = legacyFieldIn(v);
    if (hit) return hit;
  }
  return null;
}

/** grading.json of a bundle: AgentV's verdict tree, one leaf component per expectation. */
export const GradingSchema = GradingNodeSchema.refine((g) => legacyFieldIn(g) === null, {
  message: `grading.json must not use skill-creator field names AgentV rejects (${AGENTV_LEGACY_GRADING_FIELDS.join(', ')})`,
}).refine((g) => !('timing' in g), { message: 'grading.json must not carry a timing block' });

/** grading.json of the skill-creator and companion layouts (skill-creator's own reader's shape). */
export const SkillCreatorGradingSchema = z
  .looseObject({
    expectations: z.array(ExpectationSchema),
    assertions: z.array(ExpectationSchema),
    summary: z.looseObject({ passed: z.number(), failed: z.number(), total: z.number(), pass_rate: z.number() }),
    execution_metrics: ExecutionMetricsSchema,
    evaluators: z.array(EvaluatorResultSchema),
    workspace_changes: z.looseObject({ files_modified: z.number(), files_created: z.number(), files_deleted: z.number(), diff_summary: z.string() }).optional(),
    conversation: z.looseObject({ turns: z.number(), conversation_id: nullableString }).optional(),
  })
  // skill-creator's reader takes tokens from grading.timing when it exists: never write one.
  .refine((g) => !('timing' in g), { message: 'grading.json must not carry a timing block' });

const SourcedSchema = z.looseObject({ source: z.string() });

/** metrics.json in AgentV's agentv.metrics.v2 shape (our counters ride along). */
export const MetricsSchema = z.looseObject({
  schema_version: z.literal(METRICS_SCHEMA_VERSION),
  tool_calls: z.record(z.string(), z.number()),
  total_tool_calls: z.number(),
  total_steps: z.number(),
  errors_encountered: z.number(),
  output_chars: z.number(),
  transcript_chars: z.number(),
  files_created: z.array(z.string()),
  files_deleted: z.array(z.string()),
  files_modified: z.array(z.looseObject({ path: z.string(), source: z.string() })),
  tool_call_counts: z.record(z.string(), z.number()),
  total_turns: z.number(),
  duration: SourcedSchema.extend({ total_ms: z.number() }),
  tokens: SourcedSchema.extend({ total: z.number() }),
  cost: SourcedSchema.extend({ usd: z.number().nullable() }),
});

export const ResultSchema = z.looseObject({
  test_id: z.string(),
  suite: z.string(),
  target: z.string(),
  attempt: z.number().int(),
  score: z.number(),
  verdict: z.enum(['pass', 'fail', 'error']),
  execution_status: z.string(),
  timestamp: nullableString,
  error: nullableString,
  grading_path: z.string(),
  metrics_path: z.string(),
  timing_path: z.string(),
  transcript: nullableString,
  output: nullableString,
  file_changes_path: nullableString,
});

export const TagsSchema = z.looseObject({
  tags: z.array(z.string().min(1).max(60)).max(20),
  updated_at: nullableString,
  tag_revision: z.string(),
});
/** `tags.json`: the one definition of the tags overlay (merged by overlays/document.ts, written by overlay-write/write.ts). */
export type TagsDocument = z.infer<typeof TagsSchema>;

export const FeedbackEntrySchema = z.looseObject({
  feedback: z.string(),
  reviewer: z.string(),
  updated_at: z.string(),
  revision: z.string().optional(),
  replaces: z.string().optional(),
});
/** entries: test_id -> reviewer -> entry (documents of the earlier test_id -> entry shape still parse). */
export const FeedbackSchema = z.looseObject({
  entries: z.record(z.string(), z.union([FeedbackEntrySchema, z.record(z.string(), FeedbackEntrySchema)])),
  updated_at: nullableString,
});

export const ProjectionBundleSchema = z.looseObject({
  format: z.literal('agentv.projection_bundle'),
  version: z.literal(1),
  run_id: z.string(),
  experiment: z.string(),
  capture: z.looseObject({ raw_content_included: z.boolean(), redaction: z.string() }),
  artifact_refs: z.looseObject({ status: z.enum(['planned_export', 'emitted']) }),
  projections: z.array(
    z.looseObject({
      projection_identity: ProjectionIdentitySchema,
      trace_envelope: z.looseObject({ trace_id: nullableString, root_span_id: nullableString, envelope_id: nullableString }),
      spans: z.array(z.looseObject({ name: z.string(), kind: z.string(), attributes: z.record(z.string(), z.unknown()) })),
      scores: z.array(z.looseObject({ name: z.string(), type: z.string(), score: z.number(), source: z.string() })),
      artifacts: z.record(z.string(), z.string()),
      raw: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  warnings: z.array(z.string()),
});

export const CatalogRowSchema = z.looseObject({
  run_id: z.string(),
  experiment: z.string(),
  timestamp: z.string(),
  path: z.string(),
  targets: z.array(z.string()),
  total: z.number(),
  passed: z.number(),
  failed: z.number(),
  pass_rate: z.number(),
});
export type CatalogRow = z.infer<typeof CatalogRowSchema>;

export { AssertionSchema, EvaluatorResultSchema };
