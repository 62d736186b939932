/**
 * `export`: stream a results source into a run directory in one of the layouts.
 *
 * Memory stays bounded whatever the input size: rows are parsed one at a time, their files are
 * written as soon as they are derived, and their index rows are spilled to a staging file. The
 * run id (which needs the earliest timestamp) is only known at the end, so the index is
 * finished in a second, cheap pass over the spilled rows: that is also where duplicates are
 * resolved and the run-level aggregates are folded.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { IndexRowSchema, type IndexRow } from '../model/artifacts.js';
import { parseInputRow } from '../model/input-row.js';
import { sanitizeSegment, timestampSlug } from '../model/paths.js';
import { RunAggregator } from './aggregate.js';
import { AtomicDir } from './atomic-dir.js';
import { projectionIdentity, localIdentityKey, identityFieldsOf } from './identity.js';
import { readJsonlLines } from './jsonl-reader.js';
import { rangeProblems } from '../model/ranges.js';
import { layoutWriter, type LayoutName } from './layouts.js';
import { DEFAULT_THRESHOLD, normalizeRow } from './normalize.js';
import { projectionBundle, projectionEntry } from './projection-bundle.js';
import { json, type PendingIndexRow } from './row-files.js';
import { hydrateIndexRow, isIndexRow, resolveSource, type ResolvedSource } from './source.js';
import { AgentvResultsError } from '../util/errors.js';

export type DuplicatePolicy = 'update' | 'skip' | 'error';

export interface ExportOptions {
  source: string;
  out?: string;
  layout?: LayoutName;
  experiment?: string;
  duplicatePolicy?: DuplicatePolicy;
  projectionBundle?: boolean;
  dryRun?: boolean;
  includeRawContent?: boolean;
  skipInvalid?: boolean;
  threshold?: number;
  cwd?: string;
  maxLineBytes?: number;
  /** Copy files the runner wrote into a re-derived workspace (default true); readers that only need our bundle skip it. */
  carryRunnerFiles?: boolean;
  /** With dryRun: return the derived index rows (for commands that read results files in memory). */
  collectIndexRows?: boolean;
  onWarning?: (message: string) => void;
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

export interface ExportResult {
  runId: string;
  experiment: string;
  layout: LayoutName;
  outDir: string | null;
  rows: number;
  skippedInvalid: number;
  duplicates: { updated: number; skipped: number };
  summary: Record<string, unknown>;
  bundle?: Record<string, unknown>;
  indexRows?: IndexRow[];
}

/** An input problem: reported as `file:line: what — what to do`, exit code 2. */
export class InputError extends AgentvResultsError {
  readonly code = 'input';
  constructor(message: string, readonly file?: string, readonly line?: number) {
    super(message);
  }
}

interface Spilled {
  key: string;
  owned: string;
  index: PendingIndexRow;
  raw?: { input?: string; output?: string };
}

function experimentOf(opts: ExportOptions, src: ResolvedSource): string {
  if (opts.experiment) return sanitizeSegment(opts.experiment);
  if (src.recordedExperiment) return sanitizeSegment(src.recordedExperiment);
  return src.defaultExperiment;
}

/**
 * Run ids as AgentV forms them: the run directory's name, an ISO timestamp slug
 * (`2026-03-14T10-32-00-000Z`, here the earliest row's), with the experiment kept apart in the
 * summary (`experiment`, `metadata.experiment`). A workspace keeps the id it recorded.
 */
function runIdOf(opts: ExportOptions, src: ResolvedSource, experiment: string, earliest: string | null, contentHash: string): string {
  void experiment;
  if (src.kind === 'workspace') {
    if (!opts.experiment && src.recordedRunId) return src.recordedRunId;
    return sanitizeSegment(src.dir!.split('/').pop() ?? 'run');
  }
  const slug = earliest ? timestampSlug(earliest) : null;
  return slug ?? `undated-${contentHash.slice(0, 12)}`;
}

export async function exportRun(opts: ExportOptions): Promise<ExportResult> {
  const cwd = opts.cwd ?? process.cwd();
  const policy = opts.duplicatePolicy ?? 'update';
  const layout = layoutWriter(opts.layout ?? 'bundle');
  const threshold = opts.threshold ?? DEFAULT_THRESHOLD;
  const includeRaw = opts.includeRawContent ?? false;
  const src = await resolveSource(opts.source, cwd);
  const experiment = experimentOf(opts, src);
  const displayName = relative(cwd, src.file) || src.file;
  const warn = opts.onWarning ?? (() => {});

  // Where the run will land: an explicit --out, or .agentv/results/<run_id> where AgentV lists runs.
  // A workspace of ours (or the seeds') is re-derived in place, as before.
  const inPlaceDefault = !opts.out && src.kind === 'workspace' && src.layout === 'bundle';
  const outParent = opts.out ? resolve(cwd, opts.out, '..') : inPlaceDefault ? resolve(src.dir!, '..') : resolve(cwd, '.agentv/results');
  const outName = opts.out ? resolve(cwd, opts.out).split('/').pop()! : inPlaceDefault ? src.dir!.split('/').pop()! : null;

  const dir = opts.dryRun ? null : await AtomicDir.create(outParent, { hint: outName ?? 'run' });
  const spillPath = dir ? join(dir.staging, '.pending-index.jsonl') : null;
  const spilledInMemory: Spilled[] = [];
  const firstLineOf = new Map<string, number>();
  const ownedBy = new Map<string, string>();
  const hash = createHash('sha256');
  let earliest: string | null = null;
  let evalFile: string | undefined;
  let skippedInvalid = 0;
  const duplicates = { updated: 0, skipped: 0 };
  let spillBuffer = '';
  const totalBytes = (await stat(src.file)).size;

  try {
    for await (const line of readJsonlLines(src.file, {
      maxLineBytes: opts.maxLineBytes,
      onRawChunk: (c) => hash.update(c),
      onChunk: (n) => opts.onProgress?.(n, totalBytes),
    })) {
      const where = `${displayName}:${line.lineNo}`;
      const invalid = (problem: string) => {
        if (!opts.skipInvalid) {
          throw new InputError(`${where}: ${problem} — fix or drop the line, or pass --skip-invalid`, displayName, line.lineNo);
        }
        skippedInvalid++;
        warn(`${where}: skipped: ${problem}`);
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
      const row = normalizeRow(parsed.row, threshold);
      for (const p of rangeProblems(row as unknown as Record<string, unknown>)) warn(`${where}: ${p}`);
      // 128 bits of the identity instead of the identity itself: per-row bookkeeping is the only
      // memory that grows with the input, so it is kept to a fixed small size per row.
      const key = createHash('sha1').update(localIdentityKey(row)).digest('base64');
      const seenAt = firstLineOf.get(key);
      if (seenAt !== undefined) {
        if (policy === 'error') {
          throw new InputError(`${where}: duplicate of line ${seenAt} (same test_id, target, attempt and variant) — remove it, or pass --duplicate-policy update|skip`, displayName, line.lineNo);
        }
        if (policy === 'skip') {
          duplicates.skipped++;
          continue;
        }
        duplicates.updated++;
      } else {
        firstLineOf.set(key, line.lineNo);
      }
      evalFile ??= row.eval_path ?? undefined;
      if (row.timestamp && !Number.isNaN(Date.parse(row.timestamp)) && (earliest === null || Date.parse(row.timestamp) < Date.parse(earliest))) {
        earliest = row.timestamp;
      }
      const out = layout.row(row, { key, rawLine: line.text, includeRawContent: includeRaw });
      const ownedKey = createHash('sha1').update(out.owned).digest('base64');
      const previousOwner = ownedBy.get(ownedKey);
      if (previousOwner !== undefined && previousOwner !== key) {
        throw new InputError(`${where}: two different results map to ${out.owned} (they differ only in trace or envelope ids) — give them distinct attempts or variants`, displayName, line.lineNo);
      }
      ownedBy.set(ownedKey, key);
      const spilled: Spilled = { key, owned: out.owned, index: out.index };
      if (includeRaw) spilled.raw = { input: row.input_messages.map((m) => m.content).join('\n\n'), output: row.answer ?? '' };
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

    const runId = runIdOf(opts, src, experiment, earliest, hash.digest('hex'));
    const finalName = outName ?? runId.split('/').pop()!;

    // Second pass over the spill: the last version of each identity wins, at its position.
    const lastPos = new Map<string, number>();
    let pos = 0;
    for await (const s of spilledRows(dir, spillPath, spilledInMemory)) lastPos.set(s.key, pos++);
    const finalPath = join(outParent, finalName);
    if (!opts.dryRun && src.layout === 'agentv' && resolve(finalPath) === resolve(src.dir!)) {
      throw new InputError(`${relative(cwd, finalPath) || finalPath} is AgentV's own run directory: every command reads it as it is, and export never rewrites it — pass --out <dir> to write our bundle elsewhere`);
    }
    // Re-deriving a workspace in place: its index is the source itself, not a run to merge with.
    const inPlace = src.kind === 'workspace' && resolve(finalPath) === resolve(src.dir!);
    const existing = dir && layout.name === 'bundle' && !inPlace ? await readExistingIndex(finalPath) : null;
    const keep = new Set<string>(lastPos.keys());
    const carried: IndexRow[] = [];
    if (existing) {
      if (existing.runId !== runId) {
        throw new InputError(`${relative(cwd, finalPath) || finalPath} already holds run ${existing.runId}; this input is run ${runId} — choose another --out or delete that run first`);
      }
      // Run ids are timestamps: two experiments can start in the same millisecond; never mix them.
      if (existing.experiment !== experiment) {
        throw new InputError(`${relative(cwd, finalPath) || finalPath} already holds run ${runId} of experiment ${existing.experiment}; this input is experiment ${experiment} — choose another --out`);
      }
      for (const row of existing.rows) {
        const key = createHash('sha1').update(localIdentityKey(identityFieldsOf(row.projection_identity))).digest('base64');
        if (!keep.has(key)) {
          carried.push(row);
          continue;
        }
        if (policy === 'error') {
          throw new InputError(`${relative(cwd, finalPath) || finalPath}: ${row.test_id} (target ${row.target}, attempt ${row.attempt}) is already exported there — pass --duplicate-policy update to rewrite it or skip to keep it`);
        }
        if (policy === 'skip') {
          keep.delete(key);
          duplicates.skipped++;
          carried.push(row);
        } else {
          duplicates.updated++;
        }
      }
      for (const row of carried) {
        await dir!.removeDir(row.result_dir);
        await dir!.copyIn(join(finalPath, row.result_dir), row.result_dir);
      }
    }
    const meta = {
      run_id: runId,
      experiment,
      timestamp: earliest,
      eval_file: evalFile ?? src.recordedEvalFile ?? basename(src.file),
      threshold,
      // Only the policy: counts depend on what was already on disk, and the same input must give the same bytes.
      export_metadata: { duplicate_policy: policy },
    };

    const agg = new RunAggregator();
    const entries: unknown[] = [];
    const collected: IndexRow[] | undefined = opts.collectIndexRows && !dir ? [] : undefined;
    let indexText = '';
    let rows = 0;
    const emit = async (indexRow: IndexRow, raw?: Spilled['raw']) => {
      agg.add(indexRow);
      collected?.push(indexRow);
      rows++;
      if (layout.runFiles.index) indexText += JSON.stringify(indexRow) + '\n';
      if ((opts.dryRun && !opts.collectIndexRows) || opts.projectionBundle) entries.push(projectionEntry(indexRow, { includeRawContent: includeRaw, raw }));
      if (dir && layout.runFiles.index && indexText.length > 1 << 20) {
        await appendFile(dir.path(layout.runFiles.index), indexText);
        indexText = '';
      }
    };
    if (dir && layout.runFiles.index) await dir.write(layout.runFiles.index, '');
    await dir?.flush();
    for (const row of carried) await emit(row);
    pos = 0;
    for await (const s of spilledRows(dir, spillPath, spilledInMemory)) {
      const mine = lastPos.get(s.key) === pos++;
      if (!mine) continue;
      if (!keep.has(s.key)) continue;
      await emit({ run_id: runId, experiment, ...s.index, projection_identity: projectionIdentity(runId, s.index) }, s.raw);
    }
    if (dir && layout.runFiles.index && indexText) await appendFile(dir.path(layout.runFiles.index), indexText);
    if (rows === 0 && skippedInvalid === 0) {
      throw new InputError(`${displayName}: no result rows — the file is empty; nothing to export`, displayName);
    }

    const summary = agg.summary(meta);
    const warnings: string[] = [];
    if (earliest === null && src.kind === 'results-file') warnings.push('no row carries a timestamp: the run id uses a content hash instead');
    const status = opts.dryRun ? 'planned_export' : 'emitted';
    const bundle = (opts.dryRun && !opts.collectIndexRows) || opts.projectionBundle ? projectionBundle(meta, entries, { includeRawContent: includeRaw, status, warnings }) : undefined;

    if (!dir) {
      return { runId, experiment, layout: layout.name, outDir: null, rows, skippedInvalid, duplicates, summary, bundle, indexRows: collected };
    }
    if (layout.runFiles.summary) await dir.write(layout.runFiles.summary, json(summary));
    await dir.write(layout.runFiles.benchmark, json(agg.benchmark(meta)));
    if (layout.runFiles.timing) await dir.write(layout.runFiles.timing, json(agg.timing()));
    if (bundle) await dir.write('projection_bundle.json', json(bundle));
    await dir.removeDir('.pending-index.jsonl');
    if (src.kind === 'workspace' && layout.name === 'bundle' && opts.carryRunnerFiles !== false) await carryRunnerFiles(src.dir!, dir);
    const outDir = await dir.commit(finalName);
    return { runId, experiment, layout: layout.name, outDir, rows, skippedInvalid, duplicates, summary, bundle };
  } catch (err) {
    await dir?.abort();
    throw err;
  }
}

async function* spilledRows(dir: AtomicDir | null, spillPath: string | null, inMemory: Spilled[]): AsyncGenerator<Spilled> {
  if (!dir) {
    yield* inMemory;
    return;
  }
  try {
    await stat(spillPath!);
  } catch {
    return;
  }
  for await (const text of createInterface({ input: createReadStream(spillPath!), crlfDelay: Infinity })) {
    if (text) yield JSON.parse(text) as Spilled;
  }
}

async function readExistingIndex(runDir: string): Promise<{ runId: string; experiment: string; rows: IndexRow[] } | null> {
  let text: string;
  try {
    text = await readFile(join(runDir, 'index.jsonl'), 'utf8');
  } catch {
    return null;
  }
  const rows: IndexRow[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const parsed = IndexRowSchema.safeParse(JSON.parse(line));
    if (!parsed.success) throw new InputError(`${join(runDir, 'index.jsonl')}: not a run written by this tool; choose another --out`);
    rows.push(parsed.data);
  }
  const runId = rows[0]?.run_id ?? '';
  return { runId, experiment: rows[0]?.experiment ?? '', rows };
}

/** Files a runner wrote into its workspace that export does not regenerate are kept, never discarded. */
async function carryRunnerFiles(sourceDir: string, dir: AtomicDir): Promise<void> {
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(sourceDir, rel), { withFileTypes: true });
    for (const e of entries) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.name.startsWith('.')) continue;
      if (e.isDirectory()) await walk(childRel);
      else if (e.isFile()) {
        try {
          await stat(dir.path(childRel));
        } catch {
          await dir.copyIn(join(sourceDir, childRel), childRel);
        }
      }
    }
  };
  await walk('');
}
