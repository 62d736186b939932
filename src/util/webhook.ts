/**
 * Notifications: one JSON event POSTed to a webhook (a Slack/Teams/Discord incoming webhook or any
 * HTTP endpoint). Such URLs are secrets — whoever has one can post — so the URL is never printed:
 * errors name "the webhook" and its host at most, never its path or query.
 *
 * Best effort by design: a notification that cannot be delivered is reported as a warning and
 * never changes the outcome (or exit code) of the command that sent it.
 */
import { AgentvResultsError } from './errors.js';

export const WEBHOOK_ENV = 'AGENTV_RESULTS_WEBHOOK_URL';
const TIMEOUT_MS = 10_000;

/** A webhook URL that cannot be used (not a URL, not http or https). */
export class WebhookError extends AgentvResultsError {
  readonly code = 'usage';
}

export interface Webhook {
  url: URL;
}

export interface WebhookEvent {
  /** The gate: `regression`, `tests-removed`, `tests-added`, `gate-error` (it could not decide); the daemon: the other two. */
  event: 'regression' | 'tests-removed' | 'tests-added' | 'gate-error' | 'sync-branch-created' | 'publish-failing';
  [key: string]: unknown;
}

/** The webhook from an option, else from AGENTV_RESULTS_WEBHOOK_URL; null when neither is set. */
export function webhookFrom(option: string | undefined, env: NodeJS.ProcessEnv = process.env): Webhook | null {
  const raw = option ?? env[WEBHOOK_ENV];
  if (raw === undefined || raw.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new WebhookError(`the webhook URL (${option !== undefined ? '--webhook' : WEBHOOK_ENV}) is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookError(`the webhook URL must be http(s) (got ${url.protocol.replace(/:$/, '')})`);
  return { url };
}

/** POST the event as JSON; never throws, never puts the URL in its error text. */
export async function notifyWebhook(hook: Webhook, event: WebhookEvent): Promise<{ ok: true; status: number } | { ok: false; error: string }> {
  const body = JSON.stringify({ source: 'agentv-results', ...event });
  try {
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'agentv-results' },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    // drain only: the status decides, the body is not needed
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) return { ok: false, error: `the webhook at ${hook.url.host} answered HTTP ${res.status}` };
    return { ok: true, status: res.status };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return { ok: false, error: `the webhook at ${hook.url.host} could not be reached (${cause})` };
  }
}
