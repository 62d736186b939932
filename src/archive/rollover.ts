/**
 * Archive rollover (issue 16): runs past the live window leave `agentv/results/v1` (and their
 * payloads leave `agentv/artifacts/v1`) for per-month archive branches in our own namespace,
 * `agentv/results-archive/v1/<YYYY-MM>` and `agentv/artifacts-archive/v1/<YYYY-MM>`. AgentV's
 * Dashboard lists only the live branch, so its one recursive `ls-tree` stays under its 1 MB
 * buffer, and a publish rewrites a bounded root tree.
 *
 * Nothing is rewritten: the archive commit grafts the run's existing tree object into the folder
 * of its catalog day (`M 040000 <tree> <YYYY-MM-DD>/<dir>`: archive-refs.ts archivedPath, so the
 * commit rewrites that day's tree and a small root, not a month-wide directory), the live commit
 * deletes the directory. Both are ordinary
 * fast-forward commits; all refs move in one compare-and-swap transaction, so a crash leaves
 * either the old state or the new one, never a run on neither branch.
 *
 * Our catalog stays on the live branch: each archived run's row gains `"archived": "<YYYY-MM>"`,
 * so `list` still sees it without reading any archive, and `pull` knows which ref holds it.
 * Only rows of expired (old) days are rewritten; a concurrent publish writes today's catalog
 * file and a new root directory, so the two commits touch different paths and merge cleanly.
 */
import { readRefs, updateRefs, writeCommit, type FileChange, type Ident } from '../git/index.js';
import { writeBaseTips } from '../repo/team-tip.js';
import { catalogPathFor } from '../layout/branch-layout.js';
import { foreignCatalogChanges, foreignCatalogPath } from '../layout/foreign-catalog.js';
import { readTipCatalogs, runDirTrees, runsOnTip, type CatalogLine, type TipRun } from './tip-runs.js';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { rootCommit } from '../publish/commit-run.js';
import { flag, objectOf, parseOptions, TargetFieldsDirLast } from '../options/verb-options.js';
import * as z from 'zod';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, archivedPath, monthOf } from '../layout/archive-refs.js';
import { DEFAULT_MAX_LISTING_BYTES, listingSize, overBudget } from '../layout/listing-budget.js';

export { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, archiveRefFor } from '../layout/archive-refs.js';
export { DEFAULT_MAX_LISTING_BYTES } from '../layout/listing-budget.js';

/**
 * The live window's defaults: 30 days, never more than 200 runs, and never more than
 * DEFAULT_MAX_LISTING_BYTES of listing (listing-budget.ts) — the rule that actually keeps AgentV's
 * Dashboard alive, as its ceiling is in paths (~1,100 test results of real runs), not in runs.
 */
export const DEFAULT_KEEP_DAYS = 30;
export const DEFAULT_KEEP_RUNS = 200;

/** A whole number of days, runs or bytes (0 or more). */
const count = () => z.number().int().nonnegative();

/** `rollover`'s options, parsed at its door (the `archive` command's flags come from the same fields, in this order). */
export const RolloverOptionsSchema = z.strictObject({
  /** Runs whose catalog day is older than this many days are archived (default: results.archive.keep_days, else 30). */
  keepDays: count().optional().meta(flag('--keep-days <n>', 'Keep runs of the last n days live (default 30)')),
  /** At most this many (newest) runs stay live (default: results.archive.keep_runs, else 200). */
  keepRuns: count().optional().meta(flag('--keep-runs <n>', 'Keep at most the n newest runs live (default 200)')),
  /** The oldest live runs are archived until `git ls-tree -r --name-only` of the live branch is at most this many bytes (0: no limit). */
  maxListingBytes: count()
    .optional()
    .meta(
      flag(
        '--max-listing-bytes <n>',
        "Archive the oldest live runs until the live branch's recursive listing, which AgentV's Dashboard reads into 1 MiB, is at most n bytes (default 786432; 0: no limit)",
      ),
    ),
  /** List what would move; write nothing. */
  dryRun: z.boolean().default(false).meta(flag('--dry-run', 'List what would move; write nothing')),
  ...TargetFieldsDirLast,
  /** For tests: the clock. */
  now: z.date().optional(),
  author: objectOf<Ident>().optional(),
  /** @internal An already resolved target (the daemon, the push wrapper): skips resolving it again. */
  target: objectOf<PublishTarget>().optional(),
});

/** What a caller of `rollover` passes (the resolved target is the package's own: internal). */
export interface RolloverOptions extends Omit<z.input<typeof RolloverOptionsSchema>, 'target'> {
  /** @internal */
  target?: PublishTarget;
}

export interface ArchivedRun {
  run_id: string;
  path: string;
  day: string;
  month: string;
  /** The results archive branch it moves to. */
  ref: string;
}

export interface RolloverResult {
  dryRun: boolean;
  archived: ArchivedRun[];
  /** Live runs left on the results branch, whichever tool wrote them. */
  live: number;
  /**
   * Bytes of the live branch's recursive listing (what AgentV's Dashboard reads) before and after,
   * and the budget. `after` is measured on the new tip; on a dry run it is what the runs to move
   * were chosen by (their paths, and the catalog files the rollover adds: one path per day).
   */
  listing: { before: number; after: number; max: number };
  /**
   * Live runs another tool wrote (AgentV's auto_push) that gained a line in the foreign catalog
   * (foreign-catalog.ts), so the team's next `list` reads the line instead of their files.
   */
  catalogued: number;
  /** Refs moved (empty on a dry run or when nothing changed). */
  refs: { ref: string; before: string | null; after: string }[];
}

function catalogText(catalogs: CatalogLine[], file: string): string {
  const c = catalogs.find((x) => x.file === file);
  return c && c.lines.length > 0 ? `${c.lines.join('\n')}\n` : '';
}

/** Move runs older than the live window to the month's archive branches, committing locally (`rolloverAndPush` also pushes). */
export async function rollover(options: RolloverOptions = {}): Promise<RolloverResult> {
  const opts = parseOptions('rollover', RolloverOptionsSchema, options);
  const target = opts.target ?? (await resolveTarget(opts));
  // Flags (options) over `results.archive` in .agentv/config.yaml over the defaults.
  const keepDays = opts.keepDays ?? target.config.archive?.keep_days ?? DEFAULT_KEEP_DAYS;
  const keepRuns = opts.keepRuns ?? target.config.archive?.keep_runs ?? DEFAULT_KEEP_RUNS;
  const maxListing = opts.maxListingBytes ?? target.config.archive?.max_listing_bytes ?? DEFAULT_MAX_LISTING_BYTES;
  const { repo, resultsRef, artifactsRef } = target;
  // The team's tips (repo/team-tip.ts): a fresh clone's dry run sees the runs its real run moves.
  const { results: resultsTip, artifacts: artifactsTip } = await writeBaseTips(target, { dryRun: opts.dryRun });
  if (!resultsTip) return { dryRun: opts.dryRun, archived: [], live: 0, listing: { before: 0, after: 0, max: maxListing }, catalogued: 0, refs: [] };

  const { catalogs, foreign } = await readTipCatalogs(repo, resultsTip);
  // Every live run, whoever wrote it: AgentV's auto_push fills the listing as much as our publish.
  const live = (await runsOnTip(repo, resultsTip, catalogs, foreign)).filter((r) => r.archived === undefined);
  /**
   * Listing bytes of the catalog files a rollover of `moving` adds or removes: our day files that
   * gain their first (archived) line, and the foreign-catalog day files of the runs that stay.
   */
  const addedListing = (moving: TipRun[]): number => {
    const have = new Set([...catalogs.map((c) => c.file), ...foreign.files.map((f) => f.path)]);
    const leaving = new Set(moving.map((r) => r.path));
    const after = new Set<string>();
    for (const r of moving) if (r.files) after.add(catalogPathFor(r.day));
    for (const r of live) if (r.files && r.tree && !leaving.has(r.path)) after.add(foreignCatalogPath(r.day));
    let bytes = 0;
    for (const p of after) if (!have.has(p)) bytes += Buffer.byteLength(p) + 1;
    for (const f of foreign.files) if (!after.has(f.path)) bytes -= Buffer.byteLength(f.path) + 1;
    return bytes;
  };
  // Newest first by (day, timestamp): the first keepRuns stay whatever their age.
  live.sort((a, b) => (a.day === b.day ? b.timestamp.localeCompare(a.timestamp) : b.day.localeCompare(a.day)));
  const now = opts.now ?? new Date();
  const cutoff = new Date(now.getTime() - keepDays * 86_400_000).toISOString().slice(0, 10);
  const byAgeOrCount = live.filter((r, i) => i >= keepRuns || r.day < cutoff);
  const size = await listingSize(repo, resultsTip);
  const gone = new Set(byAgeOrCount.map((r) => r.path));
  const choose = (max: number) => (max > 0 ? [...byAgeOrCount, ...overBudget(size, live, gone, max)] : byAgeOrCount);
  // The catalog files the commit adds are listed too (one path per day): the budget leaves room
  // for them, so the listing after the rollover is within it, not just the runs' part of it.
  let expired = choose(maxListing);
  const reserve = addedListing(expired);
  if (maxListing > 0 && reserve > 0) expired = choose(Math.max(1, maxListing - reserve));
  let after = size.total + addedListing(expired);
  for (const r of expired) after -= size.byDir.get(r.path) ?? 0;
  const filesOf = new Map(expired.filter((r) => r.files).map((r) => [r.run_id, r.files!]));
  const archived: ArchivedRun[] = expired.map((r) => ({
    run_id: r.run_id,
    path: r.path,
    day: r.day,
    month: monthOf(r.day),
    ref: ARCHIVE_RESULTS_PREFIX + monthOf(r.day),
  }));
  const listing = { before: size.total, after, max: maxListing };
  // What was just read of the runs another tool wrote and that stay live goes on the branch, so
  // no other machine reads their files again (foreign-catalog.ts); lines of runs archived now go.
  const leaving = new Set(expired.map((r) => r.path));
  const staying = live.filter((r) => r.files && r.tree && !leaving.has(r.path));
  const lines = foreignCatalogChanges(
    foreign,
    staying.map((r) => ({ tree: r.tree!, row: r.files! })),
  );
  const result: RolloverResult = { dryRun: opts.dryRun, archived, live: live.length - archived.length, listing, catalogued: lines.added, refs: [] };
  if (opts.dryRun || (archived.length === 0 && lines.changes.length === 0)) return result;
  const author: Ident = opts.author ?? { name: 'agentv-results', email: 'agentv-results@localhost', date: now };
  if (archived.length === 0) {
    const n = lines.added;
    const message = `chore(results): catalog ${n} run${n === 1 ? '' : 's'} another tool published\n`;
    const after = (await writeCommit(repo, { parent: resultsTip, files: lines.changes, message, author })).commit;
    await updateRefs(repo, [{ ref: resultsRef, new: after, old: resultsTip }], { message: 'agentv-results: catalog runs another tool published' });
    result.refs = [{ ref: resultsRef, before: resultsTip, after }];
    result.listing.after = (await listingSize(repo, after)).total;
    return result;
  }

  // One listing of each root (and one cat-file for nested runs) gives every run's tree objects.
  const paths = archived.map((a) => a.path);
  const resultsTrees = await runDirTrees(repo, resultsTip, paths);
  const artifactsTrees = artifactsTip ? await runDirTrees(repo, artifactsTip, paths) : new Map<string, { path: string; tree: string }[]>();

  const byMonth = new Map<string, ArchivedRun[]>();
  for (const a of archived) byMonth.set(a.month, [...(byMonth.get(a.month) ?? []), a]);
  const archiveRefs = [...byMonth.keys()].flatMap((m) => [ARCHIVE_RESULTS_PREFIX + m, ARCHIVE_ARTIFACTS_PREFIX + m]);
  const archiveTips = await readRefs(repo, archiveRefs);
  const genesis = await rootCommit(repo);
  const updates: { ref: string; new: string; old: string | null }[] = [];

  for (const [month, runs] of byMonth) {
    for (const [prefix, trees] of [
      [ARCHIVE_RESULTS_PREFIX, resultsTrees],
      [ARCHIVE_ARTIFACTS_PREFIX, artifactsTrees],
    ] as const) {
      // Each tree at its day folder (its live path below it): archivedPath is the one home of that rule.
      const grafts = runs.flatMap((r) => (trees.get(r.path) ?? []).map((t) => ({ path: archivedPath(r.day, t.path), tree: t.tree })));
      if (grafts.length === 0) continue;
      const ref = prefix + month;
      const old = archiveTips.get(ref) ?? null;
      const moved = runs.filter((r) => trees.has(r.path)).length;
      const message = `chore(results): archive ${moved} run${moved === 1 ? '' : 's'} of ${month}\n\nAgentV-Results-Archive: ${month}\n`;
      const { commit } = await writeCommit(repo, { parent: old ?? genesis, files: [], trees: grafts, message, author });
      updates.push({ ref, new: commit, old });
    }
  }

  // Live results: drop the run directories, mark the catalog rows.
  const expiredIds = new Map(archived.map((a) => [a.run_id, a.month]));
  const deletes = (trees: Map<string, { path: string; tree: string }[]>): FileChange[] =>
    archived.flatMap((a) => (trees.get(a.path) ?? []).map((t) => ({ path: t.path, delete: true as const })));
  const liveChanges: FileChange[] = [...deletes(resultsTrees), ...lines.changes];
  for (const c of catalogs) {
    let changed = false;
    const lines = c.lines.map((l, i) => {
      const row = c.rows[i];
      const month = row && row.archived === undefined ? expiredIds.get(row.run_id) : undefined;
      if (month === undefined) return l;
      changed = true;
      return JSON.stringify({ ...(JSON.parse(l) as object), archived: month });
    });
    if (changed) liveChanges.push({ path: c.file, data: lines.join('\n') + '\n' });
  }
  // A run with no catalog line (AgentV wrote it) gains one, marked archived: it is how `list` keeps
  // showing it and `pull` finds its month, and it caches what its files said.
  const added = new Map<string, string[]>(); // catalog file -> lines to append
  for (const a of archived) {
    const f = filesOf.get(a.run_id);
    if (!f) continue;
    const row = {
      run_id: f.run_id,
      experiment: f.experiment,
      timestamp: f.timestamp,
      path: f.path,
      targets: f.targets,
      total: f.total,
      passed: f.passed,
      failed: f.failed,
      pass_rate: f.pass_rate,
      archived: a.month,
    };
    const file = catalogPathFor(a.day);
    const lines = added.get(file) ?? [];
    lines.push(JSON.stringify(row));
    added.set(file, lines);
  }
  // No line of these runs is in the catalog (that is how they were found): appended, one write per day file.
  for (const [file, lines] of added) {
    const i = liveChanges.findIndex((c) => c.path === file);
    const prior = i >= 0 ? liveChanges[i]! : null;
    const base = prior && 'data' in prior ? prior.data.toString() : catalogText(catalogs, file);
    if (i >= 0) liveChanges.splice(i, 1);
    liveChanges.push({ path: file, data: `${base}${lines.join('\n')}\n` });
  }
  const message = `chore(results): roll ${archived.length} run${archived.length === 1 ? '' : 's'} over to the archive\n`;
  const resultsAfter = (await writeCommit(repo, { parent: resultsTip, files: liveChanges, message, author })).commit;
  updates.push({ ref: resultsRef, new: resultsAfter, old: resultsTip });
  const artifactDeletes: FileChange[] = deletes(artifactsTrees);
  if (artifactsTip && artifactDeletes.length > 0) {
    const after = (await writeCommit(repo, { parent: artifactsTip, files: artifactDeletes, message, author })).commit;
    updates.push({ ref: artifactsRef, new: after, old: artifactsTip });
  }
  await updateRefs(repo, updates, { message: `agentv-results: archive rollover of ${archived.length} runs` });
  result.refs = updates.map((u) => ({ ref: u.ref, before: u.old, after: u.new }));
  // Measured on the new tip (the same as the estimate, unless a catalog file was unreadable).
  result.listing.after = (await listingSize(repo, resultsAfter)).total;
  return result;
}
