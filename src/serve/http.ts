/**
 * A small router over node:http: exact method + path patterns with `:name` segments, JSON in and
 * out, and a size limit on request bodies. No framework: the server has a dozen routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hideLocalPaths } from '../errors/redact.js';
import { HttpError } from '../errors/serve-errors.js';

export interface Request {
  method: string;
  path: string;
  query: URLSearchParams;
  params: Record<string, string>;
  /** The request as node received it (absent when the static site asks a route: src/site/). */
  raw?: IncomingMessage;
  /** The parsed JSON body of a write (an object), or {} when there is none. */
  body(): Promise<Record<string, unknown>>;
}

export type Reply =
  | { status?: number; json: unknown }
  | { status?: number; html: string; csp: string }
  | { status?: number; stream: AsyncIterable<string> | Iterable<string>; type: string; csp?: string };
export type Handler = (req: Request) => Promise<Reply>;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

export const MAX_BODY_BYTES = 256 * 1024;

export class Router {
  private routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  /** The handler and params for a request, or why there is none (404/405). */
  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | HttpError {
    const segs = path.split('/').filter(Boolean);
    let methodMismatch = false;
    for (const r of this.routes) {
      if (r.parts.length !== segs.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segs.length && ok; i++) {
        const p = r.parts[i]!;
        let s: string;
        try {
          s = decodeURIComponent(segs[i]!);
        } catch {
          // answered: bad percent-encoding is a 400
          return new HttpError(400, 'malformed percent-encoding in the path');
        }
        if (p.startsWith(':')) params[p.slice(1)] = s;
        else ok = p === s;
      }
      if (!ok) continue;
      if (r.method !== method) {
        methodMismatch = true;
        continue;
      }
      return { handler: r.handler, params };
    }
    return methodMismatch ? new HttpError(405, `method ${method} not allowed on ${path}`) : new HttpError(404, `no such endpoint: ${path}`);
  }
}

export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  const ct = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(ct)) throw new HttpError(415, 'send the body as application/json');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HttpError(400, 'the body must be a JSON object');
  return v as Record<string, unknown>;
}

const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

export async function send(res: ServerResponse, reply: Reply): Promise<void> {
  const status = reply.status ?? 200;
  if ('json' in reply) {
    const body = JSON.stringify(reply.json);
    res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  if ('html' in reply) {
    res.writeHead(status, {
      ...COMMON_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': reply.csp,
      'content-length': Buffer.byteLength(reply.html),
    });
    res.end(reply.html);
    return;
  }
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': reply.type, ...(reply.csp ? { 'content-security-policy': reply.csp } : {}) });
  for await (const chunk of reply.stream) {
    if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
  }
  res.end();
}

export function sendError(res: ServerResponse, status: number, message: string, extra: Record<string, unknown> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // No answer shows where things live on the server (a scratch file, the repository, a cache).
  const body = JSON.stringify({ error: hideLocalPaths(message), ...extra });
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
