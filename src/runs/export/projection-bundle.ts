/**
 * The vendor-neutral projection bundle (AgentV's results docs): stable ids, trace envelope, OpenInference-shaped
 * span references, score provenance and artifact-relative paths. Raw prompt/output text and the
 * raw-bearing artifact refs are left out unless raw content is explicitly requested; the capture
 * block records which, so downstream processing is auditable.
 */
import type { IndexRow } from '../../model/artifacts.js';
import { BUNDLE_FILE_FIELDS } from '../../model/path-segments.js';

const RAW_BEARING = new Set(['grading_path', 'answer_path', 'transcript_path', 'transcript_raw_path', 'input_path']);

export interface RawContent {
  input?: string;
  output?: string;
}

export function projectionEntry(row: IndexRow, opts: { includeRawContent: boolean; raw?: RawContent }) {
  const artifacts: Record<string, string> = {};
  for (const key of BUNDLE_FILE_FIELDS) {
    const value = row[key];
    if (typeof value !== 'string') continue;
    if (!opts.includeRawContent && RAW_BEARING.has(key)) continue;
    artifacts[key] = value;
  }
  const id = row.projection_identity;
  const entry: Record<string, unknown> = {
    projection_identity: id,
    trace_envelope: { trace_id: id.trace_id, root_span_id: id.root_span_id, envelope_id: id.envelope_id },
    spans: [
      {
        name: `agentv.case ${row.test_id}`,
        kind: 'AGENT',
        attributes: {
          'agentv.test_id': row.test_id,
          'agentv.target': row.target,
          'agentv.suite': row.suite,
          'agentv.verdict': row.verdict,
          'llm.token_count.total': row.total_tokens,
          'agentv.duration_ms': row.duration_ms,
          'agentv.cost_usd': row.cost_usd,
        },
      },
      ...row.scores.map((s) => ({
        name: `agentv.grader ${s.name}`,
        kind: 'EVALUATOR',
        attributes: { 'agentv.grader.type': s.type, 'agentv.grader.score': s.score },
      })),
    ],
    scores: [
      { name: 'overall', type: 'aggregate', score: row.score, source: 'agentv.result' },
      ...row.scores.map((s) => ({ name: s.name, type: s.type, score: s.score, source: 'agentv.grader' })),
    ],
    artifacts,
  };
  if (opts.includeRawContent && opts.raw) entry.raw = opts.raw;
  return entry;
}

export function projectionBundle(
  meta: { run_id: string; experiment: string },
  entries: unknown[],
  opts: { includeRawContent: boolean; status: 'planned_export' | 'emitted'; warnings: string[] },
) {
  return {
    format: 'agentv.projection_bundle',
    version: 1,
    run_id: meta.run_id,
    experiment: meta.experiment,
    capture: {
      raw_content_included: opts.includeRawContent,
      redaction: opts.includeRawContent ? 'none (raw content requested)' : 'raw prompt, output and tool payloads omitted',
    },
    artifact_refs: { status: opts.status },
    projections: entries,
    warnings: opts.warnings,
  };
}
