/**
 * Reading a run back: a run workspace directory, its index.jsonl, or (for commands that accept
 * one) a plain results JSONL file, which is derived in memory without writing anything.
 *
 * Sidecar paths come from the manifest, i.e. from data: every one is checked to stay inside the
 * run directory before it is opened.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { IndexRowSchema, type IndexRow } from '../../model/artifacts.js';
import { exportRun } from '../export/export.js';
import { runManifestOf } from '../export/source.js';
import { unsafeRunMessage, readRunFileSync, realRunDir, missingManifestHint, RunDirFiles, type RunFileRead, safeRelativePath } from './run-files.js';
import { runSafetyLine, runSafetyProblems } from './run-safety.js';
import { absentAs } from '../../errors/errors.js';
import { jsonlLines, jsonlObjects } from '../../util/jsonl-objects.js';
import { readRegularText } from '../../util/safe-open.js';
import * as z from 'zod';
import { parseArgs } from '../../options/verb-options.js';
import { RunReadError } from '../../errors/read-errors.js';
import { runShown, ShownAsField } from '../../util/run-shown.js';

export interface LoadedRun {
  /**
   * The run workspace directory whose index.jsonl and sidecars are read; null when the run was
   * derived in memory from a results file. For a run in another layout (AgentV 5's
   * `.internal/index.jsonl`, AgentV 4.42's `runs/<experiment>/<timestamp>/`, pipeline bench, Era-A) this is a derived copy in a temporary
   * directory, removed when the process exits: `sourceDir` is what the user named.
   */
  dir: string | null;
  /** The directory the user pointed at (equals `dir` for one of our bundles). */
  sourceDir: string | null;
  /** `bundle`: our index.jsonl; `agentv`: read from another layout through a derived copy; `results-file`: derived in memory. */
  layout: 'bundle' | 'agentv' | 'results-file';
  indexPath: string;
  runId: string;
  experiment: string;
  rows: IndexRow[];
  summary: Record<string, unknown> | null;
  /** Manifest problems found while loading (validate reports them; other commands warn). */
  problems: string[];
  /** The same problems, structured (file relative to the run directory, 1-based line when known). */
  issues: RunIssue[];
  /** 1-based index.jsonl line of each entry of `rows` (empty for a run derived in memory). */
  rowLines: number[];
}

export interface RunIssue {
  file: string;
  line?: number;
  message: string;
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (err) {
    // absent: not a directory; anything else propagates
    return absentAs(false)(err);
  }
}

/** Resolve `<run-dir>`, `<run-dir>/index.jsonl` or AgentV's `<run-dir>/.internal/index.jsonl` to the run directory, or null. */
export async function workspaceDirOf(path: string, cwd = process.cwd()): Promise<string | null> {
  const abs = resolve(cwd, path);
  if (await isDir(abs)) return abs;
  if (basename(abs) === 'index.jsonl') return basename(dirname(abs)) === '.internal' ? dirname(dirname(abs)) : dirname(abs);
  return null;
}

/**
 * True when the run directory must be read through a derived copy: it has no root index.jsonl
 * (AgentV 5, today's pipeline bench), its index is AgentV 4.42's, or its root index.jsonl holds no row of ours (AgentV's results docs'
 * plain result rows, Era-A and older pipeline bench manifests).
 */
export async function needsDerivation(dir: string): Promise<boolean> {
  const manifest = await runManifestOf(dir);
  if (!manifest) return false;
  if (manifest.layout !== 'bundle') return true;
  let text: string;
  try {
    text = await readRegularText(manifest.file, { kind: 'run-file' });
  } catch (err) {
    // absent: no manifest, not this layout; anything else propagates
    return absentAs(false)(err);
  }
  return foreignIndexText(text);
}

let scratchRoot: string | null = null;
async function scratchDir(): Promise<string> {
  if (!scratchRoot) {
    scratchRoot = await mkdtemp(join(tmpdir(), 'agentv-results-read-'));
    const root = scratchRoot;
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return mkdtemp(join(scratchRoot, 'run-'));
}

export interface DeriveCopyOptions {
  cwd?: string;
  experiment?: string;
  /** Keep the files the runner wrote beside ours (publish wants them; readers do not). */
  carryRunnerFiles?: boolean;
  /** Skip rows that are not results (reported through onWarning) instead of failing. */
  skipInvalid?: boolean;
  /** The name the run is known by when `dir` is a copy (a published run's id): the derivation's errors name it so. */
  shownAs?: string;
  onWarning?: (message: string) => void;
}

/**
 * Derive a run of another layout into a bundle of ours in a scratch directory (removed when the
 * process exits) and return that directory. The user's run directory is never written: AgentV
 * keeps reading it as it is.
 */
export async function deriveScratchCopy(dir: string, opts: DeriveCopyOptions = {}): Promise<string> {
  const out = join(await scratchDir(), basename(dir) || 'run');
  const derived = await exportRun({
    source: dir,
    out,
    cwd: opts.cwd,
    experiment: opts.experiment,
    skipInvalid: opts.skipInvalid,
    carryRunnerFiles: opts.carryRunnerFiles ?? false,
    shownAs: opts.shownAs,
    onWarning: opts.onWarning,
  });
  return derived.outDir!;
}

/**
 * Derive a run of another layout into a scratch bundle and read that; rows the source could not give
 * are reported, not fatal. `manifest`: the source's manifest when the caller has found it already.
 */
export async function loadDerived(
  dir: string,
  cwd: string,
  o: { experiment?: string; carryRunnerFiles?: boolean; manifest?: { file: string } | null; shownAs?: string } = {},
): Promise<LoadedRun> {
  const warnings: string[] = [];
  const manifest = o.manifest === undefined ? await runManifestOf(dir) : o.manifest;
  const copy = await deriveScratchCopy(dir, {
    cwd,
    experiment: o.experiment,
    carryRunnerFiles: o.carryRunnerFiles,
    skipInvalid: true,
    shownAs: o.shownAs,
    onWarning: (w) => warnings.push(w),
  });
  const loaded = await loadRun(copy, { cwd, shownAs: o.shownAs });
  const file = manifest ? relative(dir, manifest.file) : 'index.jsonl';
  const issues: RunIssue[] = warnings.map((w) => {
    const m = /:(\d+): skipped: (.*)$/.exec(w);
    return m ? { file, line: Number(m[1]), message: m[2]! } : { file, message: w };
  });
  return {
    ...loaded,
    sourceDir: dir,
    layout: 'agentv',
    issues: [...issues, ...loaded.issues],
    problems: [...issues.map((p) => `${p.file}${p.line === undefined ? '' : `:${p.line}`}: ${p.message}`), ...loaded.problems],
  };
}

/** The options of `loadRun` (its second argument). */
export const LoadRunOptionsSchema = z.strictObject({
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: z.string().default(() => process.cwd()),
  /** Accept a plain results JSONL file (derived in memory). */
  allowResultsFile: z.boolean().default(false),
  /**
   * The name the run is known by, when it is read from a copy (a published run pulled into a scratch
   * directory: its run id): the errors name it so (util/run-shown.ts). Default: the path as given.
   */
  shownAs: ShownAsField,
});
export type LoadRunOptions = z.input<typeof LoadRunOptionsSchema>;

/** loadRun's arguments: the run (a directory of any layout, its manifest, or a results file) and the options. */
const LoadRunArgs = { path: z.string(), options: LoadRunOptionsSchema.prefault({}) };

/** Read a run directory of any AgentV layout (or, with `allowResultsFile`, a results file) into its rows, summary and problems. */
export async function loadRun(path: string, options?: LoadRunOptions): Promise<LoadedRun> {
  const args = parseArgs('loadRun', LoadRunArgs, options === undefined ? [path] : [path, options]);
  const opts = args.options;
  const { cwd } = opts;
  const name = runShown(path, opts.shownAs);
  const dir = await workspaceDirOf(path, cwd);
  if (dir === null) {
    if (!opts.allowResultsFile) {
      throw new RunReadError(
        `${name}: not a run workspace — pass a run directory or its index.jsonl (export a results file first with \`agentv-results export\`)`,
        { data: { path: name } },
      );
    }
    const derived = await exportRun({ source: path, cwd, dryRun: true, collectIndexRows: true, shownAs: opts.shownAs });
    return {
      dir: null,
      sourceDir: null,
      layout: 'results-file',
      indexPath: resolve(cwd, path),
      runId: derived.runId,
      experiment: derived.experiment,
      rows: derived.indexRows ?? [],
      summary: derived.summary,
      problems: [],
      issues: [],
      rowLines: [],
    };
  }
  if (await needsDerivation(dir)) return loadDerived(dir, cwd, { shownAs: opts.shownAs });
  // The manifest itself may be a link out of the run (a downloaded workspace): never read through one.
  return readBundle(dir, name, (rel) => readRunFileSync(dir, rel, realRunDir(dir)));
}

/**
 * A bundle of ours that `exportRun` has just written, read as `loadRun` reads it (export writes our
 * rows, so there is nothing to derive): for a caller inside the package that exported it (publish).
 */
export function readExportedBundle(dir: string): LoadedRun {
  const files = new RunDirFiles(dir, realRunDir(dir));
  return readBundle(dir, dir, (rel) => files.read(rel));
}

/**
 * True when a root index.jsonl's text holds no row of ours but plain result rows (AgentV's results
 * docs, Era-A, older pipeline bench manifests): such a run is read through a derived copy.
 */
export function foreignIndexText(text: string): boolean {
  let sawObject = false;
  for (const value of jsonlObjects(text)) {
    if (IndexRowSchema.safeParse(value).success) return false;
    if (typeof value.test_id === 'string') sawObject = true;
  }
  return sawObject;
}

/**
 * One of our bundles, read through `read` (the run-path check, or a run handle's walk of the
 * folder: runs/read/run-handle.ts): its index.jsonl and summary.json. `name`: the run as errors
 * name it (the path as given, or the name a run read from a copy is known by).
 */
export function readBundle(dir: string, name: string, read: (rel: string) => RunFileRead): LoadedRun {
  const indexPath = join(dir, 'index.jsonl');
  const indexAt = read('index.jsonl');
  if (indexAt.kind === 'bad') throw new RunReadError(`${name}: refusing to read index.jsonl: ${indexAt.message}`, { data: { path: name } });
  if (indexAt.kind === 'missing')
    throw new RunReadError(
      `${name}: not a run workspace (neither index.jsonl nor .internal/index.jsonl${missingManifestHint(dir)}) — pass a run directory such as .agentv/results/<run_id>, or its index.jsonl`,
      { data: { path: name } },
    );
  return bundleOf(dir, indexPath, indexAt.data.toString('utf8'), read);
}

/** The rows and summary of a bundle whose index text has been read. */
export function bundleOf(dir: string, indexPath: string, text: string, read: (rel: string) => RunFileRead): LoadedRun {
  const rows: IndexRow[] = [];
  const rowLines: number[] = [];
  const issues: RunIssue[] = [];
  for (const l of jsonlLines(text)) {
    if (l.error !== undefined) {
      issues.push({ file: 'index.jsonl', line: l.line, message: `not valid JSON (${l.error})` });
      continue;
    }
    const parsed = IndexRowSchema.safeParse(l.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      issues.push({ file: 'index.jsonl', line: l.line, message: `${issue?.path.join('.') || 'row'}: ${issue?.message ?? 'invalid'}` });
      continue;
    }
    rows.push(parsed.data);
    rowLines.push(l.line);
  }
  let summary: Record<string, unknown> | null = null;
  const summaryAt = read('summary.json');
  if (summaryAt.kind === 'bad') issues.push({ file: 'summary.json', message: `not read: ${summaryAt.message}` });
  else if (summaryAt.kind === 'ok') {
    try {
      summary = JSON.parse(summaryAt.data.toString('utf8'));
    } catch (err) {
      issues.push({ file: 'summary.json', message: `not valid JSON (${(err as Error).message})` });
    }
  }
  const problems = issues.map((p) => `${p.file}${p.line === undefined ? '' : `:${p.line}`}: ${p.message}`);
  const runId = (typeof summary?.run_id === 'string' ? summary.run_id : rows[0]?.run_id) ?? `${basename(dirname(dir))}/${basename(dir)}`;
  const experiment = (typeof summary?.experiment === 'string' ? summary.experiment : rows[0]?.experiment) ?? basename(dirname(dir));
  return { dir, sourceDir: dir, layout: 'bundle', indexPath, runId, experiment, rows, summary, problems, issues, rowLines };
}

export type SidecarKind = 'result' | 'grading' | 'metrics' | 'timing' | 'transcript' | 'transcript_raw' | 'answer' | 'file_changes';

const SIDECAR_FIELD: Record<SidecarKind, keyof IndexRow> = {
  result: 'result_path',
  grading: 'grading_path',
  metrics: 'metrics_path',
  timing: 'timing_path',
  transcript: 'transcript_path',
  transcript_raw: 'transcript_raw_path',
  answer: 'answer_path',
  file_changes: 'file_changes_path',
};

/** The absolute path of a row's sidecar, or null when the row has none or its path is unsafe. */
export function sidecarPath(run: LoadedRun, row: IndexRow, kind: SidecarKind): string | null {
  const rel = row[SIDECAR_FIELD[kind]];
  if (run.dir === null || typeof rel !== 'string') return null;
  const safe = safeRelativePath(rel);
  return safe === null ? null : join(run.dir, safe);
}

/**
 * Read a sidecar as text (null when absent); JSON sidecars can be parsed by the caller.
 * Synchronous on purpose: commands read tens of thousands of small sidecars, and routing each
 * through libuv's thread pool cost several times the read itself (measured on `report`).
 */
export async function readSidecarText(run: LoadedRun, row: IndexRow, kind: SidecarKind): Promise<string | null> {
  const rel = row[SIDECAR_FIELD[kind]];
  if (run.dir === null || typeof rel !== 'string') return null;
  // A link out of the run, a pipe or a `..` path is skipped and reported, never read.
  const at = readRunFileSync(run.dir, rel, realRunDir(run.dir));
  if (at.kind === 'bad') noteIssue(run, { file: 'index.jsonl', message: `${String(SIDECAR_FIELD[kind])} ${at.message} — skipped` });
  return at.kind === 'ok' ? at.data.toString('utf8') : null;
}

/**
 * Read any file of the run by its path relative to the run directory (an attempt's answer under
 * `<result_dir>/sample-K/`): null when absent, and a link out of the run, a pipe or a `..` path is
 * skipped and reported, never read.
 */
export function readRunRelText(run: LoadedRun, rel: string): string | null {
  if (run.dir === null) return null;
  const at = readRunFileSync(run.dir, rel, realRunDir(run.dir));
  if (at.kind === 'bad') noteIssue(run, { file: 'index.jsonl', message: `${at.message} — skipped` });
  return at.kind === 'ok' ? at.data.toString('utf8') : null;
}

/** Record a problem found after loading (once): commands print `run.problems` as warnings. */
function noteIssue(run: LoadedRun, issue: RunIssue): void {
  const text = `${issue.file}${issue.line === undefined ? '' : `:${issue.line}`}: ${issue.message}`;
  if (run.problems.includes(text)) return;
  run.issues.push(issue);
  run.problems.push(text);
}

export async function readSidecarJson<T = Record<string, unknown>>(run: LoadedRun, row: IndexRow, kind: SidecarKind): Promise<T | null> {
  const text = await readSidecarText(run, row, kind);
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    // unparsable (JSON.parse throws only a SyntaxError): the caller reports it as not valid JSON
    return null;
  }
}

/**
 * `report` and `show` refuse a run the one safety check rejects (runs/read/run-safety.ts: what publish
 * and validate refuse too): a link, pipe or device anywhere in its folder, a row path or a result
 * file's pointer out of the run, an unsafe run id. One line per problem, exit 2; with `skipUnsafe`
 * they are warnings instead and the command reads the rest (an unsafe file is never opened, never
 * shown as the run's content). `except`: run-relative paths that are the command's own output.
 */
export async function unsafeRunProblems(run: LoadedRun, except: readonly string[] = []): Promise<string[]> {
  if (run.dir === null) return [];
  return runSafetyProblems(run.dir, run.rows as unknown as Record<string, unknown>[], run.rowLines, {
    walkRoot: run.sourceDir ?? run.dir,
    except,
  }).map(runSafetyLine);
}

/** `name`: the run as the error names it (the path as given, or the name a run read from a copy is known by). */
export async function refuseUnsafeRun(run: LoadedRun, name: string, skipUnsafe: boolean, except: readonly string[] = []): Promise<string[]> {
  const problems = await unsafeRunProblems(run, except);
  if (problems.length === 0 || skipUnsafe) return problems.map((p) => `unsafe, not read: ${p}`);
  throw new RunReadError(unsafeRunMessage(name, problems), { data: { path: name } });
}
