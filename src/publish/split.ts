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
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactPointer, IndexRow } from '../model/artifacts.js';
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

async function walk(root: string): Promise<string[]> {
  const out: string[] = [];
  const go = async (rel: string) => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await go(child);
      else if (e.isFile()) out.push(child);
    }
  };
  await go('');
  return out.sort();
}

/** `runPath` is the run's path on both branches; `artifactsRef` the full ref payloads live on. */
export async function splitRun(runDir: string, rows: IndexRow[], opts: { runPath: string; artifactsRef: string; threshold: number }): Promise<SplitRun> {
  const metadata: SplitFile[] = [];
  const payloads: SplitFile[] = [];
  const pointers = new Map<string, ArtifactPointer>();
  for (const rel of await walk(runDir)) {
    if (safeRelativePath(rel) === null) continue;
    if (rel === 'index.jsonl') continue;
    const data = await readFile(join(runDir, rel));
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
  const rewritten = rows.map((row) => {
    const mine = byDir.get(row.result_dir) ?? [];
    const { artifact_pointers: _old, ...rest } = row;
    return mine.length > 0 ? ({ ...rest, artifact_pointers: mine } as IndexRow) : (rest as IndexRow);
  });
  metadata.push({ path: 'index.jsonl', data: Buffer.from(rewritten.map((r) => JSON.stringify(r) + '\n').join('')) });
  return { metadata, payloads, rows: rewritten };
}
