/**
 * The options and the call every command that reads a run shares: each run argument may be a path,
 * a published run id, `@<tag>` or `@latest[:experiment=<e>]` (src/branch-read/run-names.ts).
 */
import type { CommandBuilder } from './program.js';
import {
  namedPaths,
  publishedRunId,
  resolveRunNames,
  RunNameOptionsSchema,
  type FetchOnce,
  type ResolvedRun,
  type ResolvedRuns,
} from '../branch-read/run-names.js';

export { namedPaths };
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

/** Resolve the run names, run `fn` on the resolved runs, then remove the scratch copies. */
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
  } catch (err) {
    // A message about a published run names it by its id, not by its scratch copy.
    if (err instanceof Error) err.message = namedPaths(err.message, resolved.runs);
    throw err;
  } finally {
    await resolved.dispose();
  }
}

/**
 * Resolve one run name, call `fn` on it, and hand back its answer with the name resolved (its
 * scratch copy is gone by then: show a published run's files with `runFileShown`).
 */
export async function withRunName<T>(
  name: string,
  flags: Record<string, unknown>,
  fn: (path: string) => Promise<T>,
  opts: { deriveResultsFiles?: boolean } = {},
): Promise<{ value: T; run: ResolvedRun }> {
  return withRunNames([name], flags, async ([r]) => ({ value: await fn(r!.path), run: r! }), undefined, opts.deriveResultsFiles === true);
}

/** How a command names a file of a run it read: `<run id>/<rel>` for a published run, else the path from where the user stands. */
export function runFileShown(cwd: string, run: ResolvedRun, dir: string, rel: string): string {
  return run.runId !== null ? (rel === '' ? run.runId : `${run.runId}/${rel}`) : displayPath(cwd, rel === '' ? dir : join(dir, rel));
}

/**
 * A `--json` answer about runs read by name: a published run's scratch path (gone once the command
 * ends) is named by its run id, as `runFileShown` names it in text.
 */
export function namedJson<T>(value: T, runs: ResolvedRun[]): T {
  return runs.some((r) => r.runId !== null) ? (JSON.parse(namedPaths(JSON.stringify(value), runs)) as T) : value;
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
