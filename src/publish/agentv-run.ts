/**
 * An AgentV 5.x run workspace (`.agentv/results/<run_id>/` with `.internal/index.jsonl`), put on
 * the branches exactly as AgentV's own `auto_push` puts it (5.x `results-repo.ts`, its direct
 * publish to the storage branch), so AgentV's Dashboard shows a run we published as it shows its own:
 *
 * - the results branch gets every file of the workspace under `<run_id>/`, byte for byte and with
 *   its executable bit, except: the payloads that a manifest row's `artifact_pointers.transcript`
 *   sends to `agentv/artifacts/v1`, and (only when there is such a pointer) AgentV's deprecated
 *   `trace.json` files; every `index.jsonl` is then rewritten the way AgentV rewrites it (the
 *   transcript pointer's `key` becomes `<run_id>/<path>`, other pointers are dropped);
 * - the artifacts branch gets those transcript payloads at `<run_id>/<path>` (their checksums
 *   verified against the pointer first, as AgentV does).
 *
 * Nothing of ours replaces an AgentV file. The only addition under the run is for `pull
 * --with-artifacts`: when AgentV's rules change or drop a file (a rewritten manifest, a deprecated
 * trace), its original bytes go to the artifacts branch under `<run_id>/.agentv-results/restore/`,
 * listed in `<run_id>/.agentv-results/restore.json`, which AgentV never reads. A workspace
 * without pointers (what `agentv eval` writes today) needs none of it.
 *
 * Kept apart from `split.ts` (our bundles' metadata/payload split) so that another AgentV layout
 * (4.x's `runs/<experiment>/<timestamp>/`) can sit beside this one.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join, normalize as normalizeNative } from 'node:path';
import type { FileMode } from '../git/index.js';
import { safeRelativePath } from '../runs/read/run-files.js';
import { InputError } from '../errors/input-error.js';
import { readOptionalJsonSync, readRegularFileSync, readRegularTextSync } from '../util/safe-open.js';
import { isJsonObject } from '../model/json-object.js';

/** The ref AgentV's transcript pointers must name for AgentV to move the payload (a constant in AgentV, whatever the config says). */
export const AGENTV_ARTIFACTS_REF_NAME = 'agentv/artifacts/v1';
/** Our folder under a run on the artifacts branch (never a path AgentV writes or reads). */
export const RESTORE_DIR = '.agentv-results';
export const RESTORE_MANIFEST = `${RESTORE_DIR}/restore.json`;
export const RESTORE_SCHEMA = 'agentv-results.restore.v1';

export interface RunFile {
  path: string;
  data: Buffer;
  mode: FileMode;
}

/** One file AgentV's publish changed or left out, and what it replaces on the results branch. */
export interface RestoreEntry {
  path: string;
  sha256: string;
  size: number;
  /** sha256 of the file at `path` on the results branch this original stands for; null when the branch has none there. */
  replaces_sha256: string | null;
}

export interface AgentvRunFiles {
  /** Files for `<run_id>/` on the results branch. */
  results: RunFile[];
  /** Files for `<run_id>/` on the artifacts branch: the transcript payloads, then our restore data. */
  payloads: RunFile[];
  /** How many payloads are AgentV's (the rest are restore data). */
  agentvPayloads: number;
  restore: RestoreEntry[];
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** Every file of the workspace (dot files included, as AgentV's publish takes them), sorted; links and odd paths refused. */
function workspaceFiles(root: string): RunFile[] {
  const out: RunFile[] = [];
  const go = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (safeRelativePath(child) !== child) throw new InputError(`${root}: refusing to publish ${JSON.stringify(child)}: not a plain relative path`);
      if (e.isDirectory()) go(child);
      else if (e.isFile()) {
        const abs = join(root, child);
        const st = lstatSync(abs);
        out.push({ path: child, data: readRegularFileSync(abs, { kind: 'run-file' }), mode: st.mode & 0o111 ? '100755' : '100644' });
      } else throw new InputError(`${root}: refusing to publish ${child}: not a regular file (a link or a device is never published)`);
    }
  };
  go('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The manifest AgentV's publish reads pointers from: summary.json's index_path (or manifest_path), else `.internal/index.jsonl`, else `index.jsonl`. */
function manifestPath(root: string): string | null {
  // No summary (or not JSON): the default places. One that cannot be read is said, not taken for none.
  const summary = readOptionalJsonSync(join(root, 'summary.json'), { kind: 'run-file' }) as
    | { index_path?: unknown; manifest_path?: unknown }
    | null
    | undefined;
  const named = summary?.index_path ?? summary?.manifest_path;
  if (typeof named === 'string' && named.trim() !== '' && !named.startsWith('/')) {
    const rel = normalizeNative(named).split('\\').join('/');
    if (!rel.startsWith('..') && existsSync(join(root, rel))) return rel;
  }
  if (existsSync(join(root, '.internal', 'index.jsonl'))) return '.internal/index.jsonl';
  if (existsSync(join(root, 'index.jsonl'))) return 'index.jsonl';
  return null;
}

interface TranscriptPointer {
  path: string;
  sha256?: string;
  objectVersion?: string;
}

/** The transcript pointers AgentV moves: `artifact_pointers.transcript` naming `agentv/artifacts/v1` and a path. */
function transcriptPointer(row: unknown): TranscriptPointer | null {
  if (!isJsonObject(row) || !isJsonObject(row.artifact_pointers)) return null;
  const p = row.artifact_pointers.transcript;
  if (!isJsonObject(p) || p.ref !== AGENTV_ARTIFACTS_REF_NAME || typeof p.path !== 'string') return null;
  return {
    path: p.path,
    ...(typeof p.sha256 === 'string' ? { sha256: p.sha256 } : {}),
    ...(typeof p.object_version === 'string' ? { objectVersion: p.object_version } : {}),
  };
}

/** AgentV's rewrite of one manifest line for the results branch (the line as is when nothing changes). */
function publishedLine(line: string, runPath: string): string {
  if (!line.trim()) return line;
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    // unparsable: the line is kept as AgentV wrote it
    return line;
  }
  if (!isJsonObject(row) || !isJsonObject(row.artifact_pointers)) return line;
  const pointers = row.artifact_pointers;
  const p = pointers.transcript;
  if (isJsonObject(p) && p.ref === AGENTV_ARTIFACTS_REF_NAME && typeof p.path === 'string') {
    const key = `${runPath}/${p.path}`;
    const changed = p.key !== key || Object.keys(pointers).length !== 1;
    if (!changed) return line;
    p.key = key;
    row.artifact_pointers = { transcript: p };
  } else {
    // AgentV sets the field to undefined, which JSON.stringify leaves out.
    delete row.artifact_pointers;
  }
  return JSON.stringify(row);
}

/**
 * The files of an AgentV 5.x workspace for each branch. `runPath` is the run's directory on the
 * branches (AgentV's `<run_id>`).
 */
export function agentvRunFiles(root: string, runPath: string): AgentvRunFiles {
  const files = workspaceFiles(root);
  const manifest = manifestPath(root);
  const pointers: TranscriptPointer[] = [];
  if (manifest !== null) {
    for (const line of readRegularTextSync(join(root, manifest), { kind: 'run-file' }).split(/\r?\n/)) {
      if (!line.trim()) continue;
      try {
        const p = transcriptPointer(JSON.parse(line));
        if (p) pointers.push(p);
      } catch {
        // an unreadable line carries no pointer (AgentV skips it too)
      }
    }
  }
  if (pointers.length === 0) return { results: files, payloads: [], agentvPayloads: 0, restore: [] };

  const byPath = new Map(files.map((f) => [f.path, f]));
  const payloads: RunFile[] = [];
  const moved = new Set<string>();
  for (const p of pointers) {
    const rel = safeRelativePath(p.path);
    if (rel === null || rel.startsWith(`${RESTORE_DIR}/`))
      throw new InputError(`${root}/${manifest}: refusing transcript pointer path ${JSON.stringify(p.path)}: it would land outside the run's own files`);
    const file = byPath.get(rel);
    if (!file) throw new InputError(`${root}/${manifest}: the transcript pointer names ${rel}, which the run does not have`);
    const sum = sha256(file.data);
    if ((p.sha256 !== undefined && p.sha256 !== sum) || (p.objectVersion !== undefined && p.objectVersion !== `sha256:${sum}`))
      throw new InputError(`${root}/${manifest}: the transcript pointer for ${rel} does not match the file's checksum`);
    if (moved.has(rel)) continue;
    moved.add(rel);
    payloads.push({ path: rel, data: file.data, mode: '100644' });
  }
  const results: RunFile[] = [];
  const restore: RestoreEntry[] = [];
  const keepOriginal = (f: RunFile, published: Buffer | null) =>
    restore.push({ path: f.path, sha256: sha256(f.data), size: f.data.length, replaces_sha256: published === null ? null : sha256(published) });
  for (const f of files) {
    const name = f.path.slice(f.path.lastIndexOf('/') + 1);
    if (name === 'index.jsonl') {
      const text = f.data.toString('utf8');
      const data = Buffer.from(
        text
          .split(/\r?\n/)
          .map((l) => publishedLine(l, runPath))
          .join('\n'),
      );
      results.push({ ...f, data });
      if (!data.equals(f.data)) keepOriginal(f, data);
    } else if (name === 'trace.json') keepOriginal(f, null);
    else if (!moved.has(f.path)) results.push(f);
  }
  const agentvPayloads = payloads.length;
  if (restore.length > 0) {
    for (const r of restore) payloads.push({ path: `${RESTORE_DIR}/restore/${r.path}`, data: byPath.get(r.path)!.data, mode: '100644' });
    const doc = { schema_version: RESTORE_SCHEMA, files: restore };
    payloads.push({ path: RESTORE_MANIFEST, data: Buffer.from(`${JSON.stringify(doc, null, 2)}\n`), mode: '100644' });
  }
  return { results, payloads, agentvPayloads, restore };
}

/** Parse a restore manifest read from the artifacts branch (hostile input: every path checked). */
export function parseRestoreManifest(data: Buffer): RestoreEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(data.toString('utf8'));
  } catch {
    throw new InputError(`${RESTORE_MANIFEST} is not valid JSON`);
  }
  if (!isJsonObject(doc) || doc.schema_version !== RESTORE_SCHEMA || !Array.isArray(doc.files))
    throw new InputError(`${RESTORE_MANIFEST} is not a ${RESTORE_SCHEMA} document`);
  const out: RestoreEntry[] = [];
  for (const e of doc.files) {
    if (
      !isJsonObject(e) ||
      typeof e.path !== 'string' ||
      safeRelativePath(e.path) !== e.path ||
      e.path.startsWith(`${RESTORE_DIR}/`) ||
      typeof e.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(e.sha256) ||
      typeof e.size !== 'number' ||
      !(e.replaces_sha256 === null || (typeof e.replaces_sha256 === 'string' && /^[0-9a-f]{64}$/.test(e.replaces_sha256)))
    )
      throw new InputError(`${RESTORE_MANIFEST}: refusing entry ${JSON.stringify(e).slice(0, 200)}`);
    out.push({ path: e.path, sha256: e.sha256, size: e.size, replaces_sha256: e.replaces_sha256 as string | null });
  }
  return out;
}
