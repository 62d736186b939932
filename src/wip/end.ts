/**
 * The end of a run's WIP: once its final publish is on the remote, the WIP branches that
 * checkpointed it have nothing left to protect, whichever command published it (`publish`,
 * `exec`, the daemon). Found by their wip.json (run id or workspace), on this machine's refs (local
 * branches and remote-tracking copies; no network to find them), and deleted through
 * finalizeWip: confirmed publish first, then the remote copy under a lease, then the local ref.
 *
 * One more check than finalizeWip's, by row identity (test, target, attempt, variant, …), never
 * by bytes: a branch is deleted only when every row it captured is in the run's index on the
 * results commit just made, whatever form that index takes (our derived index.jsonl, AgentV's
 * `.internal/index.jsonl`, plain rows of a workspace derived in place). A WIP holding a row the
 * published run lacks, or one that cannot be read, is kept, so `wip recover` can still bring it
 * back. AgentV's own checkpoint of the published run directory ends the same way.
 */
import { lsTree, readBlobs, type Repo } from '../git/index.js';
import { identityFieldsOf, localIdentityKey } from '../runs/export/projection-identity.js';
import { normalizeRow } from '../runs/export/normalize.js';
import { ProjectionIdentitySchema } from '../model/artifacts.js';
import { parseInputRow } from '../model/input-row.js';
import { finalizeWip, type FinalizeOutcome } from './clean.js';
import { WIP_INDEX_DIR } from './checkpoint-layout.js';
import { listWip, type WipEntry } from './list.js';

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

/** A row's identity without its run id (null: not a row we can identify). */
function rowKey(line: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // unparsable: not a row we can identify
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  // The score rides along: a namesake run's row of the same test and target, scored differently,
  // is not this row (every form of the index keeps the row's score as it is).
  const score = JSON.stringify((value as Record<string, unknown>).score ?? null);
  const id = ProjectionIdentitySchema.safeParse((value as Record<string, unknown>).projection_identity);
  if (id.success) return `${localIdentityKey(identityFieldsOf(id.data))}\0${score}`;
  const row = parseInputRow(value);
  return row.ok ? `${localIdentityKey(normalizeRow(row.row))}\0${score}` : null;
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

/** The index texts a WIP tip captured: our segments, or AgentV's checkpointed run index. */
async function capturedIndexes(repo: Repo, e: WipEntry, tip: string): Promise<string[] | null> {
  if (e.writer === 'agentv') {
    const dir = e.branch.split('/').pop() ?? '';
    const specs = [`${tip}:${dir}/.internal/index.jsonl`, `${tip}:${dir}/index.jsonl`];
    const blobs = await readBlobs(repo, specs);
    const text = blobs.get(specs[0]!) ?? blobs.get(specs[1]!);
    return text ? [text.toString('utf8')] : null;
  }
  const segments = (await lsTree(repo, tip, { path: `${WIP_INDEX_DIR}/`, recursive: true })).filter((s) => s.type === 'blob');
  const blobs = await readBlobs(
    repo,
    segments.map((s) => s.sha),
  );
  return segments.map((s) => blobs.get(s.sha)?.toString('utf8') ?? '');
}

/**
 * Whether every row the WIP captured (on each of its tips) is in the run as just published, by row
 * identity: whatever form the published index takes (our derived index.jsonl, AgentV's
 * `.internal/index.jsonl`, plain rows), the same row has the same identity.
 */
async function publishedHoldsRows(repo: Repo, e: WipEntry, resultsCommit: string | null, runPath: string): Promise<boolean> {
  if (resultsCommit === null) return false;
  const specs = [`${resultsCommit}:${runPath}/index.jsonl`, `${resultsCommit}:${runPath}/.internal/index.jsonl`];
  const blobs = await readBlobs(repo, specs);
  const have = new Set<string>();
  let found = false;
  for (const spec of specs) {
    const text = blobs.get(spec);
    if (!text) continue;
    const keys = rowKeys(text.toString('utf8'));
    if (keys === null) return false;
    found = true;
    for (const k of keys) have.add(k);
  }
  if (!found) return false;
  for (const tip of new Set([e.local, e.remote].filter((t): t is string => t !== null))) {
    const texts = await capturedIndexes(repo, e, tip);
    if (texts === null) return false;
    for (const text of texts) {
      const captured = rowKeys(text);
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
  // Ours (a wip.json naming the run or the workspace) and AgentV's own checkpoint of this run
  // directory (`agentv/wip/<host>/<run dir>`), when the published run is that directory.
  const mine = listing.entries.filter((e) =>
    e.writer === 'agentv-results' ? e.meta !== null && isThisRun(e.runId, e.meta.run_dir) : e.runId === opts.runPath || e.runId === opts.runId,
  );
  const out: EndedWip[] = [];
  for (const e of mine) {
    // By row identity, never by bytes: publishing a workspace of plain rows derives its index in
    // place, so the captured bytes are gone while every captured row is on the branch.
    const covered = await publishedHoldsRows(opts.repo, e, opts.resultsCommit, opts.runPath).catch(() => false);
    if (!covered) {
      out.push({
        branch: e.branch,
        status: 'kept',
        note: `${e.branch} holds rows the published run does not have; kept — \`agentv-results wip recover ${e.branch}\` brings them back`,
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
