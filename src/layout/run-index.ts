/**
 * Every run directory on a results tip, whichever tool wrote it. Runs we published have a catalog
 * line (`.indexes/agentv-results.<day>.jsonl`); runs another writer put on the branch (AgentV's own
 * `auto_push`) have none, and are read from their own files instead: the run's `summary.json`
 * (AgentV's `counts` and `metadata`, or our shape) and, only when that summary does not say the
 * counts, targets and time, its index. All of them in one `git cat-file --batch` stream, never a
 * process per run.
 *
 * What was read is cached on this machine (`<git dir>/agentv-results/run-rows.v1.json`) by the
 * run's tree id and directory: a tree id names the exact bytes, so an entry is never stale, and a
 * second `list`, `archive` or `expire` of the same runs reads no run file at all.
 *
 * `list`, `pull`, `archive`, `expire`, `status`, `trend --published` and `serve` all see runs
 * through here (or through `list`, which does).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { forEachBlob, readBlobs, type Repo } from '../git/index.js';
import { jsonlObjects } from '../util/jsonl-objects.js';
import { listRunDirs, stableRunId, type BranchRunDir } from './branch-layout.js';
import { readRegularText } from '../util/safe-open.js';
import type { RunSummaryRow } from '../model/run-row.js';
import { passRate } from '../model/pass-rate.js';

export type { RunSummaryRow } from '../model/run-row.js';

/** One run as `list` shows it, read from the run's files (the catalog line of a run we did not publish). */
export interface RunFilesRow extends RunSummaryRow {
  writer: 'agentv';
}

/** The run directories of `tip`, of every layout (the one enumeration: layout.ts's `listRunDirs`). */
export async function runDirsOn(repo: Repo, tip: string): Promise<BranchRunDir[]> {
  return (await listRunDirs(repo, tip)).dirs;
}

/**
 * The key of what was read of a run directory: its tree id and its path. This machine's cache and
 * the branch's foreign catalog (foreign-catalog.ts) both key their rows by it.
 */
export function runDirKey(tree: string, path: string): string {
  return `${tree} ${path}`;
}

/** The id `list` shows for a run directory: its name at the root, `<experiment>::<timestamp>` for AgentV 4.42's. */
export function runIdOf(dir: BranchRunDir): string {
  return dir.layout === 'stable' ? stableRunId(dir.experiment!, dir.timestamp!) : dir.path;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function object(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function parseObject(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    // unparsable: not a catalog line
    return null;
  }
}

/**
 * Whether a summary alone says what a listed run shows: counts, targets and time. AgentV's own
 * summary.json does (`counts`, `metadata.targets`, `metadata.timestamp`); ours does (`total`,
 * `passed`, `targets`, `timestamp`). Anything else needs the index too.
 */
export function summaryIsEnough(summary: Record<string, unknown>): boolean {
  const meta = object(summary.metadata);
  const counts = object(summary.counts);
  const agentv =
    num(counts.total_tests) !== undefined && num(counts.passed_tests) !== undefined && Array.isArray(meta.targets) && typeof meta.timestamp === 'string';
  const ours = num(summary.total) !== undefined && num(summary.passed) !== undefined && Array.isArray(summary.targets) && typeof summary.timestamp === 'string';
  return agentv || ours;
}

/** What AgentV 4.42 counts of a run (its Dashboard and `results summary` show these). */
export interface StableRunCounts {
  total: number;
  /** Rows with a score of 1 (4.42's own count). */
  passed: number;
  failed: number;
  meanScore: number;
  targets: string[];
}

/**
 * 4.42's counts of a run from its index.jsonl: one row per (test, target), the last line winning
 * as its reader keeps it; passed = score >= 1; the mean score over those rows.
 */
export function stableCounts(indexText: string): StableRunCounts {
  const rows = new Map<string, { score: number; target: string }>();
  for (const r of jsonlObjects(indexText)) {
    const target = typeof r.target === 'string' ? r.target : 'unknown';
    rows.set(`${String(r.test_id)}\u0000${target}`, { score: typeof r.score === 'number' && Number.isFinite(r.score) ? r.score : 0, target });
  }
  const list = [...rows.values()];
  const passed = list.filter((r) => r.score >= 1).length;
  const meanScore = list.length === 0 ? 0 : list.reduce((n, r) => n + r.score, 0) / list.length;
  return { total: list.length, passed, failed: list.length - passed, meanScore, targets: [...new Set(list.map((r) => r.target))].sort() };
}

/**
 * One listed run from its files. Counts are the summary's own (AgentV's `counts`, or our `total` /
 * `passed`) when present, else counted from the index rows; null when neither file can be read.
 */
export function runFilesRow(
  dir: string,
  summaryText: string | Record<string, unknown> | null | undefined,
  indexText: string | undefined,
  at: { path?: string; experiment?: string; stable?: boolean } = {},
): RunFilesRow | null {
  let summary = typeof summaryText === 'string' || summaryText === undefined ? parseObject(summaryText) : summaryText;
  if (summary === null) {
    if (indexText === undefined) return null;
    summary = {};
  }
  const lines = jsonlObjects(indexText ?? ''); // a bad line costs only itself
  const meta = object(summary.metadata);
  const counts = object(summary.counts);
  const sep = dir.lastIndexOf('::');
  const experiment =
    (typeof meta.experiment === 'string' && meta.experiment.trim()) ||
    (typeof summary.experiment === 'string' && summary.experiment) ||
    at.experiment ||
    (sep === -1 ? 'default' : dir.slice(0, sep));
  const timestamp =
    (typeof meta.timestamp === 'string' && meta.timestamp) ||
    (typeof summary.timestamp === 'string' && summary.timestamp) ||
    (typeof lines[0]?.timestamp === 'string' ? (lines[0].timestamp as string) : dir);
  const rowPass = (r: Record<string, unknown>) =>
    typeof r.verdict === 'string' ? r.verdict === 'pass' : r.execution_status !== 'execution_error' && (num(r.score) ?? 0) >= 1;
  // AgentV 4.42's runs keep no summary: counted as its own `results summary` counts them.
  const stable = at.stable ? stableCounts(indexText ?? '') : null;
  const total = stable?.total ?? num(counts.total_tests) ?? num(summary.total) ?? lines.length;
  const passed = stable?.passed ?? num(counts.passed_tests) ?? num(summary.passed) ?? lines.filter(rowPass).length;
  const declared = Array.isArray(meta.targets) ? meta.targets : Array.isArray(summary.targets) ? summary.targets : null;
  const targets = [
    ...new Set(
      (declared ?? lines.map((r) => r.target)).map((t) => (typeof t === 'string' ? t : object(t).name)).filter((t): t is string => typeof t === 'string'),
    ),
  ].sort();
  const m = /(\d{4}-\d{2}-\d{2})/.exec(timestamp);
  return {
    run_id: dir,
    experiment,
    day: m ? (m[1] as string) : 'undated',
    timestamp,
    path: at.path ?? dir,
    targets,
    total,
    passed,
    failed: total - passed,
    pass_rate: passRate(passed, total),
    writer: 'agentv',
  };
}

/** The summary members a listed run needs (AgentV's and ours). */
const WANTED = new Set(['counts', 'metadata', 'total', 'passed', 'targets', 'timestamp', 'experiment']);
const PRETTY = Buffer.from('{\n  "');
const MEMBER = Buffer.from('\n  "');

/** Where the JSON value starting at `start` ends (exclusive), strings and nesting respected; -1 if it does not. */
function valueEnd(buf: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) {
        inString = false;
        if (depth === 0) return i + 1;
      }
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return i;
    } else if (depth === 0 && (c === 0x2c || c === 0x0a)) return i;
  }
  return -1;
}

/**
 * The members of a summary.json that a listed run needs. A large summary written pretty-printed
 * with two spaces (AgentV's and ours: its per-test `tests` array is most of its bytes) has each
 * top-level member on a line of its own starting `\n  "<key>": ` — a raw newline cannot occur
 * inside a JSON string — so only those members are parsed. Anything else is parsed whole. (A
 * crafted file can make this show other counts; it could as well write other counts.)
 */
export function summaryMembers(buf: Buffer | null | undefined): Record<string, unknown> | null {
  if (!buf) return null;
  if (buf.length < 1024 || !buf.subarray(0, PRETTY.length).equals(PRETTY)) return parseObject(buf.toString('utf8'));
  const out: Record<string, unknown> = {};
  // Each top-level member starts a line with exactly two spaces and a quote; deeper members have
  // more indentation, so one memmem per member walks the top level without reading the values
  // skipped (the tests array).
  for (let at = 1; at >= 0 && at < buf.length; ) {
    const keyStart = at + MEMBER.length;
    const keyEnd = buf.indexOf(0x22, keyStart);
    if (keyEnd < 0) break;
    const key = buf.toString('latin1', keyStart, keyEnd);
    if (WANTED.has(key)) {
      const start = keyEnd + 3; // '": '
      const end = valueEnd(buf, start);
      if (end < 0 || buf[keyEnd + 1] !== 0x3a) return parseObject(buf.toString('utf8'));
      try {
        out[key] = JSON.parse(buf.toString('utf8', start, end));
      } catch {
        // fallback: parsed whole below
        return parseObject(buf.toString('utf8'));
      }
      at = buf.indexOf(MEMBER, end);
    } else at = buf.indexOf(MEMBER, keyEnd);
  }
  return out;
}

type CachedRow = Omit<RunFilesRow, 'run_id' | 'path'> | null;

/** Entries kept in the cache file: about 250 bytes each, so at most ~50 MB. */
const CACHE_LIMIT = 200_000;
const CACHE_FILE = 'run-rows.v1.json';

function cachePath(repo: Repo): string {
  return join(repo.commonDir, 'agentv-results', CACHE_FILE);
}

async function loadCache(repo: Repo): Promise<Map<string, CachedRow>> {
  try {
    const doc = JSON.parse(await readRegularText(cachePath(repo), { kind: 'state' })) as unknown;
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return new Map(Object.entries(doc as Record<string, CachedRow>));
  } catch {
    // none yet, or unreadable: it is only a cache
  }
  return new Map();
}

/** Best effort, atomic (temp file + rename): a reader never sees half a cache, and a failure costs only a re-read later. */
async function saveCache(repo: Repo, cache: Map<string, CachedRow>, fresh: ReadonlySet<string>): Promise<void> {
  let entries = [...cache];
  if (entries.length > CACHE_LIMIT) entries = [...entries.filter(([k]) => fresh.has(k)), ...entries.filter(([k]) => !fresh.has(k))].slice(0, CACHE_LIMIT);
  const file = cachePath(repo);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(join(repo.commonDir, 'agentv-results'), { recursive: true });
    await writeFile(tmp, JSON.stringify(Object.fromEntries(entries)));
    await rename(tmp, file);
  } catch {
    // a read-only repository still lists
  }
}

/**
 * Summaries of many runs are read by up to two `cat-file` processes side by side: git's inflating
 * of the blobs is most of a first `list` of AgentV-written runs, and it parallelises perfectly.
 */
const CAT_FILE_PROCESSES = Math.min(2, availableParallelism());

export interface RunFilesRead {
  /** Rows by the run directory's tree id. */
  rows: Map<string, RunFilesRow>;
  /** Directories that hold a summary or an index neither of which could be read. */
  bad: number;
  /** Directories read from the object store now (not from the cache). */
  read: number;
}

/**
 * Rows for run directories (tree id -> directory, of any layout: `listRunDirs`) from their own
 * files: the cache first, then one batch of every summary.json, then one batch of the indexes of
 * those whose summary is not enough (AgentV 5's `.internal/index.jsonl`, else `index.jsonl`).
 * AgentV 4.42's runs (`runs/<exp>/<ts>/`) keep no summary.json: only their index.jsonl is read,
 * and their counts are the ones its own `results summary` gives. A directory with neither file is
 * not a run and is left out.
 */
export async function readRunFiles(
  repo: Repo,
  trees: ReadonlyMap<string, BranchRunDir>,
  opts: { cache?: boolean; known?: ReadonlyMap<string, RunFilesRow> } = {},
): Promise<RunFilesRead> {
  const rows = new Map<string, RunFilesRow>();
  if (trees.size === 0) return { rows, bad: 0, read: 0 };
  const place = (dir: BranchRunDir) => ({ run_id: runIdOf(dir), path: dir.path });
  // The branch's own lines for these trees first (`known`: foreign-catalog.ts, keyed by runDirKey):
  // what a teammate's archive already read. Only the rest is looked up in this machine's cache, then read.
  const known = opts.known ?? new Map<string, RunFilesRow>();
  const unknown: [string, BranchRunDir][] = [];
  for (const [sha, dir] of trees) {
    const k = runDirKey(sha, dir.path);
    const line = known.get(k);
    if (line) rows.set(sha, { ...line, ...place(dir) });
    else unknown.push([sha, dir]);
  }
  if (unknown.length === 0) return { rows, bad: 0, read: 0 };
  const useCache = opts.cache !== false;
  const cache = useCache ? await loadCache(repo) : new Map<string, CachedRow>();
  const key = (sha: string, dir: BranchRunDir) => runDirKey(sha, dir.path);
  const missing: [string, BranchRunDir][] = [];
  const seen = new Set<string>();
  for (const [sha, dir] of unknown) {
    const k = key(sha, dir);
    seen.add(k);
    if (!cache.has(k)) {
      missing.push([sha, dir]);
      continue;
    }
    const c = cache.get(k);
    if (c) rows.set(sha, { ...c, ...place(dir) });
  }
  let bad = 0;
  if (missing.length > 0) {
    // Only the few members a listed run needs are kept of each summary, as it streams in (a
    // summary is mostly its per-test array: 134 MB for 20,000 of AgentV's sample runs).
    const parsed = new Map<string, Record<string, unknown> | null>(); // tree id -> members; absent: no summary.json
    try {
      await forEachBlob(
        repo,
        missing.filter(([, dir]) => dir.layout !== 'stable').map(([sha]) => `${sha}:summary.json`),
        (spec, data) => {
          if (data !== null) parsed.set(spec.slice(0, spec.indexOf(':')), summaryMembers(data));
        },
        { processes: CAT_FILE_PROCESSES },
      );
    } catch {
      return { rows, bad: missing.length, read: 0 }; // e.g. a summary.json that is a directory: say so, list the rest
    }
    const needIndex: [string, BranchRunDir][] = [];
    for (const [sha, dir] of missing) {
      const s = parsed.get(sha) ?? null;
      if (s === null || !summaryIsEnough(s)) needIndex.push([sha, dir]);
    }
    let indexes = new Map<string, Buffer | null>();
    if (needIndex.length > 0) {
      try {
        indexes = await readBlobs(
          repo,
          needIndex.flatMap(([sha, dir]) => (dir.layout === 'stable' ? [`${sha}:index.jsonl`] : [`${sha}:.internal/index.jsonl`, `${sha}:index.jsonl`])),
        );
      } catch {
        // unreadable: runs are then described from their summaries alone
        indexes = new Map();
      }
    }
    for (const [sha, dir] of missing) {
      const hasSummary = parsed.has(sha);
      const summary = parsed.get(sha) ?? null;
      const indexText = (indexes.get(`${sha}:.internal/index.jsonl`) ?? indexes.get(`${sha}:index.jsonl`))?.toString('utf8');
      let row: RunFilesRow | null = null;
      if (hasSummary || indexText !== undefined) {
        // An unreadable summary with an index: counted from the index rows.
        const { run_id, path } = place(dir);
        row =
          summary === null && indexText === undefined
            ? null
            : runFilesRow(run_id, summary ?? {}, indexText, { path, experiment: dir.experiment, stable: dir.layout === 'stable' });
        if (row) rows.set(sha, row);
        else bad++;
      }
      if (row) {
        const { run_id: _id, path: _path, ...rest } = row;
        cache.set(key(sha, dir), rest);
      } else if (!hasSummary && indexText === undefined) cache.set(key(sha, dir), null); // not a run: never read again
      // an unreadable run is not cached: it is read (and reported) again next time
    }
    if (useCache) await saveCache(repo, cache, seen);
  }
  return { rows, bad, read: missing.length };
}
