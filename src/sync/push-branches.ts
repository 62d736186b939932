/**
 * The push protocol of publish and sync (ARCHITECTURE.md, the path of a run):
 *
 *   read local tips -> atomic push of both branches (never forced)
 *     landed                -> record the remote tips; loop once more if something was committed meanwhile
 *     non-fast-forward      -> back off (exponential, full jitter) -> fetch both -> fast-forward or
 *                              merge each (remote tip = first parent, CAS) -> push again
 *     genuine conflict      -> our commit goes create-only to agentv/results-sync/... (fallback.ts)
 *     unreachable/auth/...  -> stop: the run stays committed locally and pending
 *
 * Bounded: at most `maxAttempts` pushes (16), sleeps capped (1.5 s), so a run that keeps losing
 * races stays pending instead of spinning; contention alone never creates a sync branch.
 *
 * Coalescing: every attempt pushes the branch TIPS, re-read just before it, so runs committed while
 * a push was in flight ride along in the next one. Within a process, a call made while a loop for
 * the same repository/remote/branches is running joins that loop instead of starting a second one;
 * the loop keeps going until everything committed before the last call is on the remote.
 *
 * Callers must not hold the publish lock: merging takes it (local work only, never across a fetch
 * or a push), and setting a conflict aside holds it across that one push so that a run committed
 * meanwhile is never dropped from the branch.
 */
import { push, remoteRefLock, updateRefs, type PushClassification } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { divertToSyncBranch } from './fallback.js';
import { fetchBothBranches, integrateRemote, readTips, type BranchTips, type FetchedBranches } from './integrate.js';
import type { PathConflict, PathResolver } from './merge-commits.js';
import type { SyncBranchRecord } from './sync-branch-log.js';
import type { PublishTarget } from '../repo/target.js';
import { gitCause } from '../errors/redact.js';

import { trackingRef } from '../repo/tracking-refs.js';
import { noteRemoteSeen } from '../repo/remote-seen.js';
import { backoffDelay as sharedBackoffDelay } from '../util/backoff.js';
export type { BranchTips } from './integrate.js';

export interface PushOutcome {
  landed: boolean;
  /**
   * ok: both branches are on the remote. nothing-to-push: they already were. conflict: a genuine
   * conflict was set aside on `syncBranch` (exit 1). non-fast-forward: still losing races after
   * every attempt (pending, retry later). unreachable/auth/other: the remote did not take it.
   */
  classification: PushClassification | 'no-remote' | 'nothing-to-push' | 'conflict';
  message: string;
  /** git push invocations made by this loop (the sync-branch push included). */
  attempts: number;
  /** Merge commits made locally to integrate the remote's work. */
  merges?: number;
  /** Local branches fast-forwarded to the remote's tips. */
  fastForwards?: number;
  /**
   * What the remote holds for both branches after this loop, as far as we know.
   * @internal The Dashboard's server keeps it to show when the remote was last seen.
   */
  remoteTips?: BranchTips | null;
  /** Set when classification is "conflict". */
  syncBranch?: SyncBranchRecord;
  conflicts?: PathConflict[];
  /** True when this call joined a loop already running in this process (attempts are that loop's). */
  joined?: boolean;
  elapsedMs?: number;
}

export interface PushBranchesOptions {
  /** Most pushes per loop (default 16). */
  maxAttempts?: number;
  /**
   * Backoff before retry n (n >= 1): random(0, min(capMs, slot * 2^(n-1))), where the slot is the
   * longer of baseMs and how long one round (push, fetch, merge) took here. Defaults 100 ms / 1.5 s.
   */
  backoff?: { baseMs: number; capMs: number };
  /** Per network operation. */
  timeoutMs?: number;
  now?: () => Date;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Conflict resolution for the merges (default: ARCHITECTURE.md merge semantics, via resolveConflictedPath).
   * @internal For tests.
   */
  resolver?: PathResolver;
  /** Host part of a sync-branch name (tests). */
  host?: string;
}

/**
 * Twenty publishers finishing at the same moment need twenty successful pushes, one per round.
 * Measured here (20 CLI processes, one daemon remote, 2 cores): with a fixed 100 ms base and 8
 * attempts one run stayed pending; with the slot = one measured round and a 1.5 s cap, the
 * unluckiest needed 8, so the bound is 16 (at most 15 sleeps of <= 1.5 s). A larger cap costs
 * the 8 x 10 benchmark its tail (processes sleeping while the remote is idle); a smaller one (1 s)
 * took the unluckiest of 20 to 14 attempts.
 */
const DEFAULT_ATTEMPTS = 16;
const DEFAULT_BACKOFF = { baseMs: 100, capMs: 1_500 };

/**
 * Full jitter (the delay is uniform in [0, ceiling]): spreads a crowd of losers instead of
 * re-synchronizing them. The slot is the time one round takes (at least baseMs): contenders must
 * sit out whole rounds for the crowd to thin, whatever the machine's and the remote's speed.
 */
export function backoffDelay(retry: number, backoff: { baseMs: number; capMs: number }, random: () => number = Math.random, roundMs = 0): number {
  return sharedBackoffDelay(retry, { ...backoff, jitter: 'full' }, random, roundMs);
}

/** Waits before pushing again into a ref lock on the remote: a concurrent push holding it is done long before. */
const LOCK_RETRY_DELAYS_MS = [250, 1000] as const;

function describe(classification: PushClassification, remote: string, stderr: string, silent?: string): string {
  if (silent) return silent;
  switch (classification) {
    case 'ok':
      return `pushed to ${remote}`;
    case 'non-fast-forward':
      return `${remote} has results this machine has not merged yet (non-fast-forward)`;
    case 'unreachable':
      return `${remote} is unreachable`;
    case 'auth':
      return `${remote} refused our credentials`;
    case 'ref-locked': {
      const lock = remoteRefLock(stderr) ?? '<ref>.lock';
      return `${remote} refused the update: a stale ref lock ${lock} is left on the remote (a git process there was killed mid-update); if no push to ${remote} is running, remove that file on the remote (or ask its administrator)`;
    }
    default:
      return `push to ${remote} failed: ${gitCause(stderr)}`;
  }
}

/**
 * One atomic push of `local`. When it lands, also returns the tips as read right after it (local
 * branches, and tracking refs that now show what the remote has).
 */
async function pushTips(target: PublishTarget, local: BranchTips, timeoutMs: number | undefined, before: BranchTips) {
  const remote = target.remote!;
  // Artifacts first in the list; --atomic makes the order irrelevant on servers that support it.
  const updates = [
    ...(local.artifacts ? [{ src: local.artifacts, dst: target.artifactsRef }] : []),
    ...(local.results ? [{ src: local.results, dst: target.resultsRef }] : []),
  ];
  const result = await push(target.repo, remote, updates, { atomic: true, timeoutMs: timeoutMs ?? 120_000 });
  if (result.classification === 'ok' || result.classification === 'non-fast-forward') await noteRemoteSeen(target.repo, remote);
  if (result.classification !== 'ok') return { result, after: null };
  const after = await readTips(target);
  return { result, after: { local: after.local, tracking: await recordRemoteTips(target, local, before, after.tracking) } };
}

/**
 * After a push lands, make the tracking refs show what the remote now has, whatever the remote's
 * fetch refspec says (a bare or oddly configured repository may not map our branches): `status`
 * derives "pending" from these refs alone. git's push already moved them when the refspec maps
 * our branches (the usual refs/heads/*:refs/remotes/<remote>/*); only a ref still where it was
 * before the push is moved here, so a newer value from a concurrent fetch is never overwritten.
 * Returns the tracking tips as they now stand.
 */
async function recordRemoteTips(target: PublishTarget, pushed: BranchTips, before: BranchTips, now: BranchTips): Promise<BranchTips> {
  const remote = target.remote!;
  const result = { ...now };
  const updates: { ref: string; new: string; old: string | null }[] = [];
  for (const b of ['results', 'artifacts'] as const) {
    const tip = pushed[b];
    if (tip === null || now[b] === tip || now[b] !== before[b]) continue;
    updates.push({ ref: trackingRef(remote, b === 'results' ? target.resultsRef : target.artifactsRef), new: tip, old: now[b] });
    result[b] = tip;
  }
  if (updates.length === 0) return result;
  // Best effort: a concurrent fetch may move them meanwhile, and it knows better than we do.
  return updateRefs(target.repo, updates).then(
    () => result,
    () => now,
  );
}

interface Inflight {
  promise: Promise<PushOutcome>;
  /** Bumped by every joining call: the loop may only stop once it has read tips after the last bump. */
  requests: number;
}
const inflight = new Map<string, Inflight>();

function loopKey(target: PublishTarget): string {
  return [target.repo.commonDir, target.remote, target.resultsRef, target.artifactsRef].join('\0');
}

/** Push both branches with the protocol above. Never throws for a remote-side outcome. */
export function pushBranches(target: PublishTarget, opts: PushBranchesOptions = {}): Promise<PushOutcome> {
  if (target.remote === null) {
    return Promise.resolve({
      landed: false,
      classification: 'no-remote',
      message: 'no remote to push to',
      attempts: 0,
      merges: 0,
      fastForwards: 0,
      remoteTips: null,
      joined: false,
      elapsedMs: 0,
    });
  }
  const key = loopKey(target);
  const running = inflight.get(key);
  if (running) {
    running.requests++;
    return running.promise.then((o) => ({ ...o, joined: true }));
  }
  const state: Inflight = { promise: Promise.resolve(null as unknown as PushOutcome), requests: 0 };
  state.promise = runLoop(target, opts, state).finally(() => inflight.delete(key));
  inflight.set(key, state);
  return state.promise;
}

function runLoop(target: PublishTarget, opts: PushBranchesOptions, state: Inflight): Promise<PushOutcome> {
  return new PushLoop(target, opts, state).run();
}

/** Tips known right after a merge or a push, so the loop does not read them again. */
interface KnownTips {
  local: BranchTips;
  tracking: BranchTips;
  /** The request count from before they were read (a call that joined after that is not in them). */
  seen?: number;
}

/** One publisher's push loop: push, and on a lost race back off, catch up (fetch + merge) and push again. */
class PushLoop {
  private readonly started = Date.now();
  private readonly remote: string;
  private readonly maxAttempts: number;
  private lockRetries = 0;
  private readonly backoff: { baseMs: number; capMs: number };
  private readonly sleep: (ms: number) => Promise<void>;
  private attempts = 0;
  private merges = 0;
  private fastForwards = 0;
  /** Races lost since the last push that landed: the backoff exponent. */
  private rejections = 0;
  /** How long a push and a fetch + merge took here: one round, the backoff's slot. */
  private pushMs = 0;
  private catchUpMs: number | null = null;
  private lastPushed: BranchTips | null = null;

  constructor(
    private readonly target: PublishTarget,
    private readonly opts: PushBranchesOptions,
    private readonly state: Inflight,
  ) {
    this.remote = target.remote!;
    this.maxAttempts = opts.maxAttempts ?? DEFAULT_ATTEMPTS;
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  }

  private done(o: Pick<PushOutcome, 'landed' | 'classification' | 'message'> & Partial<PushOutcome>): PushOutcome {
    return {
      attempts: this.attempts,
      merges: this.merges,
      fastForwards: this.fastForwards,
      remoteTips: this.lastPushed,
      joined: false,
      elapsedMs: Date.now() - this.started,
      ...o,
    };
  }

  /** Backs off before taking the winners' work: they are pushing too. */
  private wait(): Promise<void> {
    // Until a fetch + merge has been timed here, it is taken to cost what the push did.
    return this.sleep(backoffDelay(this.rejections, this.backoff, this.opts.random, this.pushMs + (this.catchUpMs ?? this.pushMs)));
  }

  async run(): Promise<PushOutcome> {
    const { target, opts, state, remote } = this;
    let known: KnownTips | null = null;
    for (;;) {
      const seen = known?.seen ?? state.requests;
      const { local, tracking } = known ?? (await readTips(target));
      known = null;
      if (local.results === null && local.artifacts === null)
        return this.done({ landed: true, classification: 'nothing-to-push', message: 'nothing published yet' });
      const pending = (local.results !== null && local.results !== tracking.results) || (local.artifacts !== null && local.artifacts !== tracking.artifacts);
      // Everything committed before the last request is on the remote: stop. The check and the
      // removal from `inflight` happen in the same tick, so no joining call can slip in between.
      if (!pending && seen === state.requests) {
        const { attempts, merges } = this;
        return attempts === 0
          ? this.done({ landed: true, classification: 'nothing-to-push', message: `${remote} already has everything published here`, remoteTips: tracking })
          : this.done({
              landed: true,
              classification: 'ok',
              message: `pushed to ${remote}${attempts > 1 ? ` (${attempts} attempts, ${merges} merge${merges === 1 ? '' : 's'})` : ''}`,
            });
      }
      if (!pending) continue;
      if (this.attempts >= this.maxAttempts) {
        return this.done({
          landed: false,
          classification: 'non-fast-forward',
          message: `${remote} kept moving: still behind after ${this.attempts} push attempts (lost races to other publishers)`,
        });
      }

      this.attempts++;
      const roundStart = Date.now();
      const seenAtPush = state.requests;
      const { result: r, after } = await pushTips(target, local, opts.timeoutMs, tracking);
      if (after) {
        this.lastPushed = local;
        known = { ...after, seen: seenAtPush };
        // A landed push ends a contention episode. The loop lives as long as this process keeps
        // publishing, and an exponent carried over from earlier races had every later retry sleep
        // up to the cap while the remote sat idle (traced in the 8 x 10 benchmark).
        this.rejections = 0;
        continue; // loops once more: stops if nothing new was committed meanwhile
      }
      // A lock on the remote: the server already waited for it (core.filesRefLockTimeout). Give a
      // push in flight there two short chances to finish, then say what is wrong: no fetch or
      // merge can clear it, so it is never retried as a lost race.
      if (r.classification === 'ref-locked' && this.lockRetries < LOCK_RETRY_DELAYS_MS.length) {
        await this.sleep(LOCK_RETRY_DELAYS_MS[this.lockRetries++]!);
        continue;
      }
      if (r.classification !== 'non-fast-forward')
        return this.done({ landed: false, classification: r.classification, message: describe(r.classification, remote, r.stderr, r.silent) });

      // Lost a race. Wait a little, then take their work.
      this.rejections++;
      this.pushMs = Date.now() - roundStart;
      await this.wait();
      const caught = await this.catchUp();
      if ('outcome' in caught) return caught.outcome;
      known = caught.known;
    }
  }

  /**
   * Fetch and merge the remote's tips until they integrate (then push again at once: runs committed
   * meanwhile go in the push after), or a genuine conflict is set aside, or something fails.
   * Returns `known: null` when the attempts ran out (the loop head then reports "pending").
   */
  private async catchUp(): Promise<{ known: KnownTips | null } | { outcome: PushOutcome }> {
    const { target, opts, remote } = this;
    for (;;) {
      const catchUpStart = Date.now();
      let fetched: FetchedBranches;
      try {
        fetched = await fetchBothBranches(target, { timeoutMs: opts.timeoutMs });
      } catch (err) {
        const kind = err instanceof RemoteError ? err.kind : undefined;
        const classification = kind === 'unreachable' || kind === 'auth' ? kind : 'other';
        return { outcome: this.done({ landed: false, classification, message: `fetching from ${remote} failed: ${(err as Error).message}` }) };
      }
      const integrated = await integrateRemote(target, fetched, { now: opts.now, resolve: opts.resolver });
      if (integrated.kind === 'ready') {
        this.merges += integrated.merges;
        this.fastForwards += integrated.fastForwards;
        this.catchUpMs = Date.now() - catchUpStart;
        return { known: { local: integrated.local, tracking: integrated.remote } };
      }
      // A genuine conflict, not contention: set it aside (one push, counted like any other).
      if (this.attempts >= this.maxAttempts) return { known: null };
      this.attempts++;
      const diverted = await divertToSyncBranch(target, integrated, { now: opts.now, timeoutMs: opts.timeoutMs, host: opts.host });
      if (diverted.kind === 'failed') return { outcome: this.done({ landed: false, classification: diverted.classification, message: diverted.message }) };
      if (diverted.kind === 'diverted') {
        this.lastPushed = diverted.remoteTips;
        return {
          outcome: this.done({
            landed: false,
            classification: 'conflict',
            message: `conflicting changes set aside on ${remote}/${diverted.record.branch}`,
            syncBranch: diverted.record,
            conflicts: integrated.conflicts,
          }),
        };
      }
      // Someone moved a branch while we set it aside: fetch and merge again.
      this.rejections++;
      await this.wait();
    }
  }
}
