/**
 * The user's cache folder for agentv-results: `AGENTV_RESULTS_CACHE`, else
 * `$XDG_CACHE_HOME/agentv-results`, else `~/.cache/agentv-results`. Managed bare clones live under
 * `repos/` (repo/target.ts), the CLI's compiled code under `code-cache/` (cli/main.ts). Nothing in
 * it is data: deleting it costs a clone or a compile, never a result.
 */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTV_RESULTS_CACHE) return resolve(env.AGENTV_RESULTS_CACHE);
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agentv-results');
}
