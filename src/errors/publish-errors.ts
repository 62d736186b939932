/**
 * Errors of writing the branches: the configuration that says where, the publish lock, a publish
 * or push that cannot be done as asked, a sync branch that needs a person.
 */
import { AgentvResultsError, type ErrorDataOptions } from './errors.js';

/** Who holds a lock, as its owner record says (a process on a host). */
export interface LockHolder {
  pid: number;
  host: string;
}

/** The repository's publish lock could not be taken or kept (nothing was moved). `data`: the lock's path and its holder, when known. */
export class LockError extends AgentvResultsError<{ path?: string; holder?: LockHolder | null }> {
  readonly code = 'lock';
  constructor(message: string, options?: ErrorDataOptions<{ path?: string; holder?: LockHolder | null }>) {
    super(message, options);
  }
}

/** Where a configuration problem is: the file and the key (`projects[2].id`), where known. */
export interface ConfigWhere {
  file?: string;
  key?: string;
}

/** A configuration that cannot be used (exit 2); `notFound`: it names a project that is not there (code `not-found`). */
export class ConfigError extends AgentvResultsError<ConfigWhere & { notFound: boolean }> {
  readonly code: 'config' | 'not-found';
  constructor(message: string, opts: { notFound?: boolean } & ConfigWhere = {}) {
    const { notFound = false, ...where } = opts;
    super(message, { data: { notFound, ...where } });
    this.code = notFound ? 'not-found' : 'config';
  }
}

/** What a failed publish carries: the run, the branch and the remote, where known; `result`: what was done before it failed (a publish committed locally whose required push did not land). */
export interface PublishErrorData<R = unknown> {
  runId?: string;
  branch?: string;
  remote?: string | null;
  result?: R;
  /** A required push that did not land: the run's commits, committed locally and pending. */
  commits?: { results: string; artifacts: string };
  /** A required push that did not land: how the push ended. */
  push?: { classification: string; message: string };
}

/**
 * The results branch cannot be written or pushed as asked (a push that `requirePush` needed failed,
 * no remote to push to, a branch that is not ours).
 */
export class PublishError<R = unknown> extends AgentvResultsError<PublishErrorData<R>> {
  readonly code = 'publish';
  constructor(message: string, options?: ErrorDataOptions<PublishErrorData<R>>) {
    super(message, options);
  }
}

/**
 * `sync --resolve` cannot finish without a person: this repository's unpushed results conflict with
 * the remote's, or the sync branch does not merge even preferring the results branch (exit 1, like
 * a conflict set aside: the command ran, and what it checked needs a human). `data.branch`: the sync branch.
 */
export class SyncConflictError extends AgentvResultsError<{ branch?: string }> {
  readonly code = 'sync-conflict';
  constructor(message: string, options?: ErrorDataOptions<{ branch?: string }>) {
    super(message, options);
  }
}
