/**
 * Errors of bad input (exit 2): a file or line the user gave that cannot be used, a file the tool
 * will not read, an output path it will not write, a setting that is not a value it takes.
 */
import { AgentvResultsError, type ErrorDataOptions } from './errors.js';

/** An input problem: reported as `file:line: what — what to do`, exit code 2. `data`: the file and line, where known. */
export class InputError extends AgentvResultsError<{ path?: string; line?: number }> {
  readonly code = 'input';
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(message, { data: { ...(file !== undefined ? { path: file } : {}), ...(line !== undefined ? { line } : {}) } });
  }
}

/**
 * Why a file is refused: not a regular file (a pipe, a device, a directory), larger than its kind
 * allows, one the system will not let us read (EACCES, EIO, …), or, where only our own file may
 * be trusted (compiled code), one another user owns or may write.
 */
export type UnsafeFileReason = 'not-regular' | 'too-large' | 'unreadable' | 'not-ours';

/** A file the tool will not or cannot read: not a regular file, larger than its kind allows, or unreadable (exit 2). `data.errno`: the system's code of an unreadable one. */
export class UnsafeFileError extends AgentvResultsError<{ path: string; reason: UnsafeFileReason; errno?: string }> {
  readonly code = 'input';
  /** `errno` (an optional last parameter): the system's error code when the file could not be read. */
  constructor(
    message: string,
    readonly path: string,
    readonly reason: UnsafeFileReason,
    errno?: string,
  ) {
    super(message, { data: { path, reason, ...(errno !== undefined ? { errno } : {}) } });
  }
}

/** A path an output may not be written to, and why (exit code 2). */
export class OutputTargetError extends AgentvResultsError<{ path: string }> {
  readonly code = 'output-target';
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message, { data: { path } });
  }
}

/** A network limit set to something that is not a positive number (exit 2). `data`: the variable and the value it held. */
export class NetworkLimitError extends AgentvResultsError<{ variable?: string; value?: string }> {
  readonly code = 'config';
  constructor(message: string, options?: ErrorDataOptions<{ variable?: string; value?: string }>) {
    super(message, options);
  }
}

/** A webhook URL that cannot be used (not a URL, not http or https). `data.source`: the flag or variable it came from. */
export class WebhookError extends AgentvResultsError<{ source?: string }> {
  readonly code = 'usage';
  constructor(message: string, options?: ErrorDataOptions<{ source?: string }>) {
    super(message, options);
  }
}
