/**
 * Where rolled-over runs live: per-month branches in our own namespace, which AgentV's listing
 * (it reads only agentv/results/v1) does not see. Named here, beside the other ref names, because
 * both the rollover that writes them and `pull` that reads them need the names.
 */
export const ARCHIVE_RESULTS_PREFIX = 'refs/heads/agentv/results-archive/v1/';
export const ARCHIVE_ARTIFACTS_PREFIX = 'refs/heads/agentv/artifacts-archive/v1/';

/** The archive month of a catalog day (`YYYY-MM-DD` -> `YYYY-MM`); days we cannot read go to `undated`. */
export function monthOf(day: string): string {
  return /^\d{4}-\d{2}/.test(day) ? day.slice(0, 7) : 'undated';
}

/** The results archive branch that holds runs of this catalog day once rolled over. */
export function archiveRefFor(day: string): string {
  return ARCHIVE_RESULTS_PREFIX + monthOf(day);
}
