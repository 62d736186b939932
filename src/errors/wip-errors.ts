/** The error of WIP checkpoints (checkpoint, list, recover, clean). */
import { AgentvResultsError } from './errors.js';

/** Where a WIP failure was: the run directory, the WIP branch and the stored object, where known. */
export interface WipWhere {
  runDir?: string;
  branch?: string;
  path?: string;
}

/** A WIP checkpoint, listing, recovery or clean that cannot go on (a run directory gone, a full disk, a branch that does not read back). */
export class WipError extends AgentvResultsError<WipWhere & { noSpace: boolean; corrupt: boolean }> {
  readonly code: 'wip' | 'no-space' | 'read-check';
  /**
   * `noSpace`: the disk (or quota) is full — an environment failure (exit 3), not bad input.
   * `corrupt`: a stored object does not match its pointer — the same failure, and code
   * (`read-check`, exit 1), as `pull` reading that object. `where` (an optional last parameter):
   * the run directory, branch and path, kept in `data`.
   */
  constructor(
    message: string,
    readonly noSpace = false,
    readonly corrupt = false,
    where: WipWhere = {},
  ) {
    super(message, { data: { noSpace, corrupt, ...where } });
    this.code = noSpace ? 'no-space' : corrupt ? 'read-check' : 'wip';
  }
}
