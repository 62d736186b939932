/**
 * What one publish was asked and what it did: the push decided once from the options and the
 * configuration (`pushPlan`), the decided values the steps take (`PublishJob`), and the answer
 * (`PublishResult`). The steps (publish.ts, decide-layout.ts, after-commit.ts) share these.
 */
import { basename, dirname, resolve } from 'node:path';
import type { RunLocation } from '../layout/branch-layout.js';
import type { LayoutChoice } from '../layout/layout-choice.js';
import type { PushOutcome } from '../sync/push-branches.js';
import type { EndedWip } from '../wip/index.js';
import type { CommitRunResult } from './commit-run.js';

/**
 * Whether this publish pushes, decided once from the options and the configuration: `push: false`
 * never pushes (and so requires nothing); `push: true` pushes; absent, results.auto_push pushes, and
 * so does a required push (`requirePush`, else results.require_push). The decision also says
 * whether a clone that never heard from the remote fetches it first (publishRun).
 */
export interface PushPlan {
  push: boolean;
  /** A push that does not land is a PublishError (exit 3). */
  required: boolean;
}

export function pushPlan(opts: { push?: boolean; requirePush?: boolean }, config: { auto_push: boolean; require_push: boolean }): PushPlan {
  if (opts.push === false) return { push: false, required: false };
  const required = opts.requirePush ?? config.require_push;
  return { push: opts.push ?? (config.auto_push || required), required };
}

export interface PublishResult {
  runId: string;
  location: RunLocation;
  runDir: string;
  derived: boolean;
  status: CommitRunResult['status'];
  commits: { results: string; artifacts: string };
  counts: { total: number; passed: number; failed: number; payloads: number; metadata: number };
  push: PushOutcome | null;
  /** Rows of the run already on the branch that this workspace lacked (another shard's): kept, never dropped. */
  keptRows: number;
  /** The run's WIP branches this publish ended (deleted once the run reached the remote) or kept, and why. */
  wip: EndedWip[];
  /** Which AgentV's branch layout the run was written in, and why (layout/layout-choice.ts). */
  layout: LayoutChoice;
  target: { repo: string; resultsBranch: string; artifactsBranch: string; remote: string | null };
  /**
   * The live listing of the results branch after this publish (every run on it, whoever wrote it)
   * against the listing budget; `warning` says what to run when it is past it. Null when the budget
   * is off (0) or nothing was committed.
   */
  listing?: { bytes: number; max: number; over: boolean; complete: boolean; warning: string | null } | null;
  /** `storage_mode: hybrid`: payloads the run points at in the bucket, how many this publish sent, their bytes; null in git-native mode. */
  stored?: { objects: number; uploaded: number; bytes: number; where: string } | null;
}

/**
 * What one publish was asked, decided at the door: the values the steps below need, each already
 * settled (the push decided once, the defaults applied), never the options object itself.
 */
export interface PublishJob {
  plan: PushPlan;
  /** The run as the user named it, and the directory it resolves from. */
  run: string;
  cwd: string;
  experiment: string | undefined;
  message: string | undefined;
  allowInvalid: boolean;
  now: Date;
  onStep: (step: string) => void;
  /** The published workspace as the user named it (what WIP captured), or null for a results file. */
  workspace: string | null;
}

/** The published workspace as the user named it (a derived copy's index is not what WIP captured). */
export function workspaceOf(opts: { cwd: string; run: string }): string | null {
  const named = resolve(opts.cwd, opts.run);
  if (named.endsWith('.jsonl')) return basename(named) === 'index.jsonl' ? dirname(named) : null;
  return named;
}
