/**
 * WIP checkpoints (ARCHITECTURE.md, the path of a run): while a run is in progress, its workspace is captured onto
 * `agentv/wip/<host>/<run-id-slug>` as a chain of commits, each on top of the previous one
 * (fast-forward; never amended, never forced), each carrying only what changed since the last.
 *
 * The checkpoint state (how much of index.jsonl is captured, which top-level files) lives in the
 * branch itself (wip.json), so a process that restarts, or a second machine that recovered the run,
 * continues exactly where the last completed checkpoint stopped: no row is captured twice and none
 * is skipped. Every ref move is compare-and-swap: two checkpointers racing on one run (a daemon and
 * an `exec`) cannot lose each other's commits — the loser reloads the state and retries.
 *
 * Cost per checkpoint: one fast-import and one update-ref; reading the workspace is O(new rows +
 * their sidecars + a few top-level stats) — see wip/scan.ts. Nothing here needs the publish lock.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { blobId } from '../git/hash.js';
import { assertValidPath, lsTree, readBlobs, resolveRef, updateRef, writeCommit, type FileChange, type Repo } from '../git/index.js';
import { RefConflictError } from '../errors/git-errors.js';
import {
  parseWipMeta,
  RECOVERY_MARKER,
  runIdOfDir,
  segmentPath,
  WIP_INDEX_DIR,
  WIP_META_PATH,
  WIP_OBJECTS_DIR,
  WIP_RUN_DIR,
  WIP_SCHEMA_VERSION,
  wipBranch,
  wipHost,
  type WipMeta,
} from './checkpoint-layout.js';
import {
  countRowsSince,
  filesOfRows,
  INDEX_FILE,
  readIndexDelta,
  readWorkspaceFile,
  rowReferencedPaths,
  topLevelFiles,
  walkWorkspace,
  type StatKey,
} from './scan.js';
import { absentAs, isAbsent } from '../errors/errors.js';
import type { CheckpointerOptions, CheckpointResult } from './checkpoint-types.js';
import { WipError } from '../errors/wip-errors.js';
import { OBJECT_STORE_REF, sha256Of, type ObjectStore } from '../store/object-store.js';
import { DEFAULT_HEAVY_THRESHOLD } from '../repo/config.js';
import { readRegularText } from '../util/safe-open.js';
import { realRunDir } from '../runs/read/run-files.js';
import type { IrregularEntry } from '../runs/read/run-tree.js';
import { refusedRows, unsafeFileProblems, type Refusal } from './refuse.js';
import { irregularEntryMessage } from '../runs/read/run-files.js';
import { runSafetyLine, unsafeRunIdMessage } from '../runs/read/run-safety.js';

export type { CheckpointerOptions, CheckpointResult } from './checkpoint-types.js';

interface RecoveryMarker {
  branch?: string;
  run_id?: string;
}

async function readMarker(runDir: string): Promise<RecoveryMarker | null> {
  try {
    const v = JSON.parse(await readRegularText(join(runDir, RECOVERY_MARKER), { kind: 'run-file' })) as unknown;
    return typeof v === 'object' && v !== null ? (v as RecoveryMarker) : null;
  } catch (err) {
    // absent: no recovery marker (or a torn one, a SyntaxError); anything else propagates
    if (isAbsent(err) || err instanceof SyntaxError) return null;
    throw err;
  }
}

function validPath(path: string): boolean {
  try {
    assertValidPath(path);
    return true;
  } catch {
    // A name git cannot store (a backslash, a line break): left out rather than failing the run.
    return false;
  }
}

/** wip.json keeps the newest refusals, at most this many (a run spewing pipes must not grow it without end). */
const MAX_REFUSED_KEPT = 50;

/** Bounded: a CAS lost to a concurrent checkpointer reloads and retries at most this often. */
const MAX_ATTEMPTS = 4;

export class Checkpointer {
  readonly repo: Repo;
  readonly runDir: string;
  readonly runId: string;
  readonly host: string;
  readonly branch: string;
  readonly ref: string;
  private readonly author: { name: string; email: string };
  private readonly now: () => Date;
  private readonly store: ObjectStore | null;
  private readonly heavyBytes: number;
  private tip: string | null = null;
  private meta: WipMeta | null = null;
  /** Top-level stat keys as of the last checkpoint: an unchanged stat skips re-reading the file. */
  private readonly topStats = new Map<string, StatKey>();
  /** Cache for pendingRows(): rows counted between the captured offset and `size`. */
  private pending = { from: -1, end: 0, rows: 0 };
  /** Refusals already said (and kept in wip.json): each is reported once, not at every tick. */
  private readonly said = new Set<string>();
  private realDirValue: string | null = null;

  private constructor(opts: CheckpointerOptions, runId: string, branch: string) {
    this.repo = opts.repo;
    this.runDir = resolve(opts.runDir);
    this.runId = runId;
    this.host = opts.host ?? wipHost();
    this.branch = branch;
    this.ref = `refs/heads/${branch}`;
    this.author = opts.author;
    this.now = opts.now ?? (() => new Date());
    this.store = opts.store ?? null;
    this.heavyBytes = opts.heavyBytes ?? DEFAULT_HEAVY_THRESHOLD;
  }

  /** Opens the checkpointer of a workspace and loads the branch state (one or two git calls). */
  static async open(opts: CheckpointerOptions): Promise<Checkpointer> {
    const runDir = resolve(opts.runDir);
    const marker = await readMarker(runDir);
    // The marker is data: a run id that is not a safe directory name (what publish refuses) is not taken.
    const markerRunId = typeof marker?.run_id === 'string' && unsafeRunIdMessage(marker.run_id) === null ? marker.run_id : null;
    const runId = opts.runId ?? markerRunId ?? runIdOfDir(runDir);
    const host = opts.host ?? wipHost();
    const branch = opts.branch ?? (typeof marker?.branch === 'string' && marker.run_id === runId ? marker.branch : wipBranch(host, runId));
    const cp = new Checkpointer({ ...opts, host }, runId, branch);
    await cp.reload();
    return cp;
  }

  /** Re-reads the branch tip and its wip.json (after losing a race, or to pick up another writer). */
  async reload(): Promise<void> {
    this.tip = await resolveRef(this.repo, this.ref);
    this.meta = null;
    this.topStats.clear();
    this.pending = { from: -1, end: 0, rows: 0 };
    this.said.clear();
    if (this.tip === null) return;
    const spec = `${this.tip}:${WIP_META_PATH}`;
    this.meta = parseWipMeta((await readBlobs(this.repo, [spec])).get(spec));
    if (this.meta === null)
      throw new WipError(
        `${this.branch} exists but its tip ${this.tip.slice(0, 12)} has no readable ${WIP_META_PATH}; it is not a WIP checkpoint branch — move it aside or pass another branch`,
      );
    for (const line of this.meta.refused ?? []) this.said.add(line);
  }

  get state(): { tip: string | null; meta: WipMeta | null } {
    return { tip: this.tip, meta: this.meta };
  }

  /** Complete rows written since the last checkpoint; reads only bytes not counted before. */
  async pendingRows(): Promise<number> {
    const offset = this.meta?.index_bytes ?? 0;
    if (this.pending.from !== offset) this.pending = { from: offset, end: offset, rows: 0 };
    // absent: the index went away; the pending count stands; anything else propagates
    const more = await countRowsSince(join(this.runDir, INDEX_FILE), this.pending.end).catch(absentAs(null));
    if (more === null) return this.pending.rows;
    if (more.size < this.pending.end) {
      // The file shrank, so it was rewritten: report it as pending; the next checkpoint recaptures it.
      this.pending = { from: offset, end: more.size, rows: Math.max(1, this.pending.rows) };
      return this.pending.rows;
    }
    this.pending.rows += more.rows;
    this.pending.end = more.end;
    return this.pending.rows;
  }

  /**
   * Captures what changed since the last checkpoint as one commit on the WIP branch. `full` walks
   * the whole workspace (also capturing files no row points at, and deletions) — O(run size),
   * meant for a final flush, not for the periodic checkpoints.
   */
  async checkpoint(opts: { full?: boolean } = {}): Promise<CheckpointResult> {
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        return await this.once(opts.full ?? false);
      } catch (err) {
        if (!(err instanceof RefConflictError)) throw err;
        lastError = err;
        await this.reload();
      }
    }
    throw lastError;
  }

  private async once(full: boolean): Promise<CheckpointResult> {
    // absent: reported as a WipError just below; anything else propagates
    const st = await stat(this.runDir).catch(absentAs(null));
    if (!st?.isDirectory()) throw new WipError(`${this.runDir}: the run directory is gone${this.tip ? ` (its last checkpoint is on ${this.branch})` : ''}`);
    const indexPath = join(this.runDir, INDEX_FILE);
    const meta = this.meta;
    const captured = meta ? { bytes: meta.index_bytes, tailSha256: meta.index_tail_sha256 } : null;
    const delta = await readIndexDelta(indexPath, captured).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT')
        throw new WipError(`${this.runDir}: no ${INDEX_FILE}; not a run workspace (a run is in progress while its index.jsonl exists)`);
      throw err;
    });
    const seq = (meta?.checkpoint ?? 0) + 1;
    const changes: FileChange[] = [];
    const refusals: Refusal[] = [];
    let segments = meta?.segments ?? 0;
    if (delta.rewrite) {
      changes.push({ path: WIP_INDEX_DIR, delete: true });
      segments = 0;
    }
    // The new rows through the run-safety check's row rule: a row publish would refuse is not stored.
    const linesBefore = delta.rewrite ? 0 : (meta?.index_lines ?? meta?.rows ?? 0);
    const safe = refusedRows(delta.complete, linesBefore);
    refusals.push(...safe.refused);
    if (safe.kept.length > 0) {
      changes.push({ path: segmentPath(seq), data: safe.kept });
      segments++;
    }
    const irregular: IrregularEntry[] = [];
    const top = await this.topLevelChanges(full, changes, irregular, refusals);
    const files = top.files + (await this.nestedChanges(full, safe.kept, changes, irregular, refusals));
    for (const e of irregular) refusals.push({ file: e.path, message: irregularEntryMessage(this.runDir, this.realDir(), e) });
    const fresh = [...new Set(refusals.map(runSafetyLine))].filter((line) => !this.said.has(line));

    const finished = top.names.has('summary.json');
    if (this.tip && meta && changes.length === 0 && fresh.length === 0 && finished === meta.finished) {
      return this.result('unchanged', this.tip, 0, 0, false, []);
    }

    const now = this.now();
    const rows = (delta.rewrite ? 0 : (meta?.rows ?? 0)) + safe.rows;
    const said = [...(delta.rewrite ? [] : (meta?.refused ?? [])), ...fresh];
    const next: WipMeta = {
      schema_version: WIP_SCHEMA_VERSION,
      run_id: this.runId,
      host: meta?.host ?? this.host,
      run_dir: this.displayDir(),
      checkpoint: seq,
      rows,
      index_bytes: delta.end,
      index_lines: linesBefore + safe.lines,
      index_tail_sha256: delta.tailSha256,
      segments,
      top_files: top.topFiles,
      finished,
      ...(said.length > 0 ? { refused: said.slice(-MAX_REFUSED_KEPT) } : {}),
      started_at: meta?.started_at ?? now.toISOString(),
      updated_at: now.toISOString(),
    };
    changes.push({ path: WIP_META_PATH, data: JSON.stringify(next, null, 2) + '\n' });
    const previous = this.tip;
    const { commit } = await writeCommit(this.repo, {
      parent: previous,
      files: changes,
      message: `wip: ${this.runId} checkpoint ${seq} (${rows} row${rows === 1 ? '' : 's'})\n\nAgentV-Run: ${this.runId}\nAgentV-WIP-Host: ${next.host}\n`,
      author: { ...this.author, date: now },
    });
    await updateRef(this.repo, this.ref, commit, previous, { message: `agentv-results: wip checkpoint ${seq} of ${this.runId}` });
    this.tip = commit;
    this.meta = next;
    for (const line of fresh) this.said.add(line);
    return this.result(previous === null ? 'created' : 'checkpointed', previous, safe.rows, files, delta.rewrite, fresh);
  }

  /** Top-level files: re-read only those whose stat moved; compare by blob id. Appends to `changes`. */
  private async topLevelChanges(
    full: boolean,
    changes: FileChange[],
    irregular: IrregularEntry[],
    refusals: Refusal[],
  ): Promise<{ names: Set<string>; topFiles: Record<string, string>; files: number }> {
    const top = await topLevelFiles(this.runDir, irregular);
    const topFiles: Record<string, string> = { ...(this.meta?.top_files ?? {}) };
    let files = 0;
    for (const [name, key] of top) {
      const seen = this.topStats.get(name);
      if (!full && seen && seen.size === key.size && seen.mtimeMs === key.mtimeMs && topFiles[name] !== undefined) continue;
      const data = this.storable(name, await readWorkspaceFile(this.runDir, name), refusals);
      if (data === null || !validPath(`${WIP_RUN_DIR}/${name}`)) continue;
      this.topStats.set(name, key);
      const id = blobId(this.repo, data);
      if (topFiles[name] !== id) {
        changes.push({ path: `${WIP_RUN_DIR}/${name}`, data });
        topFiles[name] = id;
        files++;
      }
    }
    for (const name of Object.keys(topFiles)) {
      if (!top.has(name)) {
        changes.push({ path: `${WIP_RUN_DIR}/${name}`, delete: true });
        delete topFiles[name];
        this.topStats.delete(name);
      }
    }
    return { names: new Set(top.keys()), topFiles, files };
  }

  /**
   * Nested files: the sidecars of the new rows, or (full) everything, diffed against the tip.
   * Appends to `changes`. In hybrid mode a file over the heavy threshold is stored in the bucket
   * first and only its pointer is committed (under `objects/`), as a publish does.
   */
  private async nestedChanges(full: boolean, newRows: Buffer, changes: FileChange[], irregular: IrregularEntry[], refusals: Refusal[]): Promise<number> {
    const found: IrregularEntry[] = [];
    const nested = (full ? await walkWorkspace(this.runDir, found) : await filesOfRows(this.runDir, rowReferencedPaths(newRows), found)).filter((p) =>
      p.includes('/'),
    );
    // Top-level entries are the top-level scan's to report.
    irregular.push(...found.filter((e) => e.path.includes('/')));
    const existing = new Map<string, string>();
    if (full && this.tip) {
      for (const dir of [WIP_RUN_DIR, WIP_OBJECTS_DIR])
        for (const e of await lsTree(this.repo, this.tip, { path: `${dir}/`, recursive: true })) {
          if (e.type === 'blob' && (dir === WIP_OBJECTS_DIR || e.path.slice(dir.length + 1).includes('/'))) existing.set(e.path, e.sha);
        }
    }
    const kept = new Set<string>();
    let files = 0;
    const { store, heavyBytes: heavy } = this;
    for (const rel of nested) {
      let path = `${WIP_RUN_DIR}/${rel}`;
      if (!validPath(path)) continue;
      let data = this.storable(rel, await readWorkspaceFile(this.runDir, rel), refusals);
      if (data === null) continue;
      let payload: Buffer | null = null;
      if (store && data.length > heavy) {
        const sha256 = sha256Of(data);
        payload = data;
        path = `${WIP_OBJECTS_DIR}/${rel}`;
        data = Buffer.from(`${JSON.stringify({ ref: OBJECT_STORE_REF, key: store.keyFor(sha256), path: rel, sha256, size: payload.length })}\n`);
      }
      kept.add(path);
      if (existing.get(path) === blobId(this.repo, data)) continue;
      // The object before its pointer: a checkpoint never names an object the bucket lacks.
      if (payload && store) await store.put(payload);
      changes.push({ path, data });
      files++;
    }
    if (full) for (const path of existing.keys()) if (!kept.has(path)) changes.push({ path, delete: true });
    return files;
  }

  /**
   * The bytes of a file a checkpoint may store, or null: not when it went away, stopped being a
   * regular file, or is a result file whose pointers leave the run (each such refusal noted).
   */
  private storable(rel: string, read: Buffer | null | { refused: string }, refusals: Refusal[]): Buffer | null {
    if (read === null) return null;
    if (!Buffer.isBuffer(read)) {
      refusals.push({ file: rel, message: read.refused.startsWith(`${rel} `) ? read.refused.slice(rel.length + 1) : read.refused });
      return null;
    }
    const bad = unsafeFileProblems(rel, read);
    if (bad.length === 0) return read;
    refusals.push(...bad);
    return null;
  }

  private realDir(): string {
    this.realDirValue ??= realRunDir(this.runDir);
    return this.realDirValue;
  }

  private result(
    status: CheckpointResult['status'],
    previous: string | null,
    addedRows: number,
    files: number,
    rewrote: boolean,
    refused: string[],
  ): CheckpointResult {
    const meta = this.meta as WipMeta;
    return {
      status,
      runId: this.runId,
      branch: this.branch,
      ref: this.ref,
      commit: this.tip as string,
      previous,
      checkpoint: meta.checkpoint,
      rows: meta.rows,
      addedRows,
      files,
      rewrote,
      finished: meta.finished,
      refused,
    };
  }

  /** The workspace path recorded in wip.json: repository-relative when inside the worktree. */
  private displayDir(): string {
    const top = this.repo.workTree;
    if (top) {
      const rel = relative(top, this.runDir);
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel;
    }
    return this.runDir;
  }
}
