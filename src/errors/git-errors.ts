// Error types of the git layer. Callers branch on the class (instanceof), never on message text.
import { accessSync, constants, statfsSync } from 'node:fs';
import { redactText } from './redact.js';
import { AgentvResultsError, type ErrorCode, type ErrorDataOptions } from './errors.js';

/** What a failed git process was: its argv (from "git"), exit code, stderr (all redacted) and the directory it ran in. */
export interface GitErrorData {
  /** Full argv, starting with "git". */
  argv: readonly string[];
  /** Exit code, or null when the process was killed by a signal or never started. */
  exitCode: number | null;
  stderr: string;
  /** The working directory git ran in, when the runner knows it. */
  cwd?: string;
  /** Why it failed when it is not its exit code: `died` (its stdin closed before it took what it was given), `aborted`, `spawn` (it could not start). */
  how?: 'exit' | 'died' | 'aborted' | 'spawn';
}

/** A git process exited with a code the caller did not declare acceptable (or could not start, or died mid-stream). */
export class GitError<D extends GitErrorData = GitErrorData> extends AgentvResultsError<D> {
  readonly code: ErrorCode = 'git';

  /** `where`: the directory git ran in and how it failed, kept in `data` (an optional last parameter). */
  constructor(argv: readonly string[], exitCode: number | null, stderr: string, message?: string, where?: Pick<GitErrorData, 'cwd' | 'how'>) {
    // A URL in argv or stderr may carry credentials (https://user:TOKEN@host): never kept, never shown.
    const disk = diskRefusalIn(stderr) ?? diskRefusalAt(argv, stderr);
    const text = message ?? describeFailure(argv, exitCode, stderr);
    const data: GitErrorData = { argv: argv.map(redactText), exitCode, stderr: redactText(stderr) };
    if (where?.cwd !== undefined) data.cwd = where.cwd;
    if (where?.how !== undefined) data.how = where.how;
    super(redactText(disk ? `${disk === 'read-only' ? 'the filesystem is read-only' : 'no space left on the device'} (git could not write): ${text}` : text), {
      data: data as D,
    });
    this.name = 'GitError';
    // git said the disk refused its write: the error model's codes for that (exit 3, as 'git').
    if (disk) this.code = disk;
  }

  /** Full argv, starting with "git" (redacted). */
  get argv(): readonly string[] {
    return this.data.argv;
  }
  /** Exit code, or null when the process was killed by a signal or never started. */
  get exitCode(): number | null {
    return this.data.exitCode;
  }
  get stderr(): string {
    return this.data.stderr;
  }
}

/** The installed git is too old for the plumbing this project relies on. */
export class GitVersionError extends AgentvResultsError<{ found: string; required: string }> {
  readonly code = 'git-version';
  readonly found: string;
  readonly required: string;
  constructor(found: string, required: string, message: string) {
    super(message, { data: { found, required } });
    this.name = 'GitVersionError';
    this.found = found;
    this.required = required;
  }
}

/**
 * A compare-and-swap ref update lost: the ref did not hold the value the caller expected.
 * `expected`/`actual` are object ids, null meaning "absent".
 */
export class RefConflictError extends AgentvResultsError<{ ref: string; expected: string | null; actual: string | null }> {
  readonly code = 'ref-conflict';
  readonly ref: string;
  readonly expected: string | null;
  readonly actual: string | null;
  constructor(ref: string, expected: string | null, actual: string | null) {
    super(`ref ${ref} changed underneath us: expected ${expected ?? '(absent)'}, found ${actual ?? '(absent)'}`, { data: { ref, expected, actual } });
    this.name = 'RefConflictError';
    this.ref = ref;
    this.expected = expected;
    this.actual = actual;
  }
}

/** The path given to openRepo is not (inside) a git repository. */
export class NotARepositoryError extends AgentvResultsError<{ path: string; detail?: string }> {
  readonly code = 'not-a-repository';
  readonly path: string;
  constructor(path: string, detail?: string) {
    super(`not a git repository: ${path}${detail ? ` (${detail})` : ''}`, { data: detail === undefined ? { path } : { path, detail } });
    this.name = 'NotARepositoryError';
    this.path = path;
  }
}

/** A path (from data) that must never reach a tree: rejected before anything is written. */
export class InvalidPathError extends AgentvResultsError<{ path: string; reason: string }> {
  readonly code = 'invalid-path';
  readonly path: string;
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`invalid path ${JSON.stringify(path)}: ${reason}`, { data: { path, reason } });
    this.name = 'InvalidPathError';
    this.path = path;
    this.reason = reason;
  }
}

/**
 * The git layer refused an argument before running git: a ref, refspec, object id, key, value or
 * identity that git would misread (a leading "-", a newline, a NUL, a name outside our namespace).
 * The value came from the caller's input, so this is bad input (exit 2), never a git failure.
 */
export class GitArgumentError extends AgentvResultsError<{ argument?: string }> {
  readonly code = 'git-argument';
  /** `options.data.argument`: the value refused. */
  constructor(message: string, options?: ErrorDataOptions<{ argument?: string }>) {
    super(message, options);
  }
}

/**
 * git ran and printed something the layer cannot parse (a truncated object, an unknown record):
 * the installed git or the repository is not what we expect (exit 3, like any git failure).
 */
export class GitOutputError extends AgentvResultsError<{ argv?: readonly string[]; output?: string }> {
  readonly code = 'git-output';
  /** `options.data`: the git command (`argv`) and the output it could not parse (`output`, a short excerpt). */
  constructor(message: string, options?: ErrorDataOptions<{ argv?: readonly string[]; output?: string }>) {
    super(message, options);
  }
}

/** Classification of a failed network operation (push, fetch, ls-remote). */
export type RemoteFailureKind = 'unreachable' | 'auth' | 'other';

/** A failed network operation's data: git's, the remote it talked to and what kind of failure it was. */
export interface RemoteErrorData extends GitErrorData {
  /** The remote (name or URL, redacted) as git was given it; null when argv names none. */
  remote: string | null;
  kind: RemoteFailureKind;
  /** Set when the remote went silent (a deadline or the low-speed limit ended git): which remote, what was waited for. */
  silence?: string;
}

/** A fetch or ls-remote that failed; `kind` says whether retrying later can help. */
export class RemoteError extends GitError<RemoteErrorData> {
  override readonly code: ErrorCode = 'remote';
  /** `message`: said instead of git's own failure (a remote that went silent is named with what we waited for); `remote`: which remote (default: read from argv). */
  constructor(argv: readonly string[], exitCode: number | null, stderr: string, kind: RemoteFailureKind, message?: string, remote?: string) {
    super(argv, exitCode, stderr, `${message ?? describeFailure(argv, exitCode, stderr)} [${kind}]`);
    this.name = 'RemoteError';
    const data = this.data as RemoteErrorData;
    data.remote = remote !== undefined ? redactText(remote) : remoteOf(this.data.argv);
    data.kind = kind;
    if (message !== undefined) data.silence = message;
  }

  get kind(): RemoteFailureKind {
    return this.data.kind;
  }
  get silence(): string | undefined {
    return this.data.silence;
  }
}

const NETWORK_VERBS = new Set(['fetch', 'push', 'ls-remote', 'clone', 'pull']);

/** The first operand after git's network subcommand (`git fetch origin …` → `origin`), or null. */
function remoteOf(argv: readonly string[]): string | null {
  const at = argv.findIndex((a) => NETWORK_VERBS.has(a));
  if (at < 0) return null;
  for (const a of argv.slice(at + 1)) {
    if (a === '--') continue;
    if (!a.startsWith('-')) return a;
  }
  return null;
}

const MAX_ARGV_CHARS = 200;

/** `no-space` / `read-only` when git's stderr says the disk refused a write (git's own words for ENOSPC, EDQUOT, EROFS). */
function diskRefusalIn(stderr: string): 'no-space' | 'read-only' | null {
  if (/Read-only file system/i.test(stderr)) return 'read-only';
  if (/No space left on device|Out of diskspace|Disk quota exceeded/i.test(stderr)) return 'no-space';
  return null;
}

/**
 * git says only "couldn't write …lock" or "unable to create directory" when its disk is full or
 * read-only (a ref update reports no errno): asked of the filesystem of its --git-dir, only then.
 */
function diskRefusalAt(argv: readonly string[], stderr: string): 'no-space' | 'read-only' | null {
  if (!/couldn't write|could not write|unable to write|unable to create|cannot lock ref|failed to write/i.test(stderr)) return null;
  const dir = argv.find((a) => a.startsWith('--git-dir='))?.slice('--git-dir='.length);
  if (!dir) return null;
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EROFS' ? 'read-only' : null;
  }
  try {
    return statfsSync(dir).bavail === 0 ? 'no-space' : null;
  } catch {
    // the directory is gone or unreadable: git's own words stand
    return null;
  }
}

function describeFailure(argv: readonly string[], exitCode: number | null, stderr: string): string {
  let shown = argv.join(' ');
  if (shown.length > MAX_ARGV_CHARS) shown = `${shown.slice(0, MAX_ARGV_CHARS)}…`;
  const how = exitCode === null ? 'was killed or could not start' : `exited with code ${exitCode}`;
  // The actionable lines start with "fatal:"/"error:"; hints and advice paragraphs follow them.
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('hint:'));
  const key = lines.filter((l) => /^(fatal|error):/.test(l));
  const detail = (key.length > 0 ? key.slice(0, 3) : lines.slice(-4)).join(' | ');
  return detail ? `${shown} ${how}: ${detail}` : `${shown} ${how}`;
}
