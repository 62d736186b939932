/** Errors of the Dashboard server: a request's failure with its HTTP status, a server that will not start as asked. */
import { AgentvResultsError, type ErrorDataOptions } from './errors.js';

/** A Dashboard request's failure, with the HTTP status it is answered with. */
export class HttpError extends AgentvResultsError<{ status: number; extra: Record<string, unknown> }> {
  readonly code = 'http';
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message, { data: { status, extra } });
  }
}

/** The Dashboard server will not start as asked (a host beyond this machine without `allowRemote`). `data.host`: the host asked. */
export class ServeError extends AgentvResultsError<{ host?: string }> {
  readonly code = 'serve';
  constructor(message: string, options?: ErrorDataOptions<{ host?: string }>) {
    super(message, options);
  }
}
