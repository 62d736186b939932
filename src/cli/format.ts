/** Terminal formatting shared by the commands: tables, numbers, colour that respects NO_COLOR. */
import { redactDeep } from '../util/redact.js';

export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
}

export function paint(code: number, text: string, stream?: NodeJS.WriteStream): string {
  return useColor(stream) ? `\u001b[${code}m${text}\u001b[0m` : text;
}

export const green = (t: string) => paint(32, t);
export const red = (t: string) => paint(31, t);
export const yellow = (t: string) => paint(33, t);
export const bold = (t: string) => paint(1, t);
export const dim = (t: string) => paint(2, t);

const ANSI = /\u001b\[[0-9;]*m/g;
const visibleLength = (s: string) => s.replace(ANSI, '').length;

/** A plain aligned table; numeric-looking columns are right-aligned. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => visibleLength(r[i] ?? ''))));
  const numeric = headers.map((_, i) => cells.length > 0 && cells.every((r) => /^[-+]?[\d.,%$]+[a-z%]*$|^—$/.test((r[i] ?? '').replace(ANSI, ''))));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => {
        const pad = ' '.repeat(Math.max(0, widths[i]! - visibleLength(c)));
        return numeric[i] ? pad + c : c + pad;
      })
      .join('  ')
      .trimEnd();
  return [fmt(headers), widths.map((w) => '─'.repeat(w)).join('  '), ...cells.map(fmt)].join('\n');
}

export function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

export function seconds(ms: number | null | undefined): string {
  if (ms == null) return '—';
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms)}ms`;
}

export function money(usd: number | null | undefined): string {
  if (usd == null) return '—';
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

export function int(n: number | null | undefined): string {
  if (n == null) return '—';
  return Math.round(n).toLocaleString('en-US');
}

/**
 * `--json` speaks one key style, AgentV's: snake_case. The library's results name their own fields
 * in camelCase (TypeScript's style); on the way out, every identifier key in camelCase becomes
 * snake_case (`runId` -> `run_id`, `remoteSeenAt` -> `remote_seen_at`). Keys that are data are
 * never touched, and these fields say where data keys are:
 */
/** Maps keyed by data — target, tool and evaluator names: their keys are kept, their values converted. */
export const JSON_DATA_KEYED_FIELDS: ReadonlySet<string> = new Set(['run_summary', 'per_evaluator_summary', 'by_tool']);
/** Documents in a format of their own — a run's metadata (the user's), a tags or feedback document as stored on the branch (feedback's entries are keyed by test id and reviewer): printed as they are. */
export const JSON_VERBATIM_FIELDS: ReadonlySet<string> = new Set(['metadata', 'document']);

const CAMEL_IDENTIFIER = /^[a-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+$/;

/** `remoteSeenAt` -> `remote_seen_at`; any other key (snake_case, data, punctuation) as it is. */
export function snakeKey(key: string): string {
  if (!CAMEL_IDENTIFIER.test(key)) return key;
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * The `--json` form of a result: identifier keys in snake_case (see above). A key whose snake_case
 * name the object already has stays as it is, so nothing is overwritten.
 */
export function jsonKeys(value: unknown, keysAreData = false): unknown {
  if (Array.isArray(value)) return value.map((v) => jsonKeys(v));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const snake = keysAreData ? k : snakeKey(k);
    const key = snake !== k && Object.hasOwn(value, snake) ? k : snake;
    out[key] = JSON_VERBATIM_FIELDS.has(key) && !keysAreData ? v : jsonKeys(v, !keysAreData && JSON_DATA_KEYED_FIELDS.has(key));
  }
  return out;
}

/** A command's `--json` document on stdout: snake_case keys (jsonKeys), credentials redacted. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(redactDeep(jsonKeys(value)), null, 2) + '\n');
}

/** A document in a format of its own (a JSON Schema) on stdout, keys as they are, credentials redacted. */
export function printDocument(value: unknown): void {
  process.stdout.write(JSON.stringify(redactDeep(value), null, 2) + '\n');
}
