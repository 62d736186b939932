/**
 * The shape of the data a report embeds. Two JSON islands carry it:
 *
 * - `report-data` (`ReportData`): one small record per test — what the table, the filters and
 *   the counts need. It is parsed when the page loads.
 * - `report-details` (`ReportDetail[]`, same order as `tests`): assertions, graders, transcript,
 *   answer and diff. It sits at the very end of the document and is parsed only when a test is
 *   first expanded, so a 10,000-test report paints its table without touching the heavy part.
 *
 * Long text is clipped (see text.ts); a clipped value is `{ head, bytes }` where `bytes` is the
 * UTF-8 size of the original, so the page can say "truncated (N bytes)".
 */

import type { AttemptStats, AttemptTotals } from '../model/attempt-stats.js';

export type ClippedText = string | { head: string; bytes: number };

export type Verdict = 'pass' | 'fail' | 'error';

export interface ReportTest {
  id: string;
  /** Index into `ReportData.groups`. */
  group: number;
  /** Index into `ReportData.targets`. */
  target: number;
  attempt: number;
  variant: string | null;
  verdict: Verdict;
  score: number;
  duration_ms: number | null;
  tokens: number | null;
  cost_usd: number | null;
  /** The first user message (or, without a transcript, the assertion texts), whitespace-folded and cut short. */
  prompt: string;
  prompt_kind: 'prompt' | 'criteria' | 'none';
  /** [passed, total] assertions. */
  assertions: [number, number];
  /** A repeated test's [passed, total] attempts (absent when it ran once). */
  attempts?: [number, number];
}

/** One attempt of a repeated test, under the test's aggregate. */
export interface ReportAttempt {
  /** 0-based. */
  index: number;
  verdict: Verdict;
  score: number | null;
  error: ClippedText | null;
  answer: ClippedText | null;
  /** Its transcript's path relative to the run directory, when the run holds one. */
  transcript: string | null;
}

/** A repeated test's attempts: AgentV's strategy, the attempt statistics and each attempt. */
export interface ReportAttempts extends AttemptStats {
  strategy: string | null;
  list: ReportAttempt[];
}

export interface ReportGroup {
  suite: string;
  eval_path: string | null;
}

export interface ReportData {
  version: 1;
  run: { run_id: string; experiment: string; timestamp: string | null; tags?: string[] };
  limits: { field_chars: number; test_chars: number; prompt_chars: number };
  groups: ReportGroup[];
  targets: string[];
  tests: ReportTest[];
  /** A run with repeated attempts: attempts passed/total and the mean attempt success rate, for the run and per target. */
  attempts?: AttemptTotals & { targets: Record<string, AttemptTotals> };
}

export interface ReportAssertion {
  text: ClippedText;
  passed: boolean;
  evidence: ClippedText;
}

export interface ReportGrader {
  name: string;
  type: string;
  score: number | null;
  verdict: string | null;
  weight: number | null;
  reasoning: ClippedText | null;
  children: ReportGrader[];
}

export interface ReportToolCall {
  name: string;
  input: ClippedText | null;
  output: ClippedText | null;
  duration_ms: number | null;
}

export interface ReportMessage {
  role: string;
  content: ClippedText;
  tools: ReportToolCall[];
}

export interface ReportDetail {
  execution_status: string;
  error: ClippedText | null;
  assertions: ReportAssertion[];
  graders: ReportGrader[];
  /** Tool name -> calls, from grading.json execution_metrics. */
  tool_calls: Record<string, number>;
  /** grading.json workspace_changes.diff_summary, when the attempt changed files. */
  changes: string | null;
  messages: ReportMessage[];
  /** Messages left out because the per-test text budget ran out. */
  omitted_messages: number;
  answer: ClippedText | null;
  /** answer.md is the last assistant message verbatim: shown once, inside the transcript. */
  answer_in_transcript: boolean;
  diff: ClippedText | null;
  /** Reviewers' notes on this test (feedback.json), oldest first. */
  feedback?: { reviewer: string; updated_at: string; text: string }[];
  /** A repeated test's attempts (absent when it ran once). */
  attempts?: ReportAttempts;
}
