/**
 * Split a run workspace into what goes on the results branch (metadata: the control plane) and
 * what goes on the artifacts branch (heavy payloads), rewriting index rows to carry
 * `artifact_pointers` for every payload that moved.
 *
 * Heavy: transcripts, raw transcripts, outputs/ (answers, diffs), and any other file over the
 * size threshold. Everything else stays with the metadata so `list`, `show` and `summary` never
 * need the artifacts branch.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArtifactPointerSchema, type ArtifactPointer, type IndexRow } from '../model/artifacts.js';
import { safeRelativePath } from '../model/paths.js';

export interface SplitFile {
  path: string;
  data: Buffer;
}

export interface SplitRun {
  metadata: SplitFile[];
  payloads: SplitFile[];
  rows: IndexRow[];
}

const ALWAYS_LIGHT = new Set(['index.jsonl', 'summary.json', 'benchmark.json', 'timing.json', 'tags.json', 'feedback.json', 'projection_bundle.json']);

function family(rel: string): ArtifactPointer['family'] {
  if (rel.endsWith('/transcript.json')) return 'transcript';
  if (rel.endsWith('/transcript-raw.jsonl')) return 'transcript_raw';
  if (rel.endsWith('.diff')) return 'file_changes';
  if (rel.includes('/outputs/')) return 'output';
  return 'sidecar';
}

function mediaType(rel: string): string {
  if (rel.endsWith('.json')) return 'application/json';
  if (rel.endsWith('.jsonl')) return 'application/jsonl';
  if (rel.endsWith('.md')) return 'text/markdown';
  if (rel.endsWith('.diff')) return 'text/x-diff';
  if (rel.endsWith('.html')) return 'text/html';
  if (rel.endsWith('.txt') || rel.endsWith('.log')) return 'text/plain';
  return 'application/octet-stream';
}

export function isHeavy(rel: string, size: number, threshold: number): boolean {
  if (ALWAYS_LIGHT.has(rel)) return false;
  const f = family(rel);
  if (f !== 'sidecar') return true;
  return size > threshold;
}

/**
 * Synchronous on purpose (like AtomicDir's writes): a run is thousands of small files, and sending
 * each readdir/open/read/close through libuv's thread pool costs several times the reads themselves.
 */
function walk(root: string): string[] {
  const out: string[] = [];
  const go = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) go(child);
      else if (e.isFile()) out.push(child);
    }
  };
  go('');
  return out.sort();
}

/** `runPath` is the run's path on both branches; `artifactsRef` the full ref payloads live on. */
export async function splitRun(runDir: string, rows: IndexRow[], opts: { runPath: string; artifactsRef: string; threshold: number }): Promise<SplitRun> {
  const metadata: SplitFile[] = [];
  const payloads: SplitFile[] = [];
  const pointers = new Map<string, ArtifactPointer>();
  const local = walk(runDir);
  for (const rel of local) {
    if (safeRelativePath(rel) === null) continue;
    if (rel === 'index.jsonl') continue;
    const data = readFileSync(join(runDir, rel));
    if (isHeavy(rel, data.length, opts.threshold)) {
      payloads.push({ path: rel, data });
      pointers.set(rel, {
        ref: opts.artifactsRef,
        key: `${opts.runPath}/${rel}`,
        path: rel,
        sha256: createHash('sha256').update(data).digest('hex'),
        size: data.length,
        media_type: mediaType(rel),
        family: family(rel),
      });
    } else {
      metadata.push({ path: rel, data });
    }
  }
  // Attach each pointer to the row whose result_dir contains it: walk up the pointer's path
  // (a handful of levels) instead of scanning every pointer for every row.
  const byDir = new Map<string, ArtifactPointer[]>(rows.map((r) => [r.result_dir, []]));
  for (const p of pointers.values()) {
    for (let dir = p.path; dir.includes('/'); ) {
      dir = dir.slice(0, dir.lastIndexOf('/'));
      const list = byDir.get(dir);
      if (list) {
        list.push(p);
        break;
      }
    }
  }
  // Rows are rewritten from the manifest's own lines, not from the schema-parsed rows: parsing
  // reorders keys, and the published line should be the local line plus its pointers (so a pulled
  // workspace differs from the published one only by `artifact_pointers`).
  const original = readManifestLines(runDir, rows.length);
  const localSet = new Set(local);
  const rewritten = rows.map((row, i) => {
    const { artifact_pointers: old, ...rest } = (original?.[i] ?? row) as IndexRow;
    // A pointer whose payload is not here (a run pulled without --with-artifacts) is carried over:
    // the payload is still on the artifacts branch, which publish never deletes from.
    const mine = [...(byDir.get(row.result_dir) ?? []), ...carriedPointers(old, localSet, opts.runPath)].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return mine.length > 0 ? ({ ...rest, artifact_pointers: mine } as IndexRow) : (rest as IndexRow);
  });
  metadata.push({ path: 'index.jsonl', data: Buffer.from(rewritten.map((r) => JSON.stringify(r) + '\n').join('')) });
  return { metadata, payloads, rows: rewritten };
}

/** The manifest's lines as plain objects (key order kept), or null when they do not line up with `rows`. */
function readManifestLines(runDir: string, expected: number): Record<string, unknown>[] | null {
  let text: string;
  try {
    text = readFileSync(join(runDir, 'index.jsonl'), 'utf8');
  } catch {
    return null;
  }
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  return out.length === expected ? out : null;
}

/** Pointers of a row's previous manifest whose payload is absent locally and that name this very run's key. */
function carriedPointers(old: unknown, local: Set<string>, runPath: string): ArtifactPointer[] {
  if (!Array.isArray(old)) return [];
  const out: ArtifactPointer[] = [];
  for (const raw of old) {
    const p = ArtifactPointerSchema.safeParse(raw);
    if (!p.success || local.has(p.data.path) || safeRelativePath(p.data.path) !== p.data.path || p.data.key !== `${runPath}/${p.data.path}`) continue;
    out.push(p.data);
  }
  return out;
}
