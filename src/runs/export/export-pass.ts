/**
 * The first pass of `export`: stream the source one row at a time, check and normalise each row,
 * settle duplicates as they appear, write the row's own files into the staging directory, and
 * spill its index row (the run id, which needs the earliest timestamp, is only known afterwards).
 * Memory per row is a fixed few bytes of bookkeeping, whatever the input size.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { createReadStream } from 'node:fs';
import { appendFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseInputRow } from '../../model/input-row.js';
import { rangeProblems } from '../row-ranges.js';
import type { BenchmarkSlot } from './aggregate.js';
import type { AtomicDir } from './atomic-dir.js';
import { localIdentityKey } from './projection-identity.js';
import { InputError } from '../../errors/input-error.js';
import { readJsonlLines, type JsonlLine } from './jsonl-reader.js';
import type { LayoutWriter } from './output-layouts.js';
import { normalizeRow, type NormalizedRow } from './normalize.js';
import type { PendingIndexRow } from './row-files.js';
import { hydrateIndexRow, isIndexRow, resolveRowFiles } from './hydrate-row.js';
import type { ResolvedSource } from './source.js';
import { isAbsent } from '../../errors/errors.js';

/** What export does with a result identity already in the destination. */
/** What export does with a row whose identity it has already written: keep the newer, keep the first, or refuse the file. */
export const DuplicatePolicySchema = z.enum(['update', 'skip', 'error']);
export type DuplicatePolicy = z.infer<typeof DuplicatePolicySchema>;

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
  /** A results file: per path field (`answer_path`, …), the rows whose named file could not be read (source.ts resolveRowFiles). */
  unresolvedPaths: Record<string, number>;
}

type Line = JsonlLine;

/** One pass over the source; its fields are the per-row bookkeeping that decides duplicates and owners. */
class RowPass {
  private readonly firstLineOf = new Map<string, number>();
  private readonly ownedBy = new Map<string, string>();
  private spillBuffer = '';
  readonly result: RowPassResult;

  constructor(private readonly o: RowPassOptions) {
    const spillPath = o.dir ? join(o.dir.staging, '.pending-index.jsonl') : null;
    this.result = {
      earliest: null,
      evalFile: undefined,
      skippedInvalid: 0,
      duplicates: { updated: 0, skipped: 0 },
      contentHash: '',
      spillPath,
      spilledInMemory: [],
      unresolvedPaths: {},
    };
  }

  /** A line that is not a row: fatal, or skipped with a warning under --skip-invalid. */
  private invalid(line: Line, problem: string): void {
    const where = `${this.o.displayName}:${line.lineNo}`;
    if (!this.o.skipInvalid) throw new InputError(`${where}: ${problem} — fix or drop the line, or pass --skip-invalid`, this.o.displayName, line.lineNo);
    this.result.skippedInvalid++;
    this.o.warn(`${where}: skipped: ${problem}`);
  }

  /** The line as a normalised row, or null when it is blank or was skipped as invalid. */
  async rowOf(line: Line): Promise<NormalizedRow | null> {
    if (!line.ok) {
      if (line.fatal) throw new InputError(`${this.o.displayName}:${line.lineNo}: ${line.problem} — is this a results file?`, this.o.displayName, line.lineNo);
      this.invalid(line, line.problem);
      return null;
    }
    if (line.text.trim() === '') return null;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (err) {
      this.invalid(line, `not valid JSON (${(err as Error).message})`);
      return null;
    }
    const { src } = this.o;
    if (src.kind === 'workspace' && value && typeof value === 'object' && !Array.isArray(value) && isIndexRow(value as Record<string, unknown>)) {
      value = await hydrateIndexRow(src.dir!, value as Record<string, unknown>);
    } else if (src.kind === 'results-file' && src.pathBase && value && typeof value === 'object' && !Array.isArray(value)) {
      // Rows naming files by relative path (AgentV's index rows do): read against the run beside the file.
      const files = await resolveRowFiles(src.pathBase, value as Record<string, unknown>);
      value = files.row;
      for (const f of files.unresolved) this.result.unresolvedPaths[f] = (this.result.unresolvedPaths[f] ?? 0) + 1;
    }
    const parsed = parseInputRow(value);
    if (!parsed.ok) {
      this.invalid(line, parsed.problem);
      return null;
    }
    const row = normalizeRow(parsed.row, this.o.threshold);
    for (const p of rangeProblems(row as unknown as Record<string, unknown>)) this.o.warn(`${this.o.displayName}:${line.lineNo}: ${p}`);
    return row;
  }

  /**
   * Settles a repeated identity by the duplicate policy: 'drop' (skip it), or the line the identity
   * was first seen on (it is rewritten), or undefined for a first sighting.
   */
  private duplicateOf(key: string, lineNo: number): number | undefined | 'drop' {
    const seenAt = this.firstLineOf.get(key);
    if (seenAt === undefined) {
      this.firstLineOf.set(key, lineNo);
      return undefined;
    }
    if (this.o.policy === 'error') {
      throw new InputError(
        `${this.o.displayName}:${lineNo}: duplicate of line ${seenAt} (same test_id, target, attempt and variant) — remove it, or pass --duplicate-policy update|skip`,
        this.o.displayName,
        lineNo,
      );
    }
    if (this.o.policy === 'skip') {
      this.result.duplicates.skipped++;
      return 'drop';
    }
    this.result.duplicates.updated++;
    return seenAt;
  }

  async add(line: Line & { ok: true }, row: NormalizedRow): Promise<void> {
    // 128 bits of the identity instead of the identity itself: per-row bookkeeping is the only
    // memory that grows with the input, so it is kept to a fixed small size per row.
    const key = createHash('sha1').update(localIdentityKey(row)).digest('base64');
    const seenAt = this.duplicateOf(key, line.lineNo);
    if (seenAt === 'drop') return;
    const r = this.result;
    r.evalFile ??= row.eval_path ?? undefined;
    if (row.timestamp && !Number.isNaN(Date.parse(row.timestamp)) && (r.earliest === null || Date.parse(row.timestamp) < Date.parse(r.earliest)))
      r.earliest = row.timestamp;
    const out = this.o.layout.row(row, { key, rawLine: line.text, includeRawContent: this.o.includeRaw });
    const ownedKey = createHash('sha1').update(out.owned).digest('base64');
    const previousOwner = this.ownedBy.get(ownedKey);
    if (previousOwner !== undefined && previousOwner !== key) {
      throw new InputError(
        `${this.o.displayName}:${line.lineNo}: two different results map to ${out.owned} (they differ only in trace or envelope ids) — give them distinct attempts or variants`,
        this.o.displayName,
        line.lineNo,
      );
    }
    this.ownedBy.set(ownedKey, key);
    const spilled: Spilled = { key, owned: out.owned, index: out.index };
    if (out.slot) spilled.slot = out.slot;
    if (this.o.includeRaw) spilled.raw = { input: row.input_messages.map((m) => m.content).join('\n\n'), output: row.answer ?? '' };
    const dir = this.o.dir;
    if (!dir) {
      r.spilledInMemory.push(spilled);
      return;
    }
    // A rewritten duplicate must not keep sidecars only the older row had.
    if (seenAt !== undefined) await dir.removeDir(out.owned);
    for (const f of out.files) await dir.write(f.path, f.data);
    this.spillBuffer += JSON.stringify(spilled) + '\n';
    if (this.spillBuffer.length > 1 << 20) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.spillBuffer) await appendFile(this.result.spillPath!, this.spillBuffer);
    this.spillBuffer = '';
  }
}

export async function readRowsPass(o: RowPassOptions): Promise<RowPassResult> {
  const pass = new RowPass(o);
  const hash = createHash('sha256');
  const totalBytes = (await stat(o.src.file)).size;
  const lines = readJsonlLines(o.src.file, { maxLineBytes: o.maxLineBytes, onRawChunk: (c) => hash.update(c), onChunk: (n) => o.onProgress?.(n, totalBytes) });
  for await (const line of lines) {
    const row = await pass.rowOf(line);
    if (row && line.ok) await pass.add(line, row);
  }
  await pass.flush();
  pass.result.contentHash = hash.digest('hex');
  return pass.result;
}

/** The spilled rows in input order, from the staging file or (dry run) from memory. */
export async function* spilledRows(pass: Pick<RowPassResult, 'spillPath' | 'spilledInMemory'>): AsyncGenerator<Spilled> {
  if (!pass.spillPath) {
    yield* pass.spilledInMemory;
    return;
  }
  try {
    await stat(pass.spillPath);
  } catch (err) {
    // absent: no spill file, nothing spilled; anything else propagates
    if (isAbsent(err)) return;
    throw err;
  }
  for await (const text of createInterface({ input: createReadStream(pass.spillPath), crlfDelay: Infinity })) {
    if (text) yield JSON.parse(text) as Spilled;
  }
}
