/**
 * The checks every request passes before a handler sees it.
 *
 * DNS rebinding: a page on evil.example can make its own host name resolve to 127.0.0.1 and then
 * talk to this server as "same origin". The browser still sends `Host: evil.example`, so only
 * requests whose Host names the address we listen on (or localhost) are served at all.
 *
 * Cross-site writes: a page on another origin can POST to 127.0.0.1 (a "simple" request needs no
 * preflight). Every write must carry the per-server token, which only our own page knows (it is
 * embedded in the Dashboard, which another origin cannot read), and an Origin header, when the
 * browser sends one, must be our own origin. Without an Origin, a Referer (which some browsers and
 * proxies send instead) must name our own origin too; a write with neither is a non-browser client
 * and is judged by its token alone.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const TOKEN_HEADER = 'x-agentv-results-token';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Host names (without port) this server answers to. */
export function allowedHosts(bindHost: string, extra: string[] = []): Set<string> {
  const set = new Set<string>(['localhost', '127.0.0.1', '[::1]', ...extra.map((h) => h.toLowerCase())]);
  if (bindHost !== '0.0.0.0' && bindHost !== '::') set.add(bindHost.includes(':') && !bindHost.startsWith('[') ? `[${bindHost}]` : bindHost.toLowerCase());
  return set;
}

/** The host part of a Host header ("127.0.0.1:8080" -> "127.0.0.1", "[::1]:80" -> "[::1]"). */
export function hostOnly(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

export type Refusal = { status: 403 | 421; message: string };

export function checkHost(req: IncomingMessage, hosts: Set<string>): Refusal | null {
  const header = req.headers.host;
  if (!header || !hosts.has(hostOnly(header))) {
    return {
      status: 421,
      message: `refused: Host ${JSON.stringify(header ?? '')} is not this server (DNS rebinding protection); open it as http://127.0.0.1:<port>/ or pass --allow-host`,
    };
  }
  return null;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when `url` (an Origin or a Referer) is http(s) on the host this request was sent to. */
function sameOrigin(url: string, req: IncomingMessage): boolean {
  try {
    const u = new URL(url);
    return u.host === (req.headers.host ?? '').toLowerCase() && (u.protocol === 'http:' || u.protocol === 'https:');
  } catch {
    // refused: an unparsable URL is not same-origin
    return false;
  }
}

/** For POST/PUT/DELETE: our origin (when the browser says, by Origin or else by Referer) and our token. */
export function checkWrite(req: IncomingMessage, token: string): Refusal | null {
  const origin = req.headers.origin;
  if (origin !== undefined && !sameOrigin(origin, req))
    return { status: 403, message: `refused: a write from origin ${JSON.stringify(origin)} (cross-site requests may only read)` };
  const referer = req.headers.referer;
  if (origin === undefined && referer !== undefined && !sameOrigin(referer, req)) {
    // Only the origin part is echoed: a Referer's path and query may carry someone's data.
    let from = 'an unparsable Referer';
    try {
      from = `referer origin ${JSON.stringify(new URL(referer).origin)}`;
    } catch {
      // described: an unparsable Referer keeps the default wording
    }
    return { status: 403, message: `refused: a write from ${from} without an Origin (cross-site requests may only read)` };
  }
  const got = req.headers[TOKEN_HEADER];
  if (typeof got !== 'string' || !sameToken(got, token)) {
    return {
      status: 403,
      message: `refused: missing or wrong ${TOKEN_HEADER} header (writes need the token the server printed at start, or the Dashboard page)`,
    };
  }
  return null;
}
