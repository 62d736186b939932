/**
 * `combine`: several partial run workspaces (CI shards, a re-run of the failures) -> one NEW run
 * workspace, written atomically.
 *
 * - Experiment: the sources' common experiment, or `experiment` when given. Sources that span
 *   experiments without one are refused (AgentV's results docs: never invent a mixed-experiment label).
 * - Duplicates, keyed by case (see caseKey): `error` (default) names both sources; `latest` keeps
 *   the row with the later timestamp, ties going to the source given later.
 * - run_id: `<timestampSlug(earliest kept row)>` as AgentV forms run ids (the experiment is in
 *   the summary), derived from the data and never
 *   from the destination (AgentV's results docs' rule for export), so combining the same shards anywhere
 *   yields the same run_id and projection ids. Shards of one run therefore combine into that
 *   run's id. Without timestamps: `<experiment>/undated-<hash of the kept cases>`.
 * - Each kept row's attempt directory is copied as is; rows get the new run_id, experiment and
 *   projection identity; summary.json, benchmark.json and timing.json are recomputed with the
 *   export aggregator. Artifact pointers are kept unchanged: they locate bytes that already live
 *   on the artifacts branch under the source run's key.
 */
import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { IndexRow } from '../model/artifacts.js';
import { ROW_PATH_FIELDS, sanitizeSegment, timestampSlug } from '../model/path-segments.js';
import { safeRelativePath } from './read/run-files.js';
import { RunAggregator } from './export/aggregate.js';
import { AtomicDir } from './export/atomic-dir.js';
import { InputError } from '../errors/input-error.js';
import { projectionIdentity } from './export/projection-identity.js';
import { DEFAULT_THRESHOLD } from './export/normalize.js';
import { json } from './export/row-files.js';
import { caseKey, describeCase, distinct } from './read/case-keys.js';
import { loadRun, type LoadedRun } from './read/run-reader.js';
import { looksLikeRun, runDirsWithin } from './read/find-runs.js';
import { checkOutputDir } from '../util/output-target.js';
import { readOptionalJson } from '../util/safe-open.js';
import { absentAs } from '../errors/errors.js';
import * as z from 'zod';
import { flag, parseOptions, PathsCwdField } from '../options/verb-options.js';
import { runShown } from '../util/run-shown.js';

/** What combine does with the same case in two sources. */
/** What combine does with a test two runs both hold: refuse, or keep the latest. */
export const OnDuplicateSchema = z.enum(['error', 'latest']);
export type OnDuplicate = z.infer<typeof OnDuplicateSchema>;

/** The options of `combineRuns` (the `combine` command's flags come from the same fields, in this order). */
export const CombineOptionsSchema = z.strictObject({
  /**
   * Run workspace directories or their index.jsonl files, in command-line order. A run read from a
   * copy (a published run pulled into a scratch directory) is given with the name it is known by,
   * `{ path, shownAs }` (its run id): errors and the result's sources name it so.
   */
  sources: z.array(z.union([z.string(), z.strictObject({ path: z.string(), shownAs: z.string() })])),
  /** Destination; must not exist or be empty. Default: `.agentv/results/<run_id>`. */
  out: z.string().optional().meta(flag('--out <dir>', 'New run directory; must not exist or be empty (default: .agentv/results/<run_id>)')),
  experiment: z.string().optional().meta(flag('--experiment <name>', 'Experiment label of the combined run; required when the sources span experiments')),
  onDuplicate: OnDuplicateSchema.default('error').meta(
    flag(
      '--on-duplicate <policy>',
      'Same case (test_id, target, attempt, variant) in two sources: error | latest (the later timestamp wins; ties: the later source)',
      { showDefault: true },
    ),
  ),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
});
export type CombineOptions = z.input<typeof CombineOptionsSchema>;

export interface CombineSourceReport {
  path: string;
  run_id: string;
  experiment: string;
  rows: number;
  kept: number;
}

export interface CombineResult {
  run_id: string;
  experiment: string;
  out_dir: string;
  rows: number;
  duplicates_replaced: number;
  sources: CombineSourceReport[];
  summary: Record<string, unknown>;
}

interface Kept {
  row: IndexRow;
  source: number;
  line: number;
}

const timeOf = (row: IndexRow): number => {
  const t = row.timestamp ? Date.parse(row.timestamp) : NaN;
  // An undated row loses to any dated one under `latest`.
  return Number.isNaN(t) ? -Infinity : t;
};

/**
 * The sources as run workspaces: a directory that is not one but holds runs (CI shards as they
 * were downloaded, of either AgentV line: AgentV 5's `<run_id>/`, AgentV 4.42's
 * `runs/<experiment>/<timestamp>/`; runs/read/find-runs.ts `runDirsWithin`) stands for the runs in
 * it, in path order; anything else is passed on as given (and refused by the reader with its reason).
 */
export async function expandSources(paths: string[], cwd: string): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    const abs = resolve(cwd, path);
    // absent: passed on as given, for the reader to name
    const isDir = (await stat(abs).catch(absentAs(null)))?.isDirectory() === true;
    const inside = isDir && !(await looksLikeRun(abs)) ? await runDirsWithin(abs) : [];
    if (inside.length === 0) out.push(path);
    else for (const dir of inside) out.push(join(path, relative(abs, dir)));
  }
  return out;
}

/** A source to read: its path, and the name messages give it (the path as given, or the name a run read from a copy is known by). */
interface Source {
  path: string;
  shownAs?: string;
}

async function loadSources(sources: Source[], cwd: string): Promise<LoadedRun[]> {
  if (sources.length === 0) throw new InputError('combine needs at least one source run workspace');
  const runs: LoadedRun[] = [];
  const seen = new Map<string, string>();
  for (const source of sources) {
    const run = await loadRun(source.path, { cwd, shownAs: source.shownAs });
    const path = runShown(source.path, source.shownAs);
    const real = await realpath(run.dir!);
    const twice = seen.get(real);
    if (twice !== undefined) throw new InputError(`${path}: the same run workspace as ${twice} — pass each source once`);
    seen.set(real, path);
    const bad = run.issues.find((p) => p.file === 'index.jsonl');
    if (bad)
      throw new InputError(
        `${path}: index.jsonl:${bad.line ?? '?'}: ${bad.message} — fix the source (see \`agentv-results validate\`) before combining; combining it would drop rows silently`,
      );
    if (run.rows.length === 0) throw new InputError(`${path}: index.jsonl has no rows — nothing to combine`);
    runs.push(run);
  }
  return runs;
}

function chooseExperiment(runs: LoadedRun[], paths: string[], requested: string | undefined): string {
  if (requested !== undefined) {
    if (requested.trim() === '') throw new InputError('--experiment must not be empty');
    return sanitizeSegment(requested);
  }
  const byExperiment = new Map<string, string[]>();
  runs.forEach((run, i) => {
    for (const e of distinct([run.experiment, ...run.rows.map((r) => r.experiment)])) byExperiment.set(e, [...(byExperiment.get(e) ?? []), paths[i]!]);
  });
  if (byExperiment.size === 1) return [...byExperiment.keys()][0]!;
  const listing = [...byExperiment].map(([e, srcs]) => `${e} (${distinct(srcs).join(', ')})`).join('; ');
  throw new InputError(
    `the sources span experiments ${listing} — pass --experiment <name> to label the combined run (a mixed-experiment label is never invented)`,
  );
}

function mergeRows(runs: LoadedRun[], paths: string[], policy: OnDuplicate): { kept: Kept[]; replaced: number } {
  const byKey = new Map<string, Kept>();
  let replaced = 0;
  runs.forEach((run, source) => {
    run.rows.forEach((row, i) => {
      const line = run.rowLines[i]!;
      const key = caseKey(row);
      const prev = byKey.get(key);
      if (!prev) {
        byKey.set(key, { row, source, line });
        return;
      }
      if (policy === 'error') {
        throw new InputError(
          `${describeCase(row)} is in both ${paths[prev.source]} (index.jsonl:${prev.line}) and ${paths[source]} (index.jsonl:${line}) — drop one, or pass --on-duplicate latest to keep the later one`,
        );
      }
      replaced++;
      // Later source wins ties: sources are visited in command-line order.
      if (timeOf(row) >= timeOf(prev.row)) byKey.set(key, { row, source, line });
    });
  });
  return { kept: [...byKey.values()], replaced };
}

function runIdFor(experiment: string, kept: Kept[]): { runId: string; earliest: string | null } {
  let earliest: IndexRow | null = null;
  for (const { row } of kept) if (timeOf(row) !== -Infinity && (earliest === null || timeOf(row) < timeOf(earliest))) earliest = row;
  const slug = earliest?.timestamp ? timestampSlug(earliest.timestamp) : null;
  void experiment;
  if (slug) return { runId: slug, earliest: new Date(timeOf(earliest!)).toISOString() };
  const hash = createHash('sha256')
    .update(
      kept
        .map((k) => caseKey(k.row))
        .sort()
        .join('\n'),
    )
    .digest('hex');
  return { runId: `undated-${hash.slice(0, 12)}`, earliest: null };
}

/** Every kept row gets its own attempt directory and only safe paths (they are copied from data). */
function checkPaths(kept: Kept[], paths: string[]): void {
  const owner = new Map<string, Kept>();
  for (const k of kept) {
    const where = `${paths[k.source]} (index.jsonl:${k.line})`;
    for (const field of ROW_PATH_FIELDS) {
      const value = (k.row as Record<string, unknown>)[field];
      if (typeof value === 'string' && safeRelativePath(value) === null)
        throw new InputError(`${where}: ${field} ${JSON.stringify(value)} escapes the run directory — refusing to copy it`);
    }
    const dir = safeRelativePath(k.row.result_dir)!;
    const other = owner.get(dir);
    if (other)
      throw new InputError(
        `${where}: result_dir ${dir} is also used by ${describeCase(other.row)} in ${paths[other.source]} — the sources were not written by one exporter`,
      );
    owner.set(dir, k);
  }
}

/** The output-target rule (util/output-target.ts); combine writes only a new run, so any non-empty directory is refused too. */
async function isEmptyOrAbsent(path: string): Promise<boolean> {
  const there = await checkOutputDir(path, { command: 'combine', foreign: 'caller' });
  return there === 'absent' || there === 'empty';
}

async function exists(path: string): Promise<boolean> {
  // absent: not there; anything else propagates
  return stat(path).then(() => true, absentAs(false));
}

/** The sources' benchmark eval_file labels, for the combined benchmark.json's metadata. */
async function evalFileOf(runs: LoadedRun[]): Promise<string> {
  const names: string[] = [];
  for (const run of runs) {
    // No benchmark.json in that source (or not JSON): nothing to carry. One that cannot be read is said.
    const doc = (await readOptionalJson(join(run.dir!, 'benchmark.json'), { kind: 'run-file' })) as { metadata?: { eval_file?: unknown } } | null | undefined;
    if (typeof doc?.metadata?.eval_file === 'string' && doc.metadata.eval_file) names.push(doc.metadata.eval_file);
  }
  return distinct(names).join(', ') || 'combined';
}

/** Combine several runs into one run directory, resolving duplicate tests by `onDuplicate`. */
export async function combineRuns(options: CombineOptions): Promise<CombineResult> {
  const opts = parseOptions('combineRuns', CombineOptionsSchema, options);
  const { cwd } = opts;
  const policy = opts.onDuplicate;
  // A run named by the caller (read from a copy) is a run as it is; a path may stand for the runs in it.
  const read: Source[] = [];
  for (const s of opts.sources) {
    if (typeof s !== 'string') read.push(s);
    else for (const path of await expandSources([s], cwd)) read.push({ path });
  }
  const sources = read.map((s) => runShown(s.path, s.shownAs));
  const runs = await loadSources(read, cwd);
  const experiment = chooseExperiment(runs, sources, opts.experiment);
  const { kept, replaced } = mergeRows(runs, sources, policy);
  checkPaths(kept, sources);
  const { runId, earliest } = runIdFor(experiment, kept);

  const out = resolve(cwd, opts.out ?? join('.agentv/results', runId));
  const shown = relative(cwd, out) || out;
  if (!(await isEmptyOrAbsent(out)))
    throw new InputError(`${shown} already exists and is not empty — combine writes a new run workspace; choose another --out or delete it first`);
  for (const [i, run] of runs.entries()) {
    const src = await realpath(run.dir!);
    // absent: a parent that does not exist yet compares as given; anything else propagates
    const parent = await realpath(dirname(out)).catch(absentAs(resolve(dirname(out))));
    const target = join(parent, basename(out));
    if (target === src || target.startsWith(src + sep))
      throw new InputError(`--out ${shown} is inside source ${sources[i]} — choose a directory outside the sources`);
  }

  const thresholds = runs.map((r) => r.summary?.threshold).filter((t): t is number => typeof t === 'number');
  const meta = { run_id: runId, experiment, timestamp: earliest, eval_file: await evalFileOf(runs), threshold: thresholds[0] ?? DEFAULT_THRESHOLD };
  const dir = await AtomicDir.create(dirname(out), { hint: basename(out) });
  try {
    const agg = new RunAggregator();
    let index = '';
    for (const { row, source } of kept) {
      const srcDir = runs[source]!.dir!;
      const resultDir = safeRelativePath(row.result_dir)!;
      if (await exists(join(srcDir, resultDir))) await dir.copyIn(join(srcDir, resultDir), resultDir);
      // Sidecars a foreign writer placed outside the attempt directory travel too.
      for (const field of ROW_PATH_FIELDS) {
        if (field === 'result_dir') continue;
        const rel = (row as Record<string, unknown>)[field];
        if (typeof rel !== 'string') continue;
        const safe = safeRelativePath(rel)!;
        if (safe.startsWith(resultDir + '/')) continue;
        if (await exists(join(srcDir, safe))) await dir.copyIn(join(srcDir, safe), safe);
      }
      const rewritten: IndexRow = {
        ...row,
        run_id: runId,
        experiment,
        projection_identity: projectionIdentity(runId, {
          suite: row.suite,
          eval_path: row.eval_path ?? null,
          test_id: row.test_id,
          target: row.target,
          source_target: row.source_target,
          attempt: row.attempt,
          variant: row.variant,
          envelope_id: row.envelope_id ?? null,
          trace_id: row.trace_id ?? null,
          root_span_id: row.root_span_id ?? null,
        }),
      };
      agg.add(rewritten);
      index += JSON.stringify(rewritten) + '\n';
    }
    const reports: CombineSourceReport[] = runs.map((run, i) => ({
      path: sources[i]!,
      run_id: run.runId,
      experiment: run.experiment,
      rows: run.rows.length,
      kept: kept.filter((k) => k.source === i).length,
    }));
    const summary = agg.summary(meta);
    // Provenance without local paths: artifacts stay deterministic and free of machine details.
    summary.combine_metadata = {
      sources: reports.map(({ run_id, experiment: e, rows, kept: k }) => ({ run_id, experiment: e, rows, kept: k })),
      on_duplicate: policy,
      duplicates_replaced: replaced,
    };
    await dir.write('index.jsonl', index);
    await dir.write('summary.json', json(summary));
    await dir.write('benchmark.json', json(agg.benchmark(meta)));
    await dir.write('timing.json', json(agg.timing()));
    await dir.flush();
    // Checked again right before the rename: commit replaces whatever is at `out`.
    if (!(await isEmptyOrAbsent(out))) throw new InputError(`${shown} was written to while combining — nothing was changed; choose another --out`);
    const outDir = await dir.commit(basename(out));
    return { run_id: runId, experiment, out_dir: outDir, rows: kept.length, duplicates_replaced: replaced, sources: reports, summary };
  } catch (err) {
    await dir.abort();
    throw err;
  }
}
