/**
 * `validate`: does a run workspace resolve? The manifest parses, every row's paths exist inside
 * the run and parse against their schemas, ids are unique, and the run-level files (summary.json,
 * benchmark.json, timing.json, overlays) parse and agree with the rows.
 *
 * Every problem is collected (not just the first), each located as `file[:line]`, so one run of
 * validate tells the user everything to fix. Facts that are fine but worth knowing (a payload
 * detached to the artifacts branch, an optional file that is absent) are notes, not problems.
 */
import { realpath } from 'node:fs/promises';
import { relative } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import * as z from 'zod';
import { flag, parseOptions, PathsCwdField } from '../options/verb-options.js';
import { BenchmarkSchema, FeedbackSchema, RunTimingSchema, SummarySchema, TagsSchema, type IndexRow } from '../model/artifacts.js';
import { caseKey, describeCase } from './read/case-keys.js';
import type { LoadedRun } from './read/run-reader.js';
import { recomputeSummary } from './summary.js';
import { checkRow, checkSourceRows, type RowCheckContext } from './validate-rows.js';
import { RunDirFiles, type RunFileRead } from './read/run-files.js';
import { withRun, type RunHandle } from './read/run-handle.js';
import { runSafetyProblems } from './read/run-safety.js';
import type { ValidationProblem } from './validate-types.js';
import { ShownAsField } from '../util/run-shown.js';

/** How long (or for how many rows, whichever comes first) the row checks run between two turns of the event loop. */
const TURN_MS = 1;
const TURN_ROWS = 64;

export type { ValidationProblem } from './validate-types.js';

/** The options of `validateRun` (the `validate` command's flags come from the same fields, in this order). */
export const ValidateOptionsSchema = z.strictObject({
  /** A run workspace directory or its index.jsonl. */
  run: z.string(),
  /** The name the run is known by, when it is read from a copy (a published run pulled into a scratch directory: its run id): errors and the report's `dir` name it so. Default: the path as given. */
  shownAs: ShownAsField,
  /** Treat artifact pointers whose payload is absent locally as problems (default: notes). */
  requirePayloads: z
    .boolean()
    .default(false)
    .meta(flag('--require-payloads', 'Treat artifact pointers whose payload is not present locally as problems (default: notes)')),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
});
export type ValidateOptions = z.input<typeof ValidateOptionsSchema>;

export interface ValidationReport {
  valid: boolean;
  /** The run's directory (a run read from a copy: the name it is known by, `shownAs`). */
  dir: string;
  /** `agentv`: another layout (AgentV 5, pipeline bench, Era-A), checked through its derived copy; problems name the source's manifest. */
  layout: 'bundle' | 'agentv' | 'results-file';
  run_id: string;
  rows: number;
  problems: ValidationProblem[];
  notes: ValidationProblem[];
}

type ReadJson = { state: 'missing' } | { state: 'invalid'; message: string } | { state: 'ok'; value: unknown };

/** A run-level file, read only through the run-path check (never through a link out of the run). */
async function readJson(readFile: (name: string) => RunFileRead, name: string): Promise<ReadJson> {
  const read = readFile(name);
  if (read.kind === 'missing') return { state: 'missing' };
  if (read.kind === 'bad') return { state: 'invalid', message: `not read: ${read.message}` };
  const text = read.data.toString('utf8');
  try {
    return { state: 'ok', value: JSON.parse(text) };
  } catch (err) {
    return { state: 'invalid', message: `not valid JSON (${(err as Error).message})` };
  }
}

function schemaMessage(error: z.ZodError, what: string): string {
  const issue = error.issues[0];
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `does not match the ${what} schema: ${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}${more}`;
}

/** Ids must be unique: the projection id (what merges key on) and the case it records. */
function checkUniqueness(run: LoadedRun, problems: ValidationProblem[]): void {
  const ids = new Map<string, number>();
  const cases = new Map<string, number>();
  run.rows.forEach((row, i) => {
    const line = run.rowLines[i]!;
    const id = row.projection_identity.id;
    const idAt = ids.get(id);
    if (idAt !== undefined) problems.push({ file: 'index.jsonl', line, message: `duplicate projection_identity.id ${id} (first on line ${idAt})` });
    else ids.set(id, line);
    const key = caseKey(row);
    const caseAt = cases.get(key);
    if (caseAt !== undefined)
      problems.push({ file: 'index.jsonl', line, message: `duplicate case ${describeCase(row)} in suite ${row.suite} (first on line ${caseAt})` });
    else cases.set(key, line);
  });
}

/** Rows of one run carry its run_id and experiment; a stray row means the index was spliced. */
function checkRunIdentity(run: LoadedRun, problems: ValidationProblem[]): void {
  const first = run.rows[0];
  if (!first) return;
  const firstLine = run.rowLines[0]!;
  run.rows.forEach((row, i) => {
    const line = run.rowLines[i]!;
    if (row.run_id !== first.run_id)
      problems.push({
        file: 'index.jsonl',
        line,
        message: `run_id ${JSON.stringify(row.run_id)} differs from ${JSON.stringify(first.run_id)} on line ${firstLine}`,
      });
    if (row.experiment !== first.experiment)
      problems.push({
        file: 'index.jsonl',
        line,
        message: `experiment ${JSON.stringify(row.experiment)} differs from ${JSON.stringify(first.experiment)} on line ${firstLine}`,
      });
  });
}

const COUNTS = ['total', 'passed', 'failed', 'errors'] as const;

function checkSummary(run: LoadedRun, rows: IndexRow[], problems: ValidationProblem[], notes: ValidationProblem[]): void {
  if (run.summary === null) {
    // loadRun already reported a summary.json that exists but is not JSON.
    if (!run.issues.some((p) => p.file === 'summary.json'))
      notes.push({ file: 'summary.json', message: 'missing — `summary` recomputes it from index.jsonl; re-export to write it' });
    return;
  }
  const parsed = SummarySchema.safeParse(run.summary);
  if (!parsed.success) {
    problems.push({ file: 'summary.json', message: schemaMessage(parsed.error, 'summary') });
    return;
  }
  const written = parsed.data;
  const expected = recomputeSummary(rows, { run_id: run.runId, experiment: run.experiment });
  const rowsNote = run.issues.some((p) => p.file === 'index.jsonl') ? ' (malformed index lines are not counted)' : '';
  for (const key of COUNTS) {
    if (written[key] !== expected[key])
      problems.push({ file: 'summary.json', message: `${key} is ${written[key]} but index.jsonl has ${expected[key]}${rowsNote}` });
  }
  const targets = new Set([...Object.keys(written.run_summary), ...Object.keys(expected.run_summary)]);
  for (const target of targets) {
    const w = written.run_summary[target];
    const e = expected.run_summary[target];
    if (!w) problems.push({ file: 'summary.json', message: `run_summary has no entry for target ${target}, which has ${e!.total} row(s) in index.jsonl` });
    else if (!e) problems.push({ file: 'summary.json', message: `run_summary.${target} counts ${w.total} row(s) but index.jsonl has none for that target` });
    else {
      for (const key of COUNTS) {
        if (w[key] !== e[key])
          problems.push({ file: 'summary.json', message: `run_summary.${target}.${key} is ${w[key]} but index.jsonl has ${e[key]}${rowsNote}` });
      }
    }
  }
  const first = rows[0];
  if (first && written.run_id !== first.run_id)
    problems.push({ file: 'summary.json', message: `run_id ${JSON.stringify(written.run_id)} differs from the rows' ${JSON.stringify(first.run_id)}` });
  if (first && written.experiment !== first.experiment)
    problems.push({
      file: 'summary.json',
      message: `experiment ${JSON.stringify(written.experiment)} differs from the rows' ${JSON.stringify(first.experiment)}`,
    });
}

/** benchmark.json, timing.json and the overlays: parse, schema, and the counts that must agree. */
async function checkRunFiles(readFile: (name: string) => RunFileRead, rows: number, problems: ValidationProblem[], notes: ValidationProblem[]): Promise<void> {
  const files: { name: string; schema: z.ZodType; what: string; required: boolean; count?: (doc: Record<string, unknown>) => number }[] = [
    { name: 'benchmark.json', schema: BenchmarkSchema, what: 'benchmark', required: true, count: (d) => (d.runs as unknown[]).length },
    { name: 'timing.json', schema: RunTimingSchema, what: 'run timing', required: true, count: (d) => d.tests as number },
    { name: 'tags.json', schema: TagsSchema, what: 'tags', required: false },
    { name: 'feedback.json', schema: FeedbackSchema, what: 'feedback', required: false },
  ];
  for (const f of files) {
    const read = await readJson(readFile, f.name);
    if (read.state === 'missing') {
      if (f.required) notes.push({ file: f.name, message: 'missing — re-export the run to write it' });
      continue;
    }
    if (read.state === 'invalid') {
      problems.push({ file: f.name, message: read.message });
      continue;
    }
    const parsed = f.schema.safeParse(read.value);
    if (!parsed.success) {
      problems.push({ file: f.name, message: schemaMessage(parsed.error, f.what) });
      continue;
    }
    const n = f.count?.(parsed.data as Record<string, unknown>);
    if (n !== undefined && n !== rows) problems.push({ file: f.name, message: `counts ${n} result(s) but index.jsonl has ${rows}` });
  }
}

/** Check a run the way publish does (rows, files, paths, AgentV's contract) and report every problem, writing nothing. */
export async function validateRun(opts: ValidateOptions): Promise<ValidationReport> {
  return (await validateRunParts(opts)).report;
}

/**
 * validateRun, and which of its problems the run-safety check found (runs/read/run-safety.ts): publish
 * refuses those whatever the flags, the others unless --allow-invalid (publish/validate-gate.ts).
 */
export async function validateRunParts(options: ValidateOptions): Promise<{ report: ValidationReport; unsafe: ValidationProblem[] }> {
  const opts = parseOptions('validateRun', ValidateOptionsSchema, options);
  return withRun(opts.run, { cwd: opts.cwd, shownAs: opts.shownAs }, (opened) => validateOpenedRun(opened, opts.requirePayloads));
}

/**
 * The validation behind the door, of a run already opened (runs/read/run-handle.ts) by a caller that
 * goes on to use it (publish, which does not require payloads): the same checks, in the same order.
 */
export async function validateOpenedRun(handle: RunHandle, requirePayloads: boolean): Promise<{ report: ValidationReport; unsafe: ValidationProblem[] }> {
  const run = await handle.load();
  const dir = run.dir!;
  // The walk answers for the folder it walked: our bundle itself, not another layout's derived copy.
  const tree = handle.tree && handle.tree.root === dir ? handle.tree : undefined;
  const problems: ValidationProblem[] = run.issues.map((p) => ({ ...p }));
  const notes: ValidationProblem[] = [];
  if (run.rows.length === 0 && !run.issues.some((p) => p.file === 'index.jsonl')) {
    problems.push({ file: 'index.jsonl', message: 'has no rows — an empty run is not a valid workspace' });
  }
  // The run's files: the walk answers for the folder it walked, the disk for a derived copy.
  const files = tree ?? new RunDirFiles(dir, await realpath(dir));
  const ctx: RowCheckContext = {
    files,
    requirePayloads,
    problems,
    notes,
  };
  // A big run's checks take seconds: the event loop turns every few milliseconds meanwhile (a
  // publish's git processes are fed their blobs then, publish/prefeed.ts; a server stays responsive).
  let turned = performance.now();
  for (let i = 0; i < run.rows.length; i++) {
    await checkRow(ctx, run.rows[i]!, run.rowLines[i]!);
    if (i % TURN_ROWS === TURN_ROWS - 1 || performance.now() - turned >= TURN_MS) {
      await nextTurn();
      turned = performance.now();
    }
  }
  // Another layout is read through a derived copy, which cannot show what the source lacks: its
  // own manifest and files are checked as AgentV's `results validate` checks them, and more.
  // The source is the folder the handle walked (a run of another layout is always read from one).
  const source = handle.tree;
  if (run.layout === 'agentv' && run.sourceDir !== null && source?.root === run.sourceDir) {
    const manifest = handle.manifest;
    if (manifest) checkSourceRows(source, relative(run.sourceDir, manifest.file), problems, notes);
  }
  // The one safety check publish, report and show run (runs/read/run-safety.ts): links, pipes and devices
  // anywhere in the folder, result files pointing out of the run, unsafe run ids. What checkRow
  // already said about a row is not repeated.
  const said = new Set(problems.map((p) => `${p.file}:${p.line ?? ''}:${p.message}`));
  const unsafe = runSafetyProblems(dir, run.rows as unknown as Record<string, unknown>[], run.rowLines, {
    walkRoot: run.sourceDir ?? dir,
    tree: handle.tree ?? undefined,
  });
  for (const p of unsafe) {
    if (!said.has(`${p.file}:${p.line ?? ''}:${p.message}`)) problems.push(p);
  }
  checkUniqueness(run, problems);
  checkRunIdentity(run, problems);
  // The run's documents: benchmark.json, timing.json and the overlays, then summary.json against
  // the rows (each problem names its file and the report lists them by file: the order does not show).
  await checkRunFiles((name) => files.read(name), run.rows.length, problems, notes);
  checkSummary(run, run.rows, problems, notes);
  const report: ValidationReport = {
    valid: problems.length === 0,
    // A run read from a copy is named as its user knows it, not by the copy's directory.
    dir: handle.shownAs ?? run.sourceDir ?? dir,
    layout: run.layout,
    run_id: run.runId,
    rows: run.rows.length,
    problems: sortProblems(problems),
    notes: sortProblems(notes),
  };
  return { report, unsafe };
}

/** index.jsonl first in line order, then other files by name: stable output for humans and diffs. */
function sortProblems(list: ValidationProblem[]): ValidationProblem[] {
  const rank = (p: ValidationProblem) => (p.file === 'index.jsonl' ? 0 : 1);
  return list
    .map((p, i) => ({ p, i }))
    .sort((a, b) => rank(a.p) - rank(b.p) || (rank(a.p) === 0 ? (a.p.line ?? 0) - (b.p.line ?? 0) : a.p.file.localeCompare(b.p.file)) || a.i - b.i)
    .map(({ p }) => p);
}
