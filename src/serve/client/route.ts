/**
 * Every view has a URL: the hash holds the view, its path (a run, a test) and its query (filters,
 * the compared runs and target, the open tab, the page). Navigation sets the hash, so the browser's
 * history and back button work and any view can be shared as a link; the page renders from the
 * hash alone.
 *
 *   #/runs?experiment=&target=&tag=&since=&until=&offset=
 *   #/runs/<run>?page=                          one run (its tests, paged)
 *   #/runs/<run>/tests/<test>?target=&attempt=&tab=grading|answer|transcript
 *   #/compare?baseline=<run>&candidate=<run>&target=
 *   #/trends?experiment=&target=&by=target
 *   #/autoresearch?experiment=
 * Each may carry project=<id> (a projects[] entry of .agentv/config.yaml).
 */
export type View = 'runs' | 'compare' | 'trends' | 'autoresearch';

export interface Route {
  view: View;
  run: string | null;
  test: string | null;
  q: URLSearchParams;
}

const VIEWS: View[] = ['runs', 'compare', 'trends', 'autoresearch'];

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const at = text.indexOf('?');
  const path = (at < 0 ? text : text.slice(0, at)).split('/').filter(Boolean);
  const q = new URLSearchParams(at < 0 ? '' : text.slice(at + 1));
  const dec = (s: string | undefined) => {
    if (s === undefined) return null;
    try {
      return decodeURIComponent(s);
    } catch {
      return null;
    }
  };
  const view = (VIEWS as string[]).includes(path[0] ?? '') ? (path[0] as View) : 'runs';
  const run = view === 'runs' ? dec(path[1]) : null;
  const test = view === 'runs' && path[2] === 'tests' ? dec(path[3]) : null;
  return { view, run, test, q };
}

/** The hash of a route; empty parameters are left out. */
export function href(view: View, params: Record<string, string | number | null | undefined> = {}, run?: string | null, test?: string | null): string {
  let path = `#/${view}`;
  if (run) path += `/${encodeURIComponent(run)}`;
  if (run && test) path += `/tests/${encodeURIComponent(test)}`;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export function current(): Route {
  return parseRoute(location.hash);
}

/** Go to a view: a new history entry (replace: the same entry, for a filter typed letter by letter). */
export function go(hash: string, replace = false): void {
  if (hash === location.hash) return;
  if (replace) history.replaceState(null, '', hash);
  else history.pushState(null, '', hash);
  window.dispatchEvent(new Event('agentv-route'));
}
