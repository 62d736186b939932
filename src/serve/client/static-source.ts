/**
 * The Dashboard's data source on the static history site (src/site/): the answers the site's
 * builder wrote beside the page, read by relative URL (so the site works under any sub-path).
 * A question maps to its file by model/site-paths.ts, which the builder uses too. The run listing
 * is the one answer built here: the site keeps the catalog in pages, oldest runs first, and this
 * pages and filters it as the server's `/api/runs` does (experiment, target, tag, days).
 */
import { SITE_CATALOG, siteCatalogPage, siteFile } from '../../model/site-paths.js';

// biome-ignore lint/suspicious/noExplicitAny: the site's answers are JSON read defensively by each view
type Json = any;

/** A missing file: the status and the words of an answer the site does not hold. */
export class StaticMiss extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function getJson(file: string): Promise<Json> {
  let r: Response;
  try {
    r = await fetch(file, { credentials: 'same-origin' });
  } catch {
    throw new StaticMiss('the site is not answering', 0);
  }
  if (r.status === 404) throw new StaticMiss('', 404);
  if (!r.ok) throw new StaticMiss(`HTTP ${r.status} for ${file}`, r.status);
  return r.json();
}

let catalog: Promise<Json> | null = null;
const pages = new Map<number, Promise<Json[]>>();

function page(n: number): Promise<Json[]> {
  let p = pages.get(n);
  if (!p) {
    p = getJson(siteCatalogPage(n)).then((j: Json) => (Array.isArray(j.runs) ? j.runs : []));
    pages.set(n, p);
    // observed: the caller gets the error; only the cached failure is forgotten
    p.catch(() => pages.delete(n));
  }
  return p;
}

/** The runs a `/runs?...` question asks for, shaped as the server's answer (runs-api.ts RunsPage). */
async function runs(q: URLSearchParams): Promise<Json> {
  catalog ??= getJson(SITE_CATALOG);
  // observed: a failed read is retried on the next question
  catalog.catch(() => {
    catalog = null;
  });
  const c = await catalog;
  const total: number = c.total ?? 0;
  const size: number = c.page_size ?? 1;
  const limit = Math.max(1, Number(q.get('limit')) || 100);
  const offset = Math.max(0, Number(q.get('offset')) || 0);
  const f = { experiment: q.get('experiment'), target: q.get('target'), tag: q.get('tag'), since: q.get('since'), until: q.get('until') };
  const filtered = Object.values(f).some((v) => v);
  let rows: Json[];
  let matched: number;
  if (!filtered) {
    // Newest first: the i-th run shown is the (total-1-i)-th of the catalog; read only its pages.
    const last = Math.min(total, offset + limit);
    const wanted = new Set<number>();
    for (let i = offset; i < last; i++) wanted.add(Math.floor((total - 1 - i) / size));
    const loaded = new Map<number, Json[]>();
    await Promise.all([...wanted].map(async (n) => loaded.set(n, await page(n))));
    rows = [];
    for (let i = offset; i < last; i++) {
      const at = total - 1 - i;
      const r = loaded.get(Math.floor(at / size))?.[at % size];
      if (r) rows.push(r);
    }
    matched = total;
  } else {
    const all = (await Promise.all(Array.from({ length: c.pages ?? 0 }, (_, n) => page(n)))).flat().reverse();
    const hits = all.filter(
      (r: Json) =>
        (!f.experiment || r.experiment === f.experiment) &&
        (!f.target || (r.targets ?? []).includes(f.target)) &&
        (!f.tag || (r.tags ?? []).includes(f.tag)) &&
        (!f.since || r.day >= f.since) &&
        (!f.until || r.day <= f.until),
    );
    matched = hits.length;
    rows = hits.slice(offset, offset + limit);
  }
  return {
    branch: c.branch,
    remote: c.remote,
    tips: c.tips,
    total,
    matched,
    offset,
    runs: rows,
    facets: c.facets,
    unreadable: c.unreadable ?? 0,
    read: c.read,
  };
}

/** Why the site holds no answer to `path`. */
function missing(path: string): string {
  const m = /^\/runs\/([^/?]+)(\/tests\/([^/?]+))?/.exec(path);
  if (m?.[3])
    return `test ${decodeURIComponent(m[3])} of run ${decodeURIComponent(m[1]!)} has no detail on this site: it keeps each test's detail, transcript and the report for its newest runs, and the summary and test table of older ones`;
  if (m?.[0] && path.includes('/report')) return `the report of run ${decodeURIComponent(m[1]!)} is not on this site: it keeps the reports of its newest runs`;
  if (m) return `run ${decodeURIComponent(m[1]!)} is not on this site (a typo, or a run newer than the site's last build)`;
  if (path.startsWith('/compare'))
    return 'this pair is not compared on this site: it holds each of its newest runs against the previous run of its experiment (run `agentv-results compare` or `serve` for any pair)';
  if (path.startsWith('/trend')) return 'this trend is not on this site: it holds the trends of every experiment, all targets pooled or split';
  return `not on this site: ${path}`;
}

/** The answer to `GET /api<path>` from the site's files. */
export async function staticAnswer(path: string): Promise<Json> {
  try {
    if (path === '/runs' || path.startsWith('/runs?')) return await runs(new URLSearchParams(path.slice(path.indexOf('?') + 1 || path.length)));
    return await getJson(siteFile(path));
  } catch (e) {
    if (e instanceof StaticMiss && e.status === 404) throw new StaticMiss(missing(path), 404);
    throw e;
  }
}

/** The site file of a run's report. */
export const staticReport = (runId: string): string => siteFile(`/runs/${encodeURIComponent(runId)}/report`, 'html');
