/**
 * The first pass of `export`: stream the source one row at a time, check and normalise each row,
 * settle duplicates as they appear, write the row's own files into the staging directory, and
 * spill its index row (the run id, which needs the earliest timestamp, is only known afterwards).
 * Memory per row is a fixed few bytes of bookkeeping, whatever the input size.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseInputRow } from '../model/input-row.js';
import { rangeProblems } from '../model/ranges.js';
import type { BenchmarkSlot } from './aggregate.js';
import type { AtomicDir } from './atomic-dir.js';
import { localIdentityKey } from './identity.js';
import { InputError } from './input-error.js';
import { readJsonlLines } from './jsonl-reader.js';
import type { LayoutWriter } from './layouts.js';
import { normalizeRow } from './normalize.js';
import type { PendingIndexRow } from './row-files.js';
import { hydrateIndexRow, isIndexRow, type ResolvedSource } from './source.js';

export type DuplicatePolicy = 'update' | 'skip' | 'error';

/** One row's index entry, parked until the run id is known. */
export interface Spilled {
  key: string;
  owned: string;
  index: PendingIndexRow;
  raw?: { input?: string; output?: string };
  slot?: BenchmarkSlot;
}

export interface RowPassOptions {
  src: ResolvedSource;
  /** How the source is named in messages (relative to the cwd). */
  displayName: string;
  layout: LayoutWriter;
  policy: DuplicatePolicy;
  threshold: number;
  includeRaw: boolean;
  skipInvalid: boolean;
  maxLineBytes?: number;
  /** Staging directory; null for a dry run (rows are then kept in memory). */
  dir: AtomicDir | null;
  warn: (message: string) => void;
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

export interface RowPassResult {
  earliest: string | null;
  evalFile: string | undefined;
  skippedInvalid: number;
  duplicates: { updated: number; skipped: number };
  /** sha256 of the source bytes: the run id of an undated source. */
  contentHash: string;
  spillPath: string | null;
  spilledInMemory: Spilled[];
}

export async function readRowsPass(o: RowPassOptions): Promise<RowPassResult> {
  const { src, displayName, layout, policy, dir } = o;
  const spillPath = dir ? join(dir.staging, '.pending-index.jsonl') : null;
  const spilledInMemory: Spilled[] = [];
  const firstLineOf = new Map<string, number>();
  const ownedBy = new Map<string, string>();
  const hash = createHash('sha256');
  const result: RowPassResult = { earliest: null, evalFile: undefined, skippedInvalid: 0, duplicates: { updated: 0, skipped: 0 }, contentHash: '', spillPath, spilledInMemory };
  let spillBuffer = '';
  const totalBytes = (await stat(src.file)).size;

  for await (const line of readJsonlLines(src.file, {
    maxLineBytes: o.maxLineBytes,
    onRawChunk: (c) => hash.update(c),
    onChunk: (n) => o.onProgress?.(n, totalBytes),
  })) {
    const where = `${displayName}:${line.lineNo}`;
    const invalid = (problem: string) => {
      if (!o.skipInvalid) throw new InputError(`${where}: ${problem} — fix or drop the line, or pass --skip-invalid`, displayName, line.lineNo);
      result.skippedInvalid++;
      o.warn(`${where}: skipped: ${problem}`);
    };
    if (!line.ok) {
      if (line.fatal) throw new InputError(`${where}: ${line.problem} — is this a results file?`, displayName, line.lineNo);
      invalid(line.problem);
      continue;
    }
    if (line.text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (err) {
      invalid(`not valid JSON (${(err as Error).message})`);
      continue;
    }
    if (src.kind === 'workspace' && value && typeof value === 'object' && !Array.isArray(value) && isIndexRow(value as Record<string, unknown>)) {
      value = await hydrateIndexRow(src.dir!, value as Record<string, unknown>);
    }
    const parsed = parseInputRow(value);
    if (!parsed.ok) {
      invalid(parsed.problem);
      continue;
    }
    const row = normalizeRow(parsed.row, o.threshold);
    for (const p of rangeProblems(row as unknown as Record<string, unknown>)) o.warn(`${where}: ${p}`);
    // 128 bits of the identity instead of the identity itself: per-row bookkeeping is the only
    // memory that grows with the input, so it is kept to a fixed small size per row.
    const key = createHash('sha1').update(localIdentityKey(row)).digest('base64');
    const seenAt = firstLineOf.get(key);
    if (seenAt !== undefined) {
      if (policy === 'error') {
        throw new InputError(`${where}: duplicate of line ${seenAt} (same test_id, target, attempt and variant) — remove it, or pass --duplicate-policy update|skip`, displayName, line.lineNo);
      }
      if (policy === 'skip') {
        result.duplicates.skipped++;
        continue;
      }
      result.duplicates.updated++;
    } else {
      firstLineOf.set(key, line.lineNo);
    }
    result.evalFile ??= row.eval_path ?? undefined;
    if (row.timestamp && !Number.isNaN(Date.parse(row.timestamp)) && (result.earliest === null || Date.parse(row.timestamp) < Date.parse(result.earliest))) {
      result.earliest = row.timestamp;
    }
    const out = layout.row(row, { key, rawLine: line.text, includeRawContent: o.includeRaw });
    const ownedKey = createHash('sha1').update(out.owned).digest('base64');
    const previousOwner = ownedBy.get(ownedKey);
    if (previousOwner !== undefined && previousOwner !== key) {
      throw new InputError(`${where}: two different results map to ${out.owned} (they differ only in trace or envelope ids) — give them distinct attempts or variants`, displayName, line.lineNo);
    }
    ownedBy.set(ownedKey, key);
    const spilled: Spilled = { key, owned: out.owned, index: out.index };
    if (out.slot) spilled.slot = out.slot;
    if (o.includeRaw) spilled.raw = { input: row.input_messages.map((m) => m.content).join('\n\n'), output: row.answer ?? '' };
    if (dir) {
      // A rewritten duplicate must not keep sidecars only the older row had.
      if (seenAt !== undefined) await dir.removeDir(out.owned);
      for (const f of out.files) await dir.write(f.path, f.data);
      spillBuffer += JSON.stringify(spilled) + '\n';
      if (spillBuffer.length > 1 << 20) {
        await appendFile(spillPath!, spillBuffer);
        spillBuffer = '';
      }
    } else {
      spilledInMemory.push(spilled);
    }
  }
  if (spillBuffer) await appendFile(spillPath!, spillBuffer);
  result.contentHash = hash.digest('hex');
  return result;
}

/** The spilled rows in input order, from the staging file or (dry run) from memory. */
export async function* spilledRows(pass: Pick<RowPassResult, 'spillPath' | 'spilledInMemory'>): AsyncGenerator<Spilled> {
  if (!pass.spillPath) {
    yield* pass.spilledInMemory;
    return;
  }
  try {
    await stat(pass.spillPath);
  } catch {
    return;
  }
  for await (const text of createInterface({ input: createReadStream(pass.spillPath), crlfDelay: Infinity })) {
    if (text) yield JSON.parse(text) as Spilled;
  }
}
