/** JSON Schema documents generated from the zod schemas: one source of truth for validation and for published schemas. */
import * as z from 'zod';
import {
  ArtifactPointerSchema,
  AttemptTimingSchema,
  BenchmarkSchema,
  CatalogRowSchema,
  FeedbackSchema,
  GradingSchema,
  IndexRowSchema,
  MetricsSchema,
  ProjectionBundleSchema,
  ResultSchema,
  RunTimingSchema,
  SummarySchema,
  TagsSchema,
  TranscriptSchema,
} from './artifacts.js';
import { InputRowSchema } from './input-row.js';
import { InvalidArgumentsError } from '../errors/errors.js';

export const SCHEMAS: Record<string, { schema: z.ZodType; file: string; description: string }> = {
  'input-row': { schema: InputRowSchema, file: 'results .jsonl', description: 'one AgentV result row as read (after camelCase aliases are mapped)' },
  'index-row': { schema: IndexRowSchema, file: 'index.jsonl', description: 'one row of a run manifest' },
  summary: { schema: SummarySchema, file: 'summary.json', description: 'run-level aggregate' },
  benchmark: { schema: BenchmarkSchema, file: 'benchmark.json', description: 'skill-creator benchmark superset' },
  timing: { schema: RunTimingSchema, file: 'timing.json', description: 'run-level timing and usage' },
  'attempt-timing': { schema: AttemptTimingSchema, file: 'attempt-N/timing.json', description: 'per-attempt timing and usage' },
  grading: {
    schema: GradingSchema,
    file: 'grading.json',
    description: 'per-attempt grading of a bundle: AgentV verdict tree (pass, score, reason, component_results[])',
  },
  metrics: { schema: MetricsSchema, file: 'metrics.json', description: 'agentv.metrics.v1 executor behaviour summary' },
  result: { schema: ResultSchema, file: 'result.json', description: 'per-attempt manifest' },
  transcript: { schema: TranscriptSchema, file: 'transcript.json', description: 'normalized conversation transcript' },
  tags: { schema: TagsSchema, file: 'tags.json', description: 'mutable run tags overlay' },
  feedback: { schema: FeedbackSchema, file: 'feedback.json', description: 'review feedback overlay' },
  'projection-bundle': { schema: ProjectionBundleSchema, file: 'projection_bundle.json', description: 'vendor-neutral projection bundle' },
  'artifact-pointer': { schema: ArtifactPointerSchema, file: 'index.jsonl artifact_pointers[]', description: 'pointer to a payload on the artifacts branch' },
  'catalog-row': { schema: CatalogRowSchema, file: 'catalog/<day>.jsonl', description: 'one published run in the results-branch catalog' },
};

export function jsonSchema(name: string): Record<string, unknown> {
  const entry = SCHEMAS[name];
  // A library caller's unknown name is bad input (exit 2), naming the argument; the CLI checks the name first (UsageError).
  if (!entry)
    throw new InvalidArgumentsError('jsonSchema', [
      { path: 'name', message: `unknown schema ${JSON.stringify(name)}; known: ${Object.keys(SCHEMAS).join(', ')}` },
    ]);
  const doc = z.toJSONSchema(entry.schema, { io: 'input', unrepresentable: 'any', cycles: 'ref', reused: 'inline' }) as Record<string, unknown>;
  return { ...doc, $id: `https://agentv.dev/schemas/agentv-results/${name}.json`, title: entry.file, description: entry.description };
}
