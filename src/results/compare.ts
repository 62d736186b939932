/**
 * `compare`: score deltas between a baseline and a candidate run, with seed 004's summary
 * `{wins, losses, ties, mean_delta}` and, on request, its keep/discard decision (decide.ts).
 *
 * Matching. With one target per side (two providers, or two iterations of one) rows match by
 * test_id; when both sides hold the same several targets they match by (test_id, target). Any
 * other shape is ambiguous and refused with the flags that resolve it (`targets` narrows both
 * sides, `baselineTargets`/`candidateTargets` one side). Repeated attempts of a key are compared
 * by their mean score.
 *
 * Outcomes. Seed 004 defines a win as "the candidate scored higher", a loss as "scored lower" and
 * a tie as "no score change", and autoresearch runs compare without flags, so the default
 * threshold is 0: any change counts. `threshold` t > 0 is an opt-in noise band: |delta| <= t is a
 * tie (so `--threshold 0.1` reproduces AgentV's classic tolerance, with a delta of exactly t a tie).
 *
 * Floating noise. Deltas and mean_delta are rounded to 9 decimals (and -0 made 0), so
 * 0.85 - 0.75 is 0.1, not 0.09999999999999998, and "mean_delta == 0" in the decision rules means
 * what a reader of the numbers expects.
 */
import type { IndexRow } from '../model/artifacts.js';
import { InputError } from '../derive/export.js';
import { decide, type Decision } from './decide.js';
import { distinct, filterTargets } from './keys.js';
import { loadRun } from './run-reader.js';

export interface CompareOptions {
  /** Run workspace, its index.jsonl, or a plain results JSONL file. */
  baseline: string;
  candidate: string;
  cwd?: string;
  /** Tie band: |delta| <= threshold is a tie. Default 0. */
  threshold?: number;
  /** Narrow both sides to these targets. */
  targets?: string[];
  /** Narrow one side (overrides `targets` for that side). */
  baselineTargets?: string[];
  candidateTargets?: string[];
  /** Apply seed 004's keep/discard rules. */
  decide?: boolean;
  /** Artifacts for the simplicity rule: line count of a file, total bytes of a directory. */
  baselineArtifact?: string;
  candidateArtifact?: string;
}

export type Outcome = 'win' | 'loss' | 'tie';

export interface TestComparison {
  test_id: string;
  /** Present when matching by (test_id, target). */
  target?: string;
  baseline: number;
  candidate: number;
  delta: number;
  outcome: Outcome;
  /** Attempts averaged on each side (present only when a side had more than one). */
  attempts?: { baseline: number; candidate: number };
}

export interface UnmatchedTest {
  test_id: string;
  target?: string;
}

export interface CompareSide {
  path: string;
  run_id: string;
  targets: string[];
  rows: number;
}

export interface CompareReport {
  baseline: CompareSide;
  candidate: CompareSide;
  match_by: 'test_id' | 'test_id+target';
  threshold: number;
  matched: number;
  unmatched: { baseline_only: UnmatchedTest[]; candidate_only: UnmatchedTest[] };
  tests: TestComparison[];
  summary: { wins: number; losses: number; ties: number; mean_delta: number };
  decision?: Decision;
  /** True when mean_delta < 0 (the CLI exits 1). */
  regression: boolean;
  /** Manifest problems of either side (malformed index lines are skipped, not compared). */
  warnings: string[];
}

/** Round to 9 decimals; never -0. */
export function roundDelta(x: number): number {
  const r = Math.round(x * 1e9) / 1e9;
  return r === 0 ? 0 : r;
}

export function classify(delta: number, threshold: number): Outcome {
  if (delta > threshold) return 'win';
  if (delta < -threshold) return 'loss';
  return 'tie';
}

interface Group {
  test_id: string;
  target: string;
  sum: number;
  n: number;
}

function group(rows: IndexRow[], byTarget: boolean): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const row of rows) {
    const key = byTarget ? JSON.stringify([row.test_id, row.target]) : row.test_id;
    const g = groups.get(key) ?? { test_id: row.test_id, target: row.target, sum: 0, n: 0 };
    g.sum += row.score;
    g.n++;
    groups.set(key, g);
  }
  return groups;
}

function narrow(rows: IndexRow[], side: string, path: string, targets: string[] | undefined): IndexRow[] {
  const kept = filterTargets(rows, targets);
  if (kept.length === 0) {
    const available = distinct(rows.map((r) => r.target)).join(', ') || 'none';
    const why = rows.length === 0 ? 'has no rows' : `has no rows for target ${targets!.join(', ')} (targets: ${available})`;
    throw new InputError(`${side} ${path} ${why}`);
  }
  return kept;
}

function matchMode(b: string[], c: string[]): 'test_id' | 'test_id+target' {
  if (b.length === 1 && c.length === 1) return 'test_id';
  const same = b.length === c.length && b.every((t) => c.includes(t));
  if (same) return 'test_id+target';
  throw new InputError(
    `cannot tell which rows to compare: the baseline holds target${b.length === 1 ? '' : 's'} ${b.join(', ')} and the candidate ${c.join(', ')} — ` +
      'pick one target per side with --target, or --baseline-target and --candidate-target',
  );
}

export async function compareRuns(opts: CompareOptions): Promise<CompareReport> {
  const threshold = opts.threshold ?? 0;
  if (!Number.isFinite(threshold) || threshold < 0) throw new InputError(`--threshold must be a number >= 0 (got ${opts.threshold})`);
  const load = (path: string) => loadRun(path, { cwd: opts.cwd, allowResultsFile: true });
  const [baseRun, candRun] = await Promise.all([load(opts.baseline), load(opts.candidate)]);
  const baseRows = narrow(baseRun.rows, 'baseline', opts.baseline, opts.baselineTargets ?? opts.targets);
  const candRows = narrow(candRun.rows, 'candidate', opts.candidate, opts.candidateTargets ?? opts.targets);
  const baseTargets = distinct(baseRows.map((r) => r.target));
  const candTargets = distinct(candRows.map((r) => r.target));
  const mode = matchMode(baseTargets, candTargets);
  const byTarget = mode === 'test_id+target';
  const base = group(baseRows, byTarget);
  const cand = group(candRows, byTarget);

  const tests: TestComparison[] = [];
  const baselineOnly: UnmatchedTest[] = [];
  let deltaSum = 0;
  for (const [key, b] of base) {
    const c = cand.get(key);
    if (!c) {
      baselineOnly.push(byTarget ? { test_id: b.test_id, target: b.target } : { test_id: b.test_id });
      continue;
    }
    const bScore = roundDelta(b.sum / b.n);
    const cScore = roundDelta(c.sum / c.n);
    const raw = c.sum / c.n - b.sum / b.n;
    deltaSum += raw;
    const delta = roundDelta(raw);
    const t: TestComparison = { test_id: b.test_id, ...(byTarget ? { target: b.target } : {}), baseline: bScore, candidate: cScore, delta, outcome: classify(delta, threshold) };
    if (b.n > 1 || c.n > 1) t.attempts = { baseline: b.n, candidate: c.n };
    tests.push(t);
  }
  const candidateOnly = [...cand].filter(([key]) => !base.has(key)).map(([, c]) => (byTarget ? { test_id: c.test_id, target: c.target } : { test_id: c.test_id }));
  if (tests.length === 0) {
    throw new InputError(`no test matched between baseline ${opts.baseline} and candidate ${opts.candidate} (matching by ${mode}) — are they runs of the same eval?`);
  }
  const summary = {
    wins: tests.filter((t) => t.outcome === 'win').length,
    losses: tests.filter((t) => t.outcome === 'loss').length,
    ties: tests.filter((t) => t.outcome === 'tie').length,
    mean_delta: roundDelta(deltaSum / tests.length),
  };
  const report: CompareReport = {
    baseline: { path: opts.baseline, run_id: baseRun.runId, targets: baseTargets, rows: baseRows.length },
    candidate: { path: opts.candidate, run_id: candRun.runId, targets: candTargets, rows: candRows.length },
    match_by: mode,
    threshold,
    matched: tests.length,
    unmatched: { baseline_only: baselineOnly, candidate_only: candidateOnly },
    tests,
    summary,
    regression: summary.mean_delta < 0,
    warnings: [...baseRun.problems.map((p) => `baseline ${opts.baseline}: ${p}`), ...candRun.problems.map((p) => `candidate ${opts.candidate}: ${p}`)],
  };
  if (opts.decide) {
    report.decision = await decide(summary, { baselineArtifact: opts.baselineArtifact, candidateArtifact: opts.candidateArtifact, cwd: opts.cwd });
  } else if (opts.baselineArtifact !== undefined || opts.candidateArtifact !== undefined) {
    throw new InputError('--baseline-artifact and --candidate-artifact are used by --decide; add --decide');
  }
  return report;
}
