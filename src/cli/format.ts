/** Terminal formatting shared by the commands: tables, numbers, colour that respects NO_COLOR. */
import { jsonKeys } from '../util/json-keys.js';
import { redactDeep } from '../errors/redact.js';

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

/** A command's `--json` document on stdout: snake_case keys (jsonKeys), credentials redacted. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(redactDeep(jsonKeys(value)), null, 2) + '\n');
}

/** A document in a format of its own (a JSON Schema) on stdout, keys as they are, credentials redacted. */
export function printDocument(value: unknown): void {
  process.stdout.write(JSON.stringify(redactDeep(value), null, 2) + '\n');
}
