/**
 * The gate's webhook event: what failed (`event`), where (the CI context: repository, commit,
 * ref, pull request, link), which runs, and per row the test, its target, both scores, the delta
 * and why. One builder for every way the gate can fail, a crash included (`gate-error`).
 */
import type { CiContext } from '../util/ci-context.js';
import type { WebhookEvent } from '../util/webhook.js';
import { gateTestName, type GateReport } from './gate.js';

/** A run as the event names it: its published id (null for a local path) and what was given. */
export interface GateEventRun {
  run_id: string | null;
  source: string;
}

/** At most this many rows ride in an event (the counts are in `summary`). */
export const GATE_EVENT_ROWS = 50;

/** What failed first: regressions, then missing baseline tests, then new tests. */
function eventOf(r: GateReport): WebhookEvent['event'] {
  if (r.regressions.length > r.max_regressions) return 'regression';
  if (r.policy.removed_tests === 'fail' && r.removed.length > 0) return 'tests-removed';
  return 'tests-added';
}

export function gateFailedEvent(r: GateReport, runs: { baseline: GateEventRun; candidate: GateEventRun }, ci: CiContext): WebhookEvent {
  return {
    event: eventOf(r),
    ...ci,
    baseline: runs.baseline,
    candidate: runs.candidate,
    failures: r.failures,
    regressions: r.regressions.slice(0, GATE_EVENT_ROWS).map((t) => ({
      test_id: t.test_id,
      target: t.target ?? null,
      name: gateTestName(t),
      baseline: t.baseline,
      candidate: t.candidate,
      delta: t.delta,
      reason: t.reason,
      why:
        t.reason === 'verdict'
          ? `${t.baseline_verdict ?? '?'} -> ${t.candidate_verdict ?? '?'}`
          : t.reason === 'reliability' && t.attempts
            ? `${t.attempts.candidate.passed}/${t.attempts.candidate.total} attempts vs ${t.attempts.history.passed}/${t.attempts.history.total} over ${t.attempts.history.runs} runs`
            : t.reason,
    })),
    removed: r.removed.slice(0, GATE_EVENT_ROWS).map((t) => ({ test_id: t.test_id, target: t.target ?? null })),
    added: r.new.slice(0, GATE_EVENT_ROWS).map((t) => ({ test_id: t.test_id, target: t.target ?? null })),
    match: r.match,
    tolerance: r.tolerance,
    summary: r.summary,
  };
}

/** The gate could not decide (bad input, git, a bug): the error and its exit code. */
export function gateErrorEvent(error: { message: string; exit_code: number }, runs: { baseline: string; candidate: string }, ci: CiContext): WebhookEvent {
  return { event: 'gate-error', ...ci, baseline: { run_id: null, source: runs.baseline }, candidate: { run_id: null, source: runs.candidate }, error };
}
