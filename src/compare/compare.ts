/**
 * `compare`: score deltas between a baseline and a candidate run, answering as `agentv compare`
 * answers on the same two sources — the agentv-bench skill's keep/discard loop reads these
 * numbers, so the two tools must not decide differently.
 *
 * The contract we follow (AgentV 5, two-source mode):
 * - rows are matched by test_id alone; when a test id has several rows on one side, the last row
 *   in file order is the one compared (we say so in a warning, and `targets` narrows first);
 * - outcome: delta >= threshold is a win, delta <= -threshold a loss, anything between a tie, with
 *   threshold 0.1 by default, on the unrounded delta (so 0.85 - 0.75 = 0.0999… is a tie);
 * - JSON: `matched[] {test_id, score1, score2, delta, normalized_gain, outcome}`,
 *   `unmatched {file1, file2}` (row counts), `summary {total, matched, wins, losses, ties,
 *   mean_delta, mean_normalized_gain}`; means rounded to 3 decimals, per-test values raw;
 * - normalized gain is Hake's (c - b) / (1 - b), null when the baseline is already 1;
 * - the check fails (exit 1) when the rounded mean_delta is below 0.
 * Our extras ride along without renaming any of those: the unmatched test ids, the threshold,
 * what each side was read from, warnings, and the agentv-bench skill's keep/discard decision.
 *
 * Two choices of ours, off by default (so the CLI answers as agentv compare does) and on for the
 * Dashboard's `/api/compare` — one function either way, so they cannot answer differently:
 * - `order: 'older-first'`: the older run is the baseline whatever order the two were given in
 *   (a run's time is its earliest row timestamp; `order.swapped` says when the sides were turned);
 * - `allTargets`: rows are matched per (test id, target), so a run holding two targets compares
 *   both instead of the last row of each test id; `'auto'` does so only when a side holds more than
 *   one target and the two sides share a target (otherwise matching by test id loses nothing).
 *   The rule lives in ./match-rule.ts; when matching by test id hides rows, `pooled` says how many
 *   and `match_note` says so in one sentence (the text, Markdown and Dashboard show it).
 */
import { InputError } from '../errors/input-error.js';
import { decide, type Decision } from './keep-discard.js';
import { loadScoreRows, type ScoreRow } from './score-rows.js';
import { chooseRule, matchKey, pooledRows, ruleNote } from './match-rule.js';
import { flag, parseOptions, PathsCwdField } from '../options/verb-options.js';
import { RunsShownAsField, ShownAsField } from '../util/run-shown.js';
import * as z from 'zod';
import type { CompareReportBase, CompareSide, CompareSummary, MatchedTest, Outcome, UnmatchedPair } from './report-types.js';

/** AgentV's default tie band. */
export const DEFAULT_COMPARE_THRESHOLD = 0.1;

/** The win/loss band of `compare` (and of autoresearch's cycles): one field, one default. */
export const CompareThresholdField = z
  .number()
  .min(0)
  .default(DEFAULT_COMPARE_THRESHOLD)
  .meta(
    flag(
      '--threshold <delta>',
      `Win when delta >= threshold, loss when delta <= -threshold, else tie (default ${DEFAULT_COMPARE_THRESHOLD}, as agentv compare)`,
    ),
  );

/** Match rows per (test id, target) instead of test id alone; `'auto'`: when a side holds several targets. */
const allTargetsField = z.union([z.boolean(), z.literal('auto')]);

/** `compareRuns`'s options (the `compare <baseline> <candidate>` command's flags come from the same fields). */
export const CompareOptionsSchema = z.strictObject({
  /** Run workspace, its index.jsonl, or a results JSONL file. */
  baseline: z.string(),
  candidate: z.string(),
  /**
   * The names the runs are known by, when they are read from copies (published runs pulled into a
   * scratch directory: their run ids): messages, warnings and `sources` name them so. Default: the paths as given.
   */
  shownAs: RunsShownAsField,
  /** Win when delta >= threshold, loss when delta <= -threshold. Default 0.1 (AgentV's). */
  threshold: CompareThresholdField,
  /** Narrow both sides to these targets before matching. */
  targets: z
    .array(z.string())
    .optional()
    .meta(flag('--target <name>', 'Compare only this target on both sides (repeatable; use it when a file holds several targets)')),
  /** Narrow one side (overrides `targets` for that side). */
  baselineTargets: z
    .array(z.string())
    .optional()
    .meta(flag('--baseline-target <name>', 'Narrow the baseline to this target (repeatable). One run: the baseline target (agentv: --baseline)')),
  candidateTargets: z
    .array(z.string())
    .optional()
    .meta(flag('--candidate-target <name>', 'Narrow the candidate to this target (repeatable). One run: the candidate target (agentv: --candidate)')),
  /** Match rows per (test id, target) instead of test id alone; `'auto'`: when a side holds several targets. Default false (AgentV's). */
  allTargets: allTargetsField
    .default(false)
    .meta(flag('--all-targets', 'Two runs: match rows per (test id, target) instead of test id alone, so every target of a multi-target run is compared')),
  /** `older-first`: the older run is the baseline, whichever was given first. Default `given`. */
  order: z.enum(['given', 'older-first']).default('given'),
  /** Apply the agentv-bench skill's keep/discard rules. */
  decide: z
    .boolean()
    .default(false)
    .meta(
      flag('--decide', 'Print the keep/discard decision (wins > losses -> keep; mean_delta == 0 and the candidate artifact is simpler -> keep; else discard)'),
    ),
  /** Artifacts for the simplicity rule: line count of a file, total bytes of a directory. */
  baselineArtifact: z
    .string()
    .optional()
    .meta(flag('--baseline-artifact <path>', 'Baseline prompt/skill for the simplicity rule (file: line count; directory: total bytes)')),
  candidateArtifact: z.string().optional().meta(flag('--candidate-artifact <path>', 'Candidate prompt/skill for the simplicity rule')),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
});

/** What a caller passes to `compareRuns`. */
export type CompareOptions = z.input<typeof CompareOptionsSchema>;
/** `compareRuns`'s options once parsed: every default applied. */
export type CompareParsed = z.output<typeof CompareOptionsSchema>;

export type { CompareReportBase, CompareSide, CompareSummary, MatchedTest, Outcome, UnmatchedPair } from './report-types.js';

export interface CompareReport extends CompareReportBase {
  decision?: Decision;
}

export function classify(delta: number, threshold: number): Outcome {
  if (delta >= threshold) return 'win';
  if (delta <= -threshold) return 'loss';
  return 'tie';
}

/** Hake's normalized gain; null when the baseline leaves no headroom. */
export function normalizedGain(baseline: number, candidate: number): number | null {
  return baseline >= 1 ? null : (candidate - baseline) / (1 - baseline);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function narrow(rows: ScoreRow[], side: string, source: string, targets: string[] | undefined): ScoreRow[] {
  if (!targets || targets.length === 0) return rows;
  const kept = rows.filter((r) => r.target !== undefined && targets.includes(r.target));
  if (kept.length === 0) {
    const available = [...new Set(rows.map((r) => r.target ?? '(none)'))].join(', ');
    throw new InputError(`${side} ${source} has no rows for target ${targets.join(', ')} (targets: ${available})`);
  }
  return kept;
}

const pairKey = (r: ScoreRow) => matchKey(r, 'test+target');

function duplicateWarning(side: string, source: string, rows: ScoreRow[], byTarget = false): string | null {
  const count = new Map<string, number>();
  for (const r of rows) {
    const k = byTarget ? pairKey(r) : r.test_id;
    count.set(k, (count.get(k) ?? 0) + 1);
  }
  if (byTarget) {
    const dup = [...count].filter(([, n]) => n > 1).length;
    return dup === 0 ? null : `${side} ${source}: ${dup} (test id, target) pair(s) appear in more than one row; the last row of each is compared`;
  }
  const dup = [...count].filter(([, n]) => n > 1).map(([id]) => id);
  if (dup.length === 0) return null;
  const targets = [...new Set(rows.map((r) => r.target).filter((t): t is string => !!t))];
  const hint = targets.length > 1 ? ` — it holds targets ${targets.join(', ')}: pick one with --target or --${side}-target` : '';
  return `${side} ${source}: ${dup.length} test id(s) appear in more than one row (${dup.slice(0, 3).join(', ')}${dup.length > 3 ? ', …' : ''}); the last row of each is compared, as agentv compare does${hint}`;
}

/**
 * Compare two already-loaded row lists (the pure core, shared with autoresearch). `byTarget`:
 * rows are matched per (test id, target) instead of test id alone.
 */
export function compareScoreRows(
  baseline: ScoreRow[],
  candidate: ScoreRow[],
  threshold = DEFAULT_COMPARE_THRESHOLD,
  byTarget = false,
): Pick<CompareReport, 'matched' | 'unmatched' | 'summary'> {
  const keyOf = byTarget ? pairKey : (r: ScoreRow) => r.test_id;
  // Map insertion keeps the first position of a key and set() keeps its last value: the order
  // and the "last row wins" rule AgentV's output has.
  const base = new Map<string, ScoreRow>();
  for (const r of baseline) base.set(keyOf(r), r);
  const cand = new Map<string, ScoreRow>();
  for (const r of candidate) cand.set(keyOf(r), r);
  const matched: MatchedTest[] = [];
  for (const [key, b] of base) {
    const c = cand.get(key);
    if (c === undefined) continue;
    const [score1, score2] = [b.score, c.score];
    const delta = score2 - score1;
    const m: MatchedTest = { test_id: b.test_id, score1, score2, delta, normalized_gain: normalizedGain(score1, score2), outcome: classify(delta, threshold) };
    if (byTarget && b.target !== undefined) m.target = b.target;
    matched.push(m);
  }
  const matchedKeys = new Set([...base.keys()].filter((k) => cand.has(k)));
  const ids = (rows: Map<string, ScoreRow>, other: Map<string, ScoreRow>) => [...new Set([...rows].filter(([k]) => !other.has(k)).map(([, r]) => r.test_id))];
  const pairs = (rows: Map<string, ScoreRow>, other: Map<string, ScoreRow>): UnmatchedPair[] =>
    [...rows].filter(([k]) => !other.has(k)).map(([, r]) => ({ test_id: r.test_id, target: r.target ?? '' }));
  const gains = matched.map((m) => m.normalized_gain).filter((g): g is number => g !== null);
  const summary: CompareSummary = {
    total: baseline.length + candidate.length,
    matched: matched.length,
    wins: matched.filter((m) => m.outcome === 'win').length,
    losses: matched.filter((m) => m.outcome === 'loss').length,
    ties: matched.filter((m) => m.outcome === 'tie').length,
    mean_delta: matched.length > 0 ? round3(matched.reduce((s, m) => s + m.delta, 0) / matched.length) : 0,
    mean_normalized_gain: gains.length > 0 ? round3(gains.reduce((s, g) => s + g, 0) / gains.length) : null,
  };
  const unmatched: CompareReport['unmatched'] = {
    file1: baseline.filter((r) => !matchedKeys.has(keyOf(r))).length,
    file2: candidate.filter((r) => !base.has(keyOf(r))).length,
    baseline_only: ids(base, cand),
    candidate_only: ids(cand, base),
  };
  if (byTarget) {
    unmatched.baseline_only_pairs = pairs(base, cand);
    unmatched.candidate_only_pairs = pairs(cand, base);
  }
  return { matched, unmatched, summary };
}

/** A run's time for `older-first`: its earliest row timestamp (ISO strings compare as times), null when no row has one. */
function earliest(rows: ScoreRow[]): number | null {
  let min: number | null = null;
  for (const r of rows) {
    const t = r.timestamp === undefined ? Number.NaN : Date.parse(r.timestamp);
    if (!Number.isNaN(t) && (min === null || t < min)) min = t;
  }
  return min;
}

/** Compare two runs test by test (wins, losses, ties, mean delta), as `agentv-results compare <baseline> <candidate>` does. */
export async function compareRuns(options: CompareOptions): Promise<CompareReport> {
  return (await loadComparison(parseOptions('compareRuns', CompareOptionsSchema, options))).report;
}

/** The comparison and the (narrowed) rows it was made from, from options parsed at a door (compareRuns, gateRuns): the gate reads the rows' verdicts. */
export async function loadComparison(opts: CompareParsed): Promise<{ report: CompareReport; baseline: ScoreRow[]; candidate: ScoreRow[] }> {
  const threshold = opts.threshold;
  if (!opts.decide && (opts.baselineArtifact !== undefined || opts.candidateArtifact !== undefined)) {
    throw new InputError('--baseline-artifact and --candidate-artifact are used by --decide; add --decide');
  }
  const [first, second] = await Promise.all([
    loadScoreRows(opts.baseline, { cwd: opts.cwd, shownAs: opts.shownAs?.baseline }),
    loadScoreRows(opts.candidate, { cwd: opts.cwd, shownAs: opts.shownAs?.candidate }),
  ]);
  const preWarnings: string[] = [];
  let swapped = false;
  if (opts.order === 'older-first') {
    const [t1, t2] = [earliest(first.rows), earliest(second.rows)];
    if (t1 === null || t2 === null)
      preWarnings.push(`cannot tell which run is older (${t1 === null ? first.source : second.source} has no row timestamp): the first given is the baseline`);
    else swapped = t2 < t1;
  }
  // After a swap the names, target narrowing and artifacts follow their run.
  const o: CompareParsed = swapped
    ? {
        ...opts,
        baseline: opts.candidate,
        candidate: opts.baseline,
        baselineTargets: opts.candidateTargets,
        candidateTargets: opts.baselineTargets,
        baselineArtifact: opts.candidateArtifact,
        candidateArtifact: opts.baselineArtifact,
      }
    : opts;
  const [baseSrc, candSrc] = swapped ? [second, first] : [first, second];
  const baseRows = narrow(baseSrc.rows, 'baseline', baseSrc.source, o.baselineTargets ?? o.targets);
  const candRows = narrow(candSrc.rows, 'candidate', candSrc.source, o.candidateTargets ?? o.targets);
  const rule = chooseRule(baseRows, candRows, o.allTargets);
  const byTarget = rule === 'test+target';
  const pooled = pooledRows(baseRows, candRows, rule);
  const core = compareScoreRows(baseRows, candRows, threshold, byTarget);
  if (core.summary.matched === 0) {
    throw new InputError(
      `no ${byTarget ? '(test id, target) pair' : 'test id'} matched between baseline ${baseSrc.source} and candidate ${candSrc.source} — are they runs of the same eval?`,
    );
  }
  const side = (src: typeof baseSrc, rows: ScoreRow[]): CompareSide => ({
    source: src.source,
    path: src.path,
    rows: rows.length,
    targets: [...new Set(rows.map((r) => r.target).filter((t): t is string => t !== undefined))],
  });
  const warnings = [...preWarnings, ...baseSrc.warnings, ...candSrc.warnings];
  for (const w of [duplicateWarning('baseline', baseSrc.source, baseRows, byTarget), duplicateWarning('candidate', candSrc.source, candRows, byTarget)])
    if (w) warnings.push(w);
  const report: CompareReport = {
    ...core,
    match: rule,
    pooled,
    match_note: ruleNote(rule, pooled),
    order: { rule: opts.order, swapped },
    threshold,
    sources: { baseline: side(baseSrc, baseRows), candidate: side(candSrc, candRows) },
    warnings,
    regression: core.summary.mean_delta < 0,
  };
  if (o.decide) {
    report.decision = await decide(core.summary, { baselineArtifact: o.baselineArtifact, candidateArtifact: o.candidateArtifact, cwd: o.cwd });
  }
  return { report, baseline: baseRows, candidate: candRows };
}

/** One run holding several targets: `agentv compare <run>`'s single-source modes (the one-run flags of `compare` come from these fields). */
export const CompareTargetsOptionsSchema = z.strictObject({
  run: z.string(),
  threshold: CompareThresholdField,
  /** Pairwise: this target against `candidate`. Alone: the target whose regressions fail the matrix. */
  baseline: z.string().optional().meta(flag('--baseline <target>', "One run only, agentv compare's spelling of --baseline-target")),
  candidate: z.string().optional().meta(flag('--candidate <target>', "One run only, agentv compare's spelling of --candidate-target")),
  /** Keep only these targets (AgentV's `--targets`). */
  targets: z
    .array(z.string())
    .optional()
    .meta(flag('--targets <name>', "One run only: the targets in the matrix (repeatable; agentv compare's spelling of --target)")),
  /** The name the run is known by, when it is read from a copy (a published run's id): messages and warnings name it so. Default: the path as given. */
  shownAs: ShownAsField,
  cwd: PathsCwdField,
});

export type CompareTargetsOptions = z.input<typeof CompareTargetsOptionsSchema>;

export interface PairwiseComparison extends Pick<CompareReport, 'matched' | 'summary'> {
  unmatched: CompareReport['unmatched'];
  baseline?: string;
  candidate?: string;
}

export interface MatrixReport {
  mode: 'matrix';
  matrix: { test_id: string; scores: Record<string, number> }[];
  pairwise: PairwiseComparison[];
  targets: string[];
  threshold: number;
  warnings: string[];
  /** With a baseline target: some target scored lower than it on average (exit 1). */
  regression: boolean;
}

export interface TargetPairReport extends PairwiseComparison {
  mode: 'pairwise';
  threshold: number;
  warnings: string[];
  regression: boolean;
}

/**
 * Targets of one run compared with each other, as `agentv compare <run> [--baseline a
 * [--candidate b]] [--targets …]` does: every row needs a target; with both names, a pairwise
 * comparison of the two targets; otherwise a score matrix (targets sorted, test ids sorted) with
 * every pair compared, failing only when a `baseline` target is given and another target scored
 * lower than it on average.
 */
export async function compareTargets(options: CompareTargetsOptions): Promise<MatrixReport | TargetPairReport> {
  const opts = parseOptions('compareTargets', CompareTargetsOptionsSchema, options);
  const threshold = opts.threshold;
  const src = await loadScoreRows(opts.run, { cwd: opts.cwd, shownAs: opts.shownAs });
  const missing = src.rows.filter((r) => r.target === undefined).length;
  if (missing > 0) throw new InputError(`${src.source}: ${missing} row(s) without a target — comparing the targets of one run needs a target on every row`);
  let groups = new Map<string, ScoreRow[]>();
  for (const r of src.rows) groups.set(r.target!, [...(groups.get(r.target!) ?? []), r]);
  if (opts.targets && opts.targets.length > 0) {
    const kept = new Map([...groups].filter(([t]) => opts.targets!.includes(t)));
    if (kept.size === 0) throw new InputError(`none of the targets ${opts.targets.join(', ')} is in ${src.source} (targets: ${[...groups.keys()].join(', ')})`);
    groups = new Map(opts.targets.filter((t) => kept.has(t)).map((t) => [t, kept.get(t)!]));
  }
  const available = () => [...groups.keys()].join(', ');
  if (opts.baseline !== undefined && !groups.has(opts.baseline))
    throw new InputError(`baseline target ${opts.baseline} is not in ${src.source} (targets: ${available()})`);
  if (opts.candidate !== undefined && opts.baseline === undefined) throw new InputError('a candidate target needs a baseline target too');
  if (opts.baseline !== undefined && opts.candidate !== undefined) {
    if (!groups.has(opts.candidate)) throw new InputError(`candidate target ${opts.candidate} is not in ${src.source} (targets: ${available()})`);
    const core = compareScoreRows(groups.get(opts.baseline)!, groups.get(opts.candidate)!, threshold);
    return { mode: 'pairwise', ...core, threshold, warnings: src.warnings, regression: core.summary.mean_delta < 0 };
  }
  const targets = [...groups.keys()].sort();
  const lookup = new Map(targets.map((t) => [t, new Map(groups.get(t)!.map((r) => [r.test_id, r.score]))]));
  const ids = [...new Set(src.rows.filter((r) => groups.has(r.target!)).map((r) => r.test_id))].sort();
  const matrix = ids.map((test_id) => {
    const scores: Record<string, number> = {};
    for (const t of targets) {
      const v = lookup.get(t)!.get(test_id);
      if (v !== undefined) scores[t] = v;
    }
    return { test_id, scores };
  });
  const pairwise: PairwiseComparison[] = [];
  for (let i = 0; i < targets.length; i++) {
    for (let j = i + 1; j < targets.length; j++) {
      pairwise.push({ ...compareScoreRows(groups.get(targets[i]!)!, groups.get(targets[j]!)!, threshold), baseline: targets[i], candidate: targets[j] });
    }
  }
  // The baseline target can sit on either side of a sorted pair.
  const regression =
    opts.baseline !== undefined &&
    pairwise.some((p) => (p.baseline === opts.baseline && p.summary.mean_delta < 0) || (p.candidate === opts.baseline && p.summary.mean_delta > 0));
  return { mode: 'matrix', matrix, pairwise, targets, threshold, warnings: src.warnings, regression };
}
