/**
 * Errors of reading runs: the results branch (list, status, pull), where a run lives on it, a run
 * directory or results file on disk, an export source. Each says which exit code family it belongs
 * to (ARCHITECTURE.md, exit codes), so the CLI maps it without parsing messages:
 *   input  -> 2  (a run id that could escape runs/, a destination that exists)
 *   not-found -> 2 (a run, commit or name that is not there; code `not-found`, HTTP 404)
 *   check  -> 1  (the command ran and what it verified failed: a payload's sha256 or size)
 *   git    -> 3  (the remote could not be fetched, an object the branch points at is missing)
 */
import { AgentvResultsError, type ErrorDataOptions } from './errors.js';

export type ReadErrorKind = 'input' | 'not-found' | 'check' | 'git';

/** Where a failed read was: the run, the path (on the branch or on disk) and the ref or commit read, where known. */
export interface ReadWhere {
  runId?: string;
  path?: string;
  ref?: string;
}

/** A read of the results branch that failed: bad input, a run not found, a check that failed, or git. */
export class ReadError extends AgentvResultsError<ReadWhere & { kind: ReadErrorKind }> {
  readonly code: 'read-input' | 'not-found' | 'read-check' | 'read-git';
  /** `where`: the run, path and ref the read was about (an optional last parameter; kept in `data`). */
  constructor(message: string, kind: ReadErrorKind, where: ReadWhere = {}) {
    super(message, { data: { kind, ...where } });
    this.code = kind === 'not-found' ? 'not-found' : `read-${kind}`;
  }

  get kind(): ReadErrorKind {
    return this.data.kind;
  }
}

/** The retention that removed a run, as `RunExpiredError` carries it (layout/retention-log.ts's RetentionRemoval is one). */
export interface ExpiredRunRemoval {
  record: { id: string; at: string; policy: { keep_days: number | null; keep_runs: number | null; keep_tags: readonly string[] } };
  /** The results branch the run was removed from and its tip just before. */
  results: { branch: string; tip: string };
  /** The artifacts branch and its tip just before, when that retention changed it. */
  artifacts: { branch: string; tip: string } | null;
  /** The run's directory on those branches. */
  path: string;
  /** The commit that removed it, when known. */
  commit: string | null;
}

/**
 * The run was on the branch and a retention (`expire`) removed it: not "not found" — this says
 * which retention and commit, and where git history still holds it (exit 2, like any run that is
 * not on the branch). `removal` carries the branch, the tip before and the commit as data;
 * `policy`: the retention policy in words, as the thrower says it (default: its fields).
 */
export class RunExpiredError<R extends ExpiredRunRemoval = ExpiredRunRemoval> extends AgentvResultsError<{ runId: string; removal: R }> {
  readonly code = 'run-expired';
  constructor(
    readonly runId: string,
    readonly removal: R,
    policy?: string,
  ) {
    const { record, results, artifacts, path, commit } = removal;
    const by = commit ? `commit ${commit.slice(0, 12)}` : `the commit after ${results.tip.slice(0, 12)}`;
    const words =
      policy ??
      `keep_days ${record.policy.keep_days ?? '-'}, keep_runs ${record.policy.keep_runs ?? '-'}, keep_tags ${record.policy.keep_tags.join(', ') || '-'}`;
    super(
      [
        `run ${runId} was removed by retention on ${record.at.slice(0, 10)} (${words}): ${by} deleted ${path}/ from ${results.branch}.`,
        `Git history still holds it. Get it back with:`,
        `  agentv-results pull ${runId} --at ${results.tip}${artifacts ? ' --with-artifacts' : ''}`,
        `  git show ${results.tip}:${path}/summary.json${artifacts ? `   (payloads: git show ${artifacts.tip}:${path}/<file>)` : ''}`,
        `To keep it for good, publish the pulled copy again and tag it with a tag the policy keeps (e.g. +baseline).`,
      ].join('\n'),
      { data: { runId, removal } },
    );
  }
}

/** A run id or path that has no place on the results branch (unsafe, reserved, neither `<run_id>` nor `<experiment>/<timestamp>`). `data`: the id or path refused. */
export class LayoutError extends AgentvResultsError<{ runId?: string; path?: string }> {
  readonly code = 'layout';
  constructor(message: string, options?: ErrorDataOptions<{ runId?: string; path?: string }>) {
    super(message, options);
  }
}

/** A run directory or results file that cannot be read as an AgentV run. `data.path`: the directory or file. */
export class RunReadError extends AgentvResultsError<{ path?: string }> {
  readonly code = 'run-read';
  constructor(message: string, options?: ErrorDataOptions<{ path?: string }>) {
    super(message, options);
  }
}

/** An export source that cannot be used (missing, not an AgentV results file or run directory). `data.path`: the source. */
export class SourceError extends AgentvResultsError<{ path?: string }> {
  readonly code = 'source';
  constructor(message: string, options?: ErrorDataOptions<{ path?: string }>) {
    super(message, options);
  }
}
