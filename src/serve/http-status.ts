/**
 * The library's typed errors as HTTP statuses, chosen by the error's `code` (never by its message),
 * as the CLI picks exit codes by the same code: a code with a status of its own (404, 409, 422),
 * else by its exit-code family (2 bad input -> 400, 3 git or remote -> 502); anything that is not
 * an AgentvResultsError is a bug -> 500.
 */
import { AgentvResultsError, EXIT, type ErrorCode } from '../errors/errors.js';
import { TagRevisionMismatch, FeedbackRevisionMismatch } from '../errors/overlay-errors.js';
import { HttpError } from '../errors/serve-errors.js';

/** Codes whose HTTP status is more precise than their exit-code family's. */
const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  'not-found': 404,
  'run-expired': 404,
  'tag-revision-mismatch': 409,
  'feedback-revision-mismatch': 409,
  'read-check': 422,
};

/** The HTTP status of an error code: its own, else its exit-code family's. */
export function httpStatusFor(err: AgentvResultsError): number {
  const own = STATUS_BY_CODE[err.code];
  if (own !== undefined) return own;
  const exit = err.cliExitCode;
  return exit === EXIT.usage ? 400 : exit === EXIT.git ? 502 : 422;
}

export function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof TagRevisionMismatch || err instanceof FeedbackRevisionMismatch)
    return new HttpError(409, message, { expected: err.expected, actual: err.actual });
  if (err instanceof AgentvResultsError) return new HttpError(httpStatusFor(err), message);
  return new HttpError(500, message);
}
