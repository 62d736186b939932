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
export { exportRun, ExportOptionsSchema, type DuplicatePolicy, type ExportOptions, type ExportResult } from './runs/export/export.js';
export { DuplicatePolicySchema } from './runs/export/export-pass.js';
export { InputError } from './errors/input-error.js';
export { LAYOUTS, type LayoutName } from './runs/export/output-layouts.js';

// Load and inspect a run of any AgentV layout.
export { loadRun, LoadRunOptionsSchema, type LoadedRun, type LoadRunOptions, type RunIssue } from './runs/read/run-reader.js';
export { RunReadError } from './errors/read-errors.js';
export { summarizeRun, SummaryOptionsSchema, type RunSummaryReport, type SummaryOptions } from './runs/summary.js';
export { listFailures, FailuresOptionsSchema, type FailuresOptions, type FailuresReport } from './runs/failures.js';
export { showCases, ShowOptionsSchema, type ShowOptions, type ShowReport } from './runs/show.js';
export type { AttemptDetail, AttemptsDetail } from './runs/attempt-details.js';
export { attemptsOf, type Attempt, type Attempts, type AttemptVerdict } from './model/attempts.js';
export {
  attemptStats,
  meanAttemptRate,
  passAtK,
  passHatK,
  runAttemptStats,
  wilsonInterval,
  type AttemptStats,
  type AttemptTotals,
  type RateInterval,
  type RunAttemptStats,
  type TestAttemptStats,
} from './model/attempt-stats.js';
export { validateRun, ValidateOptionsSchema, type ValidateOptions, type ValidationProblem, type ValidationReport } from './runs/validate.js';
export { combineRuns, CombineOptionsSchema, type CombineOptions, type CombineResult } from './runs/combine.js';
export { deleteRuns, DeleteOptionsSchema, DeletePlanSchema, planDelete, type DeleteOptions, type DeletePlan } from './runs/delete.js';

// Report, compare, trend, autoresearch.
export { generateReport, ReportOptionsSchema, type ReportOptions, type ReportResult } from './report/generate.js';
export { compareRuns, CompareOptionsSchema, DEFAULT_COMPARE_THRESHOLD, type CompareOptions, type CompareReport } from './compare/compare.js';
export {
  compareTargets,
  CompareTargetsOptionsSchema,
  type CompareTargetsOptions,
  type MatrixReport,
  type PairwiseComparison,
  type TargetPairReport,
} from './compare/compare.js';
export { gateCheck, GateCheckOptionsSchema, type GateCheckOptions, type GateCheckResult, type GateVerdict } from './gate/gate-check.js';
export {
  gateRuns,
  GateOptionsSchema,
  DEFAULT_GATE_TOLERANCE,
  type GateAttempts,
  type GateCase,
  type GateDecision,
  type GateDecisionOptions,
  type GateHistoryInput,
  type GateHistoryReport,
  type GateOptions,
  type GateReport,
  type GateSetEntry,
  type GateTest,
  type HistoryCount,
  type NoisyTest,
  type TestSetPolicy,
} from './gate/gate.js';
export type { NoiseTestInput, NoiseTestResult, PassCount } from './model/noise-test.js';
export { decide, DecideOptionsSchema, DecisionSummarySchema, type DecideOptions, type Decision } from './compare/keep-discard.js';
export { trend, TrendOptionsSchema, PublishedListFlagsSchema, DEFAULT_SLOPE_THRESHOLD, type TrendAllOptions } from './trend/index.js';
export type { TrendReport, TrendSeries, TrendRunPoint, TrendDirection, SkippedSeries, TrendOptions } from './trend/index.js';
export { TrendSeriesOptionsSchema } from './trend/series.js';
export {
  readIterations,
  recordCycle,
  RecordCycleOptionsSchema,
  type Iteration,
  type RecordCycleOptions,
  type RecordCycleResult,
} from './autoresearch/index.js';
export { renderTrajectory, TrajectoryOptionsSchema, type TrajectoryOptions, type TrajectoryResult } from './autoresearch/record.js';

// The Markdown the verdict commands print (`--format markdown`: a PR comment or a job summary), from their reports.
export { compareMarkdown, gateErrorMarkdown, gateMarkdown, gateNoBaselineMarkdown, summaryMarkdown, type RunLink } from './report/markdown.js';
export { flakyMarkdown, trendMarkdown } from './trend/markdown.js';
export {
  flaky,
  FlakyOptionsSchema,
  type FlakyClass,
  type FlakyOptions,
  type FlakyReport,
  type FlakyRun,
  type FlakyRunCell,
  type FlakyTest,
} from './trend/flaky.js';

// Publish, sync, and read the shared branches.
export { publish, PublishOptionsSchema, type PublishOptions } from './publish/publish.js';
export type { PublishResult } from './publish/publish-job.js';
export { sync, SyncOptionsSchema, type SyncOptions, type SyncResult } from './sync/sync.js';
export type { AdoptedSyncBranch, KeptSyncBranch, SeenSyncBranch, SyncBranchAdoption } from './sync/adopt-agentv.js';
export { resolveSyncBranch, ResolveSyncOptionsSchema, type ResolveSyncOptions, type ResolveSyncResult } from './sync/resolve.js';
export { SyncConflictError } from './errors/publish-errors.js';
export { listRuns, ListOptionsSchema, type ListedRun, type ListOptions, type ListResult } from './branch-read/list.js';
export { pull, PullOptionsSchema, type PullOptions, type PullResult } from './branch-read/pull.js';
export {
  resolveRunNames,
  RunNameOptionsSchema,
  type FetchOnce,
  type ResolvedRun,
  type ResolvedRuns,
  type RunNameOptions,
} from './branch-read/run-names.js';
export { status, type StatusExtra, type StatusReport } from './status/status-sections.js';
export { StatusOptionsSchema, type StatusOptions } from './status/status.js';
export { loadResultsConfig, LoadConfigOptionsSchema, type ResultsConfig } from './repo/config.js';
export { ConfigError } from './errors/publish-errors.js';
export type { TargetOptions } from './repo/target.js';
export { PublishError, type PublishErrorData } from './errors/publish-errors.js';
export { driversState, installDrivers, uninstallDrivers, DriversOptionsSchema, InstallDriversOptionsSchema } from './merge/install.js';

// Archive (rollover) and retention (expire): each alone, or with the push the CLI and the daemon do.
export {
  rollover,
  RolloverOptionsSchema,
  DEFAULT_KEEP_DAYS,
  DEFAULT_KEEP_RUNS,
  type ArchivedRun,
  type RolloverOptions,
  type RolloverResult,
} from './archive/rollover.js';
export { expireRuns, RetentionOptionsSchema, DEFAULT_KEEP_TAGS, type ExpiredRun, type RetentionOptions, type RetentionResult } from './archive/retention.js';
export {
  expireAndPush,
  rolloverAndPush,
  ExpireAndPushOptionsSchema,
  RolloverAndPushOptionsSchema,
  type ExpireAndPushOptions,
  type PushArchiveOutcome,
  type RolloverAndPushOptions,
} from './archive/push-archive.js';
export { migrateStorage, MigrateOptionsSchema, type MigrateOptions, type MigrateResult } from './archive/storage-migrate.js';

// Tags and feedback.
export {
  editTags,
  EditTagsOptionsSchema,
  readFeedback,
  ReadFeedbackOptionsSchema,
  readTags,
  ReadTagsOptionsSchema,
  setFeedback,
  SetFeedbackOptionsSchema,
  type FeedbackDoc,
  type FeedbackOptions,
  type OverlayReadOptions,
  type ReadFeedbackOptions,
  type TagOptions,
  type TagsDoc,
} from './overlay-write/write.js';
export { FeedbackRevisionMismatch, TagRevisionMismatch } from './errors/overlay-errors.js';
export { moveTag, MoveTagOptionsSchema, type MoveTagOptions, type MoveTagResult } from './overlay-write/move-tag.js';

// WIP checkpoints of running evals.
// Each takes the target options (`cwd`, `remote`, `configFile`, `project`): no `Repo` to make.
export { WipSession, WipSessionOptionsSchema } from './wip/index.js';
export { WipError } from './errors/wip-errors.js';
export type { CleanResult, RecoverResult, WipEntry, WipListing, WipSessionOptions } from './wip/index.js';
export {
  checkpointWip,
  CheckpointWipOptionsSchema,
  cleanWipBranches,
  CleanWipBranchesOptionsSchema,
  listWipBranches,
  ListWipBranchesOptionsSchema,
  recoverWipRun,
  RecoverWipRunOptionsSchema,
  type CheckpointWipOptions,
  type CheckpointWipResult,
  type CleanWipBranchesOptions,
  type ListWipBranchesOptions,
  type RecoverWipRunOptions,
} from './wip/verbs.js';

// The daemon and exec.
export {
  DaemonOptionsSchema,
  execRun,
  ExecOptionsSchema,
  runDaemon,
  type DaemonOptions,
  type DaemonReport,
  type ExecOptions,
  type ExecReport,
} from './daemon/index.js';
// What the daemon's and exec's options take: their logger, the webhook read from an option or the environment.
export { createLogger, LoggerOptionsSchema, LogLevelSchema, type LogFormat, type LoggerOptions, type LogLevel } from './daemon/log.js';
export { DEFAULT_NOTIFY_AFTER_MS } from './daemon/outbox-worker.js';
export { webhookFrom, WebhookFromArgsSchema } from './util/webhook.js';
// Notices a verb tells once (a remote that cannot serve a shallow fetch): the CLI prints them on stderr; a program sets its own sink.
export { NoticeSinkArgsSchema, setNoticeSink, type NoticeSink } from './util/notices.js';

// The Dashboard's server and the static history site.
export { startServer, ServeOptionsSchema, type RunningServer, type ServeOptions } from './serve/index.js';
export { ServeError } from './errors/serve-errors.js';
export { site, SiteOptionsSchema, type SiteOptions, type SiteResult } from './site/index.js';

// The error model: every failure is an AgentvResultsError with a stable `code` and its exit code.
export {
  AgentvResultsError,
  DiskError,
  EXIT,
  EXIT_CODE_BY_ERROR,
  exitCodeFor,
  InvalidArgumentsError,
  type ErrorCode,
  type ErrorDataOptions,
} from './errors/errors.js';
// The failures a caller can meet, each with its code (README, exit codes) and its typed `data`; branch on the class, `code` or `data`.
// All of them are defined in src/errors/, one file per family.
export {
  GitArgumentError,
  GitError,
  GitOutputError,
  GitVersionError,
  InvalidPathError,
  NotARepositoryError,
  RefConflictError,
  RemoteError,
  type GitErrorData,
  type RemoteErrorData,
  type RemoteFailureKind,
} from './errors/git-errors.js';
export {
  LayoutError,
  ReadError,
  RunExpiredError,
  SourceError,
  type ExpiredRunRemoval,
  type ReadErrorKind,
  type ReadWhere,
} from './errors/read-errors.js';
export { LockError, type ConfigWhere, type LockHolder } from './errors/publish-errors.js';
export { OverlayInputError, type OverlayWhere } from './errors/overlay-errors.js';
export { OutputTargetError, UnsafeFileError, WebhookError, type UnsafeFileReason } from './errors/input-error.js';
export { CommandError, DaemonLockedError, OutboxError } from './errors/daemon-errors.js';
export { HttpError } from './errors/serve-errors.js';
export { ObjectStoreError, type ObjectStoreFailure, type ObjectStoreWhere } from './errors/store-errors.js';
export type { WipWhere } from './errors/wip-errors.js';
export type { ObjectStoreSettings } from './store/object-store.js';

// Types the verbs' options and results refer to (TypeDoc's notExported check keeps this list complete).
export type { IterationSchema } from './autoresearch/iterations.js';
export type { IterationsFile } from './autoresearch/iterations.js';
export type { AutoresearchPaths } from './autoresearch/record.js';
export type { ResultsConfigSchema } from './repo/config.js';
export type { LoadedConfig } from './repo/config.js';
export type { LayoutChoice } from './layout/layout-choice.js';
export type { BranchLayout, RunLocation } from './layout/branch-layout.js';
export type { RetentionArea, RetentionPolicyRecord, RetentionRecord, RetentionRemoval, RetentionTip } from './layout/retention-log.js';
export { ArchiveScheduleOptionsSchema, type ArchiveScheduleOptions } from './daemon/archive-schedule.js';
export type { ExecRunReport } from './daemon/exec.js';
export type { DaemonInfo } from './daemon/instance-lock.js';
export type { LogFields, Logger } from './daemon/log.js';
export type { OutboxStatus, StatusSectionError, WipStatus } from './status/status-sections.js';
export type { Ident } from './git/ident.js';
export type { PushClassification } from './git/push.js';
export type { InterruptedStatus } from './status/status-interrupted.js';
export type { RunWhere } from './branch-read/list.js';
export type { BranchKind, ReadView, TipRelation, Tips } from './repo/remote-view.js';
export type { BranchState, BranchStatus } from './status/status.js';
export type { SyncBranchStatus, SyncStatusSection } from './sync/sync-branch-status.js';
export type { DriverKey, DriversResult } from './merge/install.js';
export type { OverlayResult } from './overlay-write/write.js';
export { OnDuplicateSchema, type CombineSourceReport, type OnDuplicate } from './runs/combine.js';
export type { CompareReportBase, CompareSide, CompareSummary, MatchedTest, Outcome, UnmatchedPair } from './compare/compare.js';
export type { ArtifactMeasure, DecisionSummary } from './compare/keep-discard.js';
export type { AllTargets, MatchRule, Pooled } from './compare/match-rule.js';
export { DeleteTargetSchema, type DeleteTarget } from './runs/delete.js';
export type { FailedAssertion, FailedGrader, FailingCase } from './runs/failures.js';
export type { CaseDetails } from './runs/show.js';
export type { BranchTips } from './sync/integrate.js';
export type { PathConflict } from './sync/merge-commits.js';
export type { PushBranchesOptions, PushOutcome } from './sync/push-branches.js';
export type { SyncBranchRecord } from './sync/sync-branch-log.js';
export type { SyncFetch } from './sync/sync.js';
export type { DuplicateRepair, RepairedDuplicate } from './sync/repair-duplicates.js';
export type { DuplicateRun } from './layout/duplicate-runs.js';
export type { ScoreRow } from './compare/score-rows.js';
export type { SiteBudget } from './site/build.js';
export type { BackoffPolicy, Jitter } from './util/backoff.js';
export type { FailureExitCode } from './errors/errors.js';
export type { Webhook } from './util/webhook.js';
export type { CheckpointResult } from './wip/checkpoint.js';
export type { CleanDecision } from './wip/clean.js';
export type { EndedWip } from './wip/end.js';
export type { WipLocation } from './wip/list.js';
export type { WipPushResult } from './wip/remote.js';
export type { WipEvent } from './wip/session.js';
