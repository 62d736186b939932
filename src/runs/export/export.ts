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
import { appendFile, readdir, stat } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { IndexRowSchema, type IndexRow } from '../../model/artifacts.js';
import { sanitizeSegment, timestampSlug } from '../../model/path-segments.js';
import { RunAggregator } from './aggregate.js';
import { AtomicDir } from './atomic-dir.js';
import { DuplicatePolicySchema, readRowsPass, spilledRows, type DuplicatePolicy, type Spilled } from './export-pass.js';
import { identityFieldsOf, localIdentityKey, projectionIdentity } from './projection-identity.js';
import { InputError } from '../../errors/input-error.js';
import { LAYOUTS, layoutWriter, type LayoutName, type LayoutWriter } from './output-layouts.js';
import { DEFAULT_THRESHOLD } from './normalize.js';
import { projectionBundle, projectionEntry } from './projection-bundle.js';
import { json } from './row-files.js';
import { resolveSource, type ResolvedSource } from './source.js';
import { flag, fnOf, parseOptions, PathsCwdField } from '../../options/verb-options.js';
import * as z from 'zod';
import { checkOutputDir } from '../../util/output-target.js';
import { hostileEntries, hostileEntryMessage, unsafeRunMessage } from '../read/run-files.js';
import { readRegularText } from '../../util/safe-open.js';
import { absentAs, isAbsent } from '../../errors/errors.js';
import { fileShown, ShownAsField } from '../../util/run-shown.js';

export type { DuplicatePolicy } from './export-pass.js';

/** `exportRun`'s options (the `export` command's flags come from the same fields, in this order). */
export const ExportOptionsSchema = z.strictObject({
  /** A results file or run directory to derive from. */
  source: z.string(),
  out: z
    .string()
    .optional()
    .meta(flag('--out <dir>', "Output directory (default: .agentv/results/<run_id>, where AgentV lists runs; the run id is the earliest row's timestamp)")),
  layout: z
    .enum(LAYOUTS as [LayoutName, ...LayoutName[]])
    .default('bundle')
    .meta(
      flag('--layout <layout>', 'bundle (run workspace) | companion (grading/, timing.json, benchmark.json) | skill-creator (iteration-1/eval-N/...)', {
        showDefault: true,
      }),
    ),
  experiment: z.string().optional().meta(flag('--experiment <name>', 'Experiment (result group) name; default: the input file name')),
  duplicatePolicy: DuplicatePolicySchema.default('update').meta(
    flag('--duplicate-policy <policy>', 'When a result identity is already present: update | skip | error', { showDefault: true }),
  ),
  projectionBundle: z.boolean().default(false).meta(flag('--projection-bundle', 'Also write projection_bundle.json built from the emitted index')),
  dryRun: z.boolean().default(false).meta(flag('--dry-run', 'Print the projection bundle JSON and write nothing')),
  includeRawContent: z
    .boolean()
    .default(false)
    .meta(flag('--include-raw-content', 'Include raw prompt/output payloads (transcript-raw.jsonl, bundle raw fields); excluded by default')),
  skipInvalid: z.boolean().default(false).meta(flag('--skip-invalid', 'Skip malformed lines with a warning instead of failing')),
  threshold: z
    .number()
    .default(DEFAULT_THRESHOLD)
    .meta(flag('--threshold <score>', 'Score at or above which a result passes when the row has no verdict', { showDefault: true })),
  cwd: PathsCwdField,
  /** The longest results line read (default: the reader's own limit). */
  maxLineBytes: z.number().int().positive().optional(),
  /** Copy files the runner wrote into a re-derived workspace (default true); readers that only need our bundle skip it. */
  carryRunnerFiles: z.boolean().default(true),
  /** With dryRun: return the derived index rows (for commands that read results files in memory). */
  collectIndexRows: z.boolean().default(false),
  /**
   * The name the source is known by, when it is a copy (a published run pulled into a scratch
   * directory: its run id): errors and warnings name it and its files so (util/run-shown.ts). Default: the path as given.
   */
  shownAs: ShownAsField,
  onWarning: fnOf<(message: string) => void>().default(() => () => {}),
  onProgress: fnOf<(bytesRead: number, totalBytes: number) => void>().optional(),
});

/** What a caller passes to `exportRun`. */
export type ExportOptions = z.input<typeof ExportOptionsSchema>;
/** `exportRun`'s options as its door parsed them (every default applied). */
type ExportParsed = z.output<typeof ExportOptionsSchema>;

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
  /**
   * A results file whose rows name files by path: per field kind (`answer_path`, `transcript_path`,
   * …), how many rows named a file that could not be read (absent, absolute, or out of the run
   * beside the file); each kind is also one warning. Empty when every named file was read.
   */
  unresolvedPaths: Record<string, number>;
}

function experimentOf(opts: ExportParsed, src: ResolvedSource): string {
  if (opts.experiment) return sanitizeSegment(opts.experiment);
  if (src.recordedExperiment) return sanitizeSegment(src.recordedExperiment);
  return src.defaultExperiment;
}

/**
 * Run ids as AgentV forms them: the run directory's name, an ISO timestamp slug
 * (`2026-03-14T10-32-00-000Z`, here the earliest row's), with the experiment kept apart in the
 * summary (`experiment`, `metadata.experiment`). A workspace keeps the id it recorded.
 */
function runIdOf(opts: ExportParsed, src: ResolvedSource, earliest: string | null, contentHash: string): string {
  if (src.kind === 'workspace') {
    if (!opts.experiment && src.recordedRunId) return src.recordedRunId;
    return sanitizeSegment(src.dir!.split('/').pop() ?? 'run');
  }
  const slug = earliest ? timestampSlug(earliest) : null;
  return slug ?? `undated-${contentHash.slice(0, 12)}`;
}

/**
 * Where the run will land: an explicit --out, or .agentv/results/<run_id> where AgentV lists runs
 * (the name is then only known once the run id is). A workspace of ours (or of the attempt-N
 * layout) is re-derived in place, as before.
 */
function destinationOf(opts: ExportParsed, src: ResolvedSource, cwd: string): { parent: string; name: string | null } {
  if (opts.out) return { parent: resolve(cwd, opts.out, '..'), name: resolve(cwd, opts.out).split('/').pop()! };
  if (src.kind === 'workspace' && src.layout === 'bundle') return { parent: resolve(src.dir!, '..'), name: src.dir!.split('/').pop()! };
  return { parent: resolve(cwd, '.agentv/results'), name: null };
}

/** Derive a run bundle (index.jsonl, per-test files, summary.json) from AgentV's output, as `agentv-results export` does. */
export async function exportRun(options: ExportOptions): Promise<ExportResult> {
  const opts = parseOptions('exportRun', ExportOptionsSchema, options);
  const { cwd, threshold } = opts;
  const policy = opts.duplicatePolicy;
  const layout = layoutWriter(opts.layout);
  const includeRaw = opts.includeRawContent;
  const src = await resolveSource(opts.source, cwd, opts.shownAs);
  const experiment = experimentOf(opts, src);
  // A file of the source as messages name it: from where the user stands, or inside the run named as its user knows it.
  const shownFile = (file: string) => (opts.shownAs === undefined ? relative(cwd, file) || file : fileShown(file, { runDir: src.dir, shownAs: opts.shownAs }));
  const displayName = shownFile(src.file);
  // A run folder holding a link out of it, a pipe or a device is refused before anything is read
  // (one line per entry); a row path that escapes is refused where the row is read.
  const hostile = src.dir === null ? [] : hostileEntries(src.dir);
  if (hostile.length > 0) throw new InputError(unsafeRunMessage(shownFile(src.dir!), hostile.map(hostileEntryMessage)));
  const dest = destinationOf(opts, src, cwd);
  // The output-target rule: a file, device, FIFO, link or foreign directory there is refused up front.
  if (!opts.dryRun && dest.name !== null) await checkOutputDir(join(dest.parent, dest.name), { command: 'export' });
  const dir = opts.dryRun ? null : await AtomicDir.create(dest.parent, { hint: dest.name ?? 'run' });

  try {
    const pass = await readRowsPass({
      src,
      displayName,
      layout,
      policy,
      threshold,
      includeRaw,
      skipInvalid: opts.skipInvalid,
      maxLineBytes: opts.maxLineBytes,
      dir,
      warn: opts.onWarning,
      onProgress: opts.onProgress,
    });
    pass.unresolvedPaths = Object.fromEntries(Object.entries(pass.unresolvedPaths).sort(([a], [b]) => (a < b ? -1 : 1)));
    for (const [field, n] of Object.entries(pass.unresolvedPaths))
      opts.onWarning(
        `${field}: ${n} row${n === 1 ? '' : 's'} name${n === 1 ? 's' : ''} a file that could not be read (looked under ${opts.shownAs === undefined || src.pathBase === undefined ? relative(cwd, src.pathBase ?? '') || '.' : shownFile(src.pathBase)}); ${n === 1 ? 'its' : 'their'} content is not in the export`,
      );
    const runId = runIdOf(opts, src, pass.earliest, pass.contentHash);
    const finalName = dest.name ?? runId.split('/').pop()!;
    const finalPath = join(dest.parent, finalName);
    const shown = relative(cwd, finalPath) || finalPath;
    if (!opts.dryRun && dest.name === null) await checkOutputDir(finalPath, { command: 'export' });
    if (!opts.dryRun && (src.layout === 'agentv' || src.layout === 'agentv-stable') && resolve(finalPath) === resolve(src.dir!)) {
      throw new InputError(
        `${shown} is AgentV's own run directory: every command reads it as it is, and export never rewrites it — pass --out <dir> to write our bundle elsewhere`,
      );
    }

    // Second pass over the spill: the last version of each identity wins, at its position.
    const lastPos = new Map<string, number>();
    let pos = 0;
    for await (const s of spilledRows(pass)) lastPos.set(s.key, pos++);
    const keep = new Set<string>(lastPos.keys());
    // Re-deriving a workspace in place: its index is the source itself, not a run to merge with.
    const inPlace = src.kind === 'workspace' && resolve(finalPath) === resolve(src.dir!);
    const existing = dir && layout.name === 'bundle' && !inPlace ? await readExistingIndex(finalPath) : null;
    const carried = existing
      ? await carryExistingRows({ existing, runId, experiment, finalPath, shown, policy, keep, duplicates: pass.duplicates, dir: dir! })
      : [];

    const meta = {
      run_id: runId,
      experiment,
      timestamp: pass.earliest,
      eval_file: pass.evalFile ?? src.recordedEvalFile ?? basename(src.file),
      threshold,
      // Only the policy: counts depend on what was already on disk, and the same input must give the same bytes.
      export_metadata: { duplicate_policy: policy },
    };
    const wantEntries = (opts.dryRun && !opts.collectIndexRows) || opts.projectionBundle;
    const index = new IndexWriter(layout, dir, { wantEntries, includeRaw, collect: opts.collectIndexRows && !dir });
    await index.start();
    for (const row of carried) await index.emit(row);
    pos = 0;
    for await (const s of spilledRows(pass)) {
      const mine = lastPos.get(s.key) === pos++;
      if (!mine || !keep.has(s.key)) continue;
      await index.emit({ run_id: runId, experiment, ...s.index, projection_identity: projectionIdentity(runId, s.index) }, s.raw, s.slot);
    }
    await index.finish();
    if (index.rows === 0 && pass.skippedInvalid === 0) {
      throw new InputError(`${displayName}: no result rows — the file is empty; nothing to export`, displayName);
    }

    const summary = index.agg.summary(meta);
    const warnings: string[] = [];
    if (pass.earliest === null && src.kind === 'results-file') warnings.push('no row carries a timestamp: the run id uses a content hash instead');
    const status = opts.dryRun ? 'planned_export' : 'emitted';
    const bundle = wantEntries ? projectionBundle(meta, index.entries, { includeRawContent: includeRaw, status, warnings }) : undefined;
    const base = {
      runId,
      experiment,
      layout: layout.name,
      rows: index.rows,
      skippedInvalid: pass.skippedInvalid,
      duplicates: pass.duplicates,
      summary,
      bundle,
      unresolvedPaths: pass.unresolvedPaths,
    };

    if (!dir) return { ...base, outDir: null, indexRows: index.collected };
    if (layout.runFiles.summary) await dir.write(layout.runFiles.summary, json(summary));
    await dir.write(layout.runFiles.benchmark, json(index.agg.benchmark(meta)));
    if (layout.runFiles.timing) await dir.write(layout.runFiles.timing, json(index.agg.timing()));
    if (bundle) await dir.write('projection_bundle.json', json(bundle));
    await dir.removeDir('.pending-index.jsonl');
    if (src.kind === 'workspace' && layout.name === 'bundle' && opts.carryRunnerFiles) await carryRunnerFiles(src.dir!, dir);
    return { ...base, outDir: await dir.commit(finalName) };
  } catch (err) {
    await dir?.abort();
    throw err;
  }
}

/**
 * Exporting into a directory that already holds this run: rows of the existing index that this
 * input does not rewrite are carried over (with their files), per the duplicate policy; a
 * different run or experiment there is refused. Updates `keep` and `duplicates` in place.
 */
async function carryExistingRows(o: {
  existing: { runId: string; experiment: string; rows: IndexRow[] };
  runId: string;
  experiment: string;
  finalPath: string;
  shown: string;
  policy: DuplicatePolicy;
  keep: Set<string>;
  duplicates: { updated: number; skipped: number };
  dir: AtomicDir;
}): Promise<IndexRow[]> {
  const { existing, runId, experiment, shown } = o;
  if (existing.runId !== runId) {
    throw new InputError(`${shown} already holds run ${existing.runId}; this input is run ${runId} — choose another --out or delete that run first`);
  }
  // Run ids are timestamps: two experiments can start in the same millisecond; never mix them.
  if (existing.experiment !== experiment) {
    throw new InputError(
      `${shown} already holds run ${runId} of experiment ${existing.experiment}; this input is experiment ${experiment} — choose another --out`,
    );
  }
  const carried: IndexRow[] = [];
  for (const row of existing.rows) {
    const key = createHash('sha1')
      .update(localIdentityKey(identityFieldsOf(row.projection_identity)))
      .digest('base64');
    if (!o.keep.has(key)) {
      carried.push(row);
      continue;
    }
    if (o.policy === 'error') {
      throw new InputError(
        `${shown}: ${row.test_id} (target ${row.target}, attempt ${row.attempt}) is already exported there — pass --duplicate-policy update to rewrite it or skip to keep it`,
      );
    }
    if (o.policy === 'skip') {
      o.keep.delete(key);
      o.duplicates.skipped++;
      carried.push(row);
    } else {
      o.duplicates.updated++;
    }
  }
  for (const row of carried) {
    await o.dir.removeDir(row.result_dir);
    await o.dir.copyIn(join(o.finalPath, row.result_dir), row.result_dir);
  }
  return carried;
}

/** Folds the final index rows: aggregates, the index file (flushed every MiB), bundle entries. */
class IndexWriter {
  readonly agg = new RunAggregator();
  readonly entries: unknown[] = [];
  readonly collected: IndexRow[] | undefined;
  rows = 0;
  private text = '';

  constructor(
    private readonly layout: LayoutWriter,
    private readonly dir: AtomicDir | null,
    private readonly o: { wantEntries: boolean; includeRaw: boolean; collect: boolean },
  ) {
    this.collected = o.collect ? [] : undefined;
  }

  async start(): Promise<void> {
    if (this.dir && this.layout.runFiles.index) await this.dir.write(this.layout.runFiles.index, '');
    await this.dir?.flush();
  }

  async emit(indexRow: IndexRow, raw?: Spilled['raw'], slot?: Spilled['slot']): Promise<void> {
    this.agg.add(indexRow, slot);
    this.collected?.push(indexRow);
    this.rows++;
    if (this.layout.runFiles.index) this.text += JSON.stringify(indexRow) + '\n';
    if (this.o.wantEntries) this.entries.push(projectionEntry(indexRow, { includeRawContent: this.o.includeRaw, raw }));
    if (this.text.length > 1 << 20) await this.flush();
  }

  async finish(): Promise<void> {
    if (this.text) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.dir && this.layout.runFiles.index) await appendFile(this.dir.path(this.layout.runFiles.index), this.text);
    this.text = '';
  }
}

async function readExistingIndex(runDir: string): Promise<{ runId: string; experiment: string; rows: IndexRow[] } | null> {
  let text: string;
  try {
    text = await readRegularText(join(runDir, 'index.jsonl'), { kind: 'run-file' });
  } catch (err) {
    // absent: no index, nothing to carry; anything else propagates
    return absentAs(null)(err);
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
        } catch (err) {
          // absent: not written yet, so copied in; anything else propagates
          if (!isAbsent(err)) throw err;
          await dir.copyIn(join(sourceDir, childRel), childRel);
        }
      }
    }
  };
  await walk('');
}
