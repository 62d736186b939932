import { AgentvResultsError } from './errors.js';

/** An input problem: reported as `file:line: what — what to do`, exit code 2. */
export class InputError extends AgentvResultsError {
  readonly code = 'input';
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
  ) {
    super(message);
  }
}
