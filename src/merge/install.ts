/**
 * `drivers install` / `drivers uninstall`: register our merge drivers in a repository's LOCAL
 * config, so that a person who checks out the results branch and runs `git merge` / `git pull`
 * gets exactly the tool's result. The branch's own `.gitattributes` (kept by publish) maps the
 * files to the drivers; this only tells git what `merge=agentv-jsonl` / `merge=agentv-json` run:
 *
 *   [merge "agentv-jsonl"]
 *     name = agentv-results: union of append-only JSONL rows
 *     driver = node '/abs/path/dist/cli/main.js' merge-driver jsonl %O %A %B %P
 *
 * The command points at THIS package's own entry by absolute path (single-quoted for the shell git
 * runs drivers with), not at whatever `agentv-results` is first on PATH. Global and system config
 * are never written; uninstall removes exactly the keys install writes (and the section header when
 * nothing else is left in it).
 *
 * Web UIs of git hosts (GitHub, GitLab merge buttons) never run custom drivers: merge sync branches
 * with `sync --resolve` or locally with the drivers installed.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localConfigGet, localConfigKeys, localConfigRemoveSection, localConfigSet, localConfigUnset, openRepo } from '../git/index.js';
import type { MergeKind } from './index.js';
import { InvalidArgumentsError, isAbsent } from '../errors/errors.js';
import { readRegularTextSync } from '../util/safe-open.js';
import { flag, parseOptions } from '../options/verb-options.js';
import * as z from 'zod';

const DRIVERS: { kind: MergeKind; section: string; name: string }[] = [
  { kind: 'jsonl', section: 'merge.agentv-jsonl', name: 'agentv-results: union of append-only JSONL rows' },
  { kind: 'json', section: 'merge.agentv-json', name: 'agentv-results: JSON union of tags/feedback overlays' },
];

/**
 * Absolute path of this package's CLI entry (dist/cli/main.js): found from the package root, the
 * nearest folder above this module with our package.json. This module runs from dist/merge/ (the
 * library), from the CLI's bundle in dist/cli/ (the shipped CLI) or from src/merge/ (tests).
 */
export function cliEntryPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6; up++) {
    if (isOurPackage(join(dir, 'package.json'))) return join(dir, 'dist', 'cli', 'main.js');
    dir = dirname(dir);
  }
  // A plain Error on purpose: only a broken installation gets here (a bug to report, not an input to fix).
  throw new Error(`agentv-results: no package.json of agentv-results above ${fileURLToPath(import.meta.url)}`);
}

function isOurPackage(file: string): boolean {
  try {
    return (JSON.parse(readRegularTextSync(file, { kind: 'state' })) as { name?: unknown }).name === 'agentv-results';
  } catch (err) {
    // absent (or not JSON, a SyntaxError): not our package.json; anything else propagates
    if (isAbsent(err) || err instanceof SyntaxError) return false;
    throw err;
  }
}

/** POSIX shell single quoting: safe for any path (spaces, quotes, `$`). */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

export function driverCommand(kind: MergeKind, entry: string = cliEntryPath()): string {
  return `node ${shellQuote(entry)} merge-driver ${kind} %O %A %B %P`;
}

export interface DriverKey {
  key: string;
  value: string;
  /** The local value before install (null: unset). */
  previous: string | null;
}

export interface DriversResult {
  repo: string;
  keys: DriverKey[];
  /** The CLI entry the drivers run. */
  entry: string;
}

function expectedKeys(entry: string): { key: string; value: string }[] {
  return DRIVERS.flatMap((d) => [
    { key: `${d.section}.name`, value: d.name },
    { key: `${d.section}.driver`, value: driverCommand(d.kind, entry) },
  ]);
}

/** The options of `driversState` and `uninstallDrivers` (the `drivers` commands' `--dir`): the repository. */
export const DriversOptionsSchema = z.strictObject({
  cwd: z
    .string()
    .default(() => process.cwd())
    .meta(flag('--dir <dir>', 'Repository (default: the current directory)')),
});
export type DriversOptions = z.input<typeof DriversOptionsSchema>;

/** `installDrivers`'s options: the repository, and the CLI entry the drivers run (default: this package's). */
export const InstallDriversOptionsSchema = DriversOptionsSchema.extend({
  /** The CLI entry the merge drivers run (default: this package's own). */
  entry: z.string().optional(),
});
export type InstallDriversOptions = z.input<typeof InstallDriversOptionsSchema>;

/** Set this repository's merge drivers for our files (`drivers install`): local git configuration only. */
export async function installDrivers(options: InstallDriversOptions = {}): Promise<DriversResult> {
  const opts = parseOptions('installDrivers', InstallDriversOptionsSchema, options);
  const repo = await openRepo(opts.cwd);
  const entry = opts.entry ?? cliEntryPath();
  if (!existsSync(entry))
    throw new InvalidArgumentsError('installDrivers', [{ path: 'entry', message: `${entry} does not exist (build the package first: npm run build)` }]);
  const keys: DriverKey[] = [];
  for (const { key, value } of expectedKeys(entry)) {
    const previous = await localConfigGet(repo, key);
    if (previous !== value) await localConfigSet(repo, key, value);
    keys.push({ key, value, previous });
  }
  return { repo: repo.workTree ?? repo.gitDir, keys, entry };
}

/** Remove the merge drivers `installDrivers` set (`drivers uninstall`). */
export async function uninstallDrivers(options: DriversOptions = {}): Promise<{ repo: string; removed: string[] }> {
  const repo = await openRepo(parseOptions('uninstallDrivers', DriversOptionsSchema, options).cwd);
  const removed: string[] = [];
  for (const d of DRIVERS) {
    for (const key of [`${d.section}.name`, `${d.section}.driver`]) if (await localConfigUnset(repo, key)) removed.push(key);
    // git leaves an empty `[merge "agentv-json"]` header behind; drop it unless the user keeps other keys there.
    if ((await localConfigKeys(repo, d.section)).length === 0) await localConfigRemoveSection(repo, d.section);
  }
  return { repo: repo.workTree ?? repo.gitDir, removed };
}

/** What is installed now: each key's local value (null when unset). */
export async function driversState(options: DriversOptions = {}): Promise<{ repo: string; keys: { key: string; value: string | null; expected: string }[] }> {
  const repo = await openRepo(parseOptions('driversState', DriversOptionsSchema, options).cwd);
  const keys = [];
  for (const { key, value } of expectedKeys(cliEntryPath())) keys.push({ key, value: await localConfigGet(repo, key), expected: value });
  return { repo: repo.workTree ?? repo.gitDir, keys };
}
