/**
 * How long a network operation may wait for its peer: the one home of these limits, read by the git
 * layer (fetch, push, ls-remote, clone over http(s) and ssh), the object store (every S3 call) and
 * the webhook. A peer that accepts the connection and then says nothing must end the command, not
 * hang it; a slow but live link must not fail it, so the defaults are generous and each is
 * overridable through the environment:
 *
 * | variable | default | what it bounds |
 * |---|---|---|
 * | `AGENTV_RESULTS_NET_LOW_SPEED_LIMIT` | 1000 | bytes per second under which a transfer counts as stalled |
 * | `AGENTV_RESULTS_NET_LOW_SPEED_TIME` | 60 | seconds a transfer may stay stalled (git's low-speed time, ssh keep-alives, an S3 request's silence) |
 * | `AGENTV_RESULTS_NET_TIMEOUT` | 1800 | seconds one git network command or one S3 call may take in all |
 * | `AGENTV_RESULTS_NET_CONNECT_TIMEOUT` | 30 | seconds to open a connection (S3) |
 * | `AGENTV_RESULTS_WEBHOOK_TIMEOUT` | 10 | seconds a webhook POST may take in all |
 */
import { AgentvResultsError } from '../errors/errors.js';

export interface NetworkLimits {
  /** Bytes per second under which a transfer is stalled. */
  lowSpeedLimit: number;
  /** Seconds a transfer may stay under the limit (or silent) before it is ended. */
  lowSpeedTimeS: number;
  /** One network operation's deadline, in milliseconds. */
  deadlineMs: number;
  /** Opening a connection, in milliseconds. */
  connectTimeoutMs: number;
  /** A webhook POST's deadline, in milliseconds. */
  webhookTimeoutMs: number;
}

export const NETWORK_ENV = {
  lowSpeedLimit: 'AGENTV_RESULTS_NET_LOW_SPEED_LIMIT',
  lowSpeedTime: 'AGENTV_RESULTS_NET_LOW_SPEED_TIME',
  deadline: 'AGENTV_RESULTS_NET_TIMEOUT',
  connectTimeout: 'AGENTV_RESULTS_NET_CONNECT_TIMEOUT',
  webhookTimeout: 'AGENTV_RESULTS_WEBHOOK_TIMEOUT',
} as const;

export const DEFAULT_NETWORK_LIMITS: NetworkLimits = {
  lowSpeedLimit: 1000,
  lowSpeedTimeS: 60,
  deadlineMs: 1_800_000,
  connectTimeoutMs: 30_000,
  webhookTimeoutMs: 10_000,
};

/** A network limit set to something that is not a positive number (exit 2). */
export class NetworkLimitError extends AgentvResultsError {
  readonly code = 'config';
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim();
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new NetworkLimitError(`${name}=${JSON.stringify(raw)}: expected a ${integer ? 'whole ' : ''}number greater than 0`);
  return n;
}

/** The last limits parsed, by the raw values they came from: every git process asks (git/runner.ts), the values rarely change. */
let parsed: { raw: string; limits: NetworkLimits } | undefined;

/** The limits in force: the environment's overrides over the defaults. Throws NetworkLimitError on a bad value. */
export function networkLimits(env: NodeJS.ProcessEnv = process.env): NetworkLimits {
  const raw = Object.values(NETWORK_ENV)
    .map((name) => env[name] ?? '')
    .join('\0');
  if (parsed?.raw === raw) return parsed.limits;
  const limits = Object.freeze(parseLimits(env));
  parsed = { raw, limits };
  return limits;
}

function parseLimits(env: NodeJS.ProcessEnv): NetworkLimits {
  const d = DEFAULT_NETWORK_LIMITS;
  return {
    lowSpeedLimit: positive(env, NETWORK_ENV.lowSpeedLimit, d.lowSpeedLimit, true),
    // git's http.lowSpeedTime and ssh's ServerAliveInterval take whole seconds.
    lowSpeedTimeS: positive(env, NETWORK_ENV.lowSpeedTime, d.lowSpeedTimeS, true),
    deadlineMs: Math.round(positive(env, NETWORK_ENV.deadline, d.deadlineMs / 1000, false) * 1000),
    connectTimeoutMs: Math.round(positive(env, NETWORK_ENV.connectTimeout, d.connectTimeoutMs / 1000, false) * 1000),
    webhookTimeoutMs: Math.round(positive(env, NETWORK_ENV.webhookTimeout, d.webhookTimeoutMs / 1000, false) * 1000),
  };
}

/** "90 s", "2.5 s", "30 min": a duration for a message. */
export function describeSeconds(ms: number): string {
  const s = ms / 1000;
  if (s >= 120 && Number.isInteger(s / 60)) return `${s / 60} min`;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
