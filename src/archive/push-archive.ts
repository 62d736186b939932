/**
 * Pushes the archive branches, then the live ones, never forced: after a rollover and after a
 * retention alike.
 *
 * Order is what makes it safe: the archive refs land on the remote first, and only then does the
 * sync loop push the live branches whose rollover commit deleted those runs. A crash or a
 * rejection in between leaves a run on both (the archive is ours; AgentV lists only the live
 * branch), never on neither.
 *
 * Two machines rolling over the same month race on its archive ref: the loser fetches it and
 * merges (remote tip first). Both sides only ADD run directories, grafted from the same tree
 * objects, so the merge is clean: identical adds collapse, distinct adds union. No duplicates.
 */
import { fetchRefs, listRefs, push, updateRefs, type Repo } from '../git/index.js';
import { mergeCommits } from '../sync/merge-commits.js';
import { pushBranches, type PushOutcome } from '../sync/push-branches.js';
import { trackingRef } from '../repo/tracking-refs.js';
import type { PublishTarget } from '../repo/target.js';
import { resolveTarget } from '../repo/target.js';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, rollover, RolloverOptionsSchema, type RolloverResult } from './rollover.js';
import { expireRuns, monthsPastTheRules, retentionPolicy, RetentionOptionsSchema, type RetentionResult } from './retention.js';
import { flag, parseOptions } from '../options/verb-options.js';
import * as z from 'zod';
import { catchUpArchives, catchUpLive } from './catch-up.js';

export interface PushArchiveOptions {
  timeoutMs?: number;
  /** Most archive pushes (default 8). */
  maxAttempts?: number;
  now?: () => Date;
}

export interface PushArchiveOutcome {
  /** Archive refs are on the remote. */
  archiveLanded: boolean;
  archiveAttempts: number;
  archiveMerges: number;
  /** The live branches' sync loop (skipped when the archive did not land). */
  live: PushOutcome | null;
  message: string;
}

async function archiveRefs(repo: Repo): Promise<{ ref: string; sha: string }[]> {
  const [r, a] = await Promise.all([listRefs(repo, ARCHIVE_RESULTS_PREFIX), listRefs(repo, ARCHIVE_ARTIFACTS_PREFIX)]);
  return [...r, ...a];
}

export async function pushArchiveThenLive(target: PublishTarget, opts: PushArchiveOptions = {}): Promise<PushArchiveOutcome> {
  const { repo, remote } = target;
  if (remote === null)
    return { archiveLanded: false, archiveAttempts: 0, archiveMerges: 0, live: null, message: 'no remote: the rollover is committed locally' };
  const max = opts.maxAttempts ?? 8;
  let attempts = 0;
  let merges = 0;
  for (;;) {
    const refs = await archiveRefs(repo);
    if (refs.length === 0) break;
    attempts++;
    const res = await push(
      repo,
      remote,
      refs.map((r) => ({ src: r.sha, dst: r.ref })),
      { atomic: true, timeoutMs: opts.timeoutMs },
    );
    if (res.classification === 'ok') break;
    if (res.classification !== 'non-fast-forward' || attempts >= max) {
      return {
        archiveLanded: false,
        archiveAttempts: attempts,
        archiveMerges: merges,
        live: null,
        message: `archive push failed (${res.classification}): ${res.stderr.trim().split('\n').pop() ?? ''} — the live branches were not pushed; run again`,
      };
    }
    // Someone else archived into the same month: bring their archive in and merge it under ours.
    await fetchRefs(
      repo,
      remote,
      refs.map((r) => `${r.ref}:${trackingRef(remote, r.ref)}`),
      { timeoutMs: opts.timeoutMs },
    );
    const tracking = await Promise.all(
      refs.map(async (r) => ({
        ...r,
        theirs: (await listRefs(repo, trackingRef(remote, r.ref))).find((e) => e.ref === trackingRef(remote, r.ref))?.sha ?? null,
      })),
    );
    const author = { name: 'agentv-results', email: 'agentv-results@localhost', date: (opts.now ?? (() => new Date()))() };
    const updates: { ref: string; new: string; old: string | null }[] = [];
    for (const t of tracking) {
      if (!t.theirs) continue;
      const m = await mergeCommits(repo, {
        first: t.theirs,
        second: t.sha,
        message: `Merge archive ${t.ref.slice('refs/heads/'.length)} from ${remote}\n`,
        author,
      });
      if (m.kind === 'conflict') {
        return {
          archiveLanded: false,
          archiveAttempts: attempts,
          archiveMerges: merges,
          live: null,
          message: `archive ${t.ref} conflicts with the remote's (${m.conflicts.map((c) => c.path).join(', ')}) — nothing pushed`,
        };
      }
      if (m.commit !== t.sha) {
        updates.push({ ref: t.ref, new: m.commit, old: t.sha });
        if (m.kind === 'merged') merges++;
      }
    }
    if (updates.length > 0) await updateRefs(repo, updates, { message: 'agentv-results: merge remote archive' });
  }
  const live = await pushBranches(target, { timeoutMs: opts.timeoutMs });
  return { archiveLanded: true, archiveAttempts: attempts, archiveMerges: merges, live, message: live.message };
}

/** Whether to push after the local commit (the CLI's `--no-push` sets it false; the library default is not to push), and the network timeout. */
const PushFields = {
  push: z.boolean().default(false).meta(flag('--no-push', 'Commit locally only; `agentv-results sync` pushes later')),
  /** Per network operation. */
  timeoutMs: z.number().positive().optional(),
};

/** `rolloverAndPush`'s options: `rollover`'s, whether to push, and the network timeout. */
export const RolloverAndPushOptionsSchema = RolloverOptionsSchema.extend(PushFields);
export interface RolloverAndPushOptions extends Omit<z.input<typeof RolloverAndPushOptionsSchema>, 'target'> {
  /** @internal */
  target?: PublishTarget;
}

/** `expireAndPush`'s options: `expireRuns`'s, whether to push, and the network timeout. */
export const ExpireAndPushOptionsSchema = RetentionOptionsSchema.extend(PushFields);
export interface ExpireAndPushOptions extends Omit<z.input<typeof ExpireAndPushOptionsSchema>, 'target'> {
  /** @internal */
  target?: PublishTarget;
}

/** Rollover, then (unless a dry run) push archive and live branches: what the CLI and the daemon run. */
export async function rolloverAndPush(options: RolloverAndPushOptions = {}): Promise<RolloverResult & { push?: PushArchiveOutcome }> {
  const { push: wantPush, timeoutMs, ...rest } = parseOptions('rolloverAndPush', RolloverAndPushOptionsSchema, options);
  const target = rest.target ?? (await resolveTarget(rest));
  // With a remote, the live branches first take in what others pushed (AgentV's auto_push among
  // them), so the listing budget counts every run the remote's Dashboard lists; a dry run stays offline.
  if (wantPush && !rest.dryRun && target.remote !== null) await catchUpLive(target, { timeoutMs });
  const result = await rollover({ ...rest, target });
  if (!wantPush || rest.dryRun) return result;
  return { ...result, push: await pushArchiveThenLive(target, { timeoutMs }) };
}

/**
 * Retention, then (unless a dry run) the same push as a rollover: archive branches first, then the
 * live ones through the sync loop. With a remote, the live branches and the archive months the
 * policy may touch are brought up to the remote's first (catch-up.ts), so the policy sees tags set
 * elsewhere; a dry run neither fetches nor writes.
 */
export async function expireAndPush(options: ExpireAndPushOptions = {}): Promise<RetentionResult & { push?: PushArchiveOutcome; fetched?: boolean }> {
  const { push: wantPush, timeoutMs, ...rest } = parseOptions('expireAndPush', ExpireAndPushOptionsSchema, options);
  const target = rest.target ?? (await resolveTarget(rest));
  let fetched: boolean | undefined;
  if (wantPush && !rest.dryRun && target.remote !== null) {
    const policy = retentionPolicy(rest, target.config);
    fetched = await catchUpLive(target, { timeoutMs });
    if (fetched) await catchUpArchives(target, await monthsPastTheRules(target, policy, rest.now ?? new Date()), { timeoutMs });
  }
  const result = await expireRuns({ ...rest, target });
  if (!wantPush || rest.dryRun) return result;
  return { ...result, ...(fetched === undefined ? {} : { fetched }), push: await pushArchiveThenLive(target, { timeoutMs }) };
}
