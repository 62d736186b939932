/**
 * WIP checkpoints, recovery and cleanup (ARCHITECTURE.md, the path of a run): the library API behind `wip checkpoint`,
 * `wip list`, `wip recover`, `wip clean`, and what `exec` and the daemon build on.
 */
export { Checkpointer } from './checkpoint.js';
export type { CheckpointerOptions, CheckpointResult } from './checkpoint.js';
export { authorOf, DEFAULT_EVERY_ROWS, DEFAULT_INTERVAL_MS, DEFAULT_POLL_MS, WipSession, WipSessionOptionsSchema } from './session.js';
export type { WipEvent, WipSessionOptions } from './session.js';
export { listWip } from './list.js';
export type { ListWipOptions, WipEntry, WipListing, WipLocation } from './list.js';
export { recoverWip, unionRows } from './recover.js';
export type { RecoverOptions, RecoverResult } from './recover.js';
export { cleanWip, confirmPublished, deleteWipBranch, finalizeWip, remoteResults, runPathOf } from './clean.js';
export { endWipAfterPublish } from './end.js';
export type { EndedWip, EndWipOptions } from './end.js';
export type { CleanDecision, CleanOptions, CleanResult, DeleteOutcome, FinalizeOptions, FinalizeOutcome } from './clean.js';
export { DEFAULT_WIP_NETWORK_TIMEOUT_MS, deleteRemoteWip, pushWipBranches, refreshRemoteWip, wipTrackingRef } from './remote.js';
export type { WipPushResult } from './remote.js';
export {
  hostOfBranch,
  parseWipBranch,
  parseWipMeta,
  RECOVERY_MARKER,
  runIdOfDir,
  runIdSlug,
  WIP_BRANCH_PREFIX,
  WIP_REF_PREFIX,
  WIP_SCHEMA_VERSION,
  wipBranch,
  wipHost,
} from './checkpoint-layout.js';
export type { WipMeta } from './checkpoint-layout.js';
