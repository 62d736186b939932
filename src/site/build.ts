/**
 * `site`: the Dashboard's read-only views as static files any static host serves (GitHub Pages,
 * GitLab Pages, a bucket), built from the results branch.
 *
 * One home for every answer: the site asks the Dashboard's own API routes (serve/api.ts, through
 * its router, as a browser would) and writes each answer to the file model/site-paths.ts names;
 * the page is the Dashboard's (serve/page.ts) in its static mode, whose client reads those files
 * by relative URL, so the site works under any sub-path. Per run: its detail, its report, every
 * test's grading, answer and transcript (each transcript page). Per experiment: each run compared
 * with the one before it. Trends: every experiment, all targets pooled and split. The listing:
 * the catalog in pages, oldest runs first (a new run changes the last page and the index only).
 *
 * It grows by run: a run (a compared pair) whose listing line is unchanged since the last build
 * is not asked about again, and a file whose bytes are unchanged is not rewritten (writer.ts).
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { posix, resolve } from 'node:path';
import { SITE_CATALOG, siteAsset, siteCatalogPage, siteFile } from '../model/site-paths.js';
import { REPORT_ASSETS, withSharedAssets } from '../report/template.js';
import { listRuns, type ListedRun, type ListResult } from '../branch-read/list.js';
import { resolveTarget, targetOptionsOf, type TargetOptions } from '../repo/target.js';
import { newApiContext, type ApiContext } from '../serve/api-context.js';
import { registerApi } from '../serve/api.js';
import { Router } from '../serve/http.js';
import { HttpError } from '../errors/serve-errors.js';
import { renderDashboard } from '../serve/page.js';
import { diskErrorOf, isDiskRefusal } from '../errors/errors.js';
import { mapLimit } from '../util/map-limit.js';
import { processAlive } from '../util/process-alive.js';
import { checkOutputDir } from '../util/output-target.js';
import { OutputTargetError } from '../errors/input-error.js';
import { flag, fnOf, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { clearStampLeftovers, MANIFEST, readManifest, readStamp, SiteWriter, STAMP, writeStamp, type Manifest, type Stamp } from './writer.js';

/** Runs built with full detail unless `detailLast` says otherwise. */
export const DEFAULT_DETAIL_LAST = 200;

/** `site`'s options (the `site` command's flags come from the same fields). */
export const SiteOptionsSchema = z.strictObject({
  /** The site's directory: new, empty, or a site an earlier `site` built (its manifest is there). */
  out: z.string().meta(flag('-o, --out <dir>', 'The site’s directory: new, empty, or a site built before (required)')),
  /** Trend charts show the newest this many runs of each series (default 50). */
  trendLast: z.number().default(50).meta(flag('--trend-last <n>', 'Trend charts show the newest n runs of each series (default 50)')),
  /**
   * Full detail (each test's grading, answer and transcript, the run's report, its comparison with
   * the run before it) for the newest this many runs; older runs keep their summary and test table
   * (default DEFAULT_DETAIL_LAST).
   */
  detailLast: z
    .number()
    .int()
    .nonnegative()
    .default(DEFAULT_DETAIL_LAST)
    .meta(
      flag(
        '--detail-last <n>',
        'Full detail (tests, transcripts, report) for the newest n runs; older runs keep their summary and test table (default 200), so the site stays within GitHub Pages’ 1 GB',
      ),
    ),
  /** Ask about every run again, even those unchanged since the last build (files still rewritten only when their bytes differ). */
  full: z
    .boolean()
    .default(false)
    .meta(flag('--full', 'Read every run again, not only new and changed ones (files are still rewritten only when their bytes differ)')),
  /** Fetch the results branch from the remote first. */
  fetch: z.boolean().default(false).meta(flag('--fetch', 'Fetch the results branch from the remote first')),
  ...TargetFields,
  onProgress: fnOf<(done: number, total: number) => void>().optional(),
});

export type SiteOptions = z.input<typeof SiteOptionsSchema>;
type ParsedSiteOptions = z.output<typeof SiteOptionsSchema>;

export interface SiteResult {
  out: string;
  branch: string;
  runs: number;
  /** Runs asked about this time (new or changed); the others' files were kept. */
  runsBuilt: number;
  runsKept: number;
  filesWritten: number;
  filesUnchanged: number;
  filesRemoved: number;
  /** The site's size: every file it holds, in bytes. */
  bytes: number;
  /** Runs written with full detail (the newest `detailLast`); the others have their summary only. */
  runsDetailed: number;
  /** The size against the static host's limits (GitHub Pages: a 1 GB site, 100 MB a file). */
  budget: SiteBudget;
  /** Runs or views that could not be built (each named); the rest of the site is written. */
  warnings: string[];
}

/** GitHub Pages' limits: a published site of at most 1 GB, no file over 100 MB. */
export const PAGES_SITE_LIMIT = 1024 ** 3;
export const PAGES_FILE_LIMIT = 100 * 1024 ** 2;
export interface SiteBudget {
  site_limit: number;
  file_limit: number;
  /** The largest file this build wrote, in bytes. */
  largest_file: number;
  /** The site is over one of the limits (a warning says which). */
  over: boolean;
}

/** Runs per listing page. */
export const CATALOG_PAGE = 500;
/** Runs and compared pairs asked about per API context (their runs pulled together; its run cache dropped after each batch). */
const BATCH = 256;

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The Dashboard API, asked as a browser would: `GET /api<path>`, answered by its own route. */
function asker(ctx: ApiContext): (path: string) => Promise<string> {
  const router = new Router();
  registerApi(router, ctx);
  return async (path) => {
    const at = path.indexOf('?');
    const route = `/api${at < 0 ? path : path.slice(0, at)}`;
    const m = router.match('GET', route);
    if (m instanceof HttpError) throw m;
    const reply = await m.handler({
      method: 'GET',
      path: route,
      query: new URLSearchParams(at < 0 ? '' : path.slice(at + 1)),
      params: m.params,
      body: async () => ({}),
    });
    if ('json' in reply) return JSON.stringify(reply.json);
    if ('html' in reply) return reply.html;
    // A plain Error on purpose: a route the site asks answers JSON or HTML (a bug, never user input).
    throw new Error(`site: ${path} answered a stream`);
  };
}

const enc = encodeURIComponent;
/** What a full run's files depend on besides the run: the names of the report's shared files. */
const ASSETS_KEY = REPORT_ASSETS.map((a) => a.name).join('\0');

/**
 * One run's files: its detail, and with `full`, its report, each test's detail and every page of its
 * transcript (older runs keep their summary and test table: the site's size stays within its host's).
 */
async function buildRun(ask: (p: string) => Promise<string>, w: SiteWriter, run: ListedRun, into: string[], full: boolean): Promise<void> {
  const base = `/runs/${enc(run.run_id)}`;
  const detail = await ask(base);
  if (!full) {
    // The page says why a test of this run opens no detail (client: summary_only).
    await w.put(siteFile(base), JSON.stringify({ ...(JSON.parse(detail) as Record<string, unknown>), summary_only: true }), into);
    return;
  }
  await w.put(siteFile(base), detail, into);
  // The report's script and style are the site's shared files (written once), not 16 KB in each report.
  const report = siteFile(`${base}/report`, 'html');
  const assets = posix.relative(posix.dirname(report), posix.dirname(siteAsset(REPORT_ASSETS[0].name)));
  await w.put(report, withSharedAssets(await ask(`${base}/report`), assets), into);
  const tests = (JSON.parse(detail) as { tests: { test_id: string; target?: string | null; attempt?: number | null }[] }).tests;
  const seen = new Set<string>();
  for (const t of tests) {
    // The link the Dashboard's run view makes for the test (runs.ts): its target, its attempt past the first.
    const q = new URLSearchParams();
    if (t.target !== null && t.target !== undefined) q.set('target', t.target);
    if (typeof t.attempt === 'number' && t.attempt > 1) q.set('attempt', String(t.attempt));
    const path = `${base}/tests/${enc(t.test_id)}`;
    const first = `${path}?${q}`;
    if (seen.has(first)) continue;
    seen.add(first);
    let from = 0;
    // Bounded: each page starts past the last; a transcript has at most message_count messages.
    for (let i = 0; i < 10_000; i++) {
      const page = new URLSearchParams(q);
      if (from > 0) page.set('from', String(from));
      const text = await ask(`${path}?${page}`);
      await w.put(siteFile(`${path}?${page}`), text, into);
      const next = (JSON.parse(text) as { next_message?: number | null }).next_message;
      if (typeof next !== 'number' || next <= from) break;
      from = next;
    }
  }
}

/** Each run of an experiment with the run before it (by time), as `compare` of the pair. */
function consecutivePairs(runs: ListedRun[]): [ListedRun, ListedRun][] {
  const byExperiment = new Map<string, ListedRun[]>();
  for (const r of runs) byExperiment.set(r.experiment, [...(byExperiment.get(r.experiment) ?? []), r]);
  const pairs: [ListedRun, ListedRun][] = [];
  for (const list of byExperiment.values()) {
    list.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    for (let i = 1; i < list.length; i++) pairs.push([list[i - 1]!, list[i]!]);
  }
  return pairs;
}

/** The trend questions the site answers: every split without filters, each experiment pooled and per target, each target pooled. */
function trendQuestions(listed: ListResult): URLSearchParams[] {
  const qs: URLSearchParams[] = [];
  for (const by of ['', 'target', 'experiment', 'experiment,target']) qs.push(new URLSearchParams(by ? { by } : {}));
  for (const experiment of listed.facets.experiments) for (const by of ['', 'target']) qs.push(new URLSearchParams(by ? { experiment, by } : { experiment }));
  for (const target of listed.facets.targets) qs.push(new URLSearchParams({ target }));
  return qs;
}

/** Write the static history site of the published runs to a directory, rebuilding only what changed. */
export async function site(options: SiteOptions): Promise<SiteResult> {
  const opts = parseOptions('site', SiteOptionsSchema, options);
  const out = resolve(opts.cwd, opts.out);
  const state = await checkOutputDir(out, { command: 'site', foreign: 'caller' });
  const previous = state === 'other' ? await readManifest(out) : null;
  // A build of ours that was stopped (kill -9, a full disk) left its stamp: resumed, not refused.
  const stamp = state === 'other' ? await readStamp(out) : null;
  const fresh = state === 'other' && previous === null && stamp === null && (await clearStampLeftovers(out));
  if (state === 'workspace' || (state === 'other' && previous === null && stamp === null && !fresh)) {
    throw new OutputTargetError(
      `--out ${out} is a directory that is not a site agentv-results built (no ${MANIFEST} or ${STAMP} in it); site never replaces it — choose a new or empty directory`,
      out,
    );
  }
  if (stamp && stamp.pid !== process.pid && processAlive(stamp.pid)) {
    throw new OutputTargetError(
      `--out ${out} is being written by another site build (process ${stamp.pid}); wait for it to end, or remove ${STAMP} if that process is not a site build`,
      out,
    );
  }
  const given = targetOptionsOf(opts);
  // Resolved once: every answer of the build reads the same repository (a resolve is several git processes).
  const target: TargetOptions = { ...given, resolved: await resolveTarget(given) };
  const listed = await listRuns({ ...target, fetch: opts.fetch, withOverlays: true });
  const page = renderDashboard({ token: '', readOnly: true, static: true });
  try {
    return await write(opts, out, target, listed, page, previous, stamp);
  } catch (err) {
    throw diskErrorOf(err, `the site into ${out} (the next site resumes what this one wrote)`);
  }
}

async function write(
  opts: ParsedSiteOptions,
  out: string,
  target: TargetOptions,
  listed: ListResult,
  page: string,
  previous: Manifest | null,
  stamp: Stamp | null,
): Promise<SiteResult> {
  await mkdir(out, { recursive: true });
  // The stamp first, before any content (an interrupted build's is kept: its time says which files it wrote).
  if (!stamp) await writeStamp(out);
  // --full asks about every unit again; the last build's files still tell what to remove (an expired run's).
  const w = new SiteWriter(out, previous, sha(page), stamp, !opts.full);
  const warnings: string[] = [];
  await w.put('index.html', page);

  // The listing: oldest first, in pages, and an index with what the runs view shows above them.
  const oldestFirst = [...listed.runs].reverse().map((r) => ({ ...r, tags: r.tags ?? [] }));
  const pages = Math.ceil(oldestFirst.length / CATALOG_PAGE);
  for (let n = 0; n < pages; n++) await w.put(siteCatalogPage(n), JSON.stringify({ runs: oldestFirst.slice(n * CATALOG_PAGE, (n + 1) * CATALOG_PAGE) }));
  const { branch, remote, tips, facets, unreadable, read } = listed;
  await w.put(SITE_CATALOG, JSON.stringify({ branch, remote, tips, facets, unreadable, read, total: oldestFirst.length, page_size: CATALOG_PAGE, pages }));

  // Runs and compared pairs, in batches (each batch's run cache dropped after it).
  // A run's key: its listing line (counts, tags, feedback count, archive month), but not `where`
  // (local, remote or both: this machine's view, which a push changes for every run).
  const keyOf = new Map(listed.runs.map((r) => [r.run_id, sha(JSON.stringify({ ...r, where: undefined }))]));
  type Job = {
    name: string;
    key: string;
    build: (ask: (p: string) => Promise<string>, into: string[]) => Promise<void>;
    what: string;
    run: boolean;
    /** The runs it reads (pulled together with the rest of its batch). */
    reads: ListedRun[];
  };
  const jobs: Job[] = [];
  // Each compared pair right after its newer run: a batch then reads both sides of most of its pairs.
  const olderOf = new Map(consecutivePairs(oldestFirst).map(([a, b]) => [b.run_id, a]));
  // Full detail for the newest `detailLast` runs; a run that falls out of them is rebuilt as a summary (its key changes).
  const detailLast = opts.detailLast;
  const detailed = new Set(listed.runs.slice(0, detailLast).map((r) => r.run_id));
  // The report's shared script and style, once for the site, when some run has its report.
  if (detailed.size > 0) for (const a of REPORT_ASSETS) await w.put(siteAsset(a.name), a.text);
  for (const r of oldestFirst) {
    const full = detailed.has(r.run_id);
    jobs.push({
      name: `run:${r.run_id}`,
      // A full run's report names the shared files by hash: new files, new report.
      key: full ? sha(`${keyOf.get(r.run_id)}\0${ASSETS_KEY}`) : sha(`summary\0${keyOf.get(r.run_id)}`),
      what: `run ${r.run_id}`,
      run: true,
      reads: [r],
      build: (ask, into) => buildRun(ask, w, r, into, full),
    });
    // A run kept as a summary is not compared either: its comparison is detail too.
    const a = olderOf.get(r.run_id);
    if (a === undefined || !full) continue;
    const path = `/compare?runs=${enc(a.run_id)},${enc(r.run_id)}`;
    jobs.push({
      name: `compare:${a.run_id}\0${r.run_id}`,
      key: sha(`${keyOf.get(a.run_id)}${keyOf.get(r.run_id)}`),
      what: `compare of ${a.run_id} and ${r.run_id}`,
      run: false,
      reads: [a, r],
      build: async (ask, into) => w.put(siteFile(path), await ask(path), into),
    });
  }
  const todo = jobs.filter((j) => !w.keep(j.name, j.key));
  const runsBuilt = todo.filter((j) => j.run).length;
  let done = jobs.length - todo.length;
  opts.onProgress?.(done, jobs.length);
  for (let i = 0; i < todo.length; i += BATCH) {
    // The batch's context holds every run it prefetched (a bounded cache would drop them unused).
    const ctx = newApiContext(target, true, listed, Number.POSITIVE_INFINITY);
    const ask = asker(ctx);
    const batch = todo.slice(i, i + BATCH);
    try {
      // The batch's runs read from the branch together (a few git processes for all of them).
      await ctx.cache.prefetch(target, listed, [...new Map(batch.flatMap((j) => j.reads).map((r) => [r.run_id, r])).values()]);
      await mapLimit(batch, 3, async (j) => {
        const into = w.begin(j.name, j.key);
        try {
          await j.build(ask, into);
        } catch (err) {
          w.drop(j.name);
          // A disk that refuses writes ends the build (the next one resumes it); a run that cannot be read is a warning.
          if (isDiskRefusal(err)) throw err;
          warnings.push(`${j.what}: ${(err as Error).message}`);
        }
        opts.onProgress?.(++done, jobs.length);
      });
    } finally {
      await ctx.cache.close();
    }
  }

  // Trends: over every run, so asked each build (the newest `trendLast` runs of each series).
  const ctx = newApiContext(target, true, listed);
  const ask = asker(ctx);
  try {
    const last = String(opts.trendLast);
    for (const q of trendQuestions(listed)) {
      const asked = new URLSearchParams(q);
      asked.set('last', last);
      try {
        await w.put(siteFile(`/trend?${q}`), await ask(`/trend?${asked}`));
      } catch (err) {
        if (isDiskRefusal(err)) throw err;
        warnings.push(`trend ${q}: ${(err as Error).message}`);
      }
    }
    // Flaky tests per experiment (the test page's attempt history across runs): the same answer as /api/flaky.
    for (const experiment of listed.facets.experiments) {
      const q = new URLSearchParams({ experiment });
      try {
        await w.put(siteFile(`/flaky?${q}`), await ask(`/flaky?${q}`));
      } catch (err) {
        warnings.push(`flaky ${q}: ${(err as Error).message}`);
      }
    }
  } finally {
    await ctx.cache.close();
  }
  await w.finish();
  const c = w.counts;
  const budget: SiteBudget = { site_limit: PAGES_SITE_LIMIT, file_limit: PAGES_FILE_LIMIT, largest_file: c.largest, over: false };
  if (c.bytes > PAGES_SITE_LIMIT) {
    budget.over = true;
    warnings.push(
      `the site is ${c.bytes} bytes, over GitHub Pages' 1 GB limit for a site: pass a smaller --detail-last (now ${detailLast}) to keep full detail for fewer runs`,
    );
  }
  if (c.largest > PAGES_FILE_LIMIT) {
    budget.over = true;
    warnings.push(`a file of the site is ${c.largest} bytes, over GitHub Pages' 100 MB limit for a file`);
  }
  return {
    out,
    branch,
    runs: listed.runs.length,
    runsBuilt,
    runsKept: listed.runs.length - runsBuilt,
    filesWritten: c.written,
    filesUnchanged: c.unchanged,
    filesRemoved: c.removed,
    bytes: c.bytes,
    runsDetailed: Math.min(detailLast, listed.runs.length),
    budget,
    warnings,
  };
}
