// Every git command that talks to a remote (fetch, ls-remote, push, clone) runs through here, so
// none waits forever on a silent peer (util/network-limits.ts says how long, and how to change it):
//  - http(s): git's own low-speed limit (GIT_HTTP_LOW_SPEED_LIMIT/TIME, set by the runner for every
//    git process unless the user set them): a server that accepts and never answers, or sends
//    headers and stops, ends the transfer.
//  - ssh: keep-alives (`ServerAliveInterval`/`ServerAliveCountMax`) and a connect timeout, through
//    GIT_SSH_COMMAND only when the user chose no ssh command of their own (GIT_SSH_COMMAND, GIT_SSH
//    or core.sshCommand): theirs is left exactly as it is.
//  - every transport: a deadline for the whole command (git is killed when it passes).
import { configGet, knownRemoteUrl, remotesReading, type Repo } from './repo.js';
import { describeSeconds, networkLimits, NETWORK_ENV, type NetworkLimits } from '../util/network-limits.js';
import { redactText } from '../errors/redact.js';

export interface NetworkSpawn {
  env: Record<string, string>;
  /** Aborted when the deadline passes. */
  signal: AbortSignal;
  deadlineMs: number;
  /** True when the caller's own bound (shorter than the setting) is the deadline. */
  callerDeadline: boolean;
  limits: NetworkLimits;
  /** The remote as a message names it: "origin (https://host/repo.git)", credentials stripped. */
  shown: string;
}

/** True for a URL git reaches over ssh: ssh://, git+ssh://, ssh+git://, or scp-like [user@]host:path. */
export function isSshUrl(url: string): boolean {
  if (/^(ssh|git\+ssh|ssh\+git):\/\//i.test(url)) return true;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return false;
  // scp-like: a colon before any slash (git's own rule), and not a Windows drive letter.
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  return colon > 1 && (slash < 0 || colon < slash);
}

/**
 * Whether core.sshCommand is set, asked once per reading of the repository's remotes (readRemotes:
 * once per command), and only for a remote that may be ssh: a long-lived server or daemon sees a
 * change of the user's config at its next command.
 */
const sshCommandSet = new WeakMap<object, Promise<boolean>>();

async function userChoseSsh(repo: Repo | null): Promise<boolean> {
  if (process.env.GIT_SSH_COMMAND || process.env.GIT_SSH) return true;
  if (!repo) return false;
  const reading = remotesReading(repo);
  let p = reading ? sshCommandSet.get(reading) : undefined;
  if (!p) {
    p = configGet(repo, 'core.sshCommand').then(
      (v) => v !== null && v.trim() !== '',
      // a config we cannot read: leave ssh as git would run it
      () => true,
    );
    if (reading) sshCommandSet.set(reading, p);
  }
  return p;
}

/** The ssh command with keep-alives: the silence allowed is about the low-speed time. */
export function sshCommandFor(limits: NetworkLimits): string {
  const interval = Math.max(1, Math.ceil(limits.lowSpeedTimeS / 4));
  const connect = Math.max(1, Math.ceil(limits.connectTimeoutMs / 1000));
  return `ssh -o ServerAliveInterval=${interval} -o ServerAliveCountMax=4 -o ConnectTimeout=${connect}`;
}

/**
 * The options a network git command runs with. `remote` is a remote's name or a URL; `timeoutMs`
 * (a caller's own, shorter bound, e.g. the daemon's) narrows the deadline, never widens it.
 */
export async function networkSpawn(repo: Repo | null, remote: string, timeoutMs?: number, opts: { push?: boolean } = {}): Promise<NetworkSpawn> {
  const limits = networkLimits();
  const deadlineMs = timeoutMs === undefined ? limits.deadlineMs : Math.min(timeoutMs, limits.deadlineMs);
  const known = repo ? knownRemoteUrl(repo, remote, opts) : undefined;
  const url = known ?? remote;
  const env: Record<string, string> = {};
  // A remote whose URL we know and is not ssh needs no look at the user's ssh settings; a remote
  // name not read yet may be ssh, so it gets the same care as an ssh URL.
  const unreadName = repo !== null && known === undefined && !/[:/\\]/.test(remote);
  const maybeSsh = isSshUrl(url) || unreadName;
  if (maybeSsh && !(await userChoseSsh(repo))) env.GIT_SSH_COMMAND = sshCommandFor(limits);
  const shown = url === remote ? redactText(remote) : `${remote} (${redactText(url)})`;
  return { env, signal: AbortSignal.timeout(deadlineMs), deadlineMs, callerDeadline: deadlineMs < limits.deadlineMs, limits, shown };
}

/** What a silent remote gets told: which remote, what we waited for, how long, and how to change it. */
export function silenceMessage(net: NetworkSpawn, what: string, stderr: string): string | null {
  if (net.signal.aborted)
    return net.callerDeadline
      ? `${net.shown} did not finish ${what} within ${describeSeconds(net.deadlineMs)}`
      : `${net.shown} did not finish ${what} within ${describeSeconds(net.deadlineMs)} (the deadline for one network operation; ${NETWORK_ENV.deadline} sets it in seconds)`;
  if (/Timeout, server .* not responding/i.test(stderr))
    return `${net.shown} stopped answering while ${what}: its ssh keep-alives went unanswered (${NETWORK_ENV.lowSpeedTime} sets how long, in seconds)`;
  if (/Operation too slow/i.test(stderr)) {
    // git's own words carry the limit in force (the user's GIT_HTTP_LOW_SPEED_* may have set it).
    const m = /Less than (\d+) bytes\/sec transferred the last (\d+) seconds/.exec(stderr);
    const [limit, time] = m ? [m[1], m[2]] : [String(net.limits.lowSpeedLimit), String(net.limits.lowSpeedTimeS)];
    return `${net.shown} stopped answering while ${what}: less than ${limit} bytes/s for ${time} s (${NETWORK_ENV.lowSpeedLimit} and ${NETWORK_ENV.lowSpeedTime} set the limit)`;
  }
  return null;
}
