/**
 * The catalog read `list` makes (readCatalog), kept on disk beside the repository's git data
 * (`<git dir>/agentv-results/catalog-reads/<key>.bin`, never in the user's tree) so that the first
 * listing after a process starts does not read and sort a 100,000-run catalog again.
 *
 * Keyed by what names the read exactly: the tips' commit ids (and which side each is), `since`,
 * and this file's format. A commit id names its tree, so a kept read is never stale; when a tip
 * moves, the key changes and the branch is read again. A file is a header line, then the first
 * HEAD_ROWS runs (newest first, with their directories' tree ids), then the rest: the Dashboard's
 * first page is answered from the header and the head alone, before the rest is parsed.
 *
 * Safe against concurrent writers (each writes a file of its own, then renames it into place: a
 * reader sees a whole file or none) and against a torn or damaged file: the header states each
 * part's length and SHA-256, a part that does not match is never trusted (the read is made from the
 * branch again and the file replaced). Only a few files are kept (the newest by time).
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Repo } from '../git/index.js';
import { openRegularFile } from '../util/safe-open.js';
import type { CatalogRead, CatalogSource, ListedRun } from './list-types.js';
import { absentAs } from '../errors/errors.js';

/** Runs of the head: a page of the Dashboard's listing (50) many times over. */
export const HEAD_ROWS = 1000;
/** Below this many runs a read from the branch is quick: nothing is written. */
export const CACHE_MIN_RUNS = 2000;
const FORMAT = 'agentv-results catalog read v1';
const DIR = 'catalog-reads';
const KEPT_FILES = 4;
/** A header larger than this (facets of very many experiments) is not trusted: read again. */
const HEADER_MAX = 4 * 1024 * 1024;

export interface CatalogFacets {
  experiments: string[];
  targets: string[];
}

/** A read as the listing uses it: every run (or only the first ones, `complete: false`), with what is known of all. */
export interface CatalogView {
  runs: ListedRun[];
  /** Runs in the whole read (runs.length when complete). */
  total: number;
  facets: CatalogFacets;
  unreadable: number;
  legacyRunsOn: Set<string>;
  /** Per tip: run directory -> its tree id (only for `runs` when not complete). */
  dirTrees: Map<string, Map<string, string>>;
  complete: boolean;
}

interface Part {
  bytes: number;
  sha256: string;
}

interface Header {
  format: string;
  key: string;
  total: number;
  unreadable: number;
  facets: CatalogFacets;
  legacy_runs_on: string[];
  head: Part;
  rest: Part;
}

interface Rows {
  runs: ListedRun[];
  /** Per tip: [run directory, tree id] pairs. */
  dir_trees: Record<string, [string, string][]>;
}

export function cacheKey(sources: CatalogSource[], since: string | undefined): string {
  return JSON.stringify([FORMAT, sources, since ?? null]);
}

function fileOf(repo: Repo, key: string): string {
  return join(repo.commonDir, 'agentv-results', DIR, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.bin`);
}

const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The filter choices over every run: experiments and targets, sorted. */
export function facetsOfRuns(runs: readonly ListedRun[]): CatalogFacets {
  const experiments = new Set<string>();
  const targets = new Set<string>();
  for (const r of runs) {
    experiments.add(r.experiment);
    for (const t of r.targets) targets.add(t);
  }
  return { experiments: [...experiments].sort(), targets: [...targets].sort() };
}

function rowsOf(runs: ListedRun[], dirTrees: Map<string, Map<string, string>>): Rows {
  const paths = new Set(runs.map((r) => r.path));
  const dir_trees: Rows['dir_trees'] = {};
  for (const [tip, dirs] of dirTrees) dir_trees[tip] = [...dirs].filter(([p]) => paths.has(p));
  return { runs, dir_trees };
}

/**
 * Writes `read` for `key` (best effort: a read-only repository, a full disk or a race with
 * another writer costs only a read from the branch next time). Small reads are not written.
 */
export async function saveCatalogRead(repo: Repo, key: string, read: CatalogRead, facets: CatalogFacets): Promise<void> {
  if (read.runs.length < CACHE_MIN_RUNS) return;
  const dirTrees = read.dirTrees ?? new Map<string, Map<string, string>>();
  const head = Buffer.from(JSON.stringify(rowsOf(read.runs.slice(0, HEAD_ROWS), dirTrees)));
  const rest = Buffer.from(JSON.stringify(rowsOf(read.runs.slice(HEAD_ROWS), dirTrees)));
  const header: Header = {
    format: FORMAT,
    key,
    total: read.runs.length,
    unreadable: read.unreadable,
    facets,
    legacy_runs_on: [...(read.legacyRunsOn ?? [])],
    head: { bytes: head.length, sha256: digest(head) },
    rest: { bytes: rest.length, sha256: digest(rest) },
  };
  const file = fileOf(repo, key);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await mkdir(join(repo.commonDir, 'agentv-results', DIR), { recursive: true });
    await writeFile(tmp, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), head, rest]));
    await rename(tmp, file);
    await prune(join(repo.commonDir, 'agentv-results', DIR));
  } catch {
    // best effort (see above): it is only a cache; the temporary file is removed if it was left
    await unlink(tmp).catch(() => undefined);
  }
}

/** Keeps the newest KEPT_FILES reads (by modification time); another process's temporary file is left alone. */
async function prune(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.bin'));
  if (names.length <= KEPT_FILES) return;
  const dated = await Promise.all(
    names.map(async (n) => ({
      n,
      // absent: removed meanwhile (by another process's pruning), the oldest; anything else propagates
      t: await stat(join(dir, n)).then((s) => s.mtimeMs, absentAs(0)),
    })),
  );
  dated.sort((a, b) => b.t - a.t);
  // a file another process removed first is already gone: either way it is not kept
  for (const { n } of dated.slice(KEPT_FILES)) await unlink(join(dir, n)).catch(() => undefined);
}

function parseRows(b: Buffer, part: Part): Rows | null {
  if (b.length !== part.bytes || digest(b) !== part.sha256) return null;
  try {
    const doc = JSON.parse(b.toString('utf8')) as Rows;
    return Array.isArray(doc.runs) && doc.dir_trees !== null && typeof doc.dir_trees === 'object' ? doc : null;
  } catch {
    // unparsable although its digest matched: not ours to trust
    return null;
  }
}

const isPart = (p: unknown): p is Part =>
  p !== null && typeof p === 'object' && Number.isSafeInteger((p as Part).bytes) && (p as Part).bytes >= 0 && typeof (p as Part).sha256 === 'string';

function isHeader(h: unknown): h is Header {
  if (h === null || typeof h !== 'object') return false;
  const x = h as Header;
  return (
    isPart(x.head) &&
    isPart(x.rest) &&
    Number.isSafeInteger(x.total) &&
    Number.isSafeInteger(x.unreadable) &&
    Array.isArray(x.legacy_runs_on) &&
    x.facets !== null &&
    typeof x.facets === 'object' &&
    Array.isArray(x.facets.experiments) &&
    Array.isArray(x.facets.targets)
  );
}

function viewOf(header: Header, parts: Rows[], complete: boolean): CatalogView {
  const dirTrees = new Map<string, Map<string, string>>();
  for (const p of parts)
    for (const [tip, pairs] of Object.entries(p.dir_trees)) {
      const m = dirTrees.get(tip) ?? new Map<string, string>();
      for (const [path, sha] of pairs) m.set(path, sha);
      dirTrees.set(tip, m);
    }
  const runs = parts.length === 1 ? parts[0]!.runs : parts.flatMap((p) => p.runs);
  return { runs, total: header.total, facets: header.facets, unreadable: header.unreadable, legacyRunsOn: new Set(header.legacy_runs_on), dirTrees, complete };
}

/**
 * The kept read for `key`: only its head (`part: 'head'`) or all of it. Null when there is none,
 * or when the file is torn, damaged or another key's: never trusted, read again.
 */
export async function loadCatalogRead(repo: Repo, key: string, part: 'head' | 'all'): Promise<CatalogView | null> {
  let opened: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    opened = await openRegularFile(fileOf(repo, key), { kind: 'state' });
  } catch {
    // none yet, or not readable: it is only a cache
    return null;
  }
  const { handle, size } = opened;
  try {
    const first = Buffer.alloc(Math.min(size, HEADER_MAX));
    if ((await handle.read(first, 0, first.length, 0)).bytesRead !== first.length) return null;
    const nl = first.indexOf(0x0a);
    if (nl < 0) return null;
    let header: Header;
    try {
      header = JSON.parse(first.toString('utf8', 0, nl)) as Header;
    } catch {
      // a torn or damaged header
      return null;
    }
    if (!isHeader(header) || header.format !== FORMAT || header.key !== key || size !== nl + 1 + header.head.bytes + header.rest.bytes) return null;
    const headBytes = Buffer.alloc(header.head.bytes);
    if ((await handle.read(headBytes, 0, headBytes.length, nl + 1)).bytesRead !== headBytes.length) return null;
    const head = parseRows(headBytes, header.head);
    if (head === null) return null;
    if (part === 'head') return viewOf(header, [head], header.total === head.runs.length);
    const restBytes = Buffer.alloc(header.rest.bytes);
    if ((await handle.read(restBytes, 0, restBytes.length, nl + 1 + header.head.bytes)).bytesRead !== restBytes.length) return null;
    const rest = parseRows(restBytes, header.rest);
    if (rest === null) return null;
    const view = viewOf(header, [head, rest], true);
    return view.runs.length === header.total ? view : null;
  } finally {
    await handle.close();
  }
}
