/**
 * The payloads of a published run: the pointers of its index, validated against the run's place;
 * reading the pointed files from the artifacts branch (local, tracking, fetched, the month's
 * archive) or the object store, each checked against its pointer; the originals AgentV's restore
 * manifest names; and `pullPayloads`, which adds some rows' payloads to a workspace `pull` wrote
 * without them (the Dashboard's drill-down). `pull` (pull.ts) and the batch pull use them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { unsafeRowPath, safeRelativePath } from '../runs/read/run-files.js';
import { dirname, join } from 'node:path';
import { readBlobs } from '../git/index.js';
import { ArtifactPointerSchema, pointerList, type ArtifactPointer } from '../model/artifacts.js';
import { presumedRunLocation, type RunLocation } from '../layout/branch-layout.js';
import { ReadError } from '../errors/read-errors.js';
import { archivedRunPaths } from '../layout/archive-refs.js';
import { archiveBranchRefs, branchRefs, branchTips, fetchBranches } from '../repo/remote-view.js';
import { resolveTarget, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { objectStoreForReading } from '../repo/storage.js';
import { isContentKey, OBJECT_STORE_REF } from '../store/object-store.js';
import { parseRestoreManifest, RESTORE_DIR, RESTORE_MANIFEST, type RestoreEntry } from '../publish/agentv-run.js';
import { readRegularFile } from '../util/safe-open.js';

export interface RunFile {
  path: string;
  data: Buffer;
  executable: boolean;
}

/**
 * The payload pointers of the published index, validated: a pointer must name a safe path inside
 * the run and a key that is exactly this run's directory plus that path, so a crafted index cannot
 * make pull read another run's payload or write outside the workspace.
 */
export function payloadPointers(loc: RunLocation, files: RunFile[], rowFilter?: (row: Record<string, unknown>) => boolean): ArtifactPointer[] {
  const index = files.find((f) => f.path === '.internal/index.jsonl') ?? files.find((f) => f.path === 'index.jsonl');
  if (!index) return [];
  const onBranch = new Set(files.map((f) => f.path));
  const byPath = new Map<string, ArtifactPointer>();
  const lines = index.data.toString('utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      return; // validate reports unreadable rows; pull materializes the bytes as they are
    }
    // A hand-edited branch may carry rows that point out of the run: never materialize those.
    const unsafe = unsafeRowPath(row);
    if (unsafe) throw new ReadError(`refusing to pull ${loc.runId}: ${loc.path}/index.jsonl:${i + 1}: ${unsafe}`, 'input');
    if (rowFilter && !(row && typeof row === 'object' && rowFilter(row as Record<string, unknown>))) return;
    const list = pointerList((row as { artifact_pointers?: unknown })?.artifact_pointers);
    if (!Array.isArray(list)) return;
    for (const raw of list) {
      const parsed = ArtifactPointerSchema.safeParse(raw);
      const where = `${loc.path}/${index.path}:${i + 1}`;
      if (!parsed.success)
        throw new ReadError(
          `${where}: an artifact pointer is malformed (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`,
          'input',
        );
      const p = parsed.data;
      if (safeRelativePath(p.path) !== p.path)
        throw new ReadError(`${where}: refusing artifact pointer path ${JSON.stringify(p.path)}: it would land outside the run directory`, 'input');
      if (p.ref === OBJECT_STORE_REF ? !isContentKey(p.key, p.sha256) : p.key !== `${loc.path}/${p.path}`)
        throw new ReadError(
          `${where}: refusing artifact pointer key ${JSON.stringify(p.key)}: it is not ${p.ref === OBJECT_STORE_REF ? `the content address of sha256 ${p.sha256}` : `this run's ${loc.path}/${p.path}`}`,
          'input',
        );
      if (onBranch.has(p.path))
        throw new ReadError(`${where}: artifact pointer ${p.path} collides with a file of the same name on the results branch`, 'input');
      const seen = byPath.get(p.path);
      if (seen && (seen.sha256 !== p.sha256 || seen.size !== p.size))
        throw new ReadError(`${where}: two pointers for ${p.path} disagree on its content`, 'input');
      byPath.set(p.path, p);
    }
  });
  return [...byPath.values()];
}

/**
 * Reads blobs of the artifacts branch by key: the local branch, then its tracking ref, and fetches
 * the branch only when a `required` key is still missing (lazily: most pulls of a run published on
 * this machine need no network). `optional` keys ride along and may stay absent. In a blob-less
 * managed clone git itself fetches missing blobs.
 */
async function readArtifactBlobs(
  target: PublishTarget,
  loc: RunLocation,
  required: string[],
  optional: string[] = [],
  timeoutMs?: number,
  extraTips: string[] = [],
): Promise<{ got: Map<string, Buffer>; fetched: boolean }> {
  const art = branchRefs(target, 'artifacts');
  const got = new Map<string, Buffer>();
  const tried = new Set<string>();
  const keys = [...required, ...optional];
  // `archived`: an archive tip (or a retention's, which may be one), where a key sits in the run's
  // day folder, or at the key itself in archives from before the sharding (archivedRunPaths).
  const readFrom = async (tip: string | null, archived: boolean): Promise<void> => {
    if (!tip || tried.has(tip)) return;
    tried.add(tip);
    const missing = keys.filter((k) => !got.has(k));
    if (missing.length === 0) return;
    const placesOf = (k: string) => (archived ? archivedRunPaths(loc.day, k) : [k]);
    const specs = missing.flatMap((k) => placesOf(k).map((p) => `${tip}:${p}`));
    let blobs: Map<string, Buffer | null>;
    try {
      blobs = await readBlobs(target.repo, specs);
    } catch (err) {
      throw new ReadError(`reading payloads of ${loc.runId} from ${art.name}: ${(err as Error).message}`, 'input');
    }
    for (const k of missing) {
      const data = placesOf(k)
        .map((p) => blobs.get(`${tip}:${p}`))
        .find((d) => d);
      if (data) got.set(k, data);
    }
  };
  const complete = () => required.every((k) => got.has(k));
  // The live artifacts branch, then (a rolled-over run) the artifacts archive of the run's month.
  const branches = [art, archiveBranchRefs(target, loc.day).artifacts];
  for (const b of branches) {
    // Everything asked for is read: no further tip is looked up (each lookup spawns git).
    if (keys.every((k) => got.has(k))) break;
    const tips = await branchTips(target, b);
    await readFrom(tips.local, b !== art);
    await readFrom(tips.remote, b !== art);
  }
  // A run pulled --at a retention's "before" commit: its payloads as that retention found them.
  for (const t of extraTips) await readFrom(t, true);
  let fetched = false;
  for (const b of branches) {
    if (complete() || target.remote === null) break;
    await fetchBranches(target, [b], { timeoutMs });
    fetched = true;
    await readFrom((await branchTips(target, b)).remote, b !== art);
  }
  // The retention's tips again: the fetches above brought their history if this clone lacked it.
  if (fetched)
    for (const t of extraTips) {
      tried.delete(t);
      await readFrom(t, true);
    }
  return { got, fetched };
}

/**
 * The pointed payloads, each checked against its pointer, and the run's restore manifest when the
 * artifacts branch has one (unless `withRestore` is false: pullPayloads has no use for it). THE one reader of a payload for a pointer (pull, and through it
 * report, serve and run names): a pointer whose `ref` is the artifacts branch is read from git, one
 * whose `ref` is `object_store` (storage_mode hybrid) from the configured bucket; either way nothing
 * is trusted before its sha256 and size match the pointer.
 */
export async function readPayloads(
  target: PublishTarget,
  loc: RunLocation,
  pointers: ArtifactPointer[],
  timeoutMs?: number,
  extraTips: string[] = [],
  allowMissing = false,
  withRestore = true,
): Promise<{ files: RunFile[]; fetched: boolean; restore: Buffer | null; missing: ArtifactPointer[]; fromBucket: number }> {
  const art = branchRefs(target, 'artifacts');
  const restoreKey = `${loc.path}/${RESTORE_MANIFEST}`;
  const inBucket = pointers.filter((p) => p.ref === OBJECT_STORE_REF);
  const inGit = pointers.filter((p) => p.ref !== OBJECT_STORE_REF);
  const { got, fetched } = await readArtifactBlobs(
    target,
    loc,
    inGit.map((p) => p.key),
    withRestore ? [restoreKey] : [],
    timeoutMs,
    extraTips,
  );
  const absent = inGit.filter((p) => !got.has(p.key));
  if (absent.length > 0 && !allowMissing) {
    const where = art.tracking ? `${art.name} or ${art.tracking.slice('refs/remotes/'.length)}` : art.name;
    throw new ReadError(
      `${absent.length} payload${absent.length === 1 ? '' : 's'} of ${loc.runId} not found on ${where} (first: ${absent[0]!.key}); nothing was written — pull without --with-artifacts to get the run without them`,
      'git',
    );
  }
  const files: RunFile[] = [];
  for (const p of inGit) {
    const data = got.get(p.key);
    if (!data) continue;
    checkContent(loc, p.path, data, p.size, p.sha256, art.name);
    files.push({ path: p.path, data, executable: false });
  }
  const missing = [...absent];
  let fromBucket = 0;
  if (inBucket.length > 0) {
    const bucket = await readBucketPayloads(target, loc, inBucket, timeoutMs, allowMissing);
    files.push(...bucket.files);
    missing.push(...bucket.missing);
    fromBucket = bucket.files.length;
  }
  return { files, fetched, restore: got.get(restoreKey) ?? null, missing, fromBucket };
}

/** Payloads a hybrid publish put in the bucket, each verified against its pointer. */
async function readBucketPayloads(
  target: PublishTarget,
  loc: RunLocation,
  pointers: ArtifactPointer[],
  timeoutMs?: number,
  allowMissing = false,
): Promise<{ files: RunFile[]; missing: ArtifactPointer[] }> {
  const store = objectStoreForReading(target.config, timeoutMs !== undefined ? { timeoutMs } : {});
  if (!store && allowMissing) return { files: [], missing: pointers };
  if (!store)
    throw new ReadError(
      `the payloads of ${loc.runId} are in an object store (storage_mode hybrid) but results.object_store is not configured here; nothing was written — pull without --with-artifacts to get the run without them`,
      'input',
    );
  try {
    const files: RunFile[] = [];
    const missing: ArtifactPointer[] = [];
    // One key per content: two pointers to the same bytes read them once.
    const cache = new Map<string, Buffer | null>();
    for (const p of pointers) {
      if (!cache.has(p.key)) cache.set(p.key, await store.get(p.key));
      const data = cache.get(p.key);
      if (!data && allowMissing) {
        missing.push(p);
        continue;
      }
      if (!data)
        throw new ReadError(
          `payload ${p.path} of ${loc.runId} is missing from ${store.where} (key ${p.key}); nothing was written — pull without --with-artifacts to get the run without them`,
          'git',
        );
      checkContent(loc, p.path, data, p.size, p.sha256, store.where);
      files.push({ path: p.path, data, executable: false });
    }
    return { files, missing };
  } finally {
    await store.close();
  }
}

export function checkContent(loc: RunLocation, path: string, data: Buffer, size: number | undefined, sha256: string, where: string): void {
  const sha = createHash('sha256').update(data).digest('hex');
  if ((size !== undefined && data.length !== size) || sha !== sha256) {
    throw new ReadError(
      `payload ${path} of ${loc.runId} does not match its pointer (expected ${size ?? '?'} bytes, sha256 ${sha256}; ${where} has ${data.length} bytes, sha256 ${sha}); nothing was written`,
      'check',
    );
  }
}

/**
 * The run's files as its workspace had them, for a run whose AgentV publish changed or left out
 * some (publish/agentv-run.ts): each original replaces the branch's file only when that file is
 * still the one it stands for (a later publish of other bytes wins).
 */
export async function restoredFiles(
  target: PublishTarget,
  loc: RunLocation,
  files: RunFile[],
  manifest: Buffer,
  timeoutMs?: number,
  extraTips: string[] = [],
): Promise<RunFile[]> {
  let entries: RestoreEntry[];
  try {
    entries = parseRestoreManifest(manifest);
  } catch (err) {
    throw new ReadError(`${loc.path}/${RESTORE_MANIFEST} on the artifacts branch: ${(err as Error).message}`, 'input');
  }
  const onBranch = new Map(files.map((f) => [f.path, createHash('sha256').update(f.data).digest('hex')]));
  const wanted = entries.filter((e) => (e.replaces_sha256 === null ? !onBranch.has(e.path) : onBranch.get(e.path) === e.replaces_sha256));
  if (wanted.length === 0) return [];
  const key = (e: RestoreEntry) => `${loc.path}/${RESTORE_DIR}/restore/${e.path}`;
  const { got } = await readArtifactBlobs(target, loc, wanted.map(key), [], timeoutMs, extraTips);
  const art = branchRefs(target, 'artifacts').name;
  return wanted.map((e) => {
    const data = got.get(key(e));
    if (!data)
      throw new ReadError(
        `the original of ${e.path} (${key(e)}) is missing from ${art}; nothing was written — pull without --with-artifacts to get the run as published`,
        'git',
      );
    checkContent(loc, e.path, data, e.size, e.sha256, art);
    return { path: e.path, data, executable: files.find((f) => f.path === e.path)?.executable ?? false };
  });
}

export interface PayloadsResult {
  /** Payload files written into the workspace (paths inside the run). */
  written: string[];
  /** Payloads the index points at that no artifacts branch (local, tracking, fetched, archive) holds. */
  missing: { path: string; key: string; size: number | undefined }[];
  /** True when the artifacts branch had to be fetched to find them. */
  fetched: boolean;
}

/**
 * Add the payloads of some rows (all when `rows` is omitted) to a workspace `pull` wrote without
 * them: the Dashboard's drill-down reads one test's transcript this way, on demand. Payloads are
 * read by the same reader as `pull --with-artifacts` (local branch, tracking ref, a fetch only when
 * missing, the month's archive), each checked against its pointer; unlike `pull`, a missing payload
 * is reported, not fatal, and files already in the workspace are left as they are.
 */
export async function pullPayloads(
  opts: TargetOptions & { runId: string; dir: string; rows?: (row: Record<string, unknown>) => boolean; timeoutMs?: number; target?: PublishTarget },
): Promise<PayloadsResult> {
  const loc = presumedRunLocation(opts.runId);
  const index = ['.internal/index.jsonl', 'index.jsonl'].find((p) => existsSync(join(opts.dir, p)));
  if (!index) return { written: [], missing: [], fetched: false };
  const files: RunFile[] = [{ path: index, data: await readRegularFile(join(opts.dir, index), { kind: 'run-file' }), executable: false }];
  const pointers = payloadPointers(loc, files, opts.rows).filter((p) => !existsSync(join(opts.dir, p.path)));
  if (pointers.length === 0) return { written: [], missing: [], fetched: false };
  const target = opts.target ?? (await resolveTarget(opts));
  const { files: got, fetched, missing } = await readPayloads(target, loc, pointers, opts.timeoutMs, [], true, false);
  const written: string[] = [];
  for (const f of got) {
    const to = join(opts.dir, f.path);
    await mkdir(dirname(to), { recursive: true });
    // Unique per write, not per process: a server's concurrent requests may write the same payload
    // at once (each rename then lands identical, checked bytes).
    const tmp = `${to}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, f.data);
    await rename(tmp, to);
    written.push(f.path);
  }
  return { written, missing: missing.map((p) => ({ path: p.path, key: p.key, size: p.size })), fetched };
}
