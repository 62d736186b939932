/** The page talks to this server's API only (the CSP's connect-src 'self'); writes carry the page's token. */
import { d } from './dom.js';
import { StaticMiss, staticAnswer, staticReport } from './static-source.js';

export const TOKEN = d.querySelector('meta[name="agentv-results-token"]')?.getAttribute('content') ?? '';
export const READ_ONLY = d.body.getAttribute('data-read-only') === 'true';
/** The static history site's copy of the page (src/site/): answers come from files beside it, nothing is written. */
export const STATIC = d.body.getAttribute('data-static') === 'true';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The error answer's other fields (a missing run's `run_state`, say). */
    readonly body: Json = null,
  ) {
    super(message);
  }
}

/** The project every call is scoped to ('' = the server's own); set from the URL. */
export const scope = { project: '' };

export function prefix(project = scope.project): string {
  return project ? `/api/projects/${encodeURIComponent(project)}` : '/api';
}

// biome-ignore lint/suspicious/noExplicitAny: API answers are JSON read defensively by each view
export type Json = any;

/**
 * One request to the API. `T`: the answer's type, from serve/api-types.ts (the server's answer
 * builders are checked against the same types); the views still not typed there take `Json`.
 */
export async function api<T = Json>(path: string, method = 'GET', body?: unknown): Promise<T> {
  if (STATIC) {
    if (method !== 'GET') throw new ApiError('this is a read-only copy of the results (agentv-results site): nothing can be changed here', 405);
    return staticAnswer(path).catch((e: unknown) => {
      throw e instanceof StaticMiss ? new ApiError(e.message, e.status, e.status === 404 ? { run_state: 'not_on_site' } : null) : e;
    });
  }
  const init: RequestInit = { method, credentials: 'same-origin', headers: {} };
  if (method !== 'GET') {
    init.headers = { 'x-agentv-results-token': TOKEN, 'content-type': 'application/json' };
    init.body = JSON.stringify(body ?? {});
  }
  let r: Response;
  try {
    r = await fetch(prefix() + path, init);
  } catch {
    throw new ApiError('the Dashboard server is not answering (stopped?)', 0);
  }
  const j = await r.json().catch(() => null);
  if (!r.ok) throw new ApiError(j && typeof j.error === 'string' ? j.error : `HTTP ${r.status}`, r.status, j);
  return j;
}

/** Where a run's HTML report is: the server's route, or the site's file. */
export const reportHref = (runId: string): string => (STATIC ? staticReport(runId) : `${prefix()}/runs/${encodeURIComponent(runId)}/report`);

/** Mark the body when a view has painted (tests and benchmarks wait on it). */
export function painted(what: string): void {
  d.body.setAttribute(`data-${what}-loaded`, String(Date.now()));
}

/** Route parameters with the current project (a projects[] entry) added. */
export const withProject = (p: Record<string, string | number | null | undefined>) => ({ ...p, project: scope.project || null });
