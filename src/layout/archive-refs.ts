/**
 * Where rolled-over runs live: per-month branches in our own namespace, which AgentV's listing
 * (it reads only agentv/results/v1) does not see. Named here, beside the other ref names, because
 * both the rollover that writes them and `pull` that reads them need the names.
 *
 * Inside a month branch runs are sharded by catalog day: a run that lived at `<dir>` on the live
 * branch sits at `<YYYY-MM-DD>/<dir>` (its 4.42 overlay folder `metadata/runs/<exp>/<ts>` at
 * `<YYYY-MM-DD>/metadata/runs/<exp>/<ts>`), so a rollover rewrites one day's tree, not a month's.
 * Archives written before the sharding hold the run at `<dir>` itself; every reader asks this
 * module for the places to look (archivedRunPaths) and finds either.
 */
export const ARCHIVE_RESULTS_PREFIX = 'refs/heads/agentv/results-archive/v1/';
export const ARCHIVE_ARTIFACTS_PREFIX = 'refs/heads/agentv/artifacts-archive/v1/';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The archive month of a catalog day (`YYYY-MM-DD` -> `YYYY-MM`); days we cannot read go to `undated`. */
export function monthOf(day: string): string {
  return /^\d{4}-\d{2}/.test(day) ? day.slice(0, 7) : 'undated';
}

/** The results archive branch that holds runs of this catalog day once rolled over. */
export function archiveRefFor(day: string): string {
  return ARCHIVE_RESULTS_PREFIX + monthOf(day);
}

/** The day folder of an archive branch that holds runs of this catalog day (`undated` for a day we cannot read). */
export function archiveShardOf(day: string): string {
  return DAY.test(day) ? day : 'undated';
}

/** Where a rollover puts a live path (a run directory, its overlay folder, a payload key) of a run of this catalog day. */
export function archivedPath(day: string, livePath: string): string {
  return `${archiveShardOf(day)}/${livePath}`;
}

/**
 * The places a run's live path may be on its month's archive branch, in the order to look:
 * its day folder (what the rollover writes), then the path itself (archives from before the
 * sharding). `alsoDays`: other day folders to try after those (a reader that did not know the
 * run's catalog day, e.g. the day folders a listing of the archive root found).
 */
export function archivedRunPaths(day: string, livePath: string, alsoDays: string[] = []): string[] {
  const first = archivedPath(day, livePath);
  const others = alsoDays.filter((d) => DAY.test(d) || d === 'undated').map((d) => `${d}/${livePath}`);
  return [...new Set([first, livePath, ...others])];
}

/** The day folders of an archive root (names of its top-level trees), for a reader that must look in all of them. */
export function archiveShards(rootTreeNames: string[]): string[] {
  return rootTreeNames.filter((n) => DAY.test(n) || n === 'undated');
}
