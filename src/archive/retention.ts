/**
 * Retention (issue 16): delete runs a policy no longer keeps, from the live branches and from the
 * month archives, in ordinary commits. Nothing is rewritten and nothing is forced: every commit
 * is a child of the branch's tip, so the removed runs stay in history (`pull --at`, `git show`).
 *
 * The policy keeps a run when ANY rule keeps it: its catalog day is within `keepDays`, it is among
 * the `keepRuns` newest (live and archived together), or it carries one of `keepTags` (its
 * `tags.json`, wherever the run lives). The rest is removed:
 *
 *   live runs      their directory from agentv/results/v1 and agentv/artifacts/v1
 *   archived runs  their directory from agentv/results-archive/v1/<m> and agentv/artifacts-archive/v1/<m>
 *   every one      its catalog row (an emptied day file is deleted), so `list` stops showing it
 *
 * One commit per branch changed, all refs moved in one compare-and-swap transaction under the
 * publish lock. The live results commit appends a line to the retention log
 * (src/layout/retention-log.ts) naming each changed branch's tip before it, which is how `pull`
 * explains a run that is gone. Every commit carries the trailer `AgentV-Retention: <id>`.
 */
import { createHash } from 'node:crypto';
import { lsTree, readBlobs, readRefs, updateRefs, writeCommit, type FileChange, type Ident, type Repo } from '../git/index.js';
import { ARCHIVE_ARTIFACTS_PREFIX, ARCHIVE_RESULTS_PREFIX, archivedRunPaths, archiveShards } from '../layout/archive-refs.js';
import type { ResultsConfig } from '../repo/config.js';
import { acquirePublishLock, type HeldLock } from '../repo/publish-lock.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { teamTip, writeBaseTips } from '../repo/team-tip.js';
import { overlayDirOf } from '../layout/branch-layout.js';
import {
  describePolicy,
  RETENTION_LOG_PATH,
  RETENTION_TRAILER,
  retentionLogLine,
  type RetentionArea,
  type RetentionPolicyRecord,
} from '../layout/retention-log.js';
import { resolveTarget, type PublishTarget } from '../repo/target.js';
import { flag, objectOf, parseOptions, TargetFieldsDirLast } from '../options/verb-options.js';
import * as z from 'zod';
import { syncIdent } from '../sync/integrate.js';
import { InvalidArgumentsError } from '../errors/errors.js';
import { readTipCatalogs, runsOnTip, runTreeIndex, type TipCatalogs } from './tip-runs.js';

/** Runs tagged `baseline` are what compare and the keep/discard loop measure against: kept unless the policy says otherwise. */
export const DEFAULT_KEEP_TAGS = ['baseline'];

/** `expireRuns`'s options, parsed at its door (the `expire` command's flags come from the same fields, in this order). */
export const RetentionOptionsSchema = z.strictObject({
  /** Keep runs whose catalog day is within this many days (default: results.retention.keep_days). */
  keepDays: z.number().int().nonnegative().optional().meta(flag('--keep-days <n>', 'Keep runs of the last n days (default: results.retention.keep_days)')),
  /** Keep the this many newest runs, live and archived together (default: results.retention.keep_runs). */
  keepRuns: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .meta(flag('--keep-runs <n>', 'Keep the n newest runs, live and archived (default: results.retention.keep_runs)')),
  /** Keep runs carrying any of these tags (default: results.retention.keep_tags, else ["baseline"]). */
  keepTags: z
    .array(z.string().min(1))
    .optional()
    .meta(flag('--keep-tag <tag>', 'Keep runs with this tag (repeatable; default: results.retention.keep_tags, else baseline)')),
  /** List what would be removed; write nothing (no commit, no ref, no fetch). */
  dryRun: z.boolean().default(false).meta(flag('--dry-run', 'List what would be removed; write nothing (no commit, no fetch)')),
  ...TargetFieldsDirLast,
  /** For tests: the clock. */
  now: z.date().optional(),
  author: objectOf<Ident>().optional(),
  /** @internal An already resolved target: skips resolving it again. */
  target: objectOf<PublishTarget>().optional(),
});

/** What a caller of `expireRuns` passes (the resolved target is the package's own: internal). */
export interface RetentionOptions extends Omit<z.input<typeof RetentionOptionsSchema>, 'target'> {
  /** @internal */
  target?: PublishTarget;
}

export interface ExpiredRun {
  run_id: string;
  path: string;
  day: string;
  /** The archive month the run was on, or null for a live run. */
  archived: string | null;
  /** The results branch it is removed from. */
  branch: string;
}

export interface RetentionResult {
  dryRun: boolean;
  policy: RetentionPolicyRecord;
  expired: ExpiredRun[];
  /** Runs past the age and count rules that a keep tag saves. */
  keptByTag: { run_id: string; tags: string[] }[];
  /** Archived runs past the rules whose month branch this machine has no copy of: left alone. */
  skipped: { run_id: string; reason: string }[];
  /** Catalogued runs (live and archived) that stay. */
  kept: number;
  /** The id of the retention log line and of the commits' trailer; null when nothing was written. */
  id: string | null;
  /** Refs moved (empty on a dry run or when nothing expired). */
  refs: { ref: string; before: string | null; after: string }[];
}

interface CatalogRun {
  run_id: string;
  path: string;
  day: string;
  timestamp: string;
  archived: string | null;
}

function wholeNumber(v: number | undefined, name: string): void {
  if (v !== undefined && !(Number.isInteger(v) && v >= 0))
    throw new InvalidArgumentsError('expire', [{ path: name, message: `expected a whole number >= 0, got ${JSON.stringify(v)}` }]);
}

/** The policy in force: options over `results.retention` over the defaults. Neither an age nor a count is refused. */
export function retentionPolicy(opts: Pick<RetentionOptions, 'keepDays' | 'keepRuns' | 'keepTags'>, config: ResultsConfig): RetentionPolicyRecord {
  wholeNumber(opts.keepDays, 'keepDays');
  wholeNumber(opts.keepRuns, 'keepRuns');
  if (opts.keepTags !== undefined && !(Array.isArray(opts.keepTags) && opts.keepTags.every((t) => typeof t === 'string' && t !== '')))
    throw new InvalidArgumentsError('expire', [{ path: 'keepTags', message: 'expected a list of non-empty tags' }]);
  const c = config.retention;
  const policy = {
    keep_days: opts.keepDays ?? c?.keep_days ?? null,
    keep_runs: opts.keepRuns ?? c?.keep_runs ?? null,
    keep_tags: [...new Set(opts.keepTags ?? c?.keep_tags ?? DEFAULT_KEEP_TAGS)],
  };
  if (policy.keep_days === null && policy.keep_runs === null) {
    throw new InvalidArgumentsError('expire', [
      {
        path: 'keepDays',
        message:
          'no retention policy: give keepDays or keepRuns (--keep-days / --keep-runs), or set results.retention in .agentv/config.yaml — a policy with neither would delete every untagged run',
      },
    ]);
  }
  return policy;
}

/**
 * Every run on the live results tip, whichever tool wrote it (catalogued ones and run directories
 * no catalog line names: tip-runs.ts `runsOnTip`), newest first (by day, then timestamp).
 */
async function branchRuns(repo: Repo, tip: string, { catalogs, foreign }: TipCatalogs): Promise<CatalogRun[]> {
  const runs = (await runsOnTip(repo, tip, catalogs, foreign)).map((r) => ({
    run_id: r.run_id,
    path: r.path,
    day: r.day,
    timestamp: r.timestamp,
    archived: r.archived ?? null,
  }));
  return runs.sort((a, b) => (a.day === b.day ? b.timestamp.localeCompare(a.timestamp) : b.day.localeCompare(a.day)));
}

/** Runs neither the age rule nor the count rule keeps. */
function pastTheRules(runs: CatalogRun[], policy: RetentionPolicyRecord, now: Date): CatalogRun[] {
  const cutoff = policy.keep_days === null ? null : new Date(now.getTime() - policy.keep_days * 86_400_000).toISOString().slice(0, 10);
  return runs.filter((r, i) => !(policy.keep_runs !== null && i < policy.keep_runs) && !(cutoff !== null && r.day >= cutoff));
}

interface MonthTips {
  results: { local: string | null; base: string | null };
  artifacts: { local: string | null; base: string | null };
}

/** Each month's archive tips: the local branch, else (never checked out here) the remote-tracking copy. */
async function monthTips(target: PublishTarget, months: string[]): Promise<Map<string, MonthTips>> {
  const refsOf = (m: string) => [ARCHIVE_RESULTS_PREFIX + m, ARCHIVE_ARTIFACTS_PREFIX + m];
  const all = months.flatMap(refsOf);
  const tracked = target.remote ? all.map((r) => trackingRef(target.remote!, r)) : [];
  const tips = await readRefs(target.repo, [...all, ...tracked]);
  const side = (ref: string) => {
    const local = tips.get(ref) ?? null;
    return { local, base: local ?? (target.remote ? (tips.get(trackingRef(target.remote, ref)) ?? null) : null) };
  };
  return new Map(months.map((m) => [m, { results: side(ARCHIVE_RESULTS_PREFIX + m), artifacts: side(ARCHIVE_ARTIFACTS_PREFIX + m) }]));
}

/** The archive months of the runs that the age and count rules no longer keep (what `expire` may touch). */
export async function monthsPastTheRules(target: PublishTarget, policy: RetentionPolicyRecord, now: Date): Promise<string[]> {
  const tip = (await teamTip(target)).tip;
  if (!tip) return [];
  const runs = pastTheRules(await branchRuns(target.repo, tip, await readTipCatalogs(target.repo, tip)), policy, now);
  return [...new Set(runs.map((r) => r.archived).filter((m): m is string => m !== null))].sort();
}

function tagsOf(data: Buffer | null | undefined): string[] {
  if (!data) return [];
  try {
    const doc = JSON.parse(data.toString('utf8')) as { tags?: unknown };
    return Array.isArray(doc?.tags) ? doc.tags.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return []; // a malformed tags.json keeps nothing; `validate` reports it
  }
}

/** Remove runs past the retention policy from the branches, keeping tagged ones, committing locally (`expireAndPush` also pushes). */
export async function expireRuns(options: RetentionOptions = {}): Promise<RetentionResult> {
  const opts = parseOptions('expireRuns', RetentionOptionsSchema, options);
  const target = opts.target ?? (await resolveTarget(opts));
  const policy = retentionPolicy(opts, target.config);
  const now = opts.now ?? new Date();
  // A dry run takes no lock and writes nothing; a real one reads and writes under the publish lock.
  const lock = opts.dryRun ? null : await acquirePublishLock(target.repo.commonDir);
  try {
    return await expireWithLock(target, policy, now, opts, lock);
  } finally {
    await lock?.release();
  }
}

async function expireWithLock(
  target: PublishTarget,
  policy: RetentionPolicyRecord,
  now: Date,
  opts: z.output<typeof RetentionOptionsSchema>,
  lock: HeldLock | null,
): Promise<RetentionResult> {
  const { repo, resultsRef, artifactsRef } = target;
  const result: RetentionResult = { dryRun: opts.dryRun, policy, expired: [], keptByTag: [], skipped: [], kept: 0, id: null, refs: [] };
  // The team's tips (repo/team-tip.ts): a fresh clone's dry run sees the runs its real run removes.
  const { results: resultsTip, artifacts: artifactsTip } = await writeBaseTips(target, { dryRun: opts.dryRun, beforeRefUpdate: () => lock?.assertHeld() });
  if (!resultsTip) return result;

  const read = await readTipCatalogs(repo, resultsTip);
  const { catalogs } = read;
  const runs = await branchRuns(repo, resultsTip, read);
  const candidates = pastTheRules(runs, policy, now);
  const months = [...new Set(candidates.map((r) => r.archived).filter((m): m is string => m !== null))].sort();
  const archives = await monthTips(target, months);
  const resultsTipOf = (r: CatalogRun) => (r.archived === null ? resultsTip : (archives.get(r.archived)?.results.base ?? null));

  // Each candidate's tags, where the run lives (one cat-file for all).
  const located = candidates.filter((r) => {
    if (resultsTipOf(r)) return true;
    const branch = (ARCHIVE_RESULTS_PREFIX + r.archived).slice('refs/heads/'.length);
    result.skipped.push({ run_id: r.run_id, reason: `archived on ${branch}, which this machine has no copy of (run expire with a remote to fetch it)` });
    return false;
  });
  // Where every candidate's directory is on each branch it may be on: one ls-tree per tip (and per
  // archive day folder), never a path lookup per run (`<tip>:<dir>` re-reads the root tree each
  // time: 10,000 runs on a root of 10,000 entries took 20 s that way).
  const liveTips = [resultsTip, artifactsTip].filter((t): t is string => t !== null);
  const ownDirs = (r: CatalogRun) => [...new Set([r.path, overlayDirOf(r.path)])];
  // An archive tip's day folders: a run is looked up in its catalog day's, then at its live path
  // (archives from before the sharding), then in the month's other days (archive-refs.ts).
  const archiveTips = [...new Set([...archives.values()].flatMap((a) => [a.results.base, a.artifacts.base]).filter((t): t is string => t !== null))];
  const shardsOf = new Map(
    await Promise.all(archiveTips.map(async (t) => [t, archiveShards((await lsTree(repo, t)).filter((e) => e.type === 'tree').map((e) => e.path))] as const)),
  );
  const pathsOn = new Map<string, string[]>();
  for (const r of candidates) {
    if (r.archived === null) continue;
    const a = archives.get(r.archived);
    for (const tip of [a?.results.base, a?.artifacts.base])
      if (tip) {
        const list = pathsOn.get(tip) ?? [];
        for (const d of ownDirs(r)) list.push(...archivedRunPaths(r.day, d, shardsOf.get(tip)));
        pathsOn.set(tip, list);
      }
  }
  const index = await runTreeIndex(repo, liveTips, candidates.filter((r) => r.archived === null).flatMap(ownDirs), pathsOn);
  /** Where the run's live path `dir` is on `tip`: the path itself on a live tip, its day folder or (older archives) the path itself on an archive tip. */
  const placeOf = (tip: string | null, r: CatalogRun, dir: string): string | null => {
    if (tip === null) return null;
    const places = liveTips.includes(tip) ? [dir] : archivedRunPaths(r.day, dir, shardsOf.get(tip));
    return places.find((p) => index(tip, p) !== null) ?? null;
  };
  const dirOf = (tip: string | null, r: CatalogRun, dir: string): string | null => {
    const at = placeOf(tip, r, dir);
    return at === null ? null : index(tip, at);
  };
  // Tags live in the run's overlay directory: its own for most runs, metadata/runs/<exp>/<ts>/ for AgentV 4.42's.
  const tagSpec = (r: CatalogRun) => `${dirOf(resultsTipOf(r), r, overlayDirOf(r.path))}:tags.json`;
  const withDir = located.filter((r) => dirOf(resultsTipOf(r), r, overlayDirOf(r.path)) !== null);
  const tagBlobs = await readBlobs(repo, withDir.map(tagSpec));
  const untagged: CatalogRun[] = [];
  for (const r of located) {
    const dir = dirOf(resultsTipOf(r), r, r.path);
    const tags = dir === null || dirOf(resultsTipOf(r), r, overlayDirOf(r.path)) === null ? [] : tagsOf(tagBlobs.get(tagSpec(r)));
    const keeping = tags.filter((t) => policy.keep_tags.includes(t));
    if (keeping.length > 0) result.keptByTag.push({ run_id: r.run_id, tags: keeping });
    else untagged.push(r);
  }
  // An archived run missing from this machine's copy of its month (archived elsewhere, not fetched
  // here) is left alone: removing only its catalog row would orphan it on the remote's archive.
  const expired = untagged.filter((r) => {
    if (r.archived === null || dirOf(resultsTipOf(r), r, r.path) !== null) return true;
    result.skipped.push({
      run_id: r.run_id,
      reason: `not on this machine's copy of ${ARCHIVE_RESULTS_PREFIX.slice('refs/heads/'.length)}${r.archived} (fetch it, or run expire with a remote)`,
    });
    return false;
  });
  result.expired = expired.map((r) => ({
    run_id: r.run_id,
    path: r.path,
    day: r.day,
    archived: r.archived,
    branch: (r.archived === null ? resultsRef : ARCHIVE_RESULTS_PREFIX + r.archived).slice('refs/heads/'.length),
  }));
  result.kept = runs.length - expired.length;
  if (opts.dryRun || expired.length === 0) return result;

  const author = opts.author ?? (await syncIdent(repo, now));
  const id = createHash('sha256')
    .update(JSON.stringify([resultsTip, artifactsTip, now.toISOString(), expired.map((r) => r.run_id)]))
    .digest('hex')
    .slice(0, 16);
  const message = `chore(results): expire ${expired.length} run${expired.length === 1 ? '' : 's'} (retention: ${describePolicy(policy)})\n\n${RETENTION_TRAILER}: ${id}\n`;
  const deletions = (tip: string | null, list: CatalogRun[]): FileChange[] =>
    tip === null
      ? []
      : list.flatMap((r) =>
          ownDirs(r).flatMap((d) => {
            const at = placeOf(tip, r, d);
            return at === null ? [] : [{ path: at, delete: true as const }];
          }),
        );

  const updates: { ref: string; new: string; old: string | null }[] = [];
  const from: RetentionArea[] = [];
  /** One commit on `base` removing `files`, when there is anything to remove. */
  const commitOn = async (ref: string, local: string | null, base: string | null, files: FileChange[]) => {
    if (base === null || files.length === 0) return null;
    const { commit } = await writeCommit(repo, { parent: base, files, message, author });
    updates.push({ ref, new: commit, old: local });
    return { branch: ref.slice('refs/heads/'.length), tip: base };
  };
  for (const m of months) {
    const a = archives.get(m)!;
    const inMonth = expired.filter((r) => r.archived === m);
    const area: RetentionArea = {
      results: await commitOn(ARCHIVE_RESULTS_PREFIX + m, a.results.local, a.results.base, deletions(a.results.base, inMonth)),
      artifacts: await commitOn(ARCHIVE_ARTIFACTS_PREFIX + m, a.artifacts.local, a.artifacts.base, deletions(a.artifacts.base, inMonth)),
    };
    if (area.results || area.artifacts) from.push(area);
  }
  const live = expired.filter((r) => r.archived === null);
  const liveArtifacts = await commitOn(artifactsRef, artifactsTip, artifactsTip, deletions(artifactsTip, live));
  from.unshift({ results: { branch: resultsRef.slice('refs/heads/'.length), tip: resultsTip }, artifacts: liveArtifacts });

  // The live results commit: run directories, catalog rows, and the retention log line.
  const gone = new Set(expired.map((r) => r.run_id));
  const changes = deletions(resultsTip, live);
  for (const c of catalogs) {
    const lines = c.lines.filter((_, i) => !(c.rows[i] && gone.has(c.rows[i]!.run_id)));
    if (lines.length === c.lines.length) continue;
    changes.push(lines.length === 0 ? { path: c.file, delete: true } : { path: c.file, data: `${lines.join('\n')}\n` });
  }
  const log = (await readBlobs(repo, [`${resultsTip}:${RETENTION_LOG_PATH}`])).get(`${resultsTip}:${RETENTION_LOG_PATH}`);
  const line = retentionLogLine({ id, at: now.toISOString(), policy, removed: expired.length, from });
  const before = log ? log.toString('utf8') : '';
  changes.push({ path: RETENTION_LOG_PATH, data: `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}${line}` });
  const { commit } = await writeCommit(repo, { parent: resultsTip, files: changes, message, author });
  updates.push({ ref: resultsRef, new: commit, old: resultsTip });

  lock?.assertHeld();
  await updateRefs(repo, updates, { message: `agentv-results: retention removed ${expired.length} runs` });
  result.id = id;
  result.refs = updates.map((u) => ({ ref: u.ref, before: u.old, after: u.new }));
  return result;
}
