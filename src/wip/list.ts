/**
 * `wip list`: the WIP branches of this repository and of its remote, with what each holds (host,
 * run id, rows, checkpoint number, last checkpoint time). One ls-remote + at most one fetch for the
 * remote side, one cat-file for every wip.json: cost does not grow with the runs' sizes.
 */
import { isAncestor, listRefs, readBlobs, RemoteError, type Repo } from '../git/index.js';
import { hostOfBranch, parseWipMeta, WIP_META_PATH, WIP_REF_PREFIX, type WipMeta } from './layout.js';
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
  if (local === remote) return 'in-sync';
  if (await isAncestor(repo, remote, local)) return 'local-ahead';
  if (await isAncestor(repo, local, remote)) return 'remote-ahead';
  return 'diverged';
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
  const now = (opts.now ?? new Date()).getTime();
  const entries: WipEntry[] = [];
  for (const ref of refs) {
    const l = local.get(ref) ?? null;
    const r = remoteTips.get(ref) ?? null;
    const where = await locate(repo, l, r);
    const newer = where === 'remote-ahead' || where === 'remote-only' ? r : l;
    const meta = metaOf(newer) ?? metaOf(l) ?? metaOf(r);
    const updated = meta ? Date.parse(meta.updated_at) : NaN;
    const branch = ref.slice('refs/heads/'.length);
    entries.push({
      branch,
      ref,
      host: meta?.host ?? hostOfBranch(branch),
      // AgentV names its WIP branch after the run directory, which is the run id.
      runId: meta?.run_id ?? (branch.split('/').length === 4 ? branch.split('/')[3]! : null),
      rows: meta?.rows ?? null,
      checkpoint: meta?.checkpoint ?? null,
      finished: meta?.finished ?? null,
      updatedAt: meta?.updated_at ?? null,
      ageSeconds: Number.isNaN(updated) ? null : Math.max(0, Math.round((now - updated) / 1000)),
      local: l,
      remote: r,
      where,
      meta,
      writer: meta ? 'agentv-results' : 'agentv',
    });
  }
  return { entries, remote, remoteError };
}

/** The tracking ref holding the remote copy of a WIP ref (re-exported for callers of the listing). */
export { wipTrackingRef };
