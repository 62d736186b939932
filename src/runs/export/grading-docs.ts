/**
 * A row's grading.json, in either shape a layout writes: skill-creator's (`expectations`,
 * `summary`, `execution_metrics`) and AgentV's verdict tree (`pass`, `score`, `reason`,
 * `component_results`), which is what the bundle carries.
 */
import type { EvaluatorResult } from '../../model/input-row.js';
import { passRate } from '../../model/pass-rate.js';
import { DEFAULT_THRESHOLD, type NormalizedRow } from './normalize.js';

/** The run-time figures a grading restates (skill-creator's `execution_metrics`). */
function executionMetrics(row: NormalizedRow) {
  const m = row.metrics;
  return {
    tool_calls: m.tool_calls,
    total_tool_calls: m.total_tool_calls,
    total_steps: m.total_steps,
    errors_encountered: m.errors_encountered,
    output_chars: m.output_chars,
    transcript_chars: m.transcript_chars,
  };
}

/** grading.json in skill-creator's shape (the skill-creator and companion layouts write it). */
export function gradingDoc(row: NormalizedRow) {
  const passed = row.expectations.filter((e) => e.passed).length;
  const total = row.expectations.length;
  const doc: Record<string, unknown> = {
    expectations: row.expectations,
    assertions: row.expectations,
    summary: { passed, failed: total - passed, total, pass_rate: passRate(passed, total) },
    execution_metrics: executionMetrics(row),
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

/**
 * grading.json of the bundle, in AgentV's shape: `{pass, score, reason, component_results[]}`
 * with one component per expectation (AgentV's `results show/failures` list the components'
 * labels, verdicts and reasons as assertions). AgentV rejects skill-creator's field names
 * (`expectations[].passed/evidence`, `assertions`, `verdict`) anywhere in this file, so the
 * skill-creator grading lives only in the skill-creator and companion layouts; the full grader
 * results ride in result.json (`scores`).
 */
export function agentvGradingDoc(row: NormalizedRow) {
  const passed = row.expectations.filter((e) => e.passed).length;
  const total = row.expectations.length;
  const pass = row.verdict === 'pass';
  const metadata: Record<string, unknown> = {
    execution_status: row.execution_status,
    pass_count: passed,
    fail_count: total - passed,
    assertion_count: total,
    pass_rate: passRate(passed, total),
    execution_metrics: executionMetrics(row),
  };
  const sc = gradingDoc(row);
  if (sc.workspace_changes !== undefined) metadata.workspace_changes = sc.workspace_changes;
  if (sc.conversation !== undefined) metadata.conversation = sc.conversation;
  return {
    pass,
    score: row.score,
    reason:
      row.error ??
      (pass ? 'All grading components passed.' : row.verdict === 'error' ? 'The target did not run to completion.' : 'One or more grading components failed.'),
    component_results: gradingComponents(row),
    ...(row.evaluators.length > 0 ? { named_scores: Object.fromEntries(row.evaluators.map((e) => [e.name, e.score])) } : {}),
    metadata,
  };
}

type Expectation = NormalizedRow['expectations'][number];

/**
 * AgentV's tree, as `agentv eval` writes it: whenever the row has graders (`scores`), one component
 * per grader (`assertion: {name, type, weight}`, which AgentV's Dashboards show as the grader),
 * holding its members (an assert-set's graders, each a component in turn) or else its own
 * assertions (hits and misses of older rows) as leaves, which AgentV's `results show/failures` list
 * as the test's assertions. A composite's own assertions restate its members' (`[member] text`), so
 * its leaves are its members' alone (AgentV would list both: each assertion twice). Rows without
 * graders: one component per expectation.
 */
function gradingComponents(row: NormalizedRow): Record<string, unknown>[] {
  if (row.evaluators.length > 0) return row.evaluators.map(graderComponent);
  return row.expectations.map((x: Expectation) => ({
    pass: x.passed,
    score: x.passed ? 1 : 0,
    reason: x.evidence,
    assertion: { value: x.text },
  }));
}

function graderComponent(e: EvaluatorResult): Record<string, unknown> {
  const identity = graderIdentity(e);
  const leaf = (text: string, passed: boolean, evidence: string | undefined) => ({
    pass: passed,
    score: passed ? 1 : 0,
    reason: evidence || text,
    assertion: { ...identity, value: text },
  });
  const members = e.scores ?? [];
  const children =
    members.length > 0
      ? members.map(graderComponent)
      : [
          ...(e.assertions ?? []).map((a) => leaf(a.text, a.passed, a.evidence)),
          ...(e.hits ?? []).map((h) => leaf(h, true, e.reasoning)),
          ...(e.misses ?? []).map((m) => leaf(m, false, e.reasoning)),
        ];
  return {
    pass: graderPassed(e, DEFAULT_THRESHOLD),
    score: e.score,
    reason: graderReason(e),
    ...(children.length > 0 ? { component_results: children } : {}),
    assertion: identity,
    ...(members.length > 0 ? { named_scores: Object.fromEntries(members.map((m) => [m.name, m.score])) } : {}),
    // Where AgentV's Dashboard reads a grader's weight (its own files carry it in `assertion` only).
    ...(e.weight !== undefined ? { weight: e.weight } : {}),
  };
}

function graderIdentity(e: EvaluatorResult): Record<string, unknown> {
  return { name: e.name, type: e.type, ...(e.weight !== undefined ? { weight: e.weight } : {}) };
}

export function graderReason(e: EvaluatorResult): string {
  if (typeof e.reasoning === 'string' && e.reasoning) return e.reasoning;
  if (typeof e.reason === 'string' && e.reason) return e.reason;
  return `${e.type} scored ${e.score}`;
}

/** A grader's own verdict when it gave one, else our threshold on its score. */
export function graderPassed(e: EvaluatorResult, threshold: number): boolean {
  if (e.verdict === 'pass') return true;
  if (e.verdict === 'fail') return false;
  if (typeof e.pass === 'boolean') return e.pass;
  return e.score >= threshold;
}
