import { chmodSync } from 'node:fs';
import { checkOutputDir } from '../util/output-target.js';
import { safeRelativePath } from '../runs/read/run-files.js';
import { basename, dirname, join, resolve } from 'node:path';
import { catFile, lsTree, readBlobs, type Repo, type TreeEntry } from '../git/index.js';
import { AtomicDir } from '../runs/export/atomic-dir.js';
import { presumedRunLocation, runLocationCandidates, type RunLocation } from '../layout/branch-layout.js';
import { LayoutError, ReadError, RunExpiredError } from '../errors/read-errors.js';
import { describePolicy, findRetentionRemoval, parseRetentionLog, RETENTION_LOG_PATH } from '../layout/retention-log.js';
import { archivedRunPaths, archiveShards } from '../layout/archive-refs.js';
import { archiveBranchRefs, branchRefs, branchTips, fetchBranches, readView, type BranchRefs, type ReadView } from '../repo/remote-view.js';
import { resolveTarget, withRefView, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { trackingRef } from '../repo/tracking-refs.js';
import { OBJECT_STORE_REF } from '../store/object-store.js';
import { flag, fnOf, objectOf, parseOptions, TargetFieldsDirLast } from '../options/verb-options.js';
import * as z from 'zod';
import { payloadPointers, readPayloads, restoredFiles, type RunFile } from './pull-payloads.js';

/** `pull`'s options, parsed at its door (the `pull` command's flags come from the same fields, in this order). */
export const PullOptionsSchema = z.strictObject({
  /** `<experiment>/<timestamp>`, as `list` shows it. */
  runId: z.string(),
  /** The workspace directory to create (default: .agentv/results/<run_id> under cwd). */
  out: z.string().optional().meta(flag('--out <dir>', 'Workspace directory to create (default: .agentv/results/<run_id>)')),
  /** Also materialize the heavy payloads from the artifacts branch. */
  withArtifacts: z
    .boolean()
    .default(false)
    .meta(flag('--with-artifacts', 'Also fetch the heavy payloads from the artifacts branch, verifying sha256 and size')),
  /** Refresh the remote-tracking ref of the results branch first. */
  fetch: z.boolean().default(false).meta(flag('--fetch', 'Fetch the results branch from the remote first')),
  /** Replace a run workspace already at the destination (util/output-target.ts: never a file or a foreign directory). */
  force: z.boolean().default(false).meta(flag('--force', 'Replace a run workspace already at the destination (never a file or a directory that is not a run)')),
  /**
   * Read the run from this commit of the branch's history instead of the tips (a run removed by
   * retention: the commit its error names). Payloads come from the branches and, when a retention
   * removed them, from the artifacts tip that retention recorded.
   */
  at: z
    .string()
    .optional()
    .meta(flag('--at <commit>', "Read the run from this commit of the branches' history (a run removed by retention: the commit its message names)")),
  ...TargetFieldsDirLast,
  /** What the pull is doing now (`fetching from origin`, `reading 17 payloads`), for a progress line. */
  onStep: fnOf<(step: string) => void>().optional(),
  timeoutMs: z.number().optional(),
  /** @internal A target resolved once by a reader that asks many questions (repo/target.ts `resolved`). */
  resolved: objectOf<PublishTarget>().optional(),
});

/** What a caller passes (a target resolved once is the package's own: internal). */
export interface PullOptions extends Omit<z.input<typeof PullOptionsSchema>, 'resolved'> {
  /** @internal */
  resolved?: PublishTarget;
}

/** Where a reader's options (a listing's: filters, page, fetch …) read from: the part `pull` takes (the target, its timeout, a resolved target). */
export function pullWhere(opts: (TargetOptions & { timeoutMs?: number }) | undefined): TargetOptions & { timeoutMs?: number } {
  if (!opts) return {};
  const { remote, configFile, project, env, overrides, timeoutMs, resolved } = opts;
  return { remote, configFile, project, env, overrides, timeoutMs, resolved };
}

export interface PullResult {
  runId: string;
  dir: string;
  /** Which tip the run was read from: the local branch, or the remote-tracking ref. */
  /** `archive`: rollover moved the run to its month's archive branch (src/archive/rollover.ts); `history`: read `at` a commit. */
  source: 'local' | 'remote' | 'archive' | 'history';
  commit: string;
  /** The live branch as this pull saw it: which tip is newest, and how fresh the remote side is. */
  read: ReadView;
  /** Files written from the results branch, and their total size. */
  files: number;
  bytes: number;
  payloads: {
    /** Payloads the index points at. */
    pointed: number;
    /** Payloads written (0 without withArtifacts). */
    written: number;
    bytes: number;
    /** True when the artifacts branch had to be fetched to find them. */
    fetched: boolean;
    /** Of `pointed`, those whose pointer names the object store (storage_mode hybrid), not the artifacts branch. */
    inBucket: number;
    /** Of `written`, those read from the object store. */
    fromBucket: number;
  };
}

/** Write a published run (and, when asked, its artifacts) back to a directory, as `agentv-results pull` does. */
export async function pull(options: PullOptions): Promise<PullResult> {
  const opts = parseOptions('pull', PullOptionsSchema, options);
  let loc: RunLocation;
  try {
    loc = presumedRunLocation(opts.runId);
  } catch (err) {
    if (err instanceof LayoutError) throw new ReadError(`${err.message} — a run id is a run directory that \`agentv-results list\` shows`, 'input');
    throw err;
  }
  const cwd = opts.cwd;
  // AgentV's local layout: runs are the direct children of .agentv/results/.
  const dest = resolve(cwd, opts.out ?? join('.agentv', 'results', loc.path));
  // The output-target rule: only a run workspace (with --force) or an empty directory is replaced.
  const there = await checkOutputDir(dest, { command: 'pull', hint: 'pass --out <dir> to pull elsewhere' });
  if (there === 'workspace' && !opts.force) {
    throw new ReadError(`${dest} already exists — pass --force to replace it, or --out <dir> to pull elsewhere`, 'input');
  }
  const resolved = await resolveTarget(opts);
  const results = branchRefs(resolved, 'results');
  if (opts.fetch) {
    opts.onStep?.(`fetching from ${resolved.remote ?? 'the remote'}`);
    await fetchBranches(resolved, [results], { timeoutMs: opts.timeoutMs });
  }
  // Every ref the pull reads, in one process (after the fetch: that moved some; a later fetch drops it).
  const target = await withRefView(resolved);

  opts.onStep?.('reading the run');
  const view = await readView(target, results, { fetched: opts.fetch });
  const found = opts.at !== undefined ? await findRunAt(target, loc, opts.at) : await findRunTree(target, results, loc, opts.fetch, view);
  loc = found.loc;
  const files = await readRunFiles(target.repo, loc, found.entries, found.base);
  const pointers = payloadPointers(loc, files);

  let payloadFiles: RunFile[] = [];
  let originals: RunFile[] = [];
  let fetched = false;
  let fromBucket = 0;
  if (opts.withArtifacts && pointers.length > 0) {
    opts.onStep?.(`reading ${pointers.length} payloads`);
    const extra = opts.at !== undefined ? await retainedArtifactTips(target, results, found.tip) : [];
    let restore: Buffer | null;
    ({ files: payloadFiles, fetched, restore, fromBucket } = await readPayloads(target, loc, pointers, opts.timeoutMs, extra));
    if (restore) originals = await restoredFiles(target, loc, files, restore, opts.timeoutMs, extra);
  }

  // An original replaces the branch's version of its file (a map: one write per path).
  const byPath = new Map<string, RunFile>();
  for (const f of [...files, ...payloadFiles, ...originals]) byPath.set(f.path, f);
  opts.onStep?.(`writing ${byPath.size} files`);
  await writeRunDir(dest, byPath.values());
  return {
    runId: loc.runId,
    dir: dest,
    source: found.source,
    commit: found.tip,
    read: view,
    files: files.length,
    bytes: files.reduce((n, f) => n + f.data.length, 0),
    payloads: {
      pointed: pointers.length,
      written: payloadFiles.length,
      bytes: payloadFiles.reduce((n, f) => n + f.data.length, 0),
      fetched,
      inBucket: pointers.filter((p) => p.ref === OBJECT_STORE_REF).length,
      fromBucket,
    },
  };
}

/**
 * The run's tree entries on the local branch, else on the remote-tracking ref; at the branch root
 * first, then where the older layout put it (`runs/<experiment>/<day>/<timestamp>`); then its
 * month's archive branch; else why it is gone (RunExpiredError) or that no branch has it (ReadError).
 */
export async function findRunTree(
  target: PublishTarget,
  results: BranchRefs,
  loc: RunLocation,
  fetched: boolean,
  view: ReadView,
): Promise<{ tip: string; source: 'local' | 'remote' | 'archive'; entries: TreeEntry[]; loc: RunLocation; base: string }> {
  const tips = view.tips;
  const candidates: { tip: string; source: 'local' | 'remote' | 'archive' }[] = [];
  if (tips.local) candidates.push({ tip: tips.local, source: 'local' });
  if (tips.remote && tips.remote !== tips.local) candidates.push({ tip: tips.remote, source: 'remote' });
  // The newest tip first (after --fetch: what the remote has), so a run others added rows to is
  // materialized as they left it, not from a local branch that is behind.
  if (view.newest === 'remote') candidates.reverse();
  const places = runLocationCandidates(loc.runId);
  const search = async (list: typeof candidates) => {
    for (const where of places) {
      for (const c of list) {
        const entries = await lsTree(target.repo, c.tip, { path: `${where.path}/`, recursive: true });
        if (entries.length > 0) return { ...c, entries, loc: where, base: where.path };
      }
    }
    return null;
  };
  const live = await search(candidates);
  if (live) return live;
  // On an archive branch the run sits in a day folder (or, in archives from before the sharding,
  // at its live path): archive-refs.ts archivedRunPaths names the places, in order.
  const searchArchive = async (list: { tip: string; source: 'archive' }[]) => {
    for (const c of list) {
      const found = await inArchive(target.repo, c.tip, places);
      if (found) return { ...c, ...found };
    }
    return null;
  };
  // Then the archive branch of the run's month, where rollover moved it: this machine's copy, else
  // the remote's (fetched into its tracking ref only now, when the live branch does not have the run).
  const archive = archiveBranchRefs(target, loc.day).results;
  const archived = await searchArchive(await archiveCandidates(target, archive, false));
  if (archived) return archived;
  if (target.remote) {
    const fetchedArchive = await searchArchive(await archiveCandidates(target, archive, true));
    if (fetchedArchive) return fetchedArchive;
  }
  // Not on any branch now: did a retention remove it? Then say so, and where history holds it.
  const liveTips = [tips.local, tips.remote].filter((t): t is string => t !== null);
  const removal = await findRetentionRemoval(
    target.repo,
    liveTips,
    places.flatMap((p) => archivedRunPaths(p.day, p.path)),
    async (branch) => {
      const ref = `refs/heads/${branch}`;
      const b: BranchRefs = { kind: 'results', name: branch, ref, tracking: target.remote ? trackingRef(target.remote, ref) : null };
      const t = await branchTips(target, b);
      return [t.local, t.remote].filter((x): x is string => x !== null);
    },
  );
  if (removal) throw new RunExpiredError(loc.runId, removal, describePolicy(removal.record.policy));
  const where = results.tracking ? `${results.name} (local) nor on ${results.tracking.slice('refs/remotes/'.length)}` : results.name;
  const hint = target.remote && !fetched ? '; pass --fetch to look at what the remote has now' : '';
  throw new ReadError(`run ${loc.runId} is not on ${where} — \`agentv-results list\` shows the published runs${hint}`, 'not-found');
}

/** The run as it was in commit `at` (any commit of the branches' history). */
async function findRunAt(
  target: PublishTarget,
  loc: RunLocation,
  at: string,
): Promise<{ tip: string; source: 'history'; entries: TreeEntry[]; loc: RunLocation; base: string }> {
  const commit = /[\n\0]/.test(at) ? null : await catFile(target.repo, `${at}^{commit}`);
  if (!commit)
    throw new ReadError(`--at ${JSON.stringify(at)}: no such commit in ${target.repo.commonDir} (fetch the branch whose history holds it)`, 'not-found');
  const places = runLocationCandidates(loc.runId);
  for (const where of places) {
    const entries = await lsTree(target.repo, commit.sha, { path: `${where.path}/`, recursive: true });
    if (entries.length > 0) return { tip: commit.sha, source: 'history', entries, loc: where, base: where.path };
  }
  // A commit of an archive branch (a retention's "before" tip): the run in its day folder.
  const archived = await inArchive(target.repo, commit.sha, places);
  if (archived) return { tip: commit.sha, source: 'history', ...archived };
  throw new ReadError(`run ${loc.runId} is not in commit ${commit.sha.slice(0, 12)} (looked for ${loc.path}/)`, 'not-found');
}

/** The artifacts tips that retentions recorded next to the results tip `at`: where a removed run's payloads still are. */
async function retainedArtifactTips(target: PublishTarget, results: BranchRefs, at: string): Promise<string[]> {
  const tips = await branchTips(target, results);
  const specs = [tips.local, tips.remote].filter((t): t is string => t !== null).map((t) => `${t}:${RETENTION_LOG_PATH}`);
  const logs = await readBlobs(target.repo, specs);
  const out = new Set<string>();
  for (const data of logs.values())
    for (const record of parseRetentionLog(data?.toString('utf8') ?? ''))
      for (const area of record.from) if (area.results?.tip === at && area.artifacts) out.add(area.artifacts.tip);
  return [...out];
}

/** An archive branch's local and tracking tips; with `fetch`, its tracking ref refreshed first (a remote that is down counts as having nothing). */
async function archiveCandidates(target: PublishTarget, b: BranchRefs, fetch: boolean): Promise<{ tip: string; source: 'archive' }[]> {
  if (fetch) {
    const ok = await fetchBranches(target, [b]).then(
      () => true,
      () => false,
    );
    if (!ok) return [];
  }
  const t = await branchTips(target, b);
  return [...new Set([t.local, t.remote].filter((x): x is string => x !== null))].map((tip) => ({ tip, source: 'archive' as const }));
}

/**
 * The run on an archive tip: the places archivedRunPaths names for each location candidate (its
 * day folder, its live path), then every other day folder of the tip (a run whose catalog day is
 * not the day of its id). `loc.day` of the answer is the day folder it was found in, so its
 * payloads are looked up in the same folder of the artifacts archive.
 */
async function inArchive(repo: Repo, tip: string, places: RunLocation[]): Promise<{ entries: TreeEntry[]; loc: RunLocation; base: string } | null> {
  const shards = archiveShards((await lsTree(repo, tip)).filter((e) => e.type === 'tree').map((e) => e.path));
  for (const where of places)
    for (const base of archivedRunPaths(where.day, where.path, shards)) {
      const entries = await lsTree(repo, tip, { path: `${base}/`, recursive: true });
      if (entries.length === 0) continue;
      const day = base === where.path ? where.day : base.slice(0, base.length - where.path.length - 1);
      return { entries, loc: { ...where, day }, base };
    }
  return null;
}

/** A run's workspace written atomically at `dest` (a temporary directory beside it, renamed into place). */
export async function writeRunDir(dest: string, files: Iterable<RunFile>): Promise<void> {
  const out = await AtomicDir.create(dirname(dest), { hint: basename(dest) });
  try {
    for (const f of files) {
      out.writeSync(f.path, f.data);
      if (f.executable) chmodSync(out.path(f.path), 0o755);
    }
    await out.commit(basename(dest));
  } catch (err) {
    await out.abort();
    throw err;
  }
}

/** The run's files from its tree entries under `base` (its path on the tip it was found on), relative to the run. */
async function readRunFiles(repo: Repo, loc: RunLocation, entries: TreeEntry[], base: string): Promise<RunFile[]> {
  const wanted = runFileEntries(loc, entries, base);
  const blobs = await readBlobs(repo, [...new Set(wanted.map((w) => w.sha))]);
  return runFilesFrom(loc, repo, wanted, blobs);
}

/** A run's files from the blobs read for its entries (a missing blob is a broken repository). */
export function runFilesFrom(loc: RunLocation, repo: Repo, wanted: RunFileEntry[], blobs: Map<string, Buffer | null>): RunFile[] {
  return wanted.map((w) => {
    const data = blobs.get(w.sha);
    if (!data) throw new ReadError(`object ${w.sha} (${loc.path}/${w.path}) is missing from ${repo.commonDir} — run \`git fsck\``, 'git');
    return { path: w.path, data, executable: w.executable };
  });
}

export interface RunFileEntry {
  path: string;
  sha: string;
  executable: boolean;
}

/** The run's tree entries under `base` checked (regular files only, every path inside the run), relative to the run. */
export function runFileEntries(loc: RunLocation, entries: TreeEntry[], base: string): RunFileEntry[] {
  const prefix = `${base}/`;
  const wanted: RunFileEntry[] = [];
  for (const e of entries) {
    const rel = e.path.slice(prefix.length);
    if (e.type !== 'blob' || (e.mode !== '100644' && e.mode !== '100755')) {
      throw new ReadError(
        `refusing to pull ${loc.runId}: ${rel} on the results branch is a ${e.mode === '120000' ? 'symlink' : e.type} — only regular files are materialized`,
        'input',
      );
    }
    if (!e.path.startsWith(prefix) || safeRelativePath(rel) !== rel) {
      throw new ReadError(`refusing to pull ${loc.runId}: ${JSON.stringify(e.path)} would land outside the run directory`, 'input');
    }
    wanted.push({ path: rel, sha: e.sha, executable: e.mode === '100755' });
  }
  return wanted;
}
