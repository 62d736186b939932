/**
 * `storage_mode: hybrid`: the payloads a split sends to the artifacts branch go to the object
 * store instead, and the pointers that name them are rewritten to name the object.
 *
 * A pointer keeps every field of AgentV's shape (`object_version`, `path`, `sha256`, `size`,
 * `schema_version`, `media_type`, `family`); only `ref` becomes `object_store` and `key` the content
 * address `<prefix>/sha256/<hex>` (AgentV's results-storage plan). Readers tell the two kinds apart
 * by `ref` (branch-read/pull.ts `readPayloads`).
 *
 * Every upload finishes before this returns, and the caller commits only after it returns: no
 * pointer on a branch ever names an object the bucket does not hold. A payload no pointer names (our
 * restore data for an AgentV run) stays on the artifacts branch, as in git-native mode.
 */
import { OBJECT_STORE_REF, type ObjectStore, sha256Of } from '../store/object-store.js';
import { RESTORE_MANIFEST, RESTORE_SCHEMA } from './agentv-run.js';
import type { SplitFile } from './split.js';
import { isJsonObject } from '../model/json-object.js';

export interface Offloaded {
  metadata: SplitFile[];
  payloads: SplitFile[];
  /** Payloads now in the bucket (pointed at), how many were sent and their bytes. */
  stored: number;
  uploaded: number;
  bytes: number;
}

function isManifest(path: string): boolean {
  return path === 'index.jsonl' || path.endsWith('/index.jsonl');
}

/** Each pointer object of a row (AgentV's object keyed by kind, or an older array). */
export function pointersOf(row: Record<string, unknown>): Record<string, unknown>[] {
  const p = row.artifact_pointers;
  const list = Array.isArray(p) ? p : isJsonObject(p) ? Object.values(p) : [];
  return list.filter(isJsonObject);
}

/**
 * Upload the pointed payloads (`artifactsRef`: the short name pointers of the artifacts branch
 * carry) and return the split with those payloads gone and their pointers rewritten.
 */
export async function offloadPayloads(
  split: { metadata: SplitFile[]; payloads: SplitFile[] },
  store: ObjectStore,
  artifactsRefs: string[],
  onStep?: (step: string) => void,
): Promise<Offloaded> {
  const payloadByPath = new Map(split.payloads.map((f) => [f.path, f]));
  const refs = new Set(artifactsRefs);
  // Pass 1: which payloads the manifests point at, checked against the pointer.
  const wanted = new Map<string, { file: SplitFile; sha256: string; mediaType?: string }>();
  const parsed = new Map<string, (Record<string, unknown> | string)[]>();
  for (const f of split.metadata) {
    if (!isManifest(f.path)) continue;
    const rows = f.data
      .toString('utf8')
      .split('\n')
      .map((line): Record<string, unknown> | string => {
        if (!line.trim()) return line;
        try {
          const r = JSON.parse(line) as unknown;
          return isJsonObject(r) ? r : line;
        } catch {
          // unparsable: the line is kept as it is
          return line;
        }
      });
    parsed.set(f.path, rows);
    for (const row of rows) {
      if (typeof row === 'string') continue;
      for (const p of pointersOf(row)) {
        if (typeof p.ref !== 'string' || !refs.has(p.ref) || typeof p.path !== 'string') continue;
        const file = payloadByPath.get(p.path);
        if (!file || wanted.has(p.path)) continue;
        const sha = sha256Of(file.data);
        if (p.sha256 !== sha || (typeof p.size === 'number' && p.size !== file.data.length)) continue;
        wanted.set(p.path, { file, sha256: sha, ...(typeof p.media_type === 'string' ? { mediaType: p.media_type } : {}) });
      }
    }
  }
  // Pass 2: store them (sequentially: one payload in memory on the wire at a time, bounded retries each).
  let uploaded = 0;
  let bytes = 0;
  let i = 0;
  for (const w of wanted.values()) {
    onStep?.(`storing payload ${++i} of ${wanted.size} in ${store.where}`);
    const r = await store.put(w.file.data, { sha256: w.sha256, ...(w.mediaType ? { mediaType: w.mediaType } : {}) });
    if (r.uploaded) {
      uploaded++;
      bytes += w.file.data.length;
    }
  }
  // Pass 3: only now, the pointers name the objects.
  const rewritten = new Map<string, { before: string; after: Buffer }>();
  for (const [path, rows] of parsed) {
    let changed = false;
    const lines = rows.map((row) => {
      if (typeof row === 'string') return row;
      let mine = false;
      for (const p of pointersOf(row)) {
        if (typeof p.ref !== 'string' || !refs.has(p.ref) || typeof p.path !== 'string') continue;
        const w = wanted.get(p.path);
        if (!w || p.sha256 !== w.sha256) continue;
        p.ref = OBJECT_STORE_REF;
        p.key = store.keyFor(w.sha256);
        mine = true;
      }
      changed ||= mine;
      return mine ? JSON.stringify(row) : null;
    });
    if (!changed) continue;
    const original = split.metadata.find((f) => f.path === path)!.data;
    const originalLines = original.toString('utf8').split('\n');
    const text = lines.map((l, n) => (l === null || typeof l !== 'string' ? originalLines[n] : l)).join('\n');
    rewritten.set(path, { before: sha256Of(original), after: Buffer.from(text) });
  }
  const metadata = split.metadata.map((f) => (rewritten.has(f.path) ? { ...f, data: rewritten.get(f.path)!.after } : f));
  const payloads = split.payloads.filter((f) => !wanted.has(f.path)).map((f) => (f.path === RESTORE_MANIFEST ? restoreFor(f, rewritten) : f));
  return { metadata, payloads, stored: wanted.size, uploaded, bytes };
}

/** The restore manifest names the published file each original stands for by sha256: follow the rewrite. */
function restoreFor(f: SplitFile, rewritten: Map<string, { before: string; after: Buffer }>): SplitFile {
  const doc = JSON.parse(f.data.toString('utf8')) as { schema_version: string; files: { replaces_sha256: string | null }[] };
  if (doc.schema_version !== RESTORE_SCHEMA) return f;
  const next = new Map([...rewritten.values()].map((r) => [r.before, sha256Of(r.after)]));
  for (const e of doc.files) if (e.replaces_sha256 !== null && next.has(e.replaces_sha256)) e.replaces_sha256 = next.get(e.replaces_sha256)!;
  return { ...f, data: Buffer.from(`${JSON.stringify(doc, null, 2)}\n`) };
}
