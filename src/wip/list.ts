/**
 * `wip list`: the WIP branches of this repository and of its remote, with what each holds (host,
 * run id, rows, checkpoint number, last checkpoint time). One ls-remote + at most one fetch for the
 * remote side, one cat-file for every wip.json: cost does not grow with the runs' sizes.
 */
import { commitRelation, listRefs, readBlobs, readObjects, type GitObject, type Repo } from '../git/index.js';
import { RemoteError } from '../errors/git-errors.js';
import { hostOfBranch, parseWipMeta, WIP_META_PATH, WIP_REF_PREFIX, type WipMeta } from './checkpoint-layout.js';
import { refreshRemoteWip, wipTrackingRef } from './remote.js';

export type WipLocation = 'local-only' | 'remote-only' | 'in-sync' | 'local-ahead' | 'remote-ahead' | 'diverged';

export interface WipEntry {
  /** agentv/wip/<host>/<slug> */
  branch: string;
  ref: string;
  host: string;
  runId: string | null;
  rows: number | null;
  checkpoint: number | null;
  finished: boolean | null;
  /** Time of the newest checkpoint (of the newer side). */
  updatedAt: string | null;
  ageSeconds: number | null;
  local: string | null;
  remote: string | null;
  where: WipLocation;
  /** The wip.json of the newer side (null when unreadable). */
  meta: WipMeta | null;
  /** What its checkpoints left out because publish would refuse it (wip.json's `refused`, newest last). */
  refused: string[];
  /** Who checkpoints it: us (a wip.json) or AgentV's own auto_push (`agentv/wip/<host>/<run dir>`, no wip.json). */
  writer: 'agentv-results' | 'agentv';
}

export interface WipListing {
  entries: WipEntry[];
  remote: string | null;
  /** Why the remote side could not be refreshed (its entries are then as last fetched). */
  remoteError: string | null;
}

export interface ListWipOptions {
  repo: Repo;
  remote: string | null;
  /** Ask the remote (default true when there is a remote). */
  fetch?: boolean;
  timeoutMs?: number;
  now?: Date;
}

async function locate(repo: Repo, local: string | null, remote: string | null): Promise<WipLocation> {
  if (local === null) return 'remote-only';
  if (remote === null) return 'local-only';
  // One merge-base, not an ancestry question each way.
  const relation = await commitRelation(repo, local, remote);
  return relation === 'same' ? 'in-sync' : relation === 'descendant' ? 'local-ahead' : relation === 'ancestor' ? 'remote-ahead' : 'diverged';
}

export async function listWip(opts: ListWipOptions): Promise<WipListing> {
  const { repo, remote } = opts;
  let remoteError: string | null = null;
  if (remote !== null && opts.fetch !== false) {
    try {
      await refreshRemoteWip(repo, remote, { timeoutMs: opts.timeoutMs });
    } catch (err) {
      if (!(err instanceof RemoteError)) throw err;
      remoteError = `${remote} could not be reached (${err.kind}); remote branches are shown as last fetched`;
    }
  }
  const local = new Map((await listRefs(repo, WIP_REF_PREFIX.slice(0, -1))).map((e) => [e.ref, e.sha]));
  const remoteTips = new Map<string, string>();
  if (remote !== null) {
    const prefix = `refs/remotes/${remote}/`;
    for (const e of await listRefs(repo, `${prefix}agentv/wip`)) remoteTips.set(`refs/heads/${e.ref.slice(prefix.length)}`, e.sha);
  }
  const refs = [...new Set([...local.keys(), ...remoteTips.keys()])].sort();
  const shas = [...new Set([...local.values(), ...remoteTips.values()])];
  const blobs = await readBlobs(
    repo,
    shas.map((s) => `${s}:${WIP_META_PATH}`),
  );
  const metaOf = (sha: string | null): WipMeta | null => (sha === null ? null : parseWipMeta(blobs.get(`${sha}:${WIP_META_PATH}`)));
  // AgentV's own checkpoints have no wip.json: their rows and time come from the checkpoint itself
  // (the run index it holds, and the time in its commit message), in one more batch for all of them.
  const agentvTips = new Map<string, string>(); // tip -> run dir
  for (const ref of refs) {
    const branch = ref.slice('refs/heads/'.length);
    const dir = branch.split('/').length === 4 ? branch.split('/')[3]! : null;
    for (const sha of [local.get(ref), remoteTips.get(ref)]) if (sha && dir && !metaOf(sha)) agentvTips.set(sha, dir);
  }
  const agentv = await agentvCheckpoints(repo, agentvTips);
  const now = (opts.now ?? new Date()).getTime();
  const entries: WipEntry[] = [];
  for (const ref of refs) {
    const l = local.get(ref) ?? null;
    const r = remoteTips.get(ref) ?? null;
    const where = await locate(repo, l, r);
    const newer = where === 'remote-ahead' || where === 'remote-only' ? r : l;
    const meta = metaOf(newer) ?? metaOf(l) ?? metaOf(r);
    const theirs = meta ? null : (agentv.get(newer ?? '') ?? agentv.get(l ?? '') ?? agentv.get(r ?? '') ?? null);
    const updatedAt = meta?.updated_at ?? theirs?.updatedAt ?? null;
    const updated = updatedAt ? Date.parse(updatedAt) : NaN;
    const branch = ref.slice('refs/heads/'.length);
    entries.push({
      branch,
      ref,
      host: meta?.host ?? hostOfBranch(branch),
      // AgentV names its WIP branch after the run directory, which is the run id.
      runId: meta?.run_id ?? (branch.split('/').length === 4 ? branch.split('/')[3]! : null),
      rows: meta?.rows ?? theirs?.rows ?? null,
      checkpoint: meta?.checkpoint ?? null,
      finished: meta?.finished ?? null,
      updatedAt,
      ageSeconds: Number.isNaN(updated) ? null : Math.max(0, Math.round((now - updated) / 1000)),
      local: l,
      remote: r,
      where,
      meta,
      refused: meta?.refused ?? [],
      writer: meta ? 'agentv-results' : 'agentv',
    });
  }
  return { entries, remote, remoteError };
}

/**
 * Rows and time of AgentV's checkpoints (tip -> run dir): the non-empty lines of the run's index
 * (`.internal/index.jsonl`, else `index.jsonl`) and the time AgentV writes in the commit message
 * (`wip(results): checkpoint <branch> <ISO time>`), else the committer time. One cat-file for all.
 */
async function agentvCheckpoints(repo: Repo, tips: Map<string, string>): Promise<Map<string, { rows: number | null; updatedAt: string | null }>> {
  const out = new Map<string, { rows: number | null; updatedAt: string | null }>();
  if (tips.size === 0) return out;
  const specs: string[] = [];
  for (const [sha, dir] of tips) specs.push(sha, `${sha}:${dir}/.internal/index.jsonl`, `${sha}:${dir}/index.jsonl`);
  let objects: Map<string, GitObject | null>;
  try {
    objects = await readObjects(repo, specs);
  } catch {
    return out; // e.g. an index path that is a directory: shown as unknown
  }
  for (const [sha, dir] of tips) {
    const index = objects.get(`${sha}:${dir}/.internal/index.jsonl`) ?? objects.get(`${sha}:${dir}/index.jsonl`);
    const rows =
      index?.type === 'blob'
        ? index.data
            .toString('utf8')
            .split('\n')
            .filter((l) => l.trim() !== '').length
        : null;
    const commit = objects.get(sha);
    let updatedAt: string | null = null;
    if (commit?.type === 'commit') {
      const text = commit.data.toString('utf8');
      const stated = /^wip\(results\): checkpoint \S+ (\d{4}-\d{2}-\d{2}T[\d:.]+Z)\s*$/m.exec(text)?.[1];
      const committed = /^committer .* (\d+) [+-]\d{4}$/m.exec(text)?.[1];
      if (stated && !Number.isNaN(Date.parse(stated))) updatedAt = new Date(Date.parse(stated)).toISOString();
      else if (committed && Number(committed) > 0) updatedAt = new Date(Number(committed) * 1000).toISOString();
    }
    out.set(sha, { rows, updatedAt });
  }
  return out;
}

/** The tracking ref holding the remote copy of a WIP ref (re-exported for callers of the listing). */
export { wipTrackingRef };
