// Keys of a repository's LOCAL config file (never global/system): `drivers install` is the one
// command that writes config.
import type { Repo } from './repo.js';
import { runGit } from './runner.js';
import { GitArgumentError } from '../errors/git-errors.js';

const KEY = /^[A-Za-z0-9-]+(\.[^\0\n]+)?\.[A-Za-z0-9-]+$/;

function assertKey(key: string): void {
  if (!KEY.test(key) || key.startsWith('-')) throw new GitArgumentError(`invalid config key ${JSON.stringify(key)}`);
}

/** Value of `key` in the repository's local config file only (never global/system), or null. */
export async function localConfigGet(repo: Repo, key: string): Promise<string | null> {
  assertKey(key);
  const r = await runGit(['config', '--local', '--null', '--get', key], { gitDir: repo.gitDir, okCodes: [0, 1] });
  return r.code === 0 ? r.stdout.toString('utf8').replace(/\0$/, '') : null;
}

/** Set `key` in the local config file (git writes it atomically under config.lock). */
export async function localConfigSet(repo: Repo, key: string, value: string): Promise<void> {
  assertKey(key);
  if (/[\0\n]/.test(value)) throw new GitArgumentError(`config value for ${key} must be one line`);
  await runGit(['config', '--local', '--replace-all', key, value], { gitDir: repo.gitDir });
}

/** Remove every value of `key` from the local config file; false when it was not set. */
export async function localConfigUnset(repo: Repo, key: string): Promise<boolean> {
  assertKey(key);
  // Exit 5: the key was not set; nothing to do.
  const r = await runGit(['config', '--local', '--unset-all', key], { gitDir: repo.gitDir, okCodes: [0, 5] });
  return r.code === 0;
}

/** Names of all keys of a config section (e.g. "merge.agentv-json") present in the local file. */
export async function localConfigKeys(repo: Repo, section: string): Promise<string[]> {
  const escaped = section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const r = await runGit(['config', '--local', '--null', '--name-only', '--get-regexp', `^${escaped}\\.`], { gitDir: repo.gitDir, okCodes: [0, 1] });
  return r.stdout
    .toString('utf8')
    .split('\0')
    .filter((k) => k.length > 0);
}

/** Remove a now-empty section header (`[merge "agentv-json"]`) that `--unset` leaves behind. */
export async function localConfigRemoveSection(repo: Repo, section: string): Promise<void> {
  // Exit 128: no such section (already gone). Only called when no key of the section is left.
  await runGit(['config', '--local', '--remove-section', section], { gitDir: repo.gitDir, okCodes: [0, 128] });
}
