/** Archive and retention: rollover of runs past the live window to per-month archive branches, `expire`, both pushed archive-first. */
export { rollover, type RolloverOptions, type RolloverResult } from './rollover.js';
export { expireRuns, type RetentionOptions, type RetentionResult } from './retention.js';
export { rolloverAndPush, expireAndPush } from './push-archive.js';
