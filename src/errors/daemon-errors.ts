/** Errors of the daemon and `exec`: its outbox journal, its lock, the command it was to run. */
import { AgentvResultsError, type ErrorDataOptions } from './errors.js';

/** The daemon's outbox journal cannot be read or written (a full disk among them). `data.path`: the journal. */
export class OutboxError extends AgentvResultsError<{ noSpace: boolean; path?: string }> {
  readonly code: 'outbox' | 'no-space';
  /** `noSpace`: the disk (or quota) is full — an environment failure (exit 3), not bad input. `path` (optional last): the journal. */
  constructor(
    message: string,
    readonly noSpace = false,
    path?: string,
  ) {
    super(message, { data: { noSpace, ...(path !== undefined ? { path } : {}) } });
    this.code = noSpace ? 'no-space' : 'outbox';
  }
}

/** What a running daemon records about itself (`daemon.json`). */
export interface DaemonInfo {
  pid: number;
  host: string;
  started_at: string;
  root: string;
}

/** Another daemon already runs for this repository (it holds the daemon lock). */
export class DaemonLockedError extends AgentvResultsError<{ holder: DaemonInfo | null }> {
  readonly code = 'daemon-locked';
  constructor(
    message: string,
    readonly holder: DaemonInfo | null,
  ) {
    super(message, { data: { holder } });
  }
}

/** The command `exec` was to run is missing or cannot be started. `data`: the command and the system's error code. */
export class CommandError extends AgentvResultsError<{ command?: string; errno?: string }> {
  readonly code = 'command';
  constructor(message: string, options?: ErrorDataOptions<{ command?: string; errno?: string }>) {
    super(message, options);
  }
}
