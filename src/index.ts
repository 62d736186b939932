// The public types use Buffer, NodeJS.ProcessEnv and node:http (a Node.js library); @types/node is a dependency.
/// <reference types="node" preserve="true" />
/**
 * agentv-results as a library: the verbs a program needs, each a function taking a typed options
 * object and returning plain data (the CLI is a thin shell over the same functions).
 *
 * Everything else is private, except two documented subpath entries:
 * - `agentv-results/schemas`: the zod schemas of every row and artifact, and their JSON Schemas;
 * - `agentv-results/merge`: the three-way merges of our files and the merge-driver entry (no git).
 *
 * @module agentv-results
 */

// Derive: AgentV output in, the run bundle out.
export { exportRun, InputError, type DuplicatePolicy, type ExportOptions, type ExportResult } from './derive/export.js';
export { LAYOUTS, type LayoutName } from './derive/layouts.js';

// Load and inspect a run of any AgentV layout.
export { loadRun, RunReadError, type LoadedRun, type LoadRunOptions, type RunIssue } from './results/run-reader.js';
export { summarizeRun, type RunSummaryReport, type SummaryOptions } from './results/summary.js';
export { listFailures, type FailuresOptions, type FailuresReport } from './results/failures.js';
export { showCases, type ShowOptions, type ShowReport } from './results/show.js';
export { validateRun, type ValidateOptions, type ValidationProblem, type ValidationReport } from './results/validate.js';
export { combineRuns, type CombineOptions, type CombineResult } from './results/combine.js';
export { deleteRuns, planDelete, type DeleteOptions, type DeletePlan } from './results/delete.js';

// Report, compare, trend, autoresearch.
export { generateReport, type ReportOptions, type ReportResult } from './report/generate.js';
export { compareRuns, DEFAULT_COMPARE_THRESHOLD, type CompareOptions, type CompareReport } from './results/compare.js';
export { gateRuns, DEFAULT_GATE_TOLERANCE, type GateOptions, type GateReport, type GateTest, type TestSetPolicy } from './results/gate.js';
export { decide, type DecideOptions, type Decision } from './results/decide.js';
export { trend, DEFAULT_SLOPE_THRESHOLD, type TrendAllOptions } from './trend/index.js';
export type { TrendReport, TrendSeries, TrendRunPoint, TrendDirection, SkippedSeries, TrendOptions } from './trend/index.js';
export { readIterations, recordCycle, type Iteration, type RecordCycleOptions, type RecordCycleResult } from './autoresearch/index.js';

// Publish, sync, and read the shared branches.
export { publish, type PublishOptions, type PublishResult } from './publish/publish.js';
export { sync, type SyncOptions, type SyncResult } from './sync/sync.js';
export { resolveSyncBranch, type ResolveSyncOptions, type ResolveSyncResult } from './sync/resolve.js';
export { listRuns, type ListedRun, type ListOptions, type ListResult } from './history/list.js';
export { pull, type PullOptions, type PullResult } from './history/pull.js';
export { resolveRunNames, type ResolvedRun, type ResolvedRuns, type RunNameOptions } from './history/run-names.js';
export { status, type StatusExtra, type StatusReport } from './daemon/status-sections.js';
export type { StatusOptions } from './history/status.js';
export { loadResultsConfig, ConfigError, type ResultsConfig } from './branch/config.js';
export { PublishError, type TargetOptions } from './branch/target.js';
export { installDrivers, uninstallDrivers } from './merge/install.js';

// Tags and feedback.
export {
  editTags,
  FeedbackRevisionMismatch,
  readFeedback,
  readTags,
  setFeedback,
  TagRevisionMismatch,
  type FeedbackDoc,
  type FeedbackOptions,
  type TagOptions,
  type TagsDoc,
} from './overlays/write.js';

// WIP checkpoints of running evals.
export { cleanWip, listWip, recoverWip, WipError, WipSession } from './wip/index.js';
export type { CleanOptions, CleanResult, ListWipOptions, RecoverOptions, RecoverResult, WipEntry, WipListing, WipSessionOptions } from './wip/index.js';

// The daemon, exec and the Dashboard server.
export { execRun, runDaemon, type DaemonOptions, type DaemonReport, type ExecOptions, type ExecReport } from './daemon/index.js';
export { startServer, ServeError, type RunningServer, type ServeOptions } from './serve/index.js';

// The error model: every failure is an AgentvResultsError with a stable `code` and its exit code.
export { AgentvResultsError, EXIT_CODE_BY_ERROR, exitCodeFor, InvalidArgumentsError, type ErrorCode } from './util/errors.js';
