/** Comparing runs: `compare`, the agentv-bench keep/discard rules, and the light score rows they read. */
export {
  compareRuns,
  compareTargets,
  compareScoreRows,
  classify,
  normalizedGain,
  DEFAULT_COMPARE_THRESHOLD,
  type CompareTargetsOptions,
  type MatrixReport,
  type TargetPairReport,
  type PairwiseComparison,
  type CompareOptions,
  type CompareReport,
  type CompareSide,
  type CompareSummary,
  type MatchedTest,
  type Outcome,
} from './compare.js';
export { decide, measureArtifact, countLines, type Decision, type DecideOptions, type DecisionSummary, type ArtifactMeasure } from './keep-discard.js';
export { loadScoreRows, resolveManifest, type ScoreRow, type ScoreSource } from './score-rows.js';
