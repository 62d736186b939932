/**
 * The options and the call every command that reads a run shares: each run argument may be a path,
 * a published run id, `@<tag>` or `@latest[:experiment=<e>]` (src/branch-read/run-names.ts).
 */
import type { CommandBuilder } from './program.js';
import { publishedRunId, resolveRunNames, RunNameOptionsSchema, type FetchOnce, type ResolvedRun, type ResolvedRuns } from '../branch-read/run-names.js';
import { join } from 'node:path';
import { displayPath } from './flags.js';
import { optionsFromFlags, schemaFlags } from './schema-flags.js';
import { oneOf } from './errors.js';

/** The forms of a run name, said once for every command that takes a run (each command's help ends with it). */
export const RUN_NAME_HELP =
  'a run directory, index.jsonl or results .jsonl; a published run id; <experiment>::<id> or <experiment>/<timestamp> (whichever AgentV layout holds it); @<tag> (newest run with the tag, e.g. @baseline); @latest[:experiment=<e>]';

/** A published run's id from any run name (`tag`, `pull`, `feedback`): branch-read/run-names.ts publishedRunId. */
export function publishedIdOf(name: string, flags: Record<string, unknown>): Promise<string> {
  return publishedRunId(name, optionsFromFlags(RunNameOptionsSchema, flags));
}

/** The options naming where published runs are read from. */
export function runNameOptions(cmd: CommandBuilder): CommandBuilder {
  return schemaFlags(cmd, RunNameOptionsSchema, { only: ['fetch', 'remote', 'configFile', 'project'] });
}

/** One fetch for all the run names of a command that resolves them in several calls (pass it to each). */
export function fetchOnce(flags: Record<string, unknown>): FetchOnce {
  return { wanted: Boolean(flags.fetch), done: false };
}

/** Resolve the run names with the command's options (the caller disposes). */
export function resolveNames(names: string[], flags: Record<string, unknown>, once?: FetchOnce, derive = false): Promise<ResolvedRuns> {
  return resolveRunNames(names, optionsFromFlags(RunNameOptionsSchema, flags, { deriveResultsFiles: derive, ...(once ? { fetchOnce: once } : {}) }));
}

/**
 * Resolve the run names, run `fn` on the resolved runs, then remove the scratch copies. A published
 * run is read from its scratch copy: `fn` gives the reader its run id beside the path (`shownAs`:
 * `shownAs(run)`), so every message and warning names the run by its id from the start.
 */
export async function withRunNames<T>(
  names: string[],
  flags: Record<string, unknown>,
  fn: (runs: ResolvedRun[]) => Promise<T>,
  once?: FetchOnce,
  derive = false,
): Promise<T> {
  const resolved = await resolveNames(names, flags, once, derive);
  try {
    return await fn(resolved.runs);
  } finally {
    await resolved.dispose();
  }
}

/** The name a resolved run is shown by when the reader reads it from a copy: a published run's id (a local run: none, its path is its name). */
export function shownAs(run: ResolvedRun): string | undefined {
  return run.runId ?? undefined;
}

/**
 * Resolve one run name, call `fn` on its path and the name it is shown by (`shownAs`, for the
 * reader's options), and hand back its answer with the name resolved (its scratch copy is gone by
 * then: show a published run's files with `runFileShown`).
 */
export async function withRunName<T>(
  name: string,
  flags: Record<string, unknown>,
  fn: (path: string, shownAs: string | undefined) => Promise<T>,
  opts: { deriveResultsFiles?: boolean } = {},
): Promise<{ value: T; run: ResolvedRun }> {
  return withRunNames([name], flags, async ([r]) => ({ value: await fn(r!.path, shownAs(r!)), run: r! }), undefined, opts.deriveResultsFiles === true);
}

/**
 * How a command names a file of a run it read, `dir` being the directory its report names: a
 * published run's report names it by its run id already (the reader was given it: `shownAs`), so
 * `<run id>/<rel>`; a local run's file from where the user stands.
 */
export function runFileShown(cwd: string, run: ResolvedRun, dir: string, rel: string): string {
  const file = rel === '' ? dir : join(dir, rel);
  return run.runId !== null ? file : displayPath(cwd, file);
}

/** `--format text|json|markdown`; `--json` stays the short spelling of `--format json`. */
export function outputFormat(flags: Record<string, unknown>): 'text' | 'json' | 'markdown' {
  const format = oneOf('format', flags.format, ['text', 'json', 'markdown'] as const, 'text');
  return flags.json ? 'json' : format;
}

/** How a Markdown report names a run: its published id (linked when the host is known), else the name given. */
export function runLink(r: ResolvedRun): { label: string; url?: string } {
  return { label: r.runId ?? r.name, ...(r.url ? { url: r.url } : {}) };
}
