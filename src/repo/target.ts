/**
 * Which repository, branches and remote a publish goes to, from the configuration.
 *
 * `results.repo` is either the name of an existing remote of the local checkout, or a URL. A URL
 * with no `results.path` means a managed bare clone in the cache directory: the user's checkout is
 * never used for it. Remotes are never added or rewritten in a user's repository.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { assertGitVersion, openRepo, readRemotes, remoteUrl, withRefSnapshot, worktreeBranches, type Repo } from '../git/index.js';
import { NotARepositoryError } from '../errors/git-errors.js';
import { ensureBareClone } from '../git/clone.js';
import { loadResultsConfig, type ResultsConfig } from './config.js';
import { ConfigError } from '../errors/publish-errors.js';
import { refuseForeignBranches } from './ownership.js';
import { cacheDir } from '../util/cache-dir.js';
import { PublishError } from '../errors/publish-errors.js';

export interface PublishTarget {
  repo: Repo;
  config: ResultsConfig;
  configFile: string | null;
  /** The `projects[]` entry whose settings apply, if any. */
  project: string | null;
  resultsRef: string;
  artifactsRef: string;
  /** null when the repository has no remote to push to. */
  remote: string | null;
  /**
   * The remote's fetch URL as git uses it (insteadOf applied), read with the remotes when the target
   * was resolved; absent on a target built by hand (ask remoteUrl then).
   */
  remoteUrl?: string | null;
  managed: boolean;
}

export function looksLikeUrl(value: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^[^/\s]+@[^:\s]+:/.test(value) || value.startsWith('/') || value.startsWith('./') || value.startsWith('../')
  );
}

export interface TargetOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  remote?: string;
  configFile?: string;
  /** The `projects[]` entry to use (default: AGENTV_PROJECT, else the one holding `cwd`). */
  project?: string;
  overrides?: Partial<ResultsConfig>;
  /**
   * The target these options resolve to, resolved once by a reader that asks many questions of one
   * repository (the static site: src/site/); used as it is, nothing is resolved again.
   * @internal The package's own modules pass it; the published types leave it out (stripInternal).
   */
  resolved?: PublishTarget;
}

/** Just the target options of a verb's wider options (serve's, site's): what resolveTarget reads, nothing else. */
export function targetOptionsOf(opts: TargetOptions): TargetOptions {
  const { cwd, env, remote, configFile, project, overrides } = opts;
  return { cwd, env, remote, configFile, project, overrides };
}

export async function resolveTarget(opts: TargetOptions = {}): Promise<PublishTarget> {
  if (opts.resolved) return opts.resolved;
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  await assertGitVersion();
  const { config, file, baseDir, project } = await loadResultsConfig({
    cwd,
    env,
    configFile: opts.configFile,
    project: opts.project,
    overrides: opts.overrides,
  });
  let repo: Repo;
  let managed = false;
  let remote: string | null = opts.remote ?? config.remote ?? null;
  if (config.repo && looksLikeUrl(config.repo) && !config.path) {
    // A relative path is relative to the folder holding .agentv/, like every path in the file; made
    // absolute before it keys the cache, so one string from two places never shares a clone.
    const url = config.repo.startsWith('./') || config.repo.startsWith('../') ? resolve(baseDir, config.repo) : config.repo;
    const dir = join(cacheDir(env), 'repos', createHash('sha256').update(url).digest('hex').slice(0, 16) + '.git');
    repo = await ensureBareClone(url, dir, { timeoutMs: 120_000 });
    managed = true;
    remote = remote ?? 'origin';
  } else {
    repo = await openRepo(config.path ? resolve(baseDir, config.path) : cwd).catch((err: unknown) => {
      // Where the results go is configuration: say how to point us at a repository (exit 2).
      if (err instanceof NotARepositoryError) {
        throw new ConfigError(
          `${err.message} — run agentv-results inside a git checkout, or set results.path (a local checkout) or results.repo (a URL) in .agentv/config.yaml`,
        );
      }
      throw err;
    });
    if (config.repo && !looksLikeUrl(config.repo)) remote = remote ?? config.repo;
  }
  const [remoteUrls, checkedOut] = await Promise.all([readRemotes(repo), worktreeBranches(repo)]);
  if (remote === null && remoteUrls.has('origin')) remote = 'origin';
  if (remote !== null && !remoteUrls.has(remote)) {
    const hint =
      config.repo && looksLikeUrl(config.repo)
        ? ' (agentv-results never adds remotes to your checkout: add it yourself, or drop results.path to use a managed clone)'
        : '';
    throw new ConfigError(`remote ${JSON.stringify(remote)} does not exist in ${repo.workTree ?? repo.gitDir}${hint}`);
  }
  const resultsRef = `refs/heads/${config.branch}`;
  const artifactsRef = `refs/heads/${config.artifacts_branch}`;
  // A branch the user works on is never ours to write (repo/ownership.ts), checked out or not.
  await refuseForeignBranches(repo, config, remote, file);
  for (const ref of [resultsRef, artifactsRef]) {
    if (checkedOut.includes(ref)) {
      throw new PublishError(
        `${ref.slice('refs/heads/'.length)} is checked out in a worktree of ${repo.commonDir}; agentv-results writes that branch without a checkout — switch that worktree to another branch first`,
      );
    }
  }
  const remoteUrl = remote === null ? null : (remoteUrls.get(remote)?.fetch ?? null);
  return { repo, config, configFile: file, project, resultsRef, artifactsRef, remote, remoteUrl, managed };
}

/** The target's remote URL: the one read when it was resolved, else (a target built by hand) asked of git. */
export async function targetRemoteUrl(target: PublishTarget): Promise<string | null> {
  if (target.remoteUrl !== undefined) return target.remoteUrl;
  return target.remote ? remoteUrl(target.repo, target.remote) : null;
}

/**
 * The target with a handle whose reads of our branches, their remote-tracking refs and everything
 * under agentv's namespaces (refs/heads/agentv/, refs/remotes/<remote>/agentv/) come from ONE
 * for-each-ref (git/ref-snapshot.ts): for a read verb's one command, made at its start and dropped
 * with it. Any ref write of ours drops the snapshot; nothing is kept across commands.
 */
export async function withRefView(target: PublishTarget): Promise<PublishTarget> {
  const tracking = (ref: string) => (target.remote ? [`refs/remotes/${target.remote}/${ref.slice('refs/heads/'.length)}`] : []);
  const patterns = [
    'refs/heads/agentv',
    ...(target.remote ? [`refs/remotes/${target.remote}/agentv`] : []),
    target.resultsRef,
    target.artifactsRef,
    ...tracking(target.resultsRef),
    ...tracking(target.artifactsRef),
  ];
  return { ...target, repo: await withRefSnapshot(target.repo, patterns) };
}
