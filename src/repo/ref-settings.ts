/**
 * Ref-name settings are checked where they are read: `results.branch`, `results.artifacts_branch`
 * and `results.remote` (from the config file, a project's block, the environment or an option)
 * must be names git takes (`git check-ref-format`), or the command stops with exit 2 naming the
 * setting and where it came from — not with git's raw "invalid ref format" at the first push.
 */
import { branchNameProblem, remoteNameProblem } from '../git/ref-format.js';

const SETTINGS = [
  { key: 'branch', env: 'AGENTV_RESULTS_BRANCH', problem: branchNameProblem, what: 'a git branch name' },
  { key: 'artifacts_branch', env: 'AGENTV_RESULTS_ARTIFACTS_BRANCH', problem: branchNameProblem, what: 'a git branch name' },
  { key: 'remote', env: 'AGENTV_RESULTS_REMOTE', problem: remoteNameProblem, what: 'a git remote name' },
] as const;

export interface RefSettingSources {
  file: string | null;
  /** The `projects[]` entry whose results block applied, and its keys. */
  project: { id: string; results?: Record<string, unknown> | null } | null;
  fileBlock: Record<string, unknown>;
  envBlock: Record<string, unknown>;
  overrides: Record<string, unknown>;
}

/** The first ref-name setting of `merged` git would refuse, as one line (null when all are valid). */
export function refSettingProblem(merged: Record<string, unknown>, s: RefSettingSources): string | null {
  for (const { key, env, problem, what } of SETTINGS) {
    const value = merged[key];
    if (typeof value !== 'string') continue;
    const why = problem(value);
    if (why === null) continue;
    // Worded like every other configuration error: where, the setting, then what is wrong with it.
    const setting =
      key in s.overrides
        ? `the ${key} option`
        : key in s.envBlock
          ? `results.${key} from the environment variable ${env}`
          : s.project?.results && key in s.project.results
            ? `${s.file}: projects[id=${s.project.id}].results.${key}`
            : `${s.file ?? 'the configuration'}: results.${key}`;
    return `${setting}: ${JSON.stringify(value)} is not ${what}: ${why} — choose a name git accepts (git check-ref-format), e.g. agentv/results/v2`;
  }
  return null;
}
