/**
 * The end of a run's WIP: once its final publish is on the remote, the WIP branches that
 * checkpointed it have nothing left to protect, whichever command published it (`publish`,
 * `exec`, the daemon). Found by their wip.json (run id or workspace), on this machine's refs (local
 * branches and remote-tracking copies; no network to find them), and deleted through
 * finalizeWip: confirmed publish first, then the remote copy under a lease, then the local ref.
 *
 * One more check than finalizeWip's: a branch is deleted only when everything it captured of
 * index.jsonl is still the start of the workspace that was published. A WIP that saw rows the
 * published workspace no longer has (its index was rewritten or truncated since) is kept, so
 * `wip recover` can still bring them back.
 */
import { join } from 'node:path';
import type { Repo } from '../git/index.js';
import { finalizeWip, type FinalizeOutcome } from './clean.js';
import { listWip } from './list.js';
import { readIndexDelta } from './scan.js';

export interface EndWipOptions {
  repo: Repo;
  remote: string | null;
  resultsRef: string;
  runId: string;
  /** The run's path on the results branch. */
  runPath: string;
  resultsCommit: string | null;
  /** The workspace that was published (null: a results file, which no WIP checkpoints). */
  workspace: string | null;
  timeoutMs?: number;
}

export interface EndedWip {
  branch: string;
  status: FinalizeOutcome['status'];
  note: string | null;
}

/** Whether the workspace's index.jsonl still starts with what this checkpoint captured. */
async function publishedCovers(workspace: string | null, captured: { bytes: number; tailSha256: string }): Promise<boolean> {
  if (workspace === null) return false;
  try {
    return !(await readIndexDelta(join(workspace, 'index.jsonl'), captured)).rewrite;
  } catch {
    return false; // no index.jsonl to compare with: keep the branch
  }
}

export async function endWipAfterPublish(opts: EndWipOptions): Promise<EndedWip[]> {
  const listing = await listWip({ repo: opts.repo, remote: opts.remote, fetch: false });
  // A WIP names its run after the workspace directory (`<parent>/<dir>`), a publish by the run id:
  // the same run when the directory matches or the names agree. Whatever matches is deleted only if
  // the published workspace covers it (below), so a namesake of another run is kept.
  const isThisRun = (runId: string | null, runDir: string): boolean =>
    runId === opts.runId || runDir === opts.workspace || runId?.split('/').pop() === opts.runId;
  const mine = listing.entries.filter((e) => e.writer === 'agentv-results' && e.meta !== null && isThisRun(e.runId, e.meta.run_dir));
  const out: EndedWip[] = [];
  for (const e of mine) {
    const meta = e.meta!;
    if (!(await publishedCovers(opts.workspace, { bytes: meta.index_bytes, tailSha256: meta.index_tail_sha256 }))) {
      out.push({
        branch: e.branch,
        status: 'kept',
        note: `${e.branch} holds rows the published workspace does not (its index.jsonl changed); kept — \`agentv-results wip recover ${e.branch}\` brings them back`,
      });
      continue;
    }
    const f = await finalizeWip({
      repo: opts.repo,
      remote: opts.remote,
      ref: e.ref,
      resultsRef: opts.resultsRef,
      runPath: opts.runPath,
      resultsCommit: opts.resultsCommit,
      timeoutMs: opts.timeoutMs,
    });
    out.push({ branch: e.branch, status: f.status, note: f.note });
  }
  return out;
}
