/**
 * Reading option values. The parser keeps values as typed (strings), and a string option given
 * twice arrives as a list.
 */
import { isAbsolute, relative } from 'node:path';
import { UsageError } from '../errors/cli-errors.js';
import { green, red, yellow } from './format.js';

/** Every value of a repeatable string option, as typed. */
export function stringFlags(name: string, parsed: unknown): string[] {
  void name;
  if (parsed === undefined || parsed === null || parsed === true || parsed === false) return [];
  return (Array.isArray(parsed) ? parsed : [parsed]).map(String);
}

/** The one value of a string option as typed (the last one wins, as with any repeated flag). */
export function stringFlag(name: string, parsed: unknown): string | undefined {
  const all = stringFlags(name, parsed);
  if (all.length === 0 && parsed === true) throw new UsageError(`--${name} needs a value`);
  const value = all[all.length - 1];
  return value === '' ? undefined : value;
}

/** A path for humans: relative to the working directory when below it, else absolute. */
export function displayPath(cwd: string, abs: string): string {
  const rel = relative(cwd, abs);
  if (rel === '') return '.';
  return rel.startsWith('..') || isAbsolute(rel) ? abs : rel;
}

export function verdictText(verdict: string): string {
  return verdict === 'pass' ? green('pass') : verdict === 'error' ? yellow('error') : red('fail');
}

export const PROJECT_OPTION_HELP =
  'Which projects[] entry of the configuration applies (default: AGENTV_PROJECT, else the project whose path holds the working directory)';

/** The `--remote` help of the commands that read or push the shared branches. */
export const REMOTE_HELP = 'Remote (default: results.remote, else origin)';

/** The target flags, in the order the branch commands list them after their own: `--remote`, `--config`, `--project`, `--dir`. */
export const TARGET_FLAGS = ['remote', 'configFile', 'project', 'cwd'] as const;

/** The help lines of the target flags of a command that finds the repository from the working directory. */
export const FOUND_HERE = { remote: REMOTE_HELP, cwd: 'Working directory (the repository is found from here)' };
