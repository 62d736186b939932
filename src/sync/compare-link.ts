/**
 * Where a human reviews a sync branch: a compare page on the git host when we recognize it
 * (GitHub, GitLab including self-hosted hosts whose name contains "gitlab"), else plain git
 * commands. Pure: the remote URL comes in as text, nothing is fetched.
 *
 * Accepted URL forms: https://[user[:token]@]host[:port]/owner/repo[.git], ssh://[user@]host[:port]/
 * owner/repo[.git], and the scp-like git@host:owner/repo[.git]. Credentials in an https URL are
 * dropped: the link is printed to logs and stored in the sync-branch record.
 */

export type GitHost = 'github' | 'gitlab';

export interface HostedRepo {
  host: GitHost;
  /** Host name for the web UI (no user, no port: ssh ports are not web ports). */
  webHost: string;
  /** Repository path without `.git`, e.g. "owner/repo" or "group/sub/repo". */
  path: string;
}

/** Recognize a remote URL as a GitHub or GitLab repository; null for anything else. */
export function parseHostedRemote(url: string): HostedRepo | null {
  const trimmed = url.trim();
  let hostPart: string;
  let pathPart: string;
  const scheme = /^(https?|ssh|git\+ssh|ssh\+git):\/\/(?:[^@/]*@)?([^/:]+)(?::\d*)?\/(.+)$/i.exec(trimmed);
  const scpLike = /^(?:[^@/:\s]+@)?([^/:\s]+):(?!\/)(.+)$/.exec(trimmed);
  if (scheme) {
    hostPart = scheme[2] as string;
    pathPart = scheme[3] as string;
  } else if (scpLike && !/^[a-z]:[\\/]/i.test(trimmed)) {
    hostPart = scpLike[1] as string;
    pathPart = scpLike[2] as string;
  } else {
    return null;
  }
  const webHost = hostPart.toLowerCase();
  const path = pathPart
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .replace(/^\/+/, '');
  const segments = path.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => s === '.' || s === '..')) return null;
  if (webHost === 'github.com' || webHost.endsWith('.github.com') || /(^|[.-])github([.-]|$)/.test(webHost)) {
    // GitHub (and GitHub Enterprise hosts named like it) have exactly owner/repo.
    return segments.length === 2 ? { host: 'github', webHost, path: segments.join('/') } : null;
  }
  if (webHost.includes('gitlab')) {
    // GitLab groups nest: group/subgroup/repo.
    return segments.length >= 2 ? { host: 'gitlab', webHost, path: segments.join('/') } : null;
  }
  return null;
}

/** Branch names go into the URL path: keep "/" (both hosts accept it there), escape the rest. */
function refInUrl(branch: string): string {
  return branch
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}

/** The compare page showing what `syncBranch` adds on top of `baseBranch`; null for unknown hosts. */
export function compareUrl(remoteUrl: string, baseBranch: string, syncBranch: string): string | null {
  const repo = parseHostedRemote(remoteUrl);
  if (!repo) return null;
  const range = `${refInUrl(baseBranch)}...${refInUrl(syncBranch)}`;
  if (repo.host === 'github') return `https://${repo.webHost}/${repo.path}/compare/${range}?expand=1`;
  return `https://${repo.webHost}/${repo.path}/-/compare/${range}`;
}

/** What to print for a remote we cannot link to: commands that show the same comparison. */
export function reviewHint(remote: string, baseBranch: string, syncBranch: string): string {
  return `git fetch ${remote} ${syncBranch} ${baseBranch} && git diff ${remote}/${baseBranch}...${remote}/${syncBranch}`;
}

/** The page showing `path` on `branch` (a published run's directory); null for unknown hosts. */
export function treeUrl(remoteUrl: string, branch: string, path: string): string | null {
  const repo = parseHostedRemote(remoteUrl);
  if (!repo) return null;
  const where = `${refInUrl(branch)}/${refInUrl(path)}`;
  return repo.host === 'github' ? `https://${repo.webHost}/${repo.path}/tree/${where}` : `https://${repo.webHost}/${repo.path}/-/tree/${where}`;
}
