// The model: what the clones wrote, hence what must be on the remote. Rows are deterministic per
// run and index, so shards of one run published from different clones agree row for row, and a
// row read back from the remote maps to its index (rowIndex) for exactly-once counting.
import { rng, syntheticRow } from '../../../bench/synthetic.mjs';
import { SEED } from './config.js';

export interface SoakRun {
  id: string;
  experiment: string;
  timestamp: string;
  seed: number;
  /** Rows 0..allocated-1 exist somewhere (a workspace); row k is the same wherever it is generated. */
  allocated: number;
  /** Rows that must be on the remote's results branch, exactly once. */
  expected: Set<number>;
  creator: number;
  /** Clones that published rows of it. */
  publishers: Set<number>;
  /** Set for a run written as a run in progress (raw rows, WIP checkpoints). */
  wip?: WipRun;
}

export interface WipRun {
  clone: number;
  dir: string;
  rows: number;
  branch: string | null;
  /** Rows the last checkpoint that reached the remote captured. */
  checkpointed: number;
  /** present: checkpointed and not yet published; gone: a publish of it landed; unknown: published but not pushed then. */
  onRemote: 'present' | 'gone' | 'unknown' | 'never';
}

export interface Clone {
  index: number;
  dir: string;
  host: string;
  /** Rows of each run this clone's workspace has (what it republishes when it grows the run). */
  have: Map<string, Set<number>>;
  openWip: SoakRun | null;
}

export interface Model {
  runs: Map<string, SoakRun>;
  /** run -> clone -> tags that clone's edits leave (each clone edits only tags named c<i>-*). */
  tags: Map<string, Map<number, Set<string>>>;
  /** run -> test -> reviewer -> note text. */
  feedback: Map<string, Map<string, Map<string, string>>>;
}

export const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/**
 * A random stream for one purpose, e.g. seeded(SEED, round, clone): the parts are hashed (murmur3's
 * finalizer) before they seed xorshift, whose first draws from neighbouring seeds are alike.
 */
export function seeded(...parts: number[]): () => number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0) ^ Math.floor(p / 2 ** 32), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return rng(h >>> 0 || 1);
}

/** Row k of a run: a synthetic result whose (test_id, target) is (test-floor(k/2), model-a|b by k % 2). */
export function rowOf(run: SoakRun, k: number): Record<string, unknown> {
  const row = syntheticRow(seeded(SEED, 5, run.seed, k), k, { turns: 1 });
  // One timestamp for the whole run: whichever rows a shard has, its run id is the same.
  row.timestamp = run.timestamp;
  return row;
}

/** The row index back from a row's test id and target (null: not a row this test wrote). */
function rowIndex(testId: unknown, target: unknown): number | null {
  const m = typeof testId === 'string' ? /^test-(\d+)$/.exec(testId) : null;
  const t = target === 'model-a' ? 0 : target === 'model-b' ? 1 : -1;
  return m && t >= 0 ? Number(m[1]) * 2 + t : null;
}

export const testOf = (k: number) => `test-${Math.floor(k / 2)}`;

/** (test_id, target) row indexes of an index.jsonl text, with how often each appears; lines that are no row of ours are listed. */
export function rowsOfIndex(text: string): { counts: Map<number, number>; foreign: string[]; ids: string[] } {
  const counts = new Map<number, number>();
  const foreign: string[] = [];
  const ids: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let row: { test_id?: unknown; target?: unknown; projection_identity?: { id?: string } };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      foreign.push(line.slice(0, 80));
      continue;
    }
    const k = rowIndex(row.test_id, row.target);
    if (k === null) foreign.push(line.slice(0, 80));
    else counts.set(k, (counts.get(k) ?? 0) + 1);
    if (row.projection_identity?.id) ids.push(row.projection_identity.id);
  }
  return { counts, foreign, ids };
}

export function expectedTags(model: Model, runId: string): string[] {
  const out = new Set<string>();
  for (const set of model.tags.get(runId)?.values() ?? []) for (const t of set) out.add(t);
  return [...out].sort();
}

export function setFeedback(model: Model, runId: string, test: string, reviewer: string, text: string): void {
  const byTest = model.feedback.get(runId) ?? new Map<string, Map<string, string>>();
  model.feedback.set(runId, byTest);
  const byReviewer = byTest.get(test) ?? new Map<string, string>();
  byTest.set(test, byReviewer);
  byReviewer.set(reviewer, text);
}
