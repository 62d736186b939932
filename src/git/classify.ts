// Last-resort classification of a network failure from git's stderr. Per-ref outcomes of a push are
// read from --porcelain output instead (push.ts); this is only for failures before any ref status
// exists: git could not reach the remote or was refused at the door. The runner sets LC_ALL=C, so
// these are git's, libcurl's and ssh's untranslated messages. Unknown text falls back to "other".
import type { RemoteFailureKind } from '../errors/git-errors.js';

// Checked first: an https "unable to access ... 403" is an auth problem although it says "access".
const AUTH_PATTERNS: readonly RegExp[] = [
  /Authentication failed/i,
  /could not read (Username|Password)/i, // prompt needed but GIT_TERMINAL_PROMPT=0
  /terminal prompts disabled/i,
  /Permission denied \((publickey|keyboard-interactive|password)/i, // ssh
  /Permission denied, please try again/i,
  /Host key verification failed/i,
  /The requested URL returned error: 40[13]/i,
  /HTTP Basic: Access denied/i,
  /Invalid username or password/i,
];

const UNREACHABLE_PATTERNS: readonly RegExp[] = [
  /unable to connect to/i, // git:// transport
  /Connection refused/i,
  /Connection timed out|Operation timed out|timed out after/i,
  /Operation too slow/i, // libcurl's low-speed limit (http.lowSpeedLimit): the server went silent
  /Timeout, server .* not responding/i, // ssh's ServerAlive keep-alives went unanswered
  /Connection reset by peer/i,
  /Network is unreachable|No route to host/i,
  /Could not resolve host|Could not resolve hostname|Name or service not known|Temporary failure in name resolution|nodename nor servname/i,
  /Failed to connect to/i, // libcurl
  /ssh: connect to host/i,
  /The requested URL returned error: 5\d\d/i, // server-side outage: retry later
];

export function classifyRemoteFailure(stderr: string): RemoteFailureKind {
  if (AUTH_PATTERNS.some((re) => re.test(stderr))) return 'auth';
  if (UNREACHABLE_PATTERNS.some((re) => re.test(stderr))) return 'unreachable';
  return 'other';
}

/**
 * A ref lock left on the remote: a push or other git process there was killed while it held
 * `<ref>.lock`. The server answers every later update of that ref "cannot lock ref ...: Unable to
 * create '<ref>.lock': File exists" (porcelain: "failed to update ref", or "atomic transaction
 * failed" for an atomic push). Unlike a lost race ("cannot lock ref ...: is at X but expected Y")
 * fetching and merging cannot help, so it is not retried as one. Returns the lock file the remote
 * named (its path on the remote's disk), or null when the stderr shows no such lock.
 */
export function remoteRefLock(stderr: string): string | null {
  const m = /Unable to create '([^'\n]*\.lock)': File exists/.exec(stderr);
  return m ? m[1]!.replace(/\/\.\//g, '/') : null;
}
