/**
 * The results library: inspecting, validating, combining, deleting and comparing run
 * workspaces. Each command of the CLI is one function here taking a typed options object and
 * returning plain data; printing is the CLI's business.
 */
export { loadRun, readSidecarJson, readSidecarText, sidecarPath, workspaceDirOf, RunReadError } from './run-reader.js';
export type { LoadedRun, LoadRunOptions, RunIssue, SidecarKind } from './run-reader.js';
export { summarizeRun, recomputeSummary } from './summary.js';
export type { SummaryOptions, RunSummaryReport } from './summary.js';
export { listFailures } from './failures.js';
export type { FailuresOptions, FailuresReport, FailingCase, FailedAssertion, FailedGrader } from './failures.js';
export { showCases } from './show.js';
export type { ShowOptions, ShowReport, CaseDetails } from './show.js';
export { validateRun } from './validate.js';
export type { ValidateOptions, ValidationReport, ValidationProblem } from './validate.js';
export { combineRuns } from './combine.js';
export type { CombineOptions, CombineResult, CombineSourceReport, OnDuplicate } from './combine.js';
export { planDelete, deleteRuns } from './delete.js';
export type { DeleteOptions, DeletePlan, DeleteTarget } from './delete.js';
export { compareRuns, compareTargets, compareScoreRows, classify, normalizedGain, DEFAULT_COMPARE_THRESHOLD } from './compare.js';
export type {
  CompareTargetsOptions,
  MatrixReport,
  TargetPairReport,
  PairwiseComparison,
  CompareOptions,
  CompareReport,
  CompareSide,
  CompareSummary,
  MatchedTest,
  Outcome,
} from './compare.js';
export { loadScoreRows, resolveManifest } from './score-rows.js';
export type { ScoreRow, ScoreSource } from './score-rows.js';
export { decide, measureArtifact, countLines } from './decide.js';
export type { Decision, DecideOptions, DecisionSummary, ArtifactMeasure } from './decide.js';
export { caseKey, describeCase, globToRegExp, matchAny } from './keys.js';
