/**
 * The command line's own two failures: bad flags or arguments (exit 2), and a command that ran and
 * whose check failed (exit 1). Here, beside every other class, so the library can raise them too
 * (the gate and validate fail their check through the same class) and the model is one place.
 */
import { AgentvResultsError, type ErrorDataOptions } from './errors.js';

/** Bad flags or arguments (exit 2). `data.flag`: the flag or argument at fault, when one is. */
export class UsageError extends AgentvResultsError<{ flag?: string }> {
  readonly code = 'usage';
  constructor(message: string, options?: ErrorDataOptions<{ flag?: string }>) {
    super(message, options);
  }
}

/** The command ran, and what it checked failed (exit 1). `quiet`: the command already said why. */
export class CheckFailed extends AgentvResultsError<{ quiet: boolean }> {
  readonly code = 'check-failed';
  constructor(
    message: string,
    readonly quiet = false,
  ) {
    super(message, { data: { quiet } });
  }
}
