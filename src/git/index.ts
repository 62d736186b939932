// The git plumbing layer: the only module of agentv-results that runs git. It writes objects and
// moves refs without ever touching a worktree, the user's index, HEAD or stash; every ref update is
// compare-and-swap; pushes never force.
export { buildGitEnv, runGit, spawnGit, SCRUBBED_ENV_VARS } from './runner.js';
export type { GitProcess, GitResult, GitSpawnOptions, RunGitOptions } from './runner.js';
export { assertGitVersion, checkGitVersion, gitVersion, MIN_GIT_VERSION, parseGitVersion } from './version.js';
export type { GitVersion } from './version.js';
export {
  configGet,
  configGetMany,
  currentBranch,
  isAncestor,
  listRefs,
  listRemotes,
  openRepo,
  readRemotes,
  remoteUrl,
  resolveRef,
  worktreeBranches,
  zeroId,
} from './repo.js';
export type { RefEntry, RemoteUrls, Repo } from './repo.js';
export { withRefSnapshot } from './ref-snapshot.js';
export { assertValidPath, normalizeChanges } from './tree-paths.js';
export type { FileChange, FileMode } from './tree-paths.js';
export { formatGitDate } from './ident.js';
export type { Ident } from './ident.js';
export { FastImportSession, writeCommit } from './fast-import.js';
export type { FastImportChoice, WriteCommitOptions, WrittenCommit } from './fast-import.js';
export { writeTree } from './index-tree.js';
export type { WriteTreeOptions } from './index-tree.js';
export { commitTree, gcAuto, listingBytes, lsTree } from './objects.js';
export type { CommitTreeOptions, GcConfig, LsTreeOptions, TreeEntry } from './objects.js';
export { catFile, forEachBlob, readBlobs, readObjects } from './cat-file.js';
export type { GitObject, ObjectType } from './cat-file.js';
export { deleteRef, tolerateLostRace, updateRef, updateRefs } from './refs.js';
export type { RefUpdate, UpdateRefsOptions } from './refs.js';
export { classifyRemoteFailure, remoteRefLock } from './classify.js';
export { classifyPush, parsePushPorcelain, push } from './push.js';
export type { PushClassification, PushOptions, PushRefResult, PushRefStatus, PushResult, PushUpdate } from './push.js';
export { fetchRefs, lsRemote } from './remote.js';
export type { FetchOptions, FetchRefspec, FetchResult, NetworkOptions } from './remote.js';
export { mergeTree, parseMergeTreeOutput } from './merge-tree.js';
export { aheadBehind, findDescendantByMessage, rootCommits, rootsNotIn } from './rev-list.js';
export type { AheadBehind } from './rev-list.js';
export type { MergeConflict, MergeMessage, MergeTreeOptions, MergeTreeResult, StageEntry } from './merge-tree.js';
export { commitRelation, mergeBases, mergeTreeWithAttributes } from './merge-base.js';
export type { CommitRelation } from './merge-base.js';
export { readRefs } from './read-refs.js';
export { localConfigGet, localConfigKeys, localConfigRemoveSection, localConfigSet, localConfigUnset } from './local-config.js';
