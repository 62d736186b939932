/**
 * The light view of a run that `compare` and `trend` need: one (test_id, score, target, suite,
 * timestamp) record per result row, in file order.
 *
 * Why not the full run reader: AgentV's `compare`/`trend` read the manifest rows as they are —
 * file order, duplicates included, the row's own `score` — and "last row of a test id wins". To
 * give the same answers on the same inputs we must see the same rows, not the rows our derivation
 * regroups into attempts. So a source resolves as AgentV resolves it: a directory to its
 * `.internal/index.jsonl` (AgentV 5 workspace) or `index.jsonl`; a file to itself. Only when the
 * rows do not carry `test_id` and a numeric `score` (another producer's format) or the directory
 * has no manifest (other run layouts) do we fall back to the run reader, which derives them.
 *
 * Unlike AgentV, one malformed line does not abort the command: it is skipped and reported as a
 * warning, as every other command of ours does.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { checkRunPathSync, specialInputMessage } from '../runs/read/run-files.js';
import { exportRun } from '../runs/export/export.js';
import { InputError } from '../errors/input-error.js';
import { jsonlLines } from '../util/jsonl-objects.js';
import { readRegularText } from '../util/safe-open.js';
import { UnsafeFileError } from '../errors/input-error.js';
import { absentAs } from '../errors/errors.js';
import { fileShown, runShown } from '../util/run-shown.js';
import { ATTEMPT_PASS_THRESHOLD, attemptsOf, hasRepeats } from '../model/attempts.js';

export interface ScoreRow {
  test_id: string;
  score: number;
  target?: string;
  suite?: string;
  timestamp?: string;
  experiment?: string;
  cost_usd?: number;
  /** The row's duration when it carries one (`duration_ms`). */
  duration_ms?: number;
  /** Per-assertion scores when the row carries them (`scores[]`). */
  scores?: { name?: string; type?: string; score: number }[];
  /** The row's own verdict when it states one (`verdict`, or an `execution_error` status); the gate's pass -> fail rule reads it. */
  verdict?: 'pass' | 'fail' | 'error';
  /**
   * A repeated test's attempts (model/attempts.ts): attempts passed and run, and AgentV's strategy;
   * absent when the test ran once. `verdict` and `score` are then AgentV's aggregate for the strategy.
   */
  attempts?: { passed: number; total: number; strategy: string | null };
}

/**
 * A row's verdict for counting passes (a pass rate, a test's history): its own when it states one,
 * else AgentV's pass threshold on its score. AgentV 5 writes no verdict on a test run once (only
 * `execution_status` and the score). The gate's verdict-flip rule reads `verdict` as stated.
 */
export function passVerdict(row: ScoreRow): 'pass' | 'fail' | 'error' {
  return row.verdict ?? (row.score >= ATTEMPT_PASS_THRESHOLD ? 'pass' : 'fail');
}

export interface ScoreSource {
  /** The path as given (the run's name when it was read from a copy: `shownAs`). */
  source: string;
  /** The manifest or file actually read (named after the run when it was read from a copy: `<shownAs>/index.jsonl`). */
  path: string;
  /** The run directory when the source is a workspace (or a manifest inside one). */
  runDir: string | null;
  rows: ScoreRow[];
  warnings: string[];
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch (err) {
    // absent: not a directory; anything else propagates
    return absentAs(false)(err);
  }
}

/** AgentV's resolution of a run source to its manifest; null when a directory has none. */
export function resolveManifest(source: string, cwd = process.cwd()): { path: string; runDir: string | null } | null {
  const abs = resolve(cwd, source);
  if (isDir(abs)) {
    for (const candidate of [join(abs, '.internal', 'index.jsonl'), join(abs, 'index.jsonl')]) {
      if (existsSync(candidate)) return { path: candidate, runDir: abs };
    }
    return null;
  }
  if (basename(abs) === 'index.jsonl') {
    const parent = dirname(abs);
    return { path: abs, runDir: basename(parent) === '.internal' ? dirname(parent) : parent };
  }
  return { path: abs, runDir: null };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function toScoreRow(value: Record<string, unknown>): ScoreRow | null {
  const testId = str(value.test_id) ?? str(value.testId);
  const score = value.score;
  if (testId === undefined || typeof score !== 'number' || !Number.isFinite(score)) return null;
  const row: ScoreRow = { test_id: testId, score };
  const target = str(value.target);
  if (target !== undefined) row.target = target;
  const suite = str(value.suite);
  if (suite !== undefined) row.suite = suite;
  const timestamp = str(value.timestamp);
  if (timestamp !== undefined) row.timestamp = timestamp;
  const experiment = str(value.experiment);
  if (experiment !== undefined) row.experiment = experiment;
  const cost = value.cost_usd ?? value.costUsd;
  if (typeof cost === 'number' && Number.isFinite(cost)) row.cost_usd = cost;
  const duration = value.duration_ms ?? value.durationMs;
  if (typeof duration === 'number' && Number.isFinite(duration)) row.duration_ms = duration;
  // A repeated test (AgentV 5's manifest states no verdict) takes AgentV's verdict for its strategy.
  const a = attemptsOf(value);
  const repeated = hasRepeats(a);
  const verdict = repeated ? a.verdict : value.execution_status === 'execution_error' ? 'error' : value.verdict;
  if (verdict === 'pass' || verdict === 'fail' || verdict === 'error') row.verdict = verdict;
  if (repeated) row.attempts = { passed: a.passed, total: a.total, strategy: a.strategy };
  if (Array.isArray(value.scores)) {
    const scores = value.scores
      .filter((s): s is Record<string, unknown> => !!s && typeof s === 'object' && typeof (s as Record<string, unknown>).score === 'number')
      .map((s) => ({ name: str(s.name), type: str(s.type), score: s.score as number }));
    if (scores.length > 0) row.scores = scores;
  }
  return row;
}

/**
 * The score rows of a manifest's text (one JSON object per line), in file order: malformed lines
 * are skipped with a warning naming `source` and the line; `foreign` counts rows without a
 * test_id or numeric score (another producer's format: the caller derives those instead).
 */
export function parseScoreRows(text: string, source: string): { rows: ScoreRow[]; warnings: string[]; foreign: number } {
  const rows: ScoreRow[] = [];
  const warnings: string[] = [];
  let foreign = 0;
  for (const { line, value, error } of jsonlLines(text)) {
    if (error !== undefined) {
      warnings.push(`${source}:${line}: not valid JSON, line skipped (${error})`);
      continue;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      warnings.push(`${source}:${line}: not a JSON object, line skipped`);
      continue;
    }
    const row = toScoreRow(value as Record<string, unknown>);
    if (row) rows.push(row);
    else foreign++;
  }
  return { rows, warnings, foreign };
}

/**
 * A manifest's rows as the readers take them: null when it holds only another producer's rows
 * (the run reader derives those); otherwise its rows (maybe none) with a warning for any skipped.
 */
export function manifestRows(text: string, source: string): { rows: ScoreRow[]; warnings: string[] } | null {
  const { rows, warnings, foreign } = parseScoreRows(text, source);
  if (foreign > 0 && rows.length === 0) return null;
  if (foreign > 0) warnings.push(`${source}: ${foreign} row(s) without a test_id or numeric score skipped`);
  return { rows, warnings };
}

/** `loadScoreRows`'s options. */
export interface LoadScoreRowsOptions {
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd?: string;
  /**
   * The name the run is known by, when it is read from a copy (a published run's id): messages,
   * warnings and the source and path answered name it (util/run-shown.ts). Default: the path as given.
   */
  shownAs?: string;
}

/** Read the score rows of a run directory, an index.jsonl, or a results JSONL file. */
export async function loadScoreRows(source: string, opts: LoadScoreRowsOptions = {}): Promise<ScoreSource> {
  const cwd = opts.cwd ?? process.cwd();
  const name = runShown(source, opts.shownAs);
  const manifest = resolveManifest(source, cwd);
  if (manifest) {
    const shown = fileShown(manifest.path, { runDir: manifest.runDir, shownAs: opts.shownAs });
    // The same checks as every reader of a run: the manifest of a run directory stays inside it
    // (never read through a link out), and no named pipe or device is opened.
    if (manifest.runDir !== null) {
      const rel = relative(manifest.runDir, manifest.path);
      const at = checkRunPathSync(manifest.runDir, rel);
      if (at.kind === 'bad') throw new InputError(`${name}: refusing to read ${rel}: ${at.message}`, shown);
    } else {
      let st: ReturnType<typeof statSync> | null = null;
      try {
        st = statSync(manifest.path);
      } catch (err) {
        // absent: read (and reported) just below; anything else propagates
        st = absentAs(null)(err);
      }
      const special = st && specialInputMessage(st);
      if (special) throw new InputError(`${name}: ${special}`, shown);
    }
    let text: string;
    try {
      text = await readRegularText(manifest.path, { kind: 'run-file', label: shown });
    } catch (err) {
      if (err instanceof UnsafeFileError) throw new InputError(`${name}: ${err.message}`, shown);
      throw new InputError(`${name}: cannot read ${shown} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, shown);
    }
    const parsed = manifestRows(text, name);
    if (parsed) {
      if (parsed.rows.length === 0) throw new InputError(`${name}: no result rows in ${shown}`, shown);
      return { source: name, path: shown, runDir: manifest.runDir, ...parsed };
    }
  }
  // Not AgentV-shaped rows, or a directory in another layout: derive them as export does, in
  // memory (a dry run writes nothing: no scratch bundle, no staging directory).
  const warnings: string[] = [];
  const isRunDir = manifest !== null && manifest.runDir !== null;
  const derived = await exportRun({
    source,
    cwd,
    dryRun: true,
    collectIndexRows: true,
    carryRunnerFiles: false,
    // A run directory's unreadable rows are reported, as every reader of a run does; a results file's stop the command, as export does.
    skipInvalid: isRunDir,
    shownAs: opts.shownAs,
    onWarning: (w) => warnings.push(`${name}: ${w}`),
  });
  const rows = (derived.indexRows ?? []).map((r) => {
    const row: ScoreRow = { test_id: r.test_id, score: r.score, target: r.target, suite: r.suite };
    if (r.timestamp) row.timestamp = r.timestamp;
    if (r.experiment) row.experiment = r.experiment;
    if (typeof r.cost_usd === 'number') row.cost_usd = r.cost_usd;
    if (typeof r.duration_ms === 'number') row.duration_ms = r.duration_ms;
    if (r.scores.length > 0) row.scores = r.scores.map((s) => ({ name: s.name, type: s.type, score: s.score }));
    row.verdict = r.verdict;
    return row;
  });
  const read = manifest?.path ?? resolve(cwd, source);
  const shown = fileShown(read, { runDir: manifest?.runDir ?? null, shownAs: opts.shownAs });
  if (rows.length === 0) throw new InputError(`${name}: no result rows`, shown);
  return { source: name, path: shown, runDir: manifest?.runDir ?? null, rows, warnings };
}
