/** The results and artifacts branches: publishing a run onto them, and reading them back (`list`, `pull`, `status`, runs by name). */
export { loadResultsConfig, ConfigError, type ResultsConfig } from './repo/config.js';
export { PublishError, type TargetOptions } from './repo/target.js';
export { publish, type PublishOptions, type PublishResult } from './publish/publish.js';
export { listRuns, type ListedRun, type ListOptions, type ListResult } from './read/list.js';
export { pull, type PullOptions, type PullResult } from './read/pull.js';
export { type StatusOptions } from './read/status.js';
export { resolveRunNames, type ResolvedRun, type ResolvedRuns, type RunNameOptions } from './read/run-names.js';
