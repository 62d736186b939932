/**
 * The shape of `compare`'s report, in a module with no Node imports: the library's CompareReport
 * extends it and the Dashboard's `/api/compare` answer is it (serve/api-types.ts), one definition
 * for both, type-checked with the browser client.
 */

/** What matching by test id alone left out, when a side holds several rows of a test id. */
export interface Pooled {
  /** Rows not compared because a later row of the same test id won (both sides). */
  collapsed_rows: number;
  /** The targets of the runs, when they hold several. */
  targets: string[];
  /** How to compare them all. */
  flag: string;
}

export type Outcome = 'win' | 'loss' | 'tie';

export interface MatchedTest {
  test_id: string;
  /** The target of the pair, when rows are matched per (test id, target). */
  target?: string;
  score1: number;
  score2: number;
  delta: number;
  normalized_gain: number | null;
  outcome: Outcome;
}

export interface CompareSummary {
  /** Rows read on both sides (AgentV's `total`). */
  total: number;
  matched: number;
  wins: number;
  losses: number;
  ties: number;
  mean_delta: number;
  mean_normalized_gain: number | null;
}

export interface CompareSide {
  /** The path as given. */
  source: string;
  /** The manifest or file read. */
  path: string;
  rows: number;
  targets: string[];
}

/** A (test id, target) pair without a partner, when rows are matched per (test id, target). */
export interface UnmatchedPair {
  test_id: string;
  target: string;
}

/** `compare`'s answer, without the keep/discard decision (the CLI's --decide adds it). */
export interface CompareReportBase {
  matched: MatchedTest[];
  /**
   * file1/file2: rows without a partner (AgentV); the *_only lists: their test ids (ours); with
   * rows matched per (test id, target), the *_only_pairs lists too.
   */
  unmatched: {
    file1: number;
    file2: number;
    baseline_only: string[];
    candidate_only: string[];
    baseline_only_pairs?: UnmatchedPair[];
    candidate_only_pairs?: UnmatchedPair[];
  };
  /** How rows were matched: by test id (AgentV's) or per (test id, target). */
  match: 'test' | 'test+target';
  /** Matching by test id hid rows (several rows of a test id, e.g. one per target): how many, and the flag that compares them all. */
  pooled: Pooled | null;
  /** One sentence saying which rule matched the rows. */
  match_note: string;
  /** Which rule picked the baseline, and whether the sides were turned from the order given. */
  order: { rule: 'given' | 'older-first'; swapped: boolean };
  summary: CompareSummary;
  threshold: number;
  sources: { baseline: CompareSide; candidate: CompareSide };
  /** Skipped lines and duplicate test ids of either side. */
  warnings: string[];
  /** True when the rounded mean_delta is below 0 (the CLI exits 1, as AgentV does). */
  regression: boolean;
}
