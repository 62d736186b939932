// Error types of the git layer. Callers branch on the class (instanceof), never on message text.
import { accessSync, constants, statfsSync } from 'node:fs';
import { redactText } from './redact.js';
import { AgentvResultsError, type ErrorCode } from './errors.js';

/** A git process exited with a code the caller did not declare acceptable (or could not start). */
export class GitError extends AgentvResultsError {
  readonly code: ErrorCode = 'git';
  /** Full argv, starting with "git". */
  readonly argv: readonly string[];
  /** Exit code, or null when the process was killed by a signal or never started. */
  readonly exitCode: number | null;
  readonly stderr: string;

  constructor(argv: readonly string[], exitCode: number | null, stderr: string, message?: string) {
    // A URL in argv or stderr may carry credentials (https://user:TOKEN@host): never kept, never shown.
    const disk = diskRefusalIn(stderr) ?? diskRefusalAt(argv, stderr);
    const text = message ?? describeFailure(argv, exitCode, stderr);
    super(redactText(disk ? `${disk === 'read-only' ? 'the filesystem is read-only' : 'no space left on the device'} (git could not write): ${text}` : text));
    this.name = 'GitError';
    // git said the disk refused its write: the error model's codes for that (exit 3, as 'git').
    if (disk) this.code = disk;
    this.argv = argv.map(redactText);
    this.exitCode = exitCode;
    this.stderr = redactText(stderr);
  }
}

/** The installed git is too old for the plumbing this project relies on. */
export class GitVersionError extends AgentvResultsError {
  readonly code = 'git-version';
  readonly found: string;
  readonly required: string;
  constructor(found: string, required: string, message: string) {
    super(message);
    this.name = 'GitVersionError';
    this.found = found;
    this.required = required;
  }
}

/**
 * A compare-and-swap ref update lost: the ref did not hold the value the caller expected.
 * `expected`/`actual` are object ids, null meaning "absent".
 */
export class RefConflictError extends AgentvResultsError {
  readonly code = 'ref-conflict';
  readonly ref: string;
  readonly expected: string | null;
  readonly actual: string | null;
  constructor(ref: string, expected: string | null, actual: string | null) {
    super(`ref ${ref} changed underneath us: expected ${expected ?? '(absent)'}, found ${actual ?? '(absent)'}`);
    this.name = 'RefConflictError';
    this.ref = ref;
    this.expected = expected;
    this.actual = actual;
  }
}

/** The path given to openRepo is not (inside) a git repository. */
export class NotARepositoryError extends AgentvResultsError {
  readonly code = 'not-a-repository';
  readonly path: string;
  constructor(path: string, detail?: string) {
    super(`not a git repository: ${path}${detail ? ` (${detail})` : ''}`);
    this.name = 'NotARepositoryError';
    this.path = path;
  }
}

/** A path (from data) that must never reach a tree: rejected before anything is written. */
export class InvalidPathError extends AgentvResultsError {
  readonly code = 'invalid-path';
  readonly path: string;
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`invalid path ${JSON.stringify(path)}: ${reason}`);
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
export class GitArgumentError extends AgentvResultsError {
  readonly code = 'git-argument';
}

/**
 * git ran and printed something the layer cannot parse (a truncated object, an unknown record):
 * the installed git or the repository is not what we expect (exit 3, like any git failure).
 */
export class GitOutputError extends AgentvResultsError {
  readonly code = 'git-output';
}

/** Classification of a failed network operation (push, fetch, ls-remote). */
export type RemoteFailureKind = 'unreachable' | 'auth' | 'other';

/** A fetch or ls-remote that failed; `kind` says whether retrying later can help. */
export class RemoteError extends GitError {
  override readonly code: ErrorCode = 'remote';
  readonly kind: RemoteFailureKind;
  /** Set when the remote went silent (a deadline or the low-speed limit ended git): which remote, what was waited for. */
  readonly silence?: string;
  /** `message`: said instead of git's own failure (a remote that went silent is named with what we waited for). */
  constructor(argv: readonly string[], exitCode: number | null, stderr: string, kind: RemoteFailureKind, message?: string) {
    super(argv, exitCode, stderr, `${message ?? describeFailure(argv, exitCode, stderr)} [${kind}]`);
    this.name = 'RemoteError';
    this.kind = kind;
    if (message !== undefined) this.silence = message;
  }
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
