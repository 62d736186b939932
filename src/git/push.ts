// push: fast-forward-only, optionally atomic, parsed from --porcelain output (ARCHITECTURE.md: rules 2 and 4, the path of a run).
//
// Refspecs never carry "+" (invariant 2). Two cases need a precondition beyond "fast-forward":
//  - create-only (fallback sync branches): `--force-with-lease=<dst>:` with an empty expected value
//    means "the destination must not exist". Verified on git 2.39.5 against a bare repository with
//    receive.denyNonFastForwards=true, over a local path and over git://: an existing destination is
//    rejected "(stale info)" even when the push would be a fast-forward, an absent one is created.
//    Note that a lease whose expectation holds lets git skip its fast-forward check for that ref;
//    with an "absent" expectation the only possible update is a creation, so nothing can be lost.
//  - delete (a WIP branch after its final publish): `:<dst>` guarded by `--force-with-lease=<dst>:<sha>`,
//    so a branch that moved since we looked is not deleted.
import { classifyRemoteFailure, remoteRefLock } from './classify.js';
import { GitArgumentError, GitError } from '../errors/git-errors.js';
import { assertNotOption, gitIn, transportCwd, type Repo } from './repo.js';
import { networkSpawn, silenceMessage } from './network.js';

export type PushUpdate = { src: string; dst: string; createOnly?: boolean } | { dst: string; delete: true; expect: string };

export interface PushOptions {
  /** All refs update or none does (the results branch never lands without its artifacts). */
  atomic: boolean;
  /** Kill git after this long; the push then classifies as "unreachable". */
  timeoutMs?: number;
}

export type PushRefStatus = 'ok' | 'up-to-date' | 'rejected-non-ff' | 'rejected-fetch-first' | 'rejected-other' | 'remote-rejected' | 'error';

export interface PushRefResult {
  dst: string;
  status: PushRefStatus;
  /** git's summary column, e.g. "[new branch]", "1a2b..3c4d", "[rejected] (fetch first)". */
  summary: string;
  /** The parenthesized reason, e.g. "non-fast-forward", "stale info", "atomic push failed". */
  reason: string | null;
}

/** `ref-locked`: the remote holds a stale `<ref>.lock` (see remoteRefLock); retrying as a race cannot help. */
export type PushClassification = 'ok' | 'non-fast-forward' | 'ref-locked' | 'unreachable' | 'auth' | 'other';

export interface PushResult {
  classification: PushClassification;
  refs: PushRefResult[];
  exitCode: number | null;
  stderr: string;
  /** Set when the remote went silent (a deadline or the low-speed limit ended the push): which remote, what we waited for. */
  silent?: string;
}

const REF_PART = /^[^\s:*?[\\^~\0]+$/;

function assertPushable(u: PushUpdate): void {
  if (!u.dst.startsWith('refs/') || !REF_PART.test(u.dst)) throw new GitArgumentError(`push destination must be a full ref name: ${JSON.stringify(u.dst)}`);
  if ('delete' in u) {
    if (!/^[0-9a-f]{40,64}$/.test(u.expect)) throw new GitArgumentError(`deleting ${u.dst} needs the expected object id, got ${JSON.stringify(u.expect)}`);
    return;
  }
  // A leading "+" would force; an empty source would delete; ":" would smuggle a second refspec.
  if (u.src.startsWith('+') || !REF_PART.test(u.src.replace(/[~^]/g, ''))) throw new GitArgumentError(`invalid push source ${JSON.stringify(u.src)}`);
  assertNotOption(u.src, 'push source');
}

/**
 * Pushes without ever forcing. Never throws for a remote-side outcome: rejections, network and auth
 * failures come back as a PushResult (throws only for invalid arguments).
 */
export async function push(repo: Repo, remote: string, updates: PushUpdate[], opts: PushOptions): Promise<PushResult> {
  assertNotOption(remote, 'remote');
  if (updates.length === 0) throw new GitArgumentError('push needs at least one update');
  updates.forEach(assertPushable);
  const dsts = new Set(updates.map((u) => u.dst));
  if (dsts.size !== updates.length) throw new GitArgumentError('push: the same destination appears twice');

  // --no-verify: a user's pre-push hook (linters, test suites) is about their code, not our data
  // branches, and must not block or slow a results publish. The other --no-* flags keep user config
  // (push.followTags, push.recurseSubmodules, push.gpgSign, push.useForceIfIncludes) from widening,
  // blocking or changing the semantics of our push.
  const args = ['push', '--porcelain', '--no-verify', '--no-follow-tags', '--no-recurse-submodules', '--no-signed', '--no-force-if-includes'];
  if (opts.atomic) args.push('--atomic');
  const refspecs: string[] = [];
  for (const u of updates) {
    if ('delete' in u) {
      args.push(`--force-with-lease=${u.dst}:${u.expect}`);
      refspecs.push(`:${u.dst}`);
    } else {
      if (u.createOnly) args.push(`--force-with-lease=${u.dst}:`);
      refspecs.push(`${u.src}:${u.dst}`);
    }
  }
  args.push(remote, ...refspecs);

  const net = await networkSpawn(repo, remote, opts.timeoutMs, { push: true });
  let exitCode: number | null;
  let stdout: string;
  let stderr: string;
  try {
    const r = await gitIn(repo, args, { okCodes: [0, 1, 128], cwd: transportCwd(repo), env: net.env, signal: net.signal });
    exitCode = r.code;
    stdout = r.stdout.toString('utf8');
    stderr = r.stderr;
  } catch (err) {
    if (!(err instanceof GitError) || !net.signal.aborted) throw err;
    const refs = updates.map((u) => ({ dst: u.dst, status: 'error' as const, summary: 'no status (timed out)', reason: null }));
    const silent = silenceMessage(net, 'pushing', err.stderr) as string;
    return { classification: 'unreachable', refs, exitCode: err.exitCode, stderr: `${err.stderr}\ntimed out after ${net.deadlineMs} ms`, silent };
  }

  const parsed = parsePushPorcelain(stdout);
  const refs = updates.map((u) => parsed.get(u.dst) ?? { dst: u.dst, status: 'error' as const, summary: 'no status reported', reason: null });
  const silent = exitCode !== 0 && parsed.size === 0 ? silenceMessage(net, 'pushing', stderr) : null;
  if (silent) return { classification: 'unreachable', refs, exitCode, stderr, silent };
  return { classification: classifyPush(exitCode, parsed.size > 0, refs, stderr), refs, exitCode, stderr };
}

/** Parses "<flag> TAB <src>:<dst> TAB <summary>" lines; "To <url>" and "Done" are skipped. */
export function parsePushPorcelain(stdout: string): Map<string, PushRefResult> {
  const out = new Map<string, PushRefResult>();
  for (const line of stdout.split('\n')) {
    const m = /^([ +\-*!=])\t([^\t]*)\t(.*)$/.exec(line);
    if (!m) continue;
    const [, flag, spec = '', summary = ''] = m;
    const dst = spec.slice(spec.lastIndexOf(':') + 1);
    const reason = /\(([^()]*)\)\s*$/.exec(summary)?.[1] ?? null;
    out.set(dst, { dst, status: refStatus(flag as string, summary, reason), summary, reason });
  }
  return out;
}

function refStatus(flag: string, summary: string, reason: string | null): PushRefStatus {
  if (flag === '=') return 'up-to-date';
  if (flag !== '!') return 'ok';
  if (summary.startsWith('[rejected]')) {
    if (reason === 'non-fast-forward') return 'rejected-non-ff';
    if (reason === 'fetch first') return 'rejected-fetch-first';
    return 'rejected-other';
  }
  if (summary.startsWith('[remote rejected]')) return 'remote-rejected';
  return 'error';
}

// The server refused the update because the ref moved under it (another pusher won a race between
// advertisement and update): same remedy as a client-side non-fast-forward, fetch + merge + retry.
const REMOTE_RACE = /non-fast-forward|fetch first|but expected|cannot lock ref|failed to lock|reference already exists/;

/**
 * With --atomic, one ref that lost a race on the server makes EVERY ref report "(atomic transaction
 * failed)"; the real reason ("cannot lock ref ...: is at X but expected Y") is only in the remote's
 * stderr. A declined hook also fails the transaction, so the stderr must show the race.
 */
function atomicRaceOnServer(refs: PushRefResult[], stderr: string): boolean {
  const rejected = refs.filter((r) => r.status !== 'up-to-date');
  return (
    rejected.length > 0 &&
    rejected.every((r) => r.status === 'remote-rejected' && (r.reason === 'atomic transaction failed' || REMOTE_RACE.test(r.reason ?? ''))) &&
    REMOTE_RACE.test(stderr)
  );
}

/** How a finished push ended, from its exit code, per-ref porcelain statuses and stderr. */
export function classifyPush(exitCode: number | null, gotRefStatus: boolean, refs: PushRefResult[], stderr: string): PushClassification {
  if (exitCode === 0 && refs.every((r) => r.status === 'ok' || r.status === 'up-to-date')) return 'ok';
  // Checked before the race: a lock file on the remote also reads "cannot lock ref".
  if (refs.some((r) => r.status === 'remote-rejected') && remoteRefLock(stderr) !== null) return 'ref-locked';
  const lostRace = refs.some(
    (r) => r.status === 'rejected-non-ff' || r.status === 'rejected-fetch-first' || (r.status === 'remote-rejected' && REMOTE_RACE.test(r.reason ?? '')),
  );
  if (lostRace || atomicRaceOnServer(refs, stderr)) return 'non-fast-forward';
  // Per-ref statuses mean we reached the remote and it answered: whatever went wrong is not transport.
  if (gotRefStatus) return 'other';
  return classifyRemoteFailure(stderr);
}
