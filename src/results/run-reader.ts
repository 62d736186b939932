/**
 * Reading a run back: a run workspace directory, its index.jsonl, or (for commands that accept
 * one) a plain results JSONL file, which is derived in memory without writing anything.
 *
 * Sidecar paths come from the manifest, i.e. from data: every one is checked to stay inside the
 * run directory before it is opened.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { IndexRowSchema, type IndexRow } from '../model/artifacts.js';
import { safeRelativePath } from '../model/paths.js';
import { exportRun } from '../derive/export.js';
import { checkRunPathSync, readRunFileSync, realRunDir } from '../util/run-files.js';

export class RunReadError extends Error {}

export interface LoadedRun {
  /** The run workspace directory; null when the run was derived in memory from a results file. */
  dir: string | null;
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
  } catch {
    return false;
  }
}

/** Resolve `<run-dir>` or `<run-dir>/index.jsonl` to the workspace directory, or null. */
export async function workspaceDirOf(path: string, cwd = process.cwd()): Promise<string | null> {
  const abs = resolve(cwd, path);
  if (await isDir(abs)) return abs;
  if (basename(abs) === 'index.jsonl') return dirname(abs);
  return null;
}

export interface LoadRunOptions {
  cwd?: string;
  /** Accept a plain results JSONL file (derived in memory). */
  allowResultsFile?: boolean;
}

export async function loadRun(path: string, opts: LoadRunOptions = {}): Promise<LoadedRun> {
  const cwd = opts.cwd ?? process.cwd();
  const dir = await workspaceDirOf(path, cwd);
  if (dir === null) {
    if (!opts.allowResultsFile) {
      throw new RunReadError(`${path}: not a run workspace — pass a run directory or its index.jsonl (export a results file first with \`agentv-results export\`)`);
    }
    const derived = await exportRun({ source: path, cwd, dryRun: true, collectIndexRows: true });
    return {
      dir: null,
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
  const indexPath = join(dir, 'index.jsonl');
  let text: string;
  // The manifest itself may be a link out of the run (a downloaded workspace): never read through one.
  const indexAt = checkRunPathSync(dir, 'index.jsonl');
  if (indexAt.kind === 'bad') throw new RunReadError(`${path}: refusing to read index.jsonl: ${indexAt.message}`);
  try {
    text = await readFile(indexPath, 'utf8');
  } catch {
    throw new RunReadError(`${path}: not a run workspace (no index.jsonl) — pass a run directory or its index.jsonl`);
  }
  const rows: IndexRow[] = [];
  const rowLines: number[] = [];
  const issues: RunIssue[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      issues.push({ file: 'index.jsonl', line: i + 1, message: `not valid JSON (${(err as Error).message})` });
      continue;
    }
    const parsed = IndexRowSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      issues.push({ file: 'index.jsonl', line: i + 1, message: `${issue?.path.join('.') || 'row'}: ${issue?.message ?? 'invalid'}` });
      continue;
    }
    rows.push(parsed.data);
    rowLines.push(i + 1);
  }
  let summary: Record<string, unknown> | null = null;
  const summaryAt = readRunFileSync(dir, 'summary.json');
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
  return { dir, indexPath, runId, experiment, rows, summary, problems, issues, rowLines };
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
    return null;
  }
}
