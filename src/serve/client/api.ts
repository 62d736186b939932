/** The page talks to this server's API only (the CSP's connect-src 'self'); writes carry the page's token. */
import { d } from './dom.js';

export const TOKEN = d.querySelector('meta[name="agentv-results-token"]')?.getAttribute('content') ?? '';
export const READ_ONLY = d.body.getAttribute('data-read-only') === 'true';

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

export async function api(path: string, method = 'GET', body?: unknown): Promise<Json> {
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

/** Mark the body when a view has painted (tests and benchmarks wait on it). */
export function painted(what: string): void {
  d.body.setAttribute(`data-${what}-loaded`, String(Date.now()));
}

/** Route parameters with the current project (a projects[] entry) added. */
export const withProject = (p: Record<string, string | number | null | undefined>) => ({ ...p, project: scope.project || null });
