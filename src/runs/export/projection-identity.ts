/**
 * Projection identity (AgentV's results docs): a stable id derived only from AgentV-owned fields, so that
 * retrying the same run, or exporting it to another directory, yields the same id.
 */
import { createHash } from 'node:crypto';
import { PROJECTION_FORMAT, PROJECTION_VERSION, type ProjectionIdentity } from '../../model/artifacts.js';

/** The AgentV-owned fields an identity is made of (AgentV's results docs), minus the run id. */
export interface IdentityFields {
  suite: string;
  eval_path: string | null;
  test_id: string;
  target: string;
  source_target: string;
  attempt: number;
  variant: string | null;
  envelope_id: string | null;
  trace_id: string | null;
  root_span_id: string | null;
}

/** Everything in the identity except run_id: constant within one run, so usable as a key before the run id is known. */
export function localIdentityKey(row: IdentityFields): string {
  return JSON.stringify([
    row.suite,
    row.eval_path,
    row.test_id,
    row.target,
    row.source_target,
    row.attempt,
    row.variant,
    row.envelope_id,
    row.trace_id,
    row.root_span_id,
  ]);
}

/** The owned fields back out of a stored projection identity (to recompute or re-key it). */
export function identityFieldsOf(id: ProjectionIdentity): IdentityFields {
  return {
    suite: id.suite,
    eval_path: id.eval_path,
    test_id: id.test_id,
    target: id.target,
    source_target: id.source_target,
    attempt: id.attempt,
    variant: id.variant,
    envelope_id: id.envelope_id,
    trace_id: id.trace_id,
    root_span_id: id.root_span_id,
  };
}

export function projectionIdentity(runId: string, row: IdentityFields): ProjectionIdentity {
  const id =
    'pi_' +
    createHash('sha256')
      .update(JSON.stringify([PROJECTION_FORMAT, PROJECTION_VERSION, runId, localIdentityKey(row)]))
      .digest('hex')
      .slice(0, 32);
  return {
    id,
    format: PROJECTION_FORMAT,
    version: PROJECTION_VERSION,
    run_id: runId,
    suite: row.suite,
    eval_path: row.eval_path,
    test_id: row.test_id,
    target: row.target,
    source_target: row.source_target,
    attempt: row.attempt,
    variant: row.variant,
    envelope_id: row.envelope_id,
    trace_id: row.trace_id,
    root_span_id: row.root_span_id,
  };
}
