/**
 * Split a run workspace into what goes on the results branch and what goes on the artifacts
 * branch, as AgentV 5.x's own publish splits a run: only the rows' transcripts (the files its
 * `artifact_pointers.transcript` names) go to `agentv/artifacts/v1`; every other file — the
 * answer (`outputs/answer.md`), the input (`input.md`), grading, results, metrics, timing, raw
 * logs, diffs — stays on the results branch, where AgentV's Dashboard and `results show` read it
 * (a file over `heavy_threshold_bytes` excepted: see isPayload).
 * The run's index rows are rewritten to carry AgentV-shaped `artifact_pointers` for the moved
 * transcripts.
 *
 * The split holds for our bundles, runs derived from other layouts and the `attempt-N/` layout of
 * AgentV's results docs (a run `agentv eval` wrote is not split: agentv-run.ts publishes it as
 * AgentV's own publish does).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ArtifactPointerSchema, TRANSCRIPT_SCHEMA_VERSION, type ArtifactPointer, type IndexRow } from '../model/artifacts.js';
import { safeRelativePath } from '../runs/read/run-files.js';
import type { FileMode } from '../git/index.js';
import { isContentKey, OBJECT_STORE_REF } from '../store/object-store.js';
import { readRegularFileSync, readRegularTextSync } from '../util/safe-open.js';
import type { RunTree } from '../runs/read/run-tree.js';

export interface SplitFile {
  path: string;
  data: Buffer;
  /** The file's mode on the branch (default 100644). */
  mode?: FileMode;
}

export interface SplitRun {
  metadata: SplitFile[];
  payloads: SplitFile[];
  rows: IndexRow[];
  /** The manifest's path inside the run (`.internal/index.jsonl` for AgentV 5 runs, else `index.jsonl`). */
  manifest: string;
}

export const AGENTV_TRANSCRIPT_MEDIA_TYPE = 'application/vnd.agentv.normalized-transcript.v1+json';
const PAYLOAD_SCHEMA = 'agentv-results.payload.v1';

function baseName(rel: string): string {
  return rel.slice(rel.lastIndexOf('/') + 1);
}

/** AgentV's artifact families. */
function family(rel: string): string {
  const name = baseName(rel);
  if (name === 'transcript.json') return 'transcripts';
  if (name.startsWith('trace') && name.endsWith('.json')) return 'traces';
  if (/\.(png|jpe?g|gif|webp)$/i.test(name)) return 'screenshots';
  if (/transcript-raw|\.log$|^stdout|^stderr/.test(name)) return 'raw-logs';
  return 'outputs';
}

function mediaType(rel: string): string {
  if (baseName(rel) === 'transcript.json') return AGENTV_TRANSCRIPT_MEDIA_TYPE;
  if (rel.endsWith('.json')) return 'application/json';
  if (rel.endsWith('.jsonl')) return 'application/jsonl';
  if (rel.endsWith('.md')) return 'text/markdown';
  if (rel.endsWith('.diff')) return 'text/x-diff';
  if (rel.endsWith('.html')) return 'text/html';
  if (rel.endsWith('.yaml') || rel.endsWith('.yml')) return 'application/yaml';
  if (rel.endsWith('.txt') || rel.endsWith('.log')) return 'text/plain';
  if (rel.endsWith('.png')) return 'image/png';
  return 'application/octet-stream';
}

/** Run-level files that never move, whatever their size: every reader starts from them. */
const ALWAYS_LIGHT = new Set(['index.jsonl', '.internal/index.jsonl', 'summary.json', 'benchmark.json', 'timing.json', 'tags.json', 'feedback.json']);

/**
 * A payload: a transcript (what AgentV's pointers send to the artifacts branch), or any other
 * file over `heavy_threshold_bytes` (a multi-megabyte raw log is kept out of the branch every
 * clone fetches; AgentV's readers then cannot open that one file). Every other file stays.
 */
export function isPayload(rel: string, size: number, o: { transcripts: ReadonlySet<string>; threshold: number }): boolean {
  if (ALWAYS_LIGHT.has(rel)) return false;
  return o.transcripts.has(rel) || baseName(rel) === 'transcript.json' || size > o.threshold;
}

/**
 * Synchronous on purpose (like AtomicDir's writes): a run is thousands of small files, and sending
 * each readdir/open/read/close through libuv's thread pool costs several times the reads themselves.
 * Dot entries are skipped except AgentV's `.internal/` (its manifest lives there).
 */
function walk(root: string): string[] {
  const out: string[] = [];
  const go = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.') && !(rel === '' && e.name === '.internal' && e.isDirectory())) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) go(child);
      else if (e.isFile()) out.push(child);
    }
  };
  go('');
  return out.sort();
}

/** The run's manifest: AgentV 5's `.internal/index.jsonl` when present, else `index.jsonl`. */
export function manifestPathOf(runDir: string): string {
  return existsSync(join(runDir, '.internal', 'index.jsonl')) ? '.internal/index.jsonl' : 'index.jsonl';
}

/** The files of a walked run the split publishes: dot entries skipped except AgentV's `.internal/` at the root. */
export function publishedFiles(tree: RunTree): string[] {
  return [...tree.files]
    .filter((rel) => !rel.split('/').some((seg, i) => seg.startsWith('.') && !(i === 0 && seg === '.internal' && rel.includes('/'))))
    .sort();
}

/**
 * `runPath` is the run's directory on both branches; `artifactsRef` the full ref payloads live on;
 * `tree` the run folder as the command's run handle walked it (runs/read/run-tree.ts): its file list and
 * the bytes validation already read are used, so no file is read twice.
 */
export async function splitRun(
  runDir: string,
  rows: IndexRow[],
  opts: { runPath: string; artifactsRef: string; threshold: number; tree?: RunTree },
): Promise<SplitRun> {
  const metadata: SplitFile[] = [];
  const payloads: SplitFile[] = [];
  const pointers = new Map<string, ArtifactPointer>();
  const tree = opts.tree;
  const manifest = tree ? (tree.files.has('.internal/index.jsonl') ? '.internal/index.jsonl' : 'index.jsonl') : manifestPathOf(runDir);
  // AgentV's pointers name the ref by its short name (`agentv/artifacts/v1`).
  const ref = opts.artifactsRef.replace(/^refs\/heads\//, '');
  const local = tree ? publishedFiles(tree) : walk(runDir);
  // Rows are rewritten from the manifest's own lines, not from schema-parsed rows: parsing
  // reorders keys, and a reader's rows need not match the manifest one to one (AgentV 5 writes one
  // line per test with its samples inside). The published line is the local line plus its pointers.
  const lines =
    readManifestLines(join(runDir, manifest), tree?.files.has(manifest) ? tree.take(manifest) : undefined) ?? (rows as unknown as Record<string, unknown>[]);
  const transcripts = new Set(lines.map((l) => l.transcript_path).filter((t): t is string => typeof t === 'string'));
  for (const rel of local) {
    if (safeRelativePath(rel) === null) continue;
    if (rel === manifest) continue;
    const data = tree ? tree.take(rel) : readRegularFileSync(join(runDir, rel), { kind: 'run-file' });
    if (isPayload(rel, data.length, { transcripts, threshold: opts.threshold })) {
      payloads.push({ path: rel, data });
      const sha256 = createHash('sha256').update(data).digest('hex');
      const fam = family(rel);
      pointers.set(rel, {
        ref,
        key: `${opts.runPath}/${rel}`,
        object_version: `sha256:${sha256}`,
        path: rel,
        sha256,
        size: data.length,
        schema_version: fam === 'transcripts' ? TRANSCRIPT_SCHEMA_VERSION : PAYLOAD_SCHEMA,
        media_type: mediaType(rel),
        family: fam,
      } as ArtifactPointer);
    } else {
      metadata.push({ path: rel, data });
    }
  }
  // Attach each pointer to the line whose result_dir contains it: walk up the pointer's path
  // (a handful of levels) instead of scanning every pointer for every line.
  const dirOf = (l: Record<string, unknown>): string | null => (typeof l.result_dir === 'string' ? l.result_dir : null);
  const byDir = new Map<string, ArtifactPointer[]>();
  for (const l of lines) {
    const d = dirOf(l);
    if (d !== null) byDir.set(d, []);
  }
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
  const localSet = new Set(local);
  const rewritten = lines.map((line) => {
    const { artifact_pointers: old, ...rest } = line;
    // A pointer whose payload is not here (a run pulled without --with-artifacts) is carried over:
    // the payload is still on the artifacts branch, which publish never deletes from.
    const d = dirOf(line);
    const mine = [...(d !== null ? (byDir.get(d) ?? []) : []), ...carriedPointers(old, localSet, opts.runPath)].sort((a, b) =>
      a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
    );
    if (mine.length === 0) return rest as unknown as IndexRow;
    return { ...rest, artifact_pointers: pointerObject(mine, typeof line.transcript_path === 'string' ? line.transcript_path : null) } as unknown as IndexRow;
  });
  metadata.push({ path: manifest, data: Buffer.from(rewritten.map((r) => JSON.stringify(r) + '\n').join('')) });
  return { metadata, payloads, rows: rewritten, manifest };
}

/**
 * AgentV's shape: an object whose `transcript` key is the row's transcript (the one its
 * `transcript_path` names, else the first transcript.json). Every other moved payload rides along
 * under its own path as key, which AgentV's readers ignore and ours read as a list.
 */
function pointerObject(list: ArtifactPointer[], transcriptPath: string | null): Record<string, ArtifactPointer> {
  const transcript = list.find((p) => p.path === transcriptPath) ?? list.find((p) => baseName(p.path) === 'transcript.json');
  const out: Record<string, ArtifactPointer> = {};
  if (transcript) out.transcript = transcript;
  for (const p of list) if (p !== transcript) out[p.path] = p;
  return out;
}

/** The manifest's lines as plain objects (key order kept), or null when it is absent or one line is unreadable. */
function readManifestLines(file: string, bytes?: Buffer): Record<string, unknown>[] | null {
  let text: string;
  try {
    text = bytes ? bytes.toString('utf8') : readRegularTextSync(file, { kind: 'run-file' });
  } catch (err) {
    // absent: no such file means no rows; anything else is not absence
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // unparsable: the caller treats the whole file as unreadable
      return null;
    }
  }
  return out;
}

/** Pointers of a row's previous manifest whose payload is absent locally and that name this very run's key (or a bucket object). */
function carriedPointers(old: unknown, local: Set<string>, runPath: string): ArtifactPointer[] {
  const list = Array.isArray(old) ? old : old !== null && typeof old === 'object' ? Object.values(old) : [];
  const out: ArtifactPointer[] = [];
  for (const raw of list) {
    const p = ArtifactPointerSchema.safeParse(raw);
    if (!p.success || local.has(p.data.path) || safeRelativePath(p.data.path) !== p.data.path) continue;
    // On the artifacts branch at this run's key, or (hybrid) in the bucket at its content address.
    const here = p.data.ref === OBJECT_STORE_REF ? isContentKey(p.data.key, p.data.sha256) : p.data.key === `${runPath}/${p.data.path}`;
    if (!here) continue;
    // The pointer as it was written (parsing would reorder its keys and change the line).
    out.push(raw as ArtifactPointer);
  }
  return out;
}
