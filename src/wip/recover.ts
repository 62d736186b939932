/**
 * `wip recover`: materialize a WIP checkpoint into a run workspace an eval can resume.
 *
 * Atomic: the workspace is built in a hidden staging folder beside the destination and moved into
 * place with one rename (runs/export/atomic-dir.ts); an interruption or a full disk leaves the
 * destination as it was. A destination holding a different run is refused. A destination holding
 * the same run is merged, never clobbered: its own files win (they are at least as new as the
 * checkpoint) and index rows are the union of both, each row once.
 *
 * Rows are deduplicated by identity (projection_identity.id, else the row's canonical JSON — the
 * same identity the index merge driver uses). Checkpoints never capture a row twice by
 * construction (wip.json records the captured offset); the dedupe is what keeps a merge with a
 * partly re-run workspace, or any future bug, from ever producing duplicate rows.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AtomicDir } from '../runs/export/atomic-dir.js';
import { lsTree, readBlobs, updateRef, type Repo, type TreeEntry } from '../git/index.js';
import { RefConflictError } from '../errors/git-errors.js';
import { indexRowIdentity } from '../merge/row-identity.js';
import { isSafeSegment } from '../model/path-segments.js';
import { safeRelativePath } from '../runs/read/run-files.js';
import { WipError } from '../errors/wip-errors.js';
import {
  parseWipBranch,
  parseWipMeta,
  RECOVERY_MARKER,
  runIdOfDir,
  WIP_INDEX_DIR,
  WIP_META_PATH,
  WIP_OBJECTS_DIR,
  WIP_RUN_DIR,
  type WipMeta,
} from './checkpoint-layout.js';
import { isContentKey, sha256Of, type ObjectStore } from '../store/object-store.js';
import { listWip, type WipEntry } from './list.js';
import { checkOutputDir } from '../util/output-target.js';
import { readOptionalJson, readRegularText } from '../util/safe-open.js';
import { absentAs } from '../errors/errors.js';

export interface RecoverOptions {
  repo: Repo;
  remote: string | null;
  /** A WIP branch (agentv/wip/..., refs/heads/..., refs/remotes/<r>/...) or a run id. */
  source: string;
  /** Destination workspace; default `<cwd>/.agentv/results/<run id>`. */
  out?: string;
  cwd?: string;
  /** Look at the remote's WIP branches too (default true). */
  fetch?: boolean;
  timeoutMs?: number;
  /** storage_mode hybrid: the bucket a checkpoint's `objects/` pointers name. */
  store?: ObjectStore | null;
}

export interface RecoverResult {
  runId: string;
  branch: string;
  commit: string;
  checkpoint: number;
  from: 'local' | 'remote';
  out: string;
  rows: number;
  files: number;
  /** Rows dropped because an identical identity was already present. */
  duplicatesDropped: number;
  /** The destination already held this run and was merged with the checkpoint. */
  merged: boolean;
  finished: boolean;
  /** Set when the remote could not be asked (recovered from what this machine has). */
  remoteError: string | null;
  /** Who wrote the checkpoint: us (wip.json + segments) or AgentV's own `agentv/wip/<host>/<run>`. */
  writer?: 'agentv-results' | 'agentv';
}

/** The `objects/` pointers of a hybrid checkpoint: each object read from the bucket, checked, written. */
async function writeObjects(repo: Repo, objects: TreeEntry[], store: ObjectStore | null, staging: AtomicDir, branch: string): Promise<void> {
  if (!store)
    throw new WipError(`${branch} holds files in an object store (storage_mode hybrid) but results.object_store is not configured here; nothing was written`);
  for (const e of objects) {
    const ptr = (await readBlobs(repo, [e.sha])).get(e.sha);
    let p: { key?: unknown; path?: unknown; sha256?: unknown; size?: unknown } = {};
    try {
      p = JSON.parse(ptr?.toString('utf8') ?? '') as typeof p;
    } catch {
      // refused below
    }
    const rel = safeRelativePath(e.path.slice(WIP_OBJECTS_DIR.length + 1));
    if (
      rel === null ||
      p.path !== rel ||
      typeof p.sha256 !== 'string' ||
      typeof p.key !== 'string' ||
      typeof p.size !== 'number' ||
      !isContentKey(p.key, p.sha256) ||
      rel.split('/').some((s) => s.startsWith('.'))
    )
      throw new WipError(`${branch}: refusing the object pointer ${e.path}: it is not a content-addressed pointer to a file of the run`);
    const data = await store.get(p.key);
    if (!data) throw new WipError(`${branch}: ${rel} is missing from ${store.where} (key ${p.key}); nothing was written`);
    if (data.length !== p.size || sha256Of(data) !== p.sha256)
      throw new WipError(`${branch}: ${rel} in ${store.where} does not match its pointer (sha256/size); nothing was written`, false, true);
    staging.writeSync(rel, data);
  }
}

/** Batches keep memory bounded for runs with many large sidecars. */
const BLOB_BATCH = 256;

function pick(entries: WipEntry[], source: string): { entry: WipEntry; side: 'local' | 'remote' | null } {
  const branch = parseWipBranch(source);
  if (branch !== null) {
    const entry = entries.find((e) => e.branch === branch);
    if (!entry) throw new WipError(`no WIP branch ${branch} here or on the remote — run \`agentv-results wip list\``);
    const side = source.startsWith('refs/remotes/') ? 'remote' : source.startsWith('refs/heads/') ? 'local' : null;
    return { entry, side };
  }
  const matches = entries.filter((e) => e.runId === source);
  if (matches.length === 0)
    throw new WipError(`no WIP branch holds run ${JSON.stringify(source)} — run \`agentv-results wip list\` to see what can be recovered`);
  if (matches.length > 1)
    throw new WipError(`run ${source} has WIP branches from several machines: ${matches.map((m) => m.branch).join(', ')} — pass the branch to recover`);
  return { entry: matches[0] as WipEntry, side: null };
}

/** Which commit to recover, and the local branch set up so that later checkpoints fast-forward it. */
async function chooseCommit(repo: Repo, entry: WipEntry, side: 'local' | 'remote' | null): Promise<{ commit: string; from: 'local' | 'remote' }> {
  if (side === 'local' || (side === null && (entry.where === 'local-only' || entry.where === 'in-sync' || entry.where === 'local-ahead'))) {
    if (!entry.local) throw new WipError(`${entry.branch} does not exist locally`);
    return { commit: entry.local, from: 'local' };
  }
  if (side === null && entry.where === 'diverged') {
    throw new WipError(
      `the local and remote copies of ${entry.branch} diverged; recover one of them explicitly: refs/heads/${entry.branch} or the remote's refs/remotes/<remote>/${entry.branch}`,
    );
  }
  if (!entry.remote) throw new WipError(`${entry.branch} is not on the remote`);
  // Adopt the remote copy locally (create or fast-forward, compare-and-swap) unless we are ahead.
  if (entry.where === 'remote-only' || entry.where === 'remote-ahead') {
    try {
      await updateRef(repo, entry.ref, entry.remote, entry.local, { message: 'agentv-results: wip recover' });
    } catch (err) {
      if (!(err instanceof RefConflictError)) throw err;
      throw new WipError(`${entry.branch} moved locally while recovering (a checkpoint is running?); run the command again`);
    }
  }
  return { commit: entry.remote, from: 'remote' };
}

/** The run an existing destination holds: recovery marker, then first row, then its path. */
async function existingRunId(dir: string): Promise<{ runId: string | null; empty: boolean }> {
  const names = (await readdir(dir)).filter((n) => n !== RECOVERY_MARKER);
  if (names.length === 0) return { runId: null, empty: true };
  // No marker (or not JSON): look at the rows. One that cannot be read is said, not taken for none.
  const marker = (await readOptionalJson(join(dir, RECOVERY_MARKER), { kind: 'run-file' })) as { run_id?: unknown } | null | undefined;
  if (typeof marker?.run_id === 'string') return { runId: marker.run_id, empty: false };
  // absent: no index, no run id
  const index = await readRegularText(join(dir, 'index.jsonl'), { kind: 'run-file' }).catch(absentAs(null));
  if (index === null) return { runId: null, empty: false };
  for (const line of index.split('\n')) {
    try {
      const row = JSON.parse(line) as { run_id?: unknown };
      if (typeof row.run_id === 'string') return { runId: row.run_id, empty: false };
    } catch {
      // a partial line: keep looking
    }
  }
  return { runId: runIdOfDir(dir), empty: false };
}

function identityOf(line: string): string {
  try {
    return indexRowIdentity(JSON.parse(line), line);
  } catch {
    // unparsable: keyed by its bytes
    return `raw:${line}`;
  }
}

/** Complete lines of each source in order, each identity once; a trailing partial line is dropped. */
export function unionRows(sources: string[]): { text: string; rows: number; dropped: number } {
  const seen = new Set<string>();
  const out: string[] = [];
  let dropped = 0;
  for (const src of sources) {
    const lines = src.split('\n');
    lines.pop(); // after the last "\n": empty, or an unfinished line
    for (const line of lines) {
      if (!line.trim()) continue;
      const id = identityOf(line.replace(/\r$/, ''));
      if (seen.has(id)) {
        dropped++;
        continue;
      }
      seen.add(id);
      out.push(line);
    }
  }
  return { text: out.map((l) => `${l}\n`).join(''), rows: out.length, dropped };
}

function defaultOut(cwd: string, meta: WipMeta): string {
  const segs = meta.run_id.split('/');
  if (segs.length === 0 || !segs.every(isSafeSegment)) {
    throw new WipError(`run id ${JSON.stringify(meta.run_id)} cannot be used as a directory name; pass --out <dir>`);
  }
  return resolve(cwd, '.agentv', 'results', ...segs);
}

export async function recoverWip(opts: RecoverOptions): Promise<RecoverResult> {
  const { repo } = opts;
  const cwd = opts.cwd ?? process.cwd();
  const listing = await listWip({ repo, remote: opts.remote, fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const { entry, side } = pick(listing.entries, opts.source);
  const { commit, from } = await chooseCommit(repo, entry, side);

  const tree = await lsTree(repo, commit, { recursive: true });
  const metaSpec = `${commit}:${WIP_META_PATH}`;
  const meta = parseWipMeta((await readBlobs(repo, [metaSpec])).get(metaSpec));
  if (!meta) return recoverAgentvWip(repo, entry.branch, commit, from, tree, opts, cwd, listing.remoteError);
  const segments = tree.filter((e) => e.type === 'blob' && e.path.startsWith(`${WIP_INDEX_DIR}/`)).sort((a, b) => (a.path < b.path ? -1 : 1));
  const files = tree
    .filter((e) => e.type === 'blob' && e.path.startsWith(`${WIP_RUN_DIR}/`))
    .map((e) => ({ sha: e.sha, rel: safeRelativePath(e.path.slice(WIP_RUN_DIR.length + 1)) }))
    .filter((f): f is { sha: string; rel: string } => f.rel !== null && f.rel !== 'index.jsonl' && !f.rel.split('/').some((s) => s.startsWith('.')));
  const objects = tree.filter((e) => e.type === 'blob' && e.path.startsWith(`${WIP_OBJECTS_DIR}/`));

  const out = opts.out ? resolve(cwd, opts.out) : defaultOut(cwd, meta);
  // The output-target rule: no file, device, FIFO or link is replaced; a directory is judged below.
  const there = await checkOutputDir(out, { command: 'wip recover', foreign: 'caller' });
  let merged = false;
  if (there === 'workspace' || there === 'other') {
    const existing = await existingRunId(out);
    if (!existing.empty) {
      if (existing.runId !== meta.run_id) {
        throw new WipError(
          `${out} holds ${existing.runId ? `run ${existing.runId}` : 'something that is not a run workspace'}, not ${meta.run_id}; refusing to overwrite it — pass another --out`,
        );
      }
      merged = true;
    }
  }

  const staging = await AtomicDir.create(dirname(out), { hint: basename(out) });
  try {
    for (let i = 0; i < files.length; i += BLOB_BATCH) {
      const batch = files.slice(i, i + BLOB_BATCH);
      const blobs = await readBlobs(
        repo,
        batch.map((f) => f.sha),
      );
      for (const f of batch) {
        const data = blobs.get(f.sha);
        if (data) staging.writeSync(f.rel, data);
      }
    }
    // Heavy files a hybrid checkpoint put in the bucket: read after the branch's own copies (a file
    // that grew past the threshold has both; the bucket's is the later one), each verified.
    if (objects.length > 0) await writeObjects(repo, objects, opts.store ?? null, staging, entry.branch);
    // Segments hold complete lines only, so their concatenation is index.jsonl as captured.
    const captured: string[] = [];
    for (let i = 0; i < segments.length; i += BLOB_BATCH) {
      const batch = segments.slice(i, i + BLOB_BATCH);
      const blobs = await readBlobs(
        repo,
        batch.map((s) => s.sha),
      );
      for (const s of batch) captured.push(blobs.get(s.sha)?.toString('utf8') ?? '');
    }
    const sources = [captured.join('')];
    if (merged) {
      // The workspace's own files win over the checkpoint's copies.
      for (const name of await readdir(out)) {
        if (name === 'index.jsonl' || name.startsWith('.')) continue;
        await staging.copyIn(join(out, name), name);
      }
      // absent: an output without index adds no rows; an unreadable one is not zero rows
      sources.push(await readRegularText(join(out, 'index.jsonl'), { kind: 'run-file' }).catch(absentAs('')));
    }
    const index = unionRows(sources);
    staging.writeSync('index.jsonl', index.text);
    staging.writeSync(RECOVERY_MARKER, JSON.stringify({ branch: entry.branch, run_id: meta.run_id, commit, checkpoint: meta.checkpoint }, null, 2) + '\n');
    await staging.commit(basename(out));
    return {
      runId: meta.run_id,
      branch: entry.branch,
      commit,
      checkpoint: meta.checkpoint,
      from,
      out,
      rows: index.rows,
      files: files.length + objects.length,
      duplicatesDropped: index.dropped,
      merged,
      finished: meta.finished,
      remoteError: listing.remoteError,
    };
  } catch (err) {
    // best effort: the staging cleanup after a failure that is reported
    await staging.abort().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      throw new WipError(
        `no space left while writing ${out}: nothing was changed there (the checkpoint is still on ${entry.branch}); free some space and run the command again`,
        true,
      );
    }
    throw err;
  }
}

/**
 * AgentV's own WIP checkpoint (`agentv/wip/<host>/<run dir>`): a commit of the results branch plus
 * the partial run at `<run dir>/`, force-pushed every ~30 s. Recovering it is materializing that
 * directory as a run workspace (AgentV then resumes it with `agentv eval ... --resume`).
 */
async function recoverAgentvWip(
  repo: Parameters<typeof lsTree>[0],
  branch: string,
  commit: string,
  from: 'local' | 'remote',
  tree: Awaited<ReturnType<typeof lsTree>>,
  opts: RecoverOptions,
  cwd: string,
  remoteError: string | null,
): Promise<RecoverResult> {
  const slug = branch.split('/').pop() ?? '';
  const prefix = `${slug}/`;
  const files = tree
    .filter((e) => e.type === 'blob' && e.path.startsWith(prefix))
    .map((e) => ({ sha: e.sha, rel: safeRelativePath(e.path.slice(prefix.length)) }))
    .filter((f): f is { sha: string; rel: string } => f.rel !== null);
  if (!isSafeSegment(slug) || files.length === 0) {
    throw new WipError(`${branch} at ${commit.slice(0, 12)} has no ${WIP_META_PATH} and no ${prefix} run directory: it is neither our checkpoint nor AgentV's`);
  }
  const out = opts.out ? resolve(cwd, opts.out) : resolve(cwd, '.agentv', 'results', slug);
  const there = await checkOutputDir(out, { command: 'wip recover', foreign: 'caller' });
  if (there === 'workspace' || there === 'other') {
    throw new WipError(`${out} already exists; AgentV's checkpoint of ${slug} is not merged into an existing directory — pass another --out`);
  }
  const staging = await AtomicDir.create(dirname(out), { hint: basename(out) });
  let rows = 0;
  try {
    for (let i = 0; i < files.length; i += BLOB_BATCH) {
      const batch = files.slice(i, i + BLOB_BATCH);
      const blobs = await readBlobs(
        repo,
        batch.map((f) => f.sha),
      );
      for (const f of batch) {
        const data = blobs.get(f.sha);
        if (!data) continue;
        staging.writeSync(f.rel, data);
        if (f.rel === '.internal/index.jsonl' || f.rel === 'index.jsonl')
          rows = Math.max(
            rows,
            data
              .toString('utf8')
              .split('\n')
              .filter((l) => l.trim()).length,
          );
      }
    }
    await staging.commit(basename(out));
  } catch (err) {
    // best effort: the staging cleanup; the original error is rethrown
    await staging.abort().catch(() => undefined);
    throw err;
  }
  return {
    runId: slug,
    branch,
    commit,
    checkpoint: 0,
    from,
    out,
    rows,
    files: files.length,
    duplicatesDropped: 0,
    merged: false,
    finished: false,
    remoteError,
    writer: 'agentv',
  };
}
