/** Runs on disk: reading a run of any AgentV layout, deriving a run bundle from rows, and the commands over local runs (summary, failures, show, validate, combine, delete). */
export { exportRun, type DuplicatePolicy, type ExportOptions, type ExportResult } from './export/export.js';
export { LAYOUTS, type LayoutName } from './export/output-layouts.js';
export {
  loadRun,
  readSidecarJson,
  readSidecarText,
  sidecarPath,
  workspaceDirOf,
  type LoadedRun,
  type LoadRunOptions,
  type RunIssue,
  type SidecarKind,
} from './read/run-reader.js';
export { caseKey, describeCase, globToRegExp, matchAny } from './read/case-keys.js';
export { summarizeRun, recomputeSummary, type SummaryOptions, type RunSummaryReport } from './summary.js';
export { listFailures, type FailuresOptions, type FailuresReport, type FailingCase, type FailedAssertion, type FailedGrader } from './failures.js';
export { showCases, type ShowOptions, type ShowReport, type CaseDetails } from './show.js';
export { validateRun, type ValidateOptions, type ValidationReport, type ValidationProblem } from './validate.js';
export { combineRuns, type CombineOptions, type CombineResult, type CombineSourceReport, type OnDuplicate } from './combine.js';
export { planDelete, deleteRuns, type DeleteOptions, type DeletePlan, type DeleteTarget } from './delete.js';
