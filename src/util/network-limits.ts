import { NetworkLimitError } from '../errors/input-error.js';

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

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim();
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new NetworkLimitError(`${name}=${JSON.stringify(raw)}: expected a ${integer ? 'whole ' : ''}number greater than 0`, {
      data: { variable: name, value: raw },
    });
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
