/**
 * agentv-results as a library: everything the CLI does, as typed functions. The CLI in src/cli
 * is a thin shell over these.
 */
export * from './model/input-row.js';
export * from './model/artifacts.js';
export { SCHEMAS, jsonSchema } from './model/json-schema.js';
export { sanitizeSegment, safeRelativePath, timestampSlug } from './model/paths.js';

export { exportRun, InputError, type ExportOptions, type ExportResult, type DuplicatePolicy } from './derive/export.js';
export { LAYOUTS, type LayoutName } from './derive/layouts.js';
export { normalizeRow, DEFAULT_THRESHOLD, type NormalizedRow } from './derive/normalize.js';
export { projectionIdentity } from './derive/identity.js';
export { RunAggregator } from './derive/aggregate.js';

export * from './results/index.js';
export { generateReport } from './report/index.js';
export { trend, type TrendAllOptions } from './trend/index.js';
export * from './autoresearch/index.js';

export { publish, type PublishOptions, type PublishResult } from './publish/publish.js';
export { loadResultsConfig, ConfigError, type ResultsConfig } from './branch/config.js';
export { runLocation, type RunLocation } from './branch/layout.js';
export { resolveTarget, PublishError, type PublishTarget } from './branch/target.js';
export { listRuns, type ListOptions, type ListResult, type ListedRun } from './history/list.js';
export { status, registerStatusSection, type StatusReport, type BranchStatus } from './history/status.js';
export { pull, type PullOptions, type PullResult } from './history/pull.js';
export { sync, type SyncOptions, type SyncResult } from './sync/sync.js';
export { editTags, setFeedback, readTags, readFeedback, FeedbackRevisionMismatch, TagRevisionMismatch, type TagOptions, type FeedbackOptions, type FeedbackDoc, type TagsDoc } from './overlays/write.js';
export { installDrivers, uninstallDrivers } from './merge/install.js';
export * from './wip/index.js';
export * from './daemon/index.js';
export * from './merge/index.js';
export * from './serve/index.js';
