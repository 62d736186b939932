/**
 * `startServer`: the Dashboard and its API on one node:http server. Loopback only unless the
 * caller opts in (`allowRemote`): the API can sync and edit the results branch with this user's
 * git credentials, so exposing it is a decision, not a default.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveTarget, targetOptionsOf } from '../repo/target.js';
import { flag, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';
import { ConfigError } from '../errors/publish-errors.js';
import { newApiContext } from './api-context.js';
import { registerApi } from './api.js';
import { registerAutoresearchApi } from './autoresearch-api.js';
import { readJsonBody, Router, send, sendError } from './http.js';
import { HttpError } from '../errors/serve-errors.js';
import { dashboardCsp, renderDashboard } from './page.js';
import { allowedHosts, checkHost, checkWrite, isLoopbackHost, newToken } from './security.js';
import { ServeError } from '../errors/serve-errors.js';

/** `startServer`'s options (the `serve` command's flags, and `daemon --http`'s, come from the same fields). */
export const ServeOptionsSchema = z.strictObject({
  /** Port (default 0: any free port; the `serve` command's default is 4318). */
  port: z.number().int().min(0).max(65535).default(0).meta(flag('--port <n>', 'Port (default 4318; 0 picks a free one)')),
  /** Address to bind (default 127.0.0.1). */
  host: z.string().min(1).default('127.0.0.1').meta(flag('--host <addr>', 'Address to bind (default 127.0.0.1; anything else needs --allow-remote)')),
  /** Required to bind anything but a loopback address. */
  allowRemote: z
    .boolean()
    .default(false)
    .meta(
      flag('--allow-remote', 'Allow binding a non-loopback address (the API can sync and edit the results branch: put it behind something that authenticates)'),
    ),
  /** Extra host names the server answers to (a reverse proxy's name, say). */
  allowHosts: z
    .array(z.string())
    .default([])
    .meta(flag('--allow-host <name>', 'Also answer to this Host name (repeatable; e.g. a reverse proxy). Others are refused (DNS rebinding protection)')),
  /** Refuse every write (sync, tags, feedback). */
  readOnly: z.boolean().default(false).meta(flag('--read-only', 'Refuse sync, tag and feedback edits')),
  ...TargetFields,
  /** The write token (default: a random one per start). */
  token: z.string().min(1).optional(),
  /** A request whose answer takes longer is answered 503 (default 30 s): no client waits on one file forever. */
  requestTimeoutMs: z.number().positive().default(30_000),
});
export type ServeOptions = z.input<typeof ServeOptionsSchema>;

/** Settles with `work`, or rejects with a 503 once `ms` have passed (the work itself is left to finish). */
function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HttpError(503, `${what}: no answer within ${Math.round(ms / 1000)} s — a file or the repository did not answer; try again`)),
      ms,
    );
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  /** Writes need it in the x-agentv-results-token header (the Dashboard page carries it). */
  token: string;
  /** True when bound to a non-loopback address. */
  exposed: boolean;
  server: Server;
  close(): Promise<void>;
}

/** Start the Dashboard's HTTP server on the results branch (loopback by default), as `agentv-results serve` does. */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const opts = parseOptions('startServer', ServeOptionsSchema, options);
  const host = opts.host;
  const loopback = isLoopbackHost(host.replace(/^\[|\]$/g, '')) || host === '::1';
  if (!loopback && !opts.allowRemote) {
    throw new ServeError(`refusing to listen on ${host}: the API can sync and edit the results branch; pass --allow-remote to expose it beyond this machine`, {
      data: { host },
    });
  }
  const token = opts.token ?? newToken();
  const base = targetOptionsOf(opts);
  // Outside a git repository (and without results.path/results.repo) there is nothing to serve:
  // refuse to start with the one-line configuration error, as every other command does. Any other
  // failure (a results.repo that cannot be cloned yet) is the page's to show: the server starts.
  const resolved = await resolveTarget(base).catch((err: unknown) => {
    if (err instanceof ConfigError) throw err;
    return null;
  });
  const ctx = newApiContext(base, opts.readOnly);
  // The first page's listing uses the target resolved here (a resolve is several git processes).
  if (resolved) ctx.runs.keepTarget(base, resolved);
  const router = new Router();
  router.add('GET', '/', async () => ({ html: renderDashboard({ token, readOnly: ctx.readOnly }), csp: dashboardCsp() }));
  registerApi(router, ctx);
  registerAutoresearchApi(router, opts.cwd);
  const hosts = allowedHosts(host, opts.allowHosts);

  const server = createServer((req, res) => {
    void (async () => {
      try {
        const refusedHost = checkHost(req, hosts);
        if (refusedHost) return sendError(res, refusedHost.status, refusedHost.message);
        const method = req.method ?? 'GET';
        if (method !== 'GET' && method !== 'HEAD') {
          const refused = checkWrite(req, token);
          if (refused) return sendError(res, refused.status, refused.message);
        }
        const url = new URL(req.url ?? '/', 'http://localhost');
        const m = router.match(method === 'HEAD' ? 'GET' : method, url.pathname);
        if (m instanceof HttpError) return sendError(res, m.status, m.message);
        // Each request answers on its own: one that waits on something (a slow disk, a stuck file)
        // is answered 503 after the timeout; every other request is served meanwhile.
        const reply = await withTimeout(
          m.handler({ method, path: url.pathname, query: url.searchParams, params: m.params, raw: req, body: () => readJsonBody(req) }),
          opts.requestTimeoutMs,
          `${method} ${url.pathname}`,
        );
        await send(res, reply);
      } catch (err) {
        const e = err instanceof HttpError ? err : new HttpError(500, err instanceof Error ? err.message : String(err));
        sendError(res, e.status, e.message, e.extra);
      }
    })();
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${addr.port}`,
    host: addr.address,
    port: addr.port,
    token,
    exposed: !loopback,
    server,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Bounded: stopping never waits on a read that does not end.
      await withTimeout(ctx.cache.close(), 2_000, 'closing').catch(() => undefined);
    },
  };
}
