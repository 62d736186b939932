/**
 * The object tier of `storage_mode: hybrid` (AgentV's results-storage plan): heavy payloads live
 * in an S3-compatible bucket under content-addressed keys, `<prefix>/sha256/<hex>`, and git keeps
 * only pointers to them. This is the one place that talks to the bucket.
 *
 * - Content addressing makes uploads idempotent: a key that exists with the right size is not sent
 *   again, and two machines uploading the same bytes write the same object.
 * - A read is trusted only after its sha256 and size match what the pointer says (`getVerified`).
 * - Large payloads go up in parts (multipart upload), so one failed part is retried, not the whole.
 * - Each request is retried with backoff (util/backoff.ts) while the failure is transient (the
 *   server is unreachable, 5xx, throttling); wrong credentials and a missing bucket fail at once.
 * - Credentials are read from the environment variables the config names, never from the config
 *   file, and never appear in an error message (messages are built from the request, not echoed
 *   from the SDK's request dump).
 *
 * `@aws-sdk/client-s3` is loaded on first use only (s3-sdk.ts), so commands that never touch a
 * bucket (and every command in `git-native` mode) do not pay for it at start-up.
 */
import { createHash } from 'node:crypto';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';
import { redactText } from '../errors/redact.js';
import { describeSeconds, NETWORK_ENV, networkLimits, type NetworkLimits } from '../util/network-limits.js';
import { ObjectStoreError, type ObjectStoreFailure } from '../errors/store-errors.js';
import { loadSdk, type S3Client, type S3Module } from './s3-sdk.js';

/** The `results.object_store` block of `.agentv/config.yaml` (snake_case, AgentV's plan). */
export interface ObjectStoreSettings {
  endpoint?: string;
  region: string;
  bucket: string;
  prefix: string;
  force_path_style: boolean;
  /** How long an upload retries a transient failure (seconds, default 60). */
  retry_seconds?: number;
  credentials: { access_key_id_env: string; secret_access_key_env: string; session_token_env?: string };
}

/** The pointer `ref` of a payload in the bucket (git-native pointers name the artifacts branch). */
export const OBJECT_STORE_REF = 'object_store';

/** Payloads at least this large go up as a multipart upload (S3's minimum part is 5 MiB). */
export const MULTIPART_THRESHOLD = 16 * 1024 * 1024;
export const PART_SIZE = 8 * 1024 * 1024;

export type { ObjectStoreFailure } from '../errors/store-errors.js';

/** `<prefix>/sha256/<hex>`: the content address of bytes whose sha256 is `sha256`. */
export function objectKey(prefix: string, sha256: string): string {
  const p = prefix.replace(/^\/+|\/+$/g, '');
  return p === '' ? `sha256/${sha256}` : `${p}/sha256/${sha256}`;
}

/** A key a pointer may name: a content address of exactly that sha256 under some safe prefix. */
export function isContentKey(key: string, sha256: string): boolean {
  if (!key.endsWith(`sha256/${sha256}`)) return false;
  const prefix = key.slice(0, key.length - `sha256/${sha256}`.length);
  return prefix === '' || (/^([A-Za-z0-9._-]+\/)+$/.test(prefix) && !prefix.split('/').some((seg) => seg === '.' || seg === '..'));
}

/** One SDK command sent under the call's deadline (request() gives each attempt its own). */
// biome-ignore lint/suspicious/noExplicitAny: the SDK's command and output types vary per command
type Send = <O = any>(command: unknown) => Promise<O>;

/** The SDK does not always settle once aborted mid-body: the deadline ends the wait either way. */
function raceDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(Object.assign(new Error('the call passed its deadline'), { name: 'AbortError' }));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** A request the socket timeout ended: the server stopped answering (not refused, not down). */
function isSilence(e: { name?: string; message?: string }): boolean {
  return e.name === 'TimeoutError' && /of inactivity/.test(e.message ?? '');
}

export function sha256Of(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** How long an upload keeps retrying a transient failure unless the config says otherwise. */
export const DEFAULT_UPLOAD_RETRY_SECONDS = 60;

export interface ObjectStoreOptions {
  /** Retries of one read after the first try (default 4). */
  retries?: number;
  /** How long an upload request keeps retrying a transient failure (default: the settings' retry_seconds, else 60 s). */
  uploadRetryMs?: number;
  backoff?: BackoffPolicy;
  /**
   * One call's deadline, its retries included (default: util/network-limits.ts, 30 min unless
   * AGENTV_RESULTS_NET_TIMEOUT says otherwise). A request silent for the low-speed time ends sooner.
   */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface PutOutcome {
  key: string;
  /** False when the object was already there (content addressing: nothing sent). */
  uploaded: boolean;
}

export class ObjectStore {
  private client: Promise<S3Client> | null = null;
  private readonly secrets: string[];
  private readonly retries: number;
  private readonly uploadRetryMs: number;
  private readonly policy: BackoffPolicy;
  private readonly timeoutMs: number;
  private readonly limits: NetworkLimits;

  constructor(
    readonly settings: ObjectStoreSettings,
    private readonly opts: ObjectStoreOptions = {},
  ) {
    const env = opts.env ?? process.env;
    const c = settings.credentials;
    this.secrets = [env[c.secret_access_key_env], c.session_token_env ? env[c.session_token_env] : undefined].filter((s): s is string => !!s);
    this.retries = opts.retries ?? 4;
    this.uploadRetryMs = opts.uploadRetryMs ?? (settings.retry_seconds ?? DEFAULT_UPLOAD_RETRY_SECONDS) * 1000;
    this.policy = opts.backoff ?? { baseMs: 200, capMs: 5_000 };
    this.limits = networkLimits(env);
    this.timeoutMs = Math.min(opts.timeoutMs ?? this.limits.deadlineMs, this.limits.deadlineMs);
  }

  /** Where the store is, for messages: endpoint (credentials stripped) and bucket. */
  get where(): string {
    const ep = this.settings.endpoint ? redactText(this.settings.endpoint) : `s3 (${this.settings.region})`;
    return `bucket ${this.settings.bucket} at ${ep}`;
  }

  keyFor(sha256: string): string {
    return objectKey(this.settings.prefix, sha256);
  }

  private async s3(): Promise<S3Client> {
    this.client ??= (async () => {
      const env = this.opts.env ?? process.env;
      const c = this.settings.credentials;
      const accessKeyId = env[c.access_key_id_env];
      const secretAccessKey = env[c.secret_access_key_env];
      if (!accessKeyId || !secretAccessKey)
        throw new ObjectStoreError(
          `storage_mode hybrid: no credentials for ${this.where}: set the environment variables ${c.access_key_id_env} and ${c.secret_access_key_env} (results.object_store.credentials names them)`,
          'config',
          { operation: 'connect', bucket: this.settings.bucket },
        );
      const sessionToken = c.session_token_env ? env[c.session_token_env] : undefined;
      const { S3Client } = await loadSdk();
      return new S3Client({
        region: this.settings.region,
        ...(this.settings.endpoint ? { endpoint: this.settings.endpoint } : {}),
        forcePathStyle: this.settings.force_path_style,
        credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
        // Our own retries (below) decide what is transient; the SDK's would hide a dead server for long.
        maxAttempts: 1,
        // A server that accepts and then says nothing: socketTimeout ends a request silent for the
        // low-speed time (sending or receiving), requestTimeout (made an error, not the SDK's log
        // line) bounds one request, and request() below bounds the whole call with an AbortSignal.
        requestHandler: {
          connectionTimeout: Math.min(this.timeoutMs, this.limits.connectTimeoutMs),
          socketTimeout: this.limits.lowSpeedTimeS * 1000,
          requestTimeout: this.timeoutMs,
          throwOnRequestTimeout: true,
        },
      });
    })();
    // observed: whoever awaits the client gets the error; this only forgets the failed one
    this.client.catch(() => {
      this.client = null;
    });
    return this.client;
  }

  /**
   * One request, retried with backoff while its failure is transient: a read a few times (a reader
   * answers soon), an upload (`upload`) for the upload budget, so that a bucket down for a few
   * seconds delays a publish instead of failing it.
   */
  private async request<T>(what: string, fn: (s3: S3Client, m: S3Module, send: Send) => Promise<T>, upload = false): Promise<T> {
    const s3 = await this.s3();
    const m = await loadSdk();
    const started = Date.now();
    // One deadline for the call, its retries included: each attempt gets what is left of it.
    const deadline = started + this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const left = deadline - Date.now();
      const attemptSignal = AbortSignal.timeout(Math.max(1, left));
      const send: Send = (command) => s3.send(command as never, { abortSignal: attemptSignal }) as never;
      try {
        return await raceDeadline(fn(s3, m, send), attemptSignal);
      } catch (err) {
        if (err instanceof ObjectStoreError) throw err;
        const overDeadline = attemptSignal.aborted;
        const failure = this.classify(err);
        if (!overDeadline && (failure === 'unreachable' || failure === 'server')) {
          const delay = backoffDelay(attempt + 1, this.policy);
          const inBudget = upload ? Date.now() - started + delay <= this.uploadRetryMs : attempt < this.retries;
          if (inBudget && Date.now() + delay < deadline) {
            await new Promise((r) => setTimeout(r, delay));
            continue;
          }
        }
        const retried =
          upload && (failure === 'unreachable' || failure === 'server')
            ? ` (retried for ${Math.round((Date.now() - started) / 1000)} s; results.object_store.retry_seconds or AGENTV_RESULTS_S3_RETRY_SECONDS sets how long)`
            : '';
        if (overDeadline)
          throw new ObjectStoreError(
            `${what} (${this.where}): the server did not finish within ${describeSeconds(this.timeoutMs)} (the deadline for one call, its retries included; ${NETWORK_ENV.deadline} sets it in seconds)`,
            'unreachable',
            { operation: what, bucket: this.settings.bucket },
          );
        throw new ObjectStoreError(`${what} (${this.where}): ${this.describe(err, failure)}${retried}`, failure, {
          operation: what,
          bucket: this.settings.bucket,
        });
      }
    }
  }

  private classify(err: unknown): ObjectStoreFailure {
    const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    if (e.name === 'NoSuchBucket') return 'no-bucket';
    if (
      e.name === 'InvalidAccessKeyId' ||
      e.name === 'SignatureDoesNotMatch' ||
      e.name === 'AccessDenied' ||
      e.name === 'InvalidToken' ||
      e.name === 'ExpiredToken' ||
      status === 401 ||
      status === 403
    )
      return 'credentials';
    if (status !== undefined && (status >= 500 || status === 429)) return 'server';
    if (status === undefined) return 'unreachable';
    return 'server';
  }

  /** A message from the failure's kind and the server's error name, with any secret masked. */
  private describe(err: unknown, failure: ObjectStoreFailure): string {
    const e = err as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    const detail =
      failure === 'credentials'
        ? `the server refused the credentials (${e.name ?? 'HTTP ' + status}); check ${this.settings.credentials.access_key_id_env} and ${this.settings.credentials.secret_access_key_env}`
        : failure === 'no-bucket'
          ? `the bucket ${this.settings.bucket} does not exist`
          : failure === 'unreachable' && isSilence(e)
            ? `the server stopped answering: nothing sent or received for ${this.limits.lowSpeedTimeS} s (${NETWORK_ENV.lowSpeedTime} sets how long, in seconds)`
            : failure === 'unreachable'
              ? `the server could not be reached (${e.code ?? e.name ?? 'network error'}: ${(e.message ?? '').split('\n')[0]})`
              : `the server failed (${e.name ?? 'error'}${status ? `, HTTP ${status}` : ''})`;
    return this.mask(detail);
  }

  private mask(text: string): string {
    let out = redactText(text);
    for (const s of this.secrets) out = out.split(s).join('***');
    return out;
  }

  /** The object's size, or null when there is none. */
  async head(key: string, opts: { upload?: boolean } = {}): Promise<number | null> {
    return this.request(
      `checking ${key}`,
      async (_s3, m, send) => {
        try {
          const r = await send(new m.HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
          return r.ContentLength ?? 0;
        } catch (err) {
          const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
          if (e.name === 'NotFound' || e.name === 'NoSuchKey') return null;
          // HEAD has no body: a missing bucket is a bare 404 too; tell the two apart once.
          if (e.$metadata?.httpStatusCode === 404) {
            await send(new m.HeadBucketCommand({ Bucket: this.settings.bucket })).catch((b: unknown) => {
              const be = b as { name?: string; $metadata?: { httpStatusCode?: number } };
              if (be.name === 'NotFound' || be.name === 'NoSuchBucket' || be.$metadata?.httpStatusCode === 404)
                throw Object.assign(new Error('no such bucket'), { name: 'NoSuchBucket', $metadata: { httpStatusCode: 404 } });
              throw b;
            });
            return null;
          }
          throw err;
        }
      },
      opts.upload,
    );
  }

  /**
   * Store `data` under its content address. Skips the upload when an object of that size is already
   * there (the key is the sha256: same key, same bytes — a read verifies that anyway).
   */
  async put(data: Buffer, opts: { sha256?: string; mediaType?: string } = {}): Promise<PutOutcome> {
    const sha = opts.sha256 ?? sha256Of(data);
    const key = this.keyFor(sha);
    const size = await this.head(key, { upload: true });
    if (size === data.length) return { key, uploaded: false };
    if (data.length >= MULTIPART_THRESHOLD) await this.putMultipart(key, data, opts.mediaType);
    else
      await this.request(
        `uploading ${key}`,
        (_s3, m, send) =>
          send(
            new m.PutObjectCommand({
              Bucket: this.settings.bucket,
              Key: key,
              Body: data,
              ContentLength: data.length,
              ...(opts.mediaType ? { ContentType: opts.mediaType } : {}),
            }),
          ),
        true,
      );
    return { key, uploaded: true };
  }

  private async putMultipart(key: string, data: Buffer, mediaType?: string): Promise<void> {
    const bucket = this.settings.bucket;
    const created = await this.request(
      `starting the upload of ${key}`,
      (_s3, m, send) => send(new m.CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...(mediaType ? { ContentType: mediaType } : {}) })),
      true,
    );
    const uploadId = created.UploadId;
    if (!uploadId)
      throw new ObjectStoreError(`starting the upload of ${key} (${this.where}): the server returned no upload id`, 'server', {
        operation: 'start a multipart upload',
        bucket: this.settings.bucket,
        key,
      });
    try {
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let offset = 0, n = 1; offset < data.length; offset += PART_SIZE, n++) {
        const body = data.subarray(offset, Math.min(offset + PART_SIZE, data.length));
        const r = await this.request(
          `uploading part ${n} of ${key}`,
          (_s3, m, send) =>
            send(new m.UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: n, Body: body, ContentLength: body.length })),
          true,
        );
        parts.push({ ETag: r.ETag ?? '', PartNumber: n });
      }
      await this.request(
        `completing the upload of ${key}`,
        (_s3, m, send) => send(new m.CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } })),
        true,
      );
    } catch (err) {
      // Best effort: a bucket lifecycle rule cleans up what an unreachable server leaves behind.
      const s3 = await this.s3();
      const m = await loadSdk();
      const abortSignal = AbortSignal.timeout(this.limits.lowSpeedTimeS * 1000);
      // best effort: aborting the upload; the original error is rethrown
      await s3.send(new m.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }), { abortSignal }).catch(() => {});
      throw err;
    }
  }

  /** The object's bytes, or null when there is none (unverified: see getVerified). */
  async get(key: string): Promise<Buffer | null> {
    return this.request(`reading ${key}`, async (_s3, m, send) => {
      try {
        const r = await send(new m.GetObjectCommand({ Bucket: this.settings.bucket, Key: key }));
        if (!r.Body) return Buffer.alloc(0);
        return Buffer.from(await r.Body.transformToByteArray());
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return null;
        throw err;
      }
    });
  }

  /** Drop the client's sockets (a CLI command would otherwise wait for keep-alive to time out). */
  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    // any failure here is fine: a client whose creation failed has nothing to destroy (that failure
    // was reported where the client was awaited)
    if (c) (await c.catch(() => null))?.destroy();
  }
}
