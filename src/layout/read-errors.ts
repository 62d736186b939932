/**
 * Errors of the reading commands (list, status, pull). Each says which exit code family it belongs
 * to (ARCHITECTURE.md, exit codes), so the CLI maps it without parsing messages:
 *   input  -> 2  (a run id that could escape runs/, a destination that exists)
 *   not-found -> 2 (a run, commit or name that is not there; code `not-found`, HTTP 404)
 *   check  -> 1  (the command ran and what it verified failed: a payload's sha256 or size)
 *   git    -> 3  (the remote could not be fetched, an object the branch points at is missing)
 */
import { AgentvResultsError } from '../errors/errors.js';
import { describePolicy, type RetentionRemoval } from './retention-log.js';

export type ReadErrorKind = 'input' | 'not-found' | 'check' | 'git';

/** A read of the results branch that failed: bad input, a run not found, a check that failed, or git. */
export class ReadError extends AgentvResultsError {
  readonly code: 'read-input' | 'not-found' | 'read-check' | 'read-git';
  constructor(
    message: string,
    readonly kind: ReadErrorKind,
  ) {
    super(message);
    this.code = kind === 'not-found' ? 'not-found' : `read-${kind}`;
  }
}

/**
 * The run was on the branch and a retention (`expire`) removed it: not "not found" — this says
 * which retention and commit, and where git history still holds it (exit 2, like any run that is
 * not on the branch). `removal` carries the branch, the tip before and the commit as data.
 */
export class RunExpiredError extends AgentvResultsError {
  readonly code = 'run-expired';
  constructor(
    readonly runId: string,
    readonly removal: RetentionRemoval,
  ) {
    const { record, results, artifacts, path, commit } = removal;
    const by = commit ? `commit ${commit.slice(0, 12)}` : `the commit after ${results.tip.slice(0, 12)}`;
    super(
      [
        `run ${runId} was removed by retention on ${record.at.slice(0, 10)} (${describePolicy(record.policy)}): ${by} deleted ${path}/ from ${results.branch}.`,
        `Git history still holds it. Get it back with:`,
        `  agentv-results pull ${runId} --at ${results.tip}${artifacts ? ' --with-artifacts' : ''}`,
        `  git show ${results.tip}:${path}/summary.json${artifacts ? `   (payloads: git show ${artifacts.tip}:${path}/<file>)` : ''}`,
        `To keep it for good, publish the pulled copy again and tag it with a tag the policy keeps (e.g. +baseline).`,
      ].join('\n'),
    );
  }
}
