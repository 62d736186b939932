/**
 * A real S3 API server on 127.0.0.1 for the hybrid storage tests: s3rver (npm) holds the buckets
 * and objects on disk and speaks the S3 REST API (multipart included). s3rver 3.x checks the access
 * key id but not a SigV4 signature, so it listens behind a small loopback front that recomputes
 * every request's SigV4 signature with the configured secret (@smithy/signature-v4, the signer the
 * AWS SDK itself uses) and refuses a mismatch with S3's own 403 SignatureDoesNotMatch: a wrong
 * secret is refused as a real S3 endpoint refuses it.
 *
 * The front can also go away, at once or in the middle of a request (`goAway`), and come back on
 * the same port (`comeBack`): the "server gone mid-upload" case. With `{ countAttempts: true }` the
 * port, while away, answers every connection by dropping it and counts them (`attemptsWhileAway`):
 * a test then ends the outage once the client was seen retrying into it, not after a guessed time.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

export const S3_KEY_ID = 'AGENTVTESTKEY0000001';
export const S3_SECRET = 'sEcReT-agentv-results-test-0123456789abcdef';

export interface S3Server {
  endpoint: string;
  port: number;
  bucket: string;
  dir: string;
  /** Environment for a client: the credentials in the standard AWS variables. */
  env: Record<string, string>;
  /** Requests the front saw (method and path), for asserting what a command sent. */
  requests: { method: string; path: string }[];
  /** Refuse connections from now on; with `when`, only once a request matches it (that request is cut mid-way). */
  goAway(when?: (req: IncomingMessage) => boolean, opts?: { countAttempts?: boolean }): void;
  /** Connections dropped while away (only with `goAway(…, { countAttempts: true })`). */
  readonly attemptsWhileAway: number;
  comeBack(): Promise<void>;
  close(): Promise<void>;
}

function bytes(d: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof d === 'string') return d;
  return d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** The hash the signer needs (sha256, keyed = HMAC), from node:crypto. */
class Sha256 {
  private h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.h.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}

function signatureOf(auth: string): { credential: string; signedHeaders: string[]; signature: string } | null {
  const m = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(auth);
  return m ? { credential: m[1]!, signedHeaders: m[2]!.split(';'), signature: m[3]! } : null;
}

async function verifySigV4(req: IncomingMessage, secrets: Map<string, string>): Promise<string | null> {
  const sig = signatureOf(req.headers.authorization ?? '');
  if (!sig) return 'AccessDenied';
  const [keyId, date, region, service] = sig.credential.split('/');
  const secret = secrets.get(keyId!);
  if (!secret) return 'InvalidAccessKeyId';
  const url = new URL(req.url ?? '/', 'http://placeholder');
  const headers: Record<string, string> = {};
  for (const h of sig.signedHeaders) {
    const v = req.headers[h];
    if (v !== undefined) headers[h] = Array.isArray(v) ? v.join(',') : v;
  }
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const amzDate = req.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !amzDate.startsWith(date!)) return 'AccessDenied';
  const signer = new SignatureV4({
    service: service!,
    region: region!,
    credentials: { accessKeyId: keyId!, secretAccessKey: secret },
    sha256: Sha256,
    uriEscapePath: false,
  });
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const signed = await signer.sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: (headers.host ?? '').split(':')[0]!, path: url.pathname, query, headers, body: undefined },
    { signingDate, signableHeaders: new Set(sig.signedHeaders), unsignableHeaders: new Set() },
  );
  const mine = signatureOf(String(signed.headers.authorization ?? signed.headers.Authorization ?? ''));
  return mine?.signature === sig.signature ? null : 'SignatureDoesNotMatch';
}

function s3Error(res: ServerResponse, status: number, code: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
}

/** Start s3rver and its verifying front on free loopback ports, with `bucket` created. */
export async function startS3(opts: { bucket?: string } = {}): Promise<S3Server> {
  const S3rver = require('s3rver') as new (o: object) => { run(): Promise<{ port: number }>; close(): Promise<void> };
  const account = require('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };
  account.DUMMY_ACCOUNT.createKeyPair(S3_KEY_ID, S3_SECRET);
  const bucket = opts.bucket ?? 'agentv-test';
  const dir = mkdtempSync(join(tmpdir(), 'agentv-s3-'));
  const inner = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const innerPort = (await inner.run()).port;
  const secrets = new Map([[S3_KEY_ID, S3_SECRET]]);
  const requests: { method: string; path: string }[] = [];
  let cutWhen: ((req: IncomingMessage) => boolean) | null = null;
  let down = false;
  let countAttempts = false;
  let attempts = 0;
  let dropper: TcpServer | null = null;
  const sockets = new Set<Socket>();
  /** Once the front has stopped listening: with countAttempts, take the port and drop every connection. */
  const whileAway = () => {
    if (!countAttempts || dropper) return;
    const d = createTcpServer((s) => {
      attempts++;
      s.destroy();
    });
    dropper = d;
    let tries = 0;
    // Only while this dropper is still the current one: a comeBack meanwhile ends the outage.
    const take = () => {
      if (dropper === d) d.listen(port, '127.0.0.1');
    };
    d.on('error', (err: NodeJS.ErrnoException) => {
      // The front's socket may linger for a moment after close: try again, bounded.
      if (err.code === 'EADDRINUSE' && tries++ < 200) setTimeout(take, 10).unref();
    });
    take();
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    if (down || cutWhen?.(req)) {
      // The server goes away under this request: no answer, the connection dropped, nothing listening after.
      down = true;
      cutWhen = null;
      req.socket.destroy();
      front.close(whileAway);
      for (const s of sockets) s.destroy();
      return;
    }
    req.pause();
    verifySigV4(req, secrets).then(
      (refused) => {
        if (refused) {
          req.resume();
          s3Error(res, 403, refused);
          return;
        }
        const up = httpRequest({ host: '127.0.0.1', port: innerPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        req.pipe(up);
        req.resume();
      },
      () => s3Error(res, 500, 'InternalError'),
    );
  };
  let front: Server = createServer(handler);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      front.once('error', reject);
      front.listen(port, '127.0.0.1', () => resolve((front.address() as { port: number }).port));
    });
  front.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(0);
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    bucket,
    dir,
    requests,
    env: { AWS_ACCESS_KEY_ID: S3_KEY_ID, AWS_SECRET_ACCESS_KEY: S3_SECRET },
    get attemptsWhileAway() {
      return attempts;
    },
    goAway(when, opts = {}) {
      countAttempts = opts.countAttempts ?? false;
      attempts = 0;
      if (when) {
        cutWhen = when;
        return;
      }
      down = true;
      front.close(whileAway);
      for (const s of sockets) s.destroy();
    },
    async comeBack() {
      down = false;
      cutWhen = null;
      const d = dropper;
      dropper = null;
      countAttempts = false;
      if (d?.listening) await new Promise<void>((r) => d.close(() => r()));
      front = createServer(handler);
      front.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await listen(port);
    },
    async close() {
      const d = dropper;
      if (d?.listening) await new Promise<void>((r) => d.close(() => r()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => front.close(() => r()));
      await inner.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `results.object_store` for this server, as a config YAML block (indented under `results:`). */
export function objectStoreYaml(s: S3Server, prefix = 'agentv'): string {
  return [
    '  storage_mode: hybrid',
    '  object_store:',
    `    endpoint: ${s.endpoint}`,
    '    region: us-east-1',
    `    bucket: ${s.bucket}`,
    `    prefix: ${prefix}`,
    '    force_path_style: true',
  ].join('\n');
}
