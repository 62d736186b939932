/**
 * Working the outbox: publish finished runs (local, no network), push the results branches (one
 * coalesced push whatever the number of runs waiting), push WIP tips (one `git push` for all),
 * delete WIP branches whose final publish is confirmed on the remote.
 *
 * The remote is treated as one resource: a network job that finds it unreachable backs every
 * network job off together (exponential with jitter); the first success clears the backoff and
 * everything queued goes out in the same round. Publishes are retried a few times (a summary.json
 * half-written, a transient read error), then marked dead with their error for `status`; a publish
 * whose payloads could not reach the object store (storage_mode hybrid) stays pending until it can.
 */
import { resolveRef } from '../git/index.js';
import { publish } from '../publish/publish.js';
import { pushBranches } from '../sync/push-branches.js';
import { targetOptionsOf, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { finalizeWip, pushWipBranches } from '../wip/index.js';
import { redactText } from '../errors/redact.js';
import { exitCodeFor } from '../errors/errors.js';
import type { WebhookEvent } from '../util/webhook.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import type { Logger } from './log.js';
import type { Outbox, OutboxItem, OutboxJob } from './outbox.js';
import { inspectRun } from '../runs/read/run-dir-state.js';
import { ObjectStoreError } from '../errors/store-errors.js';

export interface WorkerOptions {
  target: PublishTarget;
  /** How publish() finds the target again (cwd, config file, remote override). */
  targetOptions: TargetOptions;
  outbox: Outbox;
  logger: Logger;
  /** Push results and WIP branches (results.auto_push unless overridden). */
  push: boolean;
  backoff?: BackoffPolicy;
  networkTimeoutMs?: number;
  /** A publish failing this many times in a row is marked dead. */
  maxPublishAttempts?: number;
  /** Where notifications go (a webhook): a sync branch created, the remote unreachable for `notifyAfterMs`. */
  notify?: (event: WebhookEvent) => Promise<void>;
  /** How long pushes must have been failing before `notify` hears of it, once per outage (default 30 min). */
  notifyAfterMs?: number;
}

export const DEFAULT_NOTIFY_AFTER_MS = 30 * 60_000;

export interface RoundResult {
  /** Jobs completed (done or dead) in this round. */
  completed: number;
  published: number;
  /** Earliest time a pending job becomes due (null: nothing pending). */
  nextAt: number | null;
  /** The remote was found unreachable (or refused us) in this round. */
  remoteDown: boolean;
}

const ORDER: Record<OutboxJob['kind'], number> = { publish: 0, 'push-results': 1, 'push-wip': 2, 'finalize-wip': 3 };

export class OutboxWorker {
  private remoteFailures = 0;
  private remoteDownUntil = 0;
  /** When the current outage began, and whether `notify` has heard of it. */
  private downSince: number | null = null;
  private downNotified = false;
  private readonly backoff: BackoffPolicy;

  constructor(private readonly opts: WorkerOptions) {
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
  }

  get remoteBackoffUntil(): number {
    return this.remoteDownUntil;
  }

  /**
   * One pass over the due jobs. `force` ignores backoff (a `--once` run, or a shutdown flush).
   */
  async round(opts: { now?: number; force?: boolean } = {}): Promise<RoundResult> {
    const now = opts.now ?? Date.now();
    const result: RoundResult = { completed: 0, published: 0, nextAt: null, remoteDown: false };
    const items = (await this.opts.outbox.pending()).sort((a, b) => ORDER[a.job.kind] - ORDER[b.job.kind] || a.queuedAt.localeCompare(b.queuedAt));
    const due = (i: OutboxItem): boolean => opts.force === true || i.nextAt <= now;

    for (const item of items.filter((i) => i.job.kind === 'publish' && due(i))) {
      const outcome = await this.publishJob(item, now);
      if (outcome !== 'retry') result.completed++;
      if (outcome === 'published') result.published++;
    }

    const network = (await this.opts.outbox.pending()).filter((i) => i.job.kind !== 'publish');
    const remoteBlocked = !opts.force && this.remoteDownUntil > now;
    if (!remoteBlocked && network.length > 0) {
      // After one success the remote is back: everything queued goes now, whatever its own timer.
      let back = false;
      const ready = (i: OutboxItem): boolean => back || due(i);
      const pushResults = network.find((i) => i.job.kind === 'push-results');
      let resultsPending = pushResults !== undefined;
      if (pushResults && ready(pushResults)) {
        const ok = await this.pushResultsJob(pushResults, now);
        if (ok === 'down') result.remoteDown = true;
        else {
          back = true;
          result.completed++;
          resultsPending = false;
        }
      }
      if (!result.remoteDown) {
        const wips = network.filter((i) => i.job.kind === 'push-wip' && ready(i));
        if (wips.length > 0) {
          const r = await this.pushWipJobs(wips, now);
          if (r === 'down') result.remoteDown = true;
          else {
            back = true;
            result.completed += r;
          }
        }
      }
      if (!result.remoteDown && !resultsPending) {
        for (const item of network.filter((i) => i.job.kind === 'finalize-wip' && ready(i))) {
          if (await this.finalizeJob(item, now)) result.completed++;
        }
      }
      if (back && !result.remoteDown) this.remoteUp();
    }

    const left = await this.opts.outbox.pending();
    const times = left.map((i) => (i.job.kind === 'publish' ? i.nextAt : Math.max(i.nextAt, this.remoteDownUntil)));
    result.nextAt = times.length > 0 ? Math.min(...times) : null;
    return result;
  }

  private remoteUp(): void {
    if (this.remoteFailures > 0) this.opts.logger.info('remote reachable again; queued work pushed', { remote: this.opts.target.remote });
    this.remoteFailures = 0;
    this.remoteDownUntil = 0;
    this.downSince = null;
    this.downNotified = false;
  }

  private async remoteDown(item: OutboxItem, now: number, message: string): Promise<void> {
    this.remoteFailures++;
    const delay = backoffDelay(this.remoteFailures, this.backoff);
    this.remoteDownUntil = now + delay;
    await this.opts.outbox.retry(item, this.remoteDownUntil, message);
    this.opts.logger.warn('remote not reachable; work stays queued', { remote: this.opts.target.remote, job: item.id, retry_in_ms: delay, error: message });
    this.downSince ??= now;
    if (this.opts.notify && !this.downNotified && now - this.downSince >= (this.opts.notifyAfterMs ?? DEFAULT_NOTIFY_AFTER_MS)) {
      this.downNotified = true;
      await this.opts.notify({
        event: 'publish-failing',
        remote: this.opts.target.remote,
        failing_since: new Date(this.downSince).toISOString(),
        minutes: Math.floor((now - this.downSince) / 60_000),
        queued: (await this.opts.outbox.pending()).length,
        error: redactText(message),
      });
    }
  }

  private async publishJob(item: OutboxItem, now: number): Promise<'published' | 'dead' | 'retry'> {
    const job = item.job as Extract<OutboxJob, { kind: 'publish' }>;
    const { outbox, logger, target } = this.opts;
    const state = await inspectRun(job.run_dir);
    if (state === null || !state.hasIndex) {
      const where =
        job.wip_ref && (await resolveRef(target.repo, job.wip_ref))
          ? `; its last checkpoint is on ${job.wip_ref.slice('refs/heads/'.length)} (agentv-results wip recover ${job.run_id})`
          : '';
      const error = `the run directory ${job.run_dir} is gone${where}`;
      await outbox.dead(item, error);
      logger.error('cannot publish: run directory deleted', { run: job.run_id, dir: job.run_dir, wip: job.wip_ref ?? undefined });
      return 'dead';
    }
    try {
      const res = await publish({ ...targetOptionsOf(this.opts.targetOptions), run: job.run_dir, push: false });
      const follow: OutboxJob[] = [];
      const remote = target.remote;
      if (remote !== null && this.opts.push) follow.push({ kind: 'push-results' });
      const wipTip = job.wip_ref ? await resolveRef(target.repo, job.wip_ref) : null;
      if (job.wip_ref && wipTip) {
        if (remote === null) {
          const f = await finalizeWip({
            repo: target.repo,
            remote: null,
            ref: job.wip_ref,
            resultsRef: target.resultsRef,
            runPath: res.location.path,
            resultsCommit: res.commits.results,
          });
          logger.info(f.status === 'deleted' ? 'WIP branch deleted (no remote: the local publish is final)' : 'WIP branch kept', {
            run: res.runId,
            wip: job.wip_ref,
            note: f.note ?? undefined,
          });
        } else if (this.opts.push) {
          follow.push({ kind: 'finalize-wip', ref: job.wip_ref, run_id: res.runId, run_path: res.location.path, results_commit: res.commits.results });
        } else {
          logger.info('WIP branch kept until the run reaches the remote (auto_push is off; `agentv-results wip clean` removes it then)', {
            run: res.runId,
            wip: job.wip_ref,
          });
        }
      }
      // Follow-up jobs are recorded before this one is marked done: a crash in between replays
      // an idempotent publish ("already published") instead of losing the push.
      for (const f of follow) await outbox.put(f);
      await outbox.done(item, res.status);
      logger.info(res.status === 'already-published' ? 'run already published' : 'published', {
        run: res.runId,
        status: res.status,
        results: res.commits.results.slice(0, 12),
        rows: res.counts.total,
      });
      return 'published';
    } catch (err) {
      const message = (err as Error).message;
      const attempts = item.attempts + 1;
      if (err instanceof ObjectStoreError && err.transient) {
        // storage_mode hybrid, the bucket unreachable: like a remote that is down, the run stays
        // pending (never dead for it) and nothing was committed, so no pointer names an object never uploaded.
        const delay = backoffDelay(attempts, this.backoff);
        await outbox.retry(item, now + delay, message);
        logger.warn('object store not reachable; the run stays pending', { run: job.run_id, attempts, retry_in_ms: delay, error: message });
        return 'retry';
      }
      if (exitCodeFor(err) === 2) {
        // Refused for good (the run's own content: a link or pipe inside, an unsafe id, what
        // `validate` rejects): retrying cannot change the answer until the user fixes the run.
        // Parked, named in `status` with the reason, never retried.
        await outbox.dead(item, `refused: ${message}`);
        logger.error('publish refused; run parked, not retried (see `agentv-results status`; fix the run and publish it by hand)', {
          run: job.run_id,
          error: message,
        });
        return 'dead';
      }
      if (attempts >= (this.opts.maxPublishAttempts ?? 5)) {
        await outbox.dead(item, message);
        logger.error('publish failed; giving up (see `agentv-results status`)', { run: job.run_id, attempts, error: message });
        return 'dead';
      }
      const delay = backoffDelay(attempts, { baseMs: Math.min(this.backoff.baseMs, 1_000), capMs: this.backoff.capMs });
      await outbox.retry(item, now + delay, message);
      logger.warn('publish failed; will retry', { run: job.run_id, attempts, retry_in_ms: delay, error: message });
      return 'retry';
    }
  }

  private async pushResultsJob(item: OutboxItem, now: number): Promise<'ok' | 'down'> {
    const out = await pushBranches(this.opts.target, { timeoutMs: this.opts.networkTimeoutMs });
    if (out.landed) {
      await this.opts.outbox.done(item, out.classification);
      this.opts.logger.info(out.classification === 'nothing-to-push' ? 'results already on the remote' : 'results pushed', {
        remote: this.opts.target.remote,
        attempts: out.attempts,
        merges: out.merges ?? 0,
      });
      return 'ok';
    }
    if (out.classification === 'conflict') {
      // Set aside on a sync branch for a human: retrying cannot resolve it.
      await this.opts.outbox.done(item, out.message);
      this.opts.logger.error('genuine conflict: results set aside on a sync branch', {
        remote: this.opts.target.remote,
        sync_branch: out.syncBranch?.branch,
        message: out.message,
      });
      await this.opts.notify?.({
        event: 'sync-branch-created',
        remote: this.opts.target.remote,
        sync_branch: out.syncBranch?.branch ?? null,
        message: redactText(out.message),
      });
      return 'ok';
    }
    await this.remoteDown(item, now, out.message);
    return 'down';
  }

  /** One push for every due WIP tip. Returns the number of completed jobs, or 'down'. */
  private async pushWipJobs(items: OutboxItem[], now: number): Promise<number | 'down'> {
    const { target, outbox, logger } = this.opts;
    let completed = 0;
    const tips: { ref: string; sha: string; item: OutboxItem }[] = [];
    for (const item of items) {
      const ref = (item.job as Extract<OutboxJob, { kind: 'push-wip' }>).ref;
      const sha = await resolveRef(target.repo, ref);
      if (sha === null) {
        await outbox.done(item, 'branch no longer exists');
        completed++;
      } else tips.push({ ref, sha, item });
    }
    if (tips.length === 0) return completed;
    const r = await pushWipBranches(target.repo, target.remote as string, tips, { timeoutMs: this.opts.networkTimeoutMs });
    if (r.classification === 'unreachable' || r.classification === 'auth' || (r.pushed.length === 0 && r.rejected.length === 0)) {
      await this.remoteDown(tips[0]!.item, now, r.message);
      return 'down';
    }
    for (const t of tips) {
      const rejected = r.rejected.find((x) => x.ref === t.ref);
      if (r.pushed.includes(t.ref)) {
        // A checkpoint made after we read the tip re-queues the job with a new rev: not lost.
        await outbox.done(t.item, t.sha);
        completed++;
      } else if (rejected) {
        await outbox.dead(
          t.item,
          `the remote refused ${t.ref.slice('refs/heads/'.length)} (${rejected.reason}); it moved there — recover or inspect it with \`agentv-results wip list\``,
        );
        logger.error('WIP push rejected', { wip: t.ref, reason: rejected.reason });
        completed++;
      }
    }
    if (r.pushed.length > 0) logger.info('WIP checkpoints pushed', { remote: target.remote, branches: r.pushed.length });
    return completed;
  }

  private async finalizeJob(item: OutboxItem, now: number): Promise<boolean> {
    const job = item.job as Extract<OutboxJob, { kind: 'finalize-wip' }>;
    const { target, outbox, logger } = this.opts;
    const f = await finalizeWip({
      repo: target.repo,
      remote: target.remote,
      ref: job.ref,
      resultsRef: target.resultsRef,
      runPath: job.run_path,
      resultsCommit: job.results_commit,
      timeoutMs: this.opts.networkTimeoutMs,
    });
    if (f.status === 'waiting') {
      const delay = backoffDelay(item.attempts + 1, this.backoff);
      await outbox.retry(item, now + delay, f.note ?? 'waiting for the publish to reach the remote');
      return false;
    }
    await outbox.done(item, f.note ?? f.status);
    logger.info(f.status === 'deleted' ? 'WIP branch deleted after the publish reached the remote' : 'WIP branch kept', {
      run: job.run_id,
      wip: job.ref,
      local: f.deletedLocal,
      remote: f.deletedRemote,
      note: f.note ?? undefined,
    });
    return true;
  }
}
