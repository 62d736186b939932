/** The library's typed errors as HTTP statuses (the CLI maps the same classes to exit codes). */
import { InputError } from '../derive/export.js';
import { ConfigError } from '../branch/config.js';
import { FeedbackRevisionMismatch, OverlayInputError, TagRevisionMismatch } from '../overlays/write.js';
import { ReadError } from '../branch/read-errors.js';
import { RunReadError } from '../results/run-reader.js';
import { HttpError } from './http.js';

export function asHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ConfigError) return new HttpError(/: no project /.test(message) || /^no project /.test(message) ? 404 : 400, message);
  if (err instanceof TagRevisionMismatch) return new HttpError(409, message, { expected: err.expected, actual: err.actual });
  if (err instanceof FeedbackRevisionMismatch) return new HttpError(409, message, { expected: err.expected, actual: err.actual });
  if (err instanceof OverlayInputError) return new HttpError(/ is not on | has no test /.test(message) ? 404 : 400, message);
  if (err instanceof ReadError)
    return new HttpError(
      err.kind === 'input' ? (/not (on|found)|does not exist|no run/i.test(message) ? 404 : 400) : err.kind === 'check' ? 422 : 502,
      message,
    );
  if (err instanceof InputError || err instanceof RunReadError) return new HttpError(400, message);
  return new HttpError(500, message);
}
