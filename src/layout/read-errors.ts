/**
 * The errors of the reading commands (list, status, pull), for this folder's callers: defined with
 * every other error in src/errors/read-errors.ts (their codes and exit code families are said there).
 */
export { ReadError, RunExpiredError, type ReadErrorKind, type ReadWhere } from '../errors/read-errors.js';
