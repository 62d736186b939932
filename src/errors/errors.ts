/**
 * The one error model. Every failure this project raises on purpose is an `AgentvResultsError`
 * with a stable string `code`; `EXIT_CODE_BY_ERROR` maps each code to the process exit code
 * (ARCHITECTURE.md, exit codes): 1 the command ran and its check failed; 2 usage or input error; 3 git, remote or
 * environment failure. Callers branch on the class or the code, never on message text, and the CLI
 * maps by code (the README's exit-code table is tested against this map).
 *
 * Lives in src/errors (layer 0, importing nothing) so every layer, src/git included, can import it.
 */

/**
 * `bug` (70, sysexits' EX_SOFTWARE): an error that is not one of ours — a TypeError, an unexpected
 * system error — so CI can tell a broken tool from a failed check (1).
 */
export const EXIT = { ok: 0, check: 1, usage: 2, git: 3, bug: 70 } as const;
export type FailureExitCode = typeof EXIT.check | typeof EXIT.usage | typeof EXIT.git | typeof EXIT.bug;

export const EXIT_CODE_BY_ERROR = {
  // 1: the command ran and what it checked failed.
  'check-failed': 1,
  'tag-revision-mismatch': 1,
  'feedback-revision-mismatch': 1,
  'daemon-locked': 1,
  'read-check': 1,
  'sync-conflict': 1,
  // 2: usage or input error.
  usage: 2,
  'invalid-arguments': 2,
  input: 2,
  source: 2,
  config: 2,
  layout: 2,
  'run-read': 2,
  'read-input': 2,
  'run-expired': 2,
  'overlay-input': 2,
  'not-a-repository': 2,
  'invalid-path': 2,
  'git-argument': 2,
  'not-found': 2,
  wip: 2,
  command: 2,
  serve: 2,
  http: 2,
  'output-target': 2,
  // 3: git, remote or environment failure (retrying later, or fixing the machine, can help).
  git: 3,
  'git-version': 3,
  'git-output': 3,
  'ref-conflict': 3,
  remote: 3,
  publish: 3,
  'read-git': 3,
  lock: 3,
  outbox: 3,
  'no-space': 3,
  'read-only': 3,
  'object-store': 3,
} as const satisfies Record<string, FailureExitCode>;

export type ErrorCode = keyof typeof EXIT_CODE_BY_ERROR;

/**
 * The options every error takes: the cause (as `Error`'s) and its `data`, for the classes whose
 * constructor is `(message, options?)`.
 */
export interface ErrorDataOptions<D> extends ErrorOptions {
  data?: D;
}

/**
 * Every failure this package raises on purpose: a stable `code`, the exit code it maps to
 * (`cliExitCode`) and its `data`: what failed, where and why, as typed fields a caller can branch
 * on (never the message's words). Each class declares its data type; every field a class had
 * before (`err.argv`, `err.kind`, …) is still there, and is also in `data`.
 */
export abstract class AgentvResultsError<D extends object = object> extends Error {
  abstract readonly code: ErrorCode;
  /** What failed, where and why (each class's own type). */
  readonly data: D;

  constructor(message: string, options?: ErrorDataOptions<D>) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    // The subclass's own name, so logs and `err.name` say which failure it is.
    this.name = new.target.name;
    this.data = options?.data ?? ({} as D);
  }

  /** The process exit code this failure maps to (not to be confused with a failed git's own `exitCode`). */
  get cliExitCode(): FailureExitCode {
    return EXIT_CODE_BY_ERROR[this.code];
  }
}

/** Library inputs that fail their schema at a public verb's boundary (a wrong type, a missing field). */
export class InvalidArgumentsError extends AgentvResultsError<{ verb: string; issues: readonly { path: string; message: string }[] }> {
  readonly code = 'invalid-arguments';
  constructor(
    readonly verb: string,
    readonly issues: readonly { path: string; message: string }[],
  ) {
    super(`${verb}: invalid options: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`, { data: { verb, issues } });
  }
}

/**
 * A system error's code, typed here rather than as Node's ErrnoException: model/ imports this file
 * and the pages' scripts are type-checked without Node's types.
 */
type Errno = { code?: string; path?: string };

/** True when `err` is the kernel saying the disk (ENOSPC) or the user's quota (EDQUOT) is full. */
export function isNoSpace(err: unknown): boolean {
  const code = (err as Errno | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** True when `err` is the kernel refusing a write to a read-only filesystem (EROFS). */
export function isReadOnlyFs(err: unknown): boolean {
  return (err as Errno | null)?.code === 'EROFS';
}

/** True for a write the disk refused: full (ENOSPC), over quota (EDQUOT) or read-only (EROFS). */
export function isDiskRefusal(err: unknown): boolean {
  return isNoSpace(err) || isReadOnlyFs(err);
}

/**
 * A write the disk refused (ENOSPC, EDQUOT: `no-space`; EROFS: `read-only`; both exit 3, the
 * environment): what was being written and that nothing half-written is taken as done.
 */
export class DiskError extends AgentvResultsError<{ errno: string; path?: string }> {
  readonly code: 'no-space' | 'read-only';
  /** `options.data.path`: the file being written (default: the cause's own `path`, when it has one). */
  constructor(
    message: string,
    readonly errno: string,
    options?: ErrorDataOptions<{ path?: string }>,
  ) {
    const path = options?.data?.path ?? (options?.cause as Errno | undefined)?.path;
    super(message, { cause: options?.cause, data: { errno, ...(path !== undefined ? { path } : {}) } });
    this.code = errno === 'EROFS' ? 'read-only' : 'no-space';
  }
}

/**
 * `err` as a DiskError when the disk refused the write (`what`: what was being written, e.g.
 * "the site into /srv/site"); any other error is returned as it is.
 */
export function diskErrorOf(err: unknown, what: string): unknown {
  if (!isDiskRefusal(err) || err instanceof AgentvResultsError) return err;
  const errno = (err as Errno).code!;
  const why = errno === 'EROFS' ? 'the filesystem is read-only (EROFS)' : `no space left on the device (${errno})`;
  const fix = errno === 'EROFS' ? 'make it writable or choose another place' : 'free some space';
  return new DiskError(`${why} while writing ${what}; nothing half-written is taken as done — ${fix} and run the command again`, errno, { cause: err });
}

/**
 * The exit code for anything thrown: our errors by code; a zod failure is bad input; a full disk is
 * the environment, and so is a read-only filesystem; anything else (a bug, an unexpected system error) is `EXIT.bug` (70), never the
 * failed check's 1.
 */
export function exitCodeFor(err: unknown): FailureExitCode {
  if (err instanceof AgentvResultsError) return err.cliExitCode;
  if ((err as Error | null)?.name === 'ZodError') return EXIT.usage;
  if (isDiskRefusal(err)) return EXIT.git;
  return EXIT.bug;
}

/** True when `err` is not one of ours (exit 70): the CLI says it is a bug and what to report. */
export function isUnexpectedError(err: unknown): boolean {
  return exitCodeFor(err) === EXIT.bug;
}

/** Where to report a bug, and what to include. */
export const BUG_REPORT_HINT =
  'this is a bug in agentv-results, not a failed check: please report it with the command you ran, this message, `agentv-results --version`, and the stack trace printed with AGENTV_RESULTS_DEBUG=1';

/** True when `err` says the path does not exist (ENOENT; ENOTDIR: a parent is a file). Nothing else counts as absent. */
export function isAbsent(err: unknown): boolean {
  const code = (err as Errno | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * A `.catch` handler for "absent is fine": `value` when the path does not exist, and any other
 * error (unreadable, a pipe, too large, a full disk) thrown on, never read as absence.
 */
export function absentAs<T>(value: T): (err: unknown) => T {
  return (err) => {
    if (isAbsent(err)) return value;
    throw err;
  };
}
