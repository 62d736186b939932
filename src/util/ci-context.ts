/**
 * Where a CI job runs, from the variables GitHub Actions and GitLab CI set: the repository, the
 * commit, the ref, the pull (merge) request and a link to the job's run. The gate's webhook
 * carries it, so a notification says which change failed. Empty outside CI: every field null.
 */
export interface CiContext {
  /** `github`, `gitlab`, or null outside those two. */
  provider: 'github' | 'gitlab' | null;
  /** `owner/name` (GitHub) or the project path (GitLab). */
  repository: string | null;
  commit: string | null;
  /** The branch (a pull request's head branch) or tag. */
  ref: string | null;
  /** The pull request (GitHub) or merge request (GitLab) number. */
  pull_request: number | null;
  /** The CI run (GitHub) or pipeline (GitLab) page. */
  link: string | null;
}

const val = (env: NodeJS.ProcessEnv, name: string): string | null => {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
};
const num = (v: string | null): number | null => (v !== null && /^\d+$/.test(v) ? Number(v) : null);

export function ciContext(env: NodeJS.ProcessEnv = process.env): CiContext {
  if (val(env, 'GITHUB_ACTIONS') === 'true') {
    const repository = val(env, 'GITHUB_REPOSITORY');
    const server = val(env, 'GITHUB_SERVER_URL') ?? 'https://github.com';
    const run = val(env, 'GITHUB_RUN_ID');
    return {
      provider: 'github',
      repository,
      commit: val(env, 'GITHUB_SHA'),
      ref: val(env, 'GITHUB_HEAD_REF') ?? val(env, 'GITHUB_REF_NAME') ?? val(env, 'GITHUB_REF'),
      // A pull request's ref is refs/pull/<number>/merge.
      pull_request: num(/^refs\/pull\/(\d+)\//.exec(val(env, 'GITHUB_REF') ?? '')?.[1] ?? null),
      link: repository !== null && run !== null ? `${server}/${repository}/actions/runs/${run}` : null,
    };
  }
  if (val(env, 'GITLAB_CI') === 'true') {
    return {
      provider: 'gitlab',
      repository: val(env, 'CI_PROJECT_PATH'),
      commit: val(env, 'CI_COMMIT_SHA'),
      ref: val(env, 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME') ?? val(env, 'CI_COMMIT_REF_NAME'),
      pull_request: num(val(env, 'CI_MERGE_REQUEST_IID')),
      link: val(env, 'CI_PIPELINE_URL') ?? val(env, 'CI_JOB_URL'),
    };
  }
  return { provider: null, repository: null, commit: null, ref: null, pull_request: null, link: null };
}
