// fetch and ls-remote for our branches. Fetched refs land only in our own tracking namespace
// refs/remotes/<remote>/agentv/...; the user's other remote-tracking refs, FETCH_HEAD, tags and
// submodules are left alone.
import { classifyRemoteFailure } from './classify.js';
import { GitArgumentError, GitError, RemoteError } from '../errors/git-errors.js';
import { assertNotOption, gitIn, transportCwd, type RefEntry, type Repo } from './repo.js';
import { notice } from '../util/notices.js';
import { redactText } from '../errors/redact.js';
import { networkSpawn, silenceMessage } from './network.js';

export interface FetchRefspec {
  src: string;
  dst: string;
  force: boolean;
}

export interface FetchResult {
  /** Refspecs whose source existed on the remote (their destination now mirrors it). */
  fetched: FetchRefspec[];
  /** Refspecs whose source is not on the remote; their destination was left as it was. */
  missing: FetchRefspec[];
  /**
   * A `depth` was asked for and the server could not serve a shallow fetch: the fetch was done in
   * full instead (say so once).
   */
  fullFallback?: boolean;
}

export interface FetchOptions extends NetworkOptions {
  /**
   * Fetch only the newest `depth` commits of each source (a shallow fetch: the repository records
   * the boundary in .git/shallow, and a later fetch of the branch brings only what is new). A
   * server that refuses it gets a full fetch.
   */
  depth?: number;
}

export interface NetworkOptions {
  /**
   * Kill git after this long; the call then fails with RemoteError kind "unreachable". Narrows the
   * deadline every network command has (util/network-limits.ts), never widens it.
   */
  timeoutMs?: number;
}

function parseFetchRefspec(remote: string, spec: string): FetchRefspec {
  const m = /^(\+?)([^:\s]+):([^:\s]+)$/.exec(spec);
  if (!m) throw new GitArgumentError(`invalid fetch refspec ${JSON.stringify(spec)}: expected [+]<src>:<dst>`);
  const [, plus, src = '', dst = ''] = m;
  const ns = `refs/remotes/${remote}/agentv/`;
  if (!dst.startsWith(ns)) throw new GitArgumentError(`fetch destination ${dst} is outside our namespace ${ns}`);
  if (src.startsWith('-')) throw new GitArgumentError(`invalid fetch source ${JSON.stringify(src)}`);
  return { src, dst, force: plus === '+' };
}

/**
 * Fetches `refspecs` ("[+]<src>:<dst>", dst under refs/remotes/<remote>/agentv/). A "+" is allowed
 * here and only here: the destination is our private mirror of the remote, so it must follow the
 * remote even if the remote was rewritten by someone else; nothing of the user's is overwritten and
 * pushes still never force. A source missing on the remote is reported in `missing`, not thrown.
 */
export async function fetchRefs(repo: Repo, remote: string, refspecs: string[], opts: FetchOptions = {}): Promise<FetchResult> {
  assertNotOption(remote, 'remote');
  if (opts.depth !== undefined && !(Number.isInteger(opts.depth) && opts.depth > 0))
    throw new GitArgumentError(`fetch depth must be a whole number > 0, got ${opts.depth}`);
  let pending = refspecs.map((s) => parseFetchRefspec(remote, s));
  const missing: FetchRefspec[] = [];
  let depth = opts.depth;
  let fullFallback = false;
  // Each failed round removes at least one refspec or the depth, so this runs at most refspecs.length + 2 times.
  while (pending.length > 0) {
    const args = [
      'fetch',
      ...(depth !== undefined ? [`--depth=${depth}`] : []),
      '--quiet',
      '--no-tags',
      '--no-prune',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--no-auto-maintenance',
      '--no-show-forced-updates',
      // Empty refmap: without it git also "opportunistically" updates the tracking refs that the
      // configured remote.<name>.fetch maps the sources to, i.e. refs we do not own.
      '--refmap=',
      remote,
      ...pending.map((p) => `${p.force ? '+' : ''}${p.src}:${p.dst}`),
    ];
    const r = await runNetwork(repo, remote, args, opts, [0, 128]);
    if (r.code === 0) return { fetched: pending, missing, ...(fullFallback ? { fullFallback } : {}) };
    const gone = /couldn't find remote ref (\S+)/.exec(r.stderr)?.[1];
    const miss = pending.filter((p) => p.src === gone);
    if (miss.length === 0) {
      const kind = classifyRemoteFailure(r.stderr);
      // A server (or transport: dumb HTTP) that cannot serve a shallow fetch still serves a full one.
      if (depth !== undefined && kind !== 'unreachable' && kind !== 'auth') {
        depth = undefined;
        fullFallback = true;
        notice(`full-fetch:${remote}`, `${remote} cannot serve a shallow fetch (git said: ${firstLine(r.stderr)}); fetching the whole history instead`);
        continue;
      }
      throw new RemoteError(['git', ...args], r.code, r.stderr, kind);
    }
    missing.push(...miss);
    pending = pending.filter((p) => p.src !== gone);
  }
  return { fetched: [], missing };
}

/** The first `fatal:`/`error:` line of git's stderr (else its first line), for a one-line notice. */
function firstLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return redactText(lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? 'no reason given');
}

/**
 * Refs on the remote matching `patterns` (git's ls-remote matching: a pattern matches a ref equal
 * to it or ending in "/<pattern>"). Full ref names are the unambiguous choice.
 */
export async function lsRemote(repo: Repo, remote: string, patterns: string[], opts: NetworkOptions = {}): Promise<RefEntry[]> {
  assertNotOption(remote, 'remote');
  for (const p of patterns) assertNotOption(p, 'ls-remote pattern');
  const args = ['ls-remote', remote, ...patterns];
  const r = await runNetwork(repo, remote, args, opts, [0]);
  return r.stdout
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const tab = l.indexOf('\t');
      return { sha: l.slice(0, tab), ref: l.slice(tab + 1) };
    })
    .filter((e) => !e.ref.endsWith('^{}'));
}

async function runNetwork(repo: Repo, remote: string, args: string[], opts: NetworkOptions, okCodes: number[]) {
  const net = await networkSpawn(repo, remote, opts.timeoutMs);
  const what = args[0] === 'fetch' ? 'fetching' : 'listing its refs';
  let r: Awaited<ReturnType<typeof gitIn>>;
  try {
    r = await gitIn(repo, args, { okCodes, cwd: transportCwd(repo), env: net.env, signal: net.signal });
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    const silent = silenceMessage(net, what, err.stderr);
    // git's stderr says "timed out" only when the deadline killed it (not when its own low-speed limit or ssh's keep-alives did).
    const stderr = net.signal.aborted ? `${err.stderr}\ntimed out after ${net.deadlineMs} ms` : err.stderr;
    if (silent) throw new RemoteError(err.argv, err.exitCode, stderr, 'unreachable', silent);
    throw new RemoteError(err.argv, err.exitCode, err.stderr, classifyRemoteFailure(err.stderr));
  }
  // A low-speed abort is an exit code the caller may accept (128): name it here, not as a missing ref.
  const silent = r.code !== 0 ? silenceMessage(net, what, r.stderr) : null;
  if (silent) throw new RemoteError(['git', ...args], r.code, r.stderr, 'unreachable', silent);
  return r;
}
