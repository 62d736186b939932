/** Comparing runs: `compare`, `gate`, the agentv-bench keep/discard rules, and the light score rows they read. */
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
export {
  gateRuns,
  decideGate,
  DEFAULT_GATE_CONFIDENCE,
  DEFAULT_GATE_HISTORY,
  DEFAULT_GATE_TOLERANCE,
  type GateOptions,
  type GateReport,
  type GateTest,
  type TestSetPolicy,
} from './gate.js';
export { decide, measureArtifact, countLines, type Decision, type DecideOptions, type DecisionSummary, type ArtifactMeasure } from './keep-discard.js';
export { loadScoreRows, resolveManifest, type ScoreRow, type ScoreSource } from './score-rows.js';
