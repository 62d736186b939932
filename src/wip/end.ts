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
 *
 * A run checkpointed while it ran holds plain result rows, and publishing it derives the workspace
 * in place: its index.jsonl is rewritten (normalized rows with sidecar paths), so the captured
 * bytes are no longer its start although every row was published. For a WIP taken of the very
 * workspace that was published, the rows themselves are then compared: the branch goes when every
 * row it captured (by identity: test, target, attempt, variant, …) is in the run's index.jsonl on
 * the results commit just made; a captured row that is not there, or one that cannot be read,
 * keeps it.
 */
import { join } from 'node:path';
import { lsTree, readBlobs, type Repo } from '../git/index.js';
import { identityFieldsOf, localIdentityKey } from '../derive/identity.js';
import { normalizeRow } from '../derive/normalize.js';
import { ProjectionIdentitySchema } from '../model/artifacts.js';
import { parseInputRow } from '../model/input-row.js';
import { finalizeWip, type FinalizeOutcome } from './clean.js';
import { WIP_INDEX_DIR } from './layout.js';
import { listWip, type WipEntry } from './list.js';
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

/** A row's identity without its run id (null: not a row we can identify). */
function rowKey(line: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = ProjectionIdentitySchema.safeParse((value as Record<string, unknown>).projection_identity);
  if (id.success) return localIdentityKey(identityFieldsOf(id.data));
  const row = parseInputRow(value);
  return row.ok ? localIdentityKey(normalizeRow(row.row)) : null;
}

/** Identities of the rows of an index text (null when one cannot be identified). */
function rowKeys(text: string): Set<string> | null {
  const keys = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const key = rowKey(line);
    if (key === null) return null;
    keys.add(key);
  }
  return keys;
}

/** Whether every row the WIP captured (on each of its tips) is in the run as just published. */
async function publishedHoldsRows(repo: Repo, e: WipEntry, resultsCommit: string | null, runPath: string): Promise<boolean> {
  if (resultsCommit === null) return false;
  const spec = `${resultsCommit}:${runPath}/index.jsonl`;
  const published = (await readBlobs(repo, [spec])).get(spec);
  const have = published ? rowKeys(published.toString('utf8')) : null;
  if (have === null) return false;
  for (const tip of new Set([e.local, e.remote].filter((t): t is string => t !== null))) {
    const segments = (await lsTree(repo, tip, { path: `${WIP_INDEX_DIR}/`, recursive: true })).filter((s) => s.type === 'blob');
    const blobs = await readBlobs(
      repo,
      segments.map((s) => s.sha),
    );
    for (const s of segments) {
      const captured = rowKeys(blobs.get(s.sha)?.toString('utf8') ?? '');
      if (captured === null) return false;
      for (const key of captured) if (!have.has(key)) return false;
    }
  }
  return true;
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
    const covered =
      (await publishedCovers(opts.workspace, { bytes: meta.index_bytes, tailSha256: meta.index_tail_sha256 })) ||
      (meta.run_dir === opts.workspace && (await publishedHoldsRows(opts.repo, e, opts.resultsCommit, opts.runPath).catch(() => false)));
    if (!covered) {
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
