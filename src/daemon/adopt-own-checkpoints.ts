/**
 * Our own checkpoint branches get the same treatment as AgentV's (issue 50 item 3): a finished run
 * whose only copy is a checkpoint branch on the remote (its machine was lost after the eval ended,
 * before its publish) is published from it, and the branch is deleted once the run is on the
 * remote's results branch.
 *
 * Our checkpoints are not runs in a branch layout (wip.json, index segments, `run/<path>`:
 * wip/checkpoint-layout.ts), so they cannot be adopted by sync's runs-only adoption
 * (sync/adopt-checkpoints.ts handles AgentV's): the run is rebuilt from the checkpoint exactly as
 * `wip recover` rebuilds it, into a scratch directory, and published by the ordinary `publish`
 * (its checks, its layout, its merge); once that publish is on the remote, the branch is deleted
 * on a lease (wip/clean.ts finalizeWip), as after any final publish. Only checkpoints this
 * machine does not hold (`remote-only`) are taken: a machine's own are its daemon's and `exec`'s
 * to publish from the workspace itself. An unfinished one is left and reported.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publish } from '../publish/publish.js';
import { targetOptionsOf, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { finalizeWip, listWip, recoverWip } from '../wip/index.js';

export interface OwnCheckpointAdoption {
  /** Published from a checkpoint branch (`ended`: its WIP branches deleted as the publish ended them). */
  published: { branch: string; runId: string; landed: boolean; ended: boolean }[];
  /** Left, with why (unfinished, or the publish refused the run). */
  left: { branch: string; reason: string }[];
}

export async function adoptOwnCheckpoints(
  target: PublishTarget,
  targetOptions: TargetOptions,
  opts: { timeoutMs?: number } = {},
): Promise<OwnCheckpointAdoption> {
  const out: OwnCheckpointAdoption = { published: [], left: [] };
  if (target.remote === null) return out;
  const listing = await listWip({ repo: target.repo, remote: target.remote, timeoutMs: opts.timeoutMs });
  for (const e of listing.entries) {
    if (e.writer !== 'agentv-results' || e.where !== 'remote-only' || e.runId === null) continue;
    if (e.finished !== true) {
      out.left.push({ branch: e.branch, reason: 'its run is not finished (no summary.json checkpointed yet)' });
      continue;
    }
    const scratch = await mkdtemp(join(tmpdir(), 'agentv-results-adopt-'));
    try {
      const rec = await recoverWip({ repo: target.repo, remote: target.remote, source: e.branch, out: join(scratch, 'run'), timeoutMs: opts.timeoutMs });
      const r = await publish({ ...targetOptionsOf(targetOptions), run: rec.out, push: true });
      const landed = r.push?.landed === true;
      let ended = r.wip.some((w) => w.branch === e.branch && w.status === 'deleted');
      if (landed && !ended) {
        // The run was published from exactly this branch's tip: once the remote confirms it, the
        // branch goes (on a lease: one that moved since, another machine resuming it, stays).
        const f = await finalizeWip({
          repo: target.repo,
          remote: target.remote,
          ref: e.ref,
          resultsRef: target.resultsRef,
          runPath: r.location.path,
          resultsCommit: r.commits.results,
          timeoutMs: opts.timeoutMs,
        });
        ended = f.status === 'deleted';
      }
      out.published.push({ branch: e.branch, runId: r.runId, landed, ended });
    } catch (err) {
      // A run publish refuses (or a remote that went away) stays on its branch for a person: said, not thrown.
      out.left.push({ branch: e.branch, reason: (err as Error).message });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
  return out;
}
