import { describeSeconds, NETWORK_ENV, networkLimits } from './network-limits.js';
import { objectOf, parseArgs } from '../options/verb-options.js';
import * as z from 'zod';
import { WebhookError } from '../errors/input-error.js';

export const WEBHOOK_ENV = 'AGENTV_RESULTS_WEBHOOK_URL';
/** The Authorization header's value for the webhook ("Bearer <token>", "Basic <base64>"): a secret, never printed. */
export const WEBHOOK_AUTHORIZATION_ENV = 'AGENTV_RESULTS_WEBHOOK_AUTHORIZATION';

export interface Webhook {
  url: URL;
  /** Sent as the Authorization header (from AGENTV_RESULTS_WEBHOOK_AUTHORIZATION). */
  authorization?: string;
  /** How long a POST may take in all (default: AGENTV_RESULTS_WEBHOOK_TIMEOUT, else 10 s). */
  timeoutMs?: number;
}

export interface WebhookEvent {
  /** The gate: `regression`, `tests-removed`, `tests-added`, `gate-error` (it could not decide); the daemon: the other two. */
  event: 'regression' | 'tests-removed' | 'tests-added' | 'gate-error' | 'sync-branch-created' | 'publish-failing';
  [key: string]: unknown;
}

/** `webhookFrom`'s arguments: the URL given as an option (undefined: none), and the environment read for the rest. */
export const WebhookFromArgsSchema = {
  option: z.string().optional(),
  // An object, not z.record: process.env is not a plain object to zod, and is read, not copied.
  env: objectOf<NodeJS.ProcessEnv>().optional(),
};

/** The webhook from an option, else from AGENTV_RESULTS_WEBHOOK_URL; null when neither is set. */
export function webhookFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): Webhook | null {
  parseArgs('webhookFrom', WebhookFromArgsSchema, [option, env]);
  const raw = option ?? env[WEBHOOK_ENV];
  if (raw === undefined || raw.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new WebhookError(`the webhook URL (${option !== undefined ? '--webhook' : WEBHOOK_ENV}) is not a URL`, {
      data: { source: option !== undefined ? '--webhook' : WEBHOOK_ENV },
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookError(`the webhook URL must be http(s) (got ${url.protocol.replace(/:$/, '')})`);
  const authorization = env[WEBHOOK_AUTHORIZATION_ENV]?.trim();
  return { url, ...(authorization ? { authorization } : {}), timeoutMs: networkLimits(env).webhookTimeoutMs };
}

/** POST the event as JSON; never throws, never puts the URL (or the authorization) in its error text. */
export async function notifyWebhook(hook: Webhook, event: WebhookEvent): Promise<{ ok: true; status: number } | { ok: false; error: string }> {
  // fetch refuses a URL with credentials in it (a TypeError that says nothing): say why, and what to use.
  if (hook.url.username !== '' || hook.url.password !== '')
    return {
      ok: false,
      error: `the webhook URL for ${hook.url.host} has credentials in it (user:password@), which fetch does not send; take them out of the URL and put them in ${WEBHOOK_AUTHORIZATION_ENV} (sent as the Authorization header, e.g. "Bearer <token>" or "Basic <base64 of user:password>")`,
    };
  const body = JSON.stringify({ source: 'agentv-results', ...event });
  const timeoutMs = hook.timeoutMs ?? networkLimits().webhookTimeoutMs;
  try {
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'agentv-results', ...(hook.authorization ? { authorization: hook.authorization } : {}) },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // drain only: the status decides, the body is not needed (bounded by the same deadline)
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) return { ok: false, error: `the webhook at ${hook.url.host} answered HTTP ${res.status}` };
    return { ok: true, status: res.status };
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return {
        ok: false,
        error: `the webhook at ${hook.url.host} did not answer within ${describeSeconds(timeoutMs)} (${NETWORK_ENV.webhookTimeout} sets how long, in seconds)`,
      };
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? name;
    return { ok: false, error: `the webhook at ${hook.url.host} could not be reached (${cause})` };
  }
}
