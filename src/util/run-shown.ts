/**
 * How a run being read is named in what a user reads: its messages, warnings and the files of the
 * run they point at. A run read where its user put it is named by its path. A run read from a copy
 * the user never saw — a published run pulled into a scratch directory (branch-read/run-names.ts),
 * a run the Dashboard keeps in its cache — is named by the name its user knows it by (its run id),
 * which the caller gives the reader beside the path (`shownAs`): the reader names it so from the
 * start, and nothing rewrites a message afterwards.
 *
 *   loadScoreRows(scratch, { shownAs: '2026-03-14T10-00-00-000Z' })
 *     -> "2026-03-14T10-00-00-000Z:3: not valid JSON, line skipped"
 *     -> InputError "…: no result rows in 2026-03-14T10-00-00-000Z/index.jsonl" (data.path the same)
 *
 * The one home of that rule: the reports of `show`, `failures` and `validate` name a run read from
 * a copy by `shownAs` (their `dir`), and the CLI's `runFileShown` (cli/run-names.ts) joins a file to
 * the directory the report names.
 */
import { isAbsolute, relative } from 'node:path';
import * as z from 'zod';

/**
 * The option of a verb that reads one run: the name the run is known by when it is read from a copy
 * (a published run pulled into a scratch directory: its run id). Default: the path as given.
 */
export const ShownAsField = z.string().optional();

/** The same for a verb that reads two runs (compare, the gate): each side's name, when given. */
export const RunsShownAsField = z.strictObject({ baseline: z.string().optional(), candidate: z.string().optional() }).optional();

/** A file `rel` of a run named `name` (`rel` relative to the run's directory; '' is the run itself): `<name>/<rel>`. */
export function runFileNamed(name: string, rel: string): string {
  return rel === '' ? name : `${name}/${rel.split('\\').join('/')}`;
}

/** The run as a message names it: `shownAs` when the caller gave one, else the path as given. */
export function runShown(path: string, shownAs: string | undefined): string {
  return shownAs ?? path;
}

/**
 * A file of a run as a message names it: inside the run's directory `runDir` and the run shown by
 * name, `<shownAs>/<rel>` (the run's directory itself, or the file that is the run when it has no
 * directory: `shownAs`); otherwise the path as it is.
 */
export function fileShown(file: string, run: { runDir: string | null; shownAs: string | undefined }): string {
  if (run.shownAs === undefined) return file;
  if (run.runDir === null) return run.shownAs;
  const rel = relative(run.runDir, file);
  return rel.startsWith('..') || isAbsolute(rel) ? file : runFileNamed(run.shownAs, rel);
}
