/**
 * `generateReport`: a run workspace (directory or its index.jsonl) -> one self-contained HTML
 * file. Reading goes through the run reader; the steps are projection (what to embed, clipped),
 * stats (the figures), secret scan (warnings), template (the document) and an atomic write.
 */
import { join, resolve } from 'node:path';
import { loadRun, refuseUnsafeRun } from '../runs/read/run-reader.js';
import { RunReadError } from '../errors/read-errors.js';
import { notesByTest, readRunOverlays } from '../overlay-read/local-run.js';
import { projectRun } from './projection.js';
import { SecretScanner } from './secrets.js';
import { computeStats } from './stats.js';
import { renderReport } from './template.js';
import { fmtInt } from './format.js';
import { writeOutputFile } from '../util/output-target.js';
import { DEFAULT_FIELD_CHARS, DEFAULT_TEST_CHARS } from './text.js';
import * as z from 'zod';
import { flag, fnOf, parseOptions } from '../options/verb-options.js';
import { fileShown, runShown, ShownAsField } from '../util/run-shown.js';

export const DEFAULT_REPORT_NAME = 'report.html';

/** The options of `generateReport` (the `report` command's flags come from the same fields). */
export const ReportOptionsSchema = z.strictObject({
  /** A run workspace directory or its index.jsonl. */
  run: z.string(),
  /** The name the run is known by, when it is read from a copy (a published run pulled into a scratch directory: its run id): errors and warnings name it so. Default: the path as given. */
  shownAs: ShownAsField,
  /** Output HTML file (default `<run-dir>/report.html`); an existing directory gets `report.html` inside. */
  out: z
    .string()
    .optional()
    .meta(
      flag(
        '-o, --out <file>',
        'Output HTML file; a device or FIFO is written through, a directory gets report.html (default: <run-dir>/report.html; a published run: report.html here)',
      ),
    ),
  /** Directory that relative `run` and `out` are resolved against (default: the process's working directory). */
  cwd: z
    .string()
    .default(() => process.cwd())
    .meta(flag('-d, --dir <dir>', 'Working directory used to resolve the run and output paths')),
  /** Read a run holding unsafe paths (links out, pipes, row paths out of the run) with warnings instead of refusing it. */
  skipUnsafe: z
    .boolean()
    .default(false)
    .meta(
      flag('--skip-unsafe', 'Read a run holding unsafe paths (links out of it, pipes, row paths out of it) with a warning per path instead of refusing it'),
    ),
  /** Characters embedded per text field. */
  fieldChars: z.number().int().positive().default(DEFAULT_FIELD_CHARS),
  /** Characters embedded per test over all its fields. */
  testChars: z.number().int().positive().default(DEFAULT_TEST_CHARS),
  onProgress: fnOf<(done: number, total: number) => void>().optional(),
});
export type ReportOptions = z.input<typeof ReportOptionsSchema>;

export interface ReportResult {
  out: string;
  tests: number;
  bytes: number;
  /** `replaced`: written atomically (a temporary file renamed into place); `through`: a device or FIFO written in place. */
  mode: 'replaced' | 'through';
  /** Things a reader should know: possible secrets/local paths, truncation, manifest problems. */
  warnings: string[];
}

/** Write a run's self-contained HTML report, as `agentv-results report` does. */
export async function generateReport(options: ReportOptions): Promise<ReportResult> {
  const opts = parseOptions('generateReport', ReportOptionsSchema, options);
  const { cwd } = opts;
  const run = await loadRun(opts.run, { cwd, shownAs: opts.shownAs });
  const name = runShown(opts.run, opts.shownAs);
  // loadRun without allowResultsFile always returns a workspace directory; keep the type honest.
  if (run.dir === null) throw new RunReadError(`${name}: not a run workspace`, { data: { path: name } });
  // The default output (<run-dir>/report.html) is this command's own file, not the run's content.
  const unsafe = await refuseUnsafeRun(
    run,
    name,
    opts.skipUnsafe,
    opts.out === undefined && (run.sourceDir ?? run.dir) === run.dir ? [DEFAULT_REPORT_NAME] : [],
  );
  if (run.rows.length === 0 && run.problems.length > 0) {
    throw new RunReadError(
      `${fileShown(run.indexPath, { runDir: run.dir, shownAs: opts.shownAs })}: none of its ${run.problems.length} row(s) is a valid run manifest row (first: ${run.problems[0]}) — is this a workspace written by \`agentv-results export\`? Export the results first`,
    );
  }

  const { data, details, truncated } = await projectRun(run, {
    fieldChars: opts.fieldChars,
    testChars: opts.testChars,
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  });
  // After projecting: reading the sidecars adds the files it refused (links out of the run, pipes).
  const warnings = [...unsafe, ...run.problems.map((p) => `skipped ${p}`)];
  const stats = computeStats(data);
  const overlays = await readRunOverlays(run.sourceDir ?? run.dir);
  warnings.push(...overlays.warnings);
  if (overlays.tags.length > 0) data.run.tags = overlays.tags;
  const notes = notesByTest(overlays.notes);
  data.tests.forEach((test, i) => {
    const mine = notes.get(test.id);
    if (mine && details[i]) details[i].feedback = mine.map((n) => ({ reviewer: n.reviewer, updated_at: n.updated_at, text: n.feedback }));
  });

  const recorded = run.summary?.total;
  if (typeof recorded === 'number' && recorded !== stats.overall.total) {
    warnings.push(`summary.json counts ${fmtInt(recorded)} tests but index.jsonl has ${fmtInt(stats.overall.total)} valid rows; the report shows the rows`);
  }
  if (truncated > 0) {
    warnings.push(
      `${fmtInt(truncated)} text field(s) exceeded the embedding limit (${fmtInt(data.limits.field_chars)} characters per field, ${fmtInt(data.limits.test_chars)} per test) and are truncated in the report`,
    );
  }

  const scanner = new SecretScanner();
  scanner.scan('(run metadata)', data.run);
  data.tests.forEach((test, i) => {
    scanner.scan(test.id, test, details[i], data.groups[test.group], data.targets[test.target]);
  });
  warnings.push(...scanner.warnings());

  // The output-target rule (util/output-target.ts): a file is replaced atomically, a device or FIFO
  // named with --out is written through, a directory gets report.html inside it.
  const named = opts.out !== undefined;
  const target = resolve(cwd, opts.out ?? join(run.dir, DEFAULT_REPORT_NAME));
  const { path: out, bytes, mode } = await writeOutputFile(target, renderReport({ data, details, stats }), { named, inDirectory: DEFAULT_REPORT_NAME });
  return { out, tests: data.tests.length, bytes, mode, warnings };
}
