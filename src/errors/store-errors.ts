/** The error of the object store (hybrid storage's bucket). */
import { AgentvResultsError } from './errors.js';

export type ObjectStoreFailure = 'unreachable' | 'credentials' | 'no-bucket' | 'server' | 'config';

/** Which call failed, on which bucket and key, where known. */
export interface ObjectStoreWhere {
  /** The call: `put`, `head`, `get`, `multipart`, `config`, … */
  operation?: string;
  bucket?: string;
  key?: string;
}

/** The object store (hybrid storage's bucket) failed or is misconfigured; `failure` says how. */
export class ObjectStoreError extends AgentvResultsError<ObjectStoreWhere & { failure: ObjectStoreFailure }> {
  readonly code = 'object-store';
  constructor(
    message: string,
    /** What failed: `unreachable` and `server` are worth retrying later (the run stays pending). */
    readonly failure: ObjectStoreFailure,
    /** The call, bucket and key (an optional last parameter; kept in `data`). */
    where: ObjectStoreWhere = {},
  ) {
    super(message, { data: { failure, ...where } });
  }
  get transient(): boolean {
    return this.failure === 'unreachable' || this.failure === 'server';
  }
}
