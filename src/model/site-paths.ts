/**
 * Where the static history site (src/site/) keeps the answer to a Dashboard API question, shared
 * by the site's builder (node) and the Dashboard client in static mode (the browser), so both name
 * the same file. Pure: no node import, it is bundled into the page's script.
 *
 * An API path `/runs/<run>/tests/<test>?target=t` becomes `api/runs/<seg>/tests/<seg>/<query seg>.json`:
 * every path segment and the canonical query (empty values and the page's own `limit`/`project`
 * dropped, keys sorted, the two runs of `runs=a,b` sorted) are encoded by `siteSegment`, which
 * keeps `[A-Za-z0-9_-]` and writes every other byte as `~XX`, so no segment is `.`, `..`, empty
 * or holds a `/`; a long one is cut and suffixed with a hash of the whole.
 */
const MAX = 96;

/** 64-bit FNV-1a over the UTF-8 bytes, as 16 hex digits (names a long segment; not a security hash). */
function fnv64(bytes: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/** One file or directory name for `value` (any string, hostile ones included). */
export function siteSegment(value: string): string {
  const bytes = new TextEncoder().encode(value);
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `~${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out === '') return '~';
  return out.length <= MAX ? out : `${out.slice(0, MAX - 18)}~~${fnv64(bytes)}`;
}

const IGNORED = new Set(['limit', 'project']);

/** The canonical query of a question: what the answer depends on, in one order. */
export function canonicalQuery(query: URLSearchParams): string {
  const kept: [string, string][] = [];
  for (const [k, v] of query) {
    if (v === '' || IGNORED.has(k)) continue;
    kept.push([k, k === 'runs' ? v.split(',').sort().join(',') : v]);
  }
  kept.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return kept.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/**
 * The site file (relative to the site's root) holding the answer to `GET /api<apiPath>`;
 * `ext` is `json`, or `html` for a run's report.
 */
export function siteFile(apiPath: string, ext: 'json' | 'html' = 'json'): string {
  const at = apiPath.indexOf('?');
  const path = at < 0 ? apiPath : apiPath.slice(0, at);
  const query = new URLSearchParams(at < 0 ? '' : apiPath.slice(at + 1));
  // An empty segment (an empty id) is a segment too (`~`): two questions never share a file.
  const segs = path
    .replace(/^\//, '')
    .split('/')
    .map((s) => {
      try {
        return siteSegment(decodeURIComponent(s));
      } catch {
        // unparsable: bad percent-encoding names the segment as written
        return siteSegment(s);
      }
    });
  const q = canonicalQuery(query);
  return `api/${segs.join('/')}/${q === '' ? '_' : siteSegment(q)}.${ext}`;
}

/** The run listing's files: `api/catalog/index.json` and its pages (oldest runs first, so a new run changes the last page only). */
export const SITE_CATALOG = 'api/catalog/index.json';
export const siteCatalogPage = (n: number): string => `api/catalog/page-${String(n).padStart(5, '0')}.json`;
/** A file the site's pages share (the report's script and style), named by its content hash. */
export const siteAsset = (name: string): string => `assets/${name}`;
