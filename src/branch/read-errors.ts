/**
 * Errors of the reading commands (list, status, pull). Each says which exit code family it belongs
 * to (ARCHITECTURE.md, exit codes), so the CLI maps it without parsing messages:
 *   input  -> 2  (a run id that does not exist or could escape runs/, a destination that exists)
 *   check  -> 1  (the command ran and what it verified failed: a payload's sha256 or size)
 *   git    -> 3  (the remote could not be fetched, an object the branch points at is missing)
 */
import { AgentvResultsError } from '../util/errors.js';

export type ReadErrorKind = 'input' | 'check' | 'git';

export class ReadError extends AgentvResultsError {
  readonly code: 'read-input' | 'read-check' | 'read-git';
  constructor(
    message: string,
    readonly kind: ReadErrorKind,
  ) {
    super(message);
    this.code = `read-${kind}`;
  }
}
