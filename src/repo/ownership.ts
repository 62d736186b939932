/**
 * Our branches are ours alone. The results and artifacts branch names come from configuration
 * (`results.branch`, `results.artifacts_branch`, or AGENTV_RESULTS_BRANCH...), and a publish
 * commits onto them and pushes them: pointed at `main`, it would commit runs onto the user's own
 * branch and push it. So a name is refused (exit 2, naming the setting) when
 *   - it is outside the `agentv/` namespace, unless `results.allow_branch_outside_agentv: true`
 *     says the user means it;
 *   - it is not one of our default names and the branch exists (here, or as the remote's tracking
 *     ref) with a history that does not start at AgentV's genesis commit (repo/genesis.ts): the
 *     user works on it. Our default names skip this look (a walk of the whole history).
 * The checked-out branch is refused by target.ts (its history decides which message applies).
 */
import { resolveRef, rootCommits, type Repo } from '../git/index.js';
import { DEFAULT_ARTIFACTS_BRANCH, DEFAULT_RESULTS_BRANCH, type ResultsConfig } from './config.js';
import { ConfigError } from '../errors/publish-errors.js';
import { GENESIS_MESSAGE } from './genesis.js';
import { trackingRef } from './tracking-refs.js';

const SETTINGS = [
  ['results.branch', 'branch', DEFAULT_RESULTS_BRANCH],
  ['results.artifacts_branch', 'artifacts_branch', DEFAULT_ARTIFACTS_BRANCH],
] as const;

export async function refuseForeignBranches(repo: Repo, config: ResultsConfig, remote: string | null, configFile: string | null): Promise<void> {
  const where = configFile ? ` (${configFile}, or its environment override)` : ' (set by the environment or a flag)';
  for (const [setting, key, fallback] of SETTINGS) {
    const name = config[key];
    if (name === fallback) continue;
    if (!name.startsWith('agentv/') && !config.allow_branch_outside_agentv)
      throw new ConfigError(
        `${setting} is ${JSON.stringify(name)}${where}, outside the agentv/ namespace where agentv-results keeps its branches — use an agentv/… name, or set results.allow_branch_outside_agentv: true if ${name} holds nothing but results`,
      );
    const refs = [`refs/heads/${name}`, ...(remote ? [trackingRef(remote, `refs/heads/${name}`)] : [])];
    for (const ref of refs) {
      if ((await resolveRef(repo, ref)) === null) continue;
      const foreign = (await rootCommits(repo, ref)).find((r) => r.subject !== GENESIS_MESSAGE);
      if (foreign)
        throw new ConfigError(
          `${setting} is ${JSON.stringify(name)}${where}, a branch you work on: ${ref.replace(/^refs\/(heads|remotes)\//, '')} starts at ${foreign.commit.slice(0, 12)} "${foreign.subject}", not at AgentV's results genesis — agentv-results never writes such a branch; choose another name`,
        );
    }
  }
}
