/**
 * Structured log lines for long-running commands (daemon, exec): one line per event on stderr,
 * either human text (`2026-03-01T10:00:00.000Z info  published run=exp/ts`) or JSON
 * (`{"ts":…,"level":"info","msg":"published","run":"exp/ts"}`) for log shippers (`--log-format json`).
 */
import { jsonKeys } from '../util/json-keys.js';
import { redactText } from '../errors/redact.js';
import { flag, fnOf, parseOptions } from '../options/verb-options.js';
import * as z from 'zod';

/** How much the daemon and exec log: debug, info, warn or error. */
export const LogLevelSchema = z.enum(['debug', 'info', 'warn', 'error']);
export type LogLevel = z.infer<typeof LogLevelSchema>;
export type LogFormat = 'text' | 'json';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function textValue(v: unknown): string {
  const s = typeof v === 'string' ? v : v instanceof Error ? v.message : JSON.stringify(v);
  return /[\s"=]/.test(s ?? '') ? JSON.stringify(s) : (s ?? 'undefined');
}

/** `createLogger`'s options (the daemon's and exec's `--log-format` comes from the same field). */
export const LoggerOptionsSchema = z.strictObject({
  /** `text` (default) or `json` (one JSON object per line). */
  format: z.enum(['text', 'json']).default('text').meta(flag('--log-format <format>', 'text or json (one JSON object per line, on stderr)')),
  /** Lines below this level are dropped (default info). */
  level: LogLevelSchema.default('info'),
  /** Where each line goes (default: stderr). */
  write: fnOf<(line: string) => void>().default(() => (line: string) => void process.stderr.write(line)),
  /** The clock the lines are stamped with. */
  now: fnOf<() => Date>().default(() => () => new Date()),
});
export type LoggerOptions = z.input<typeof LoggerOptionsSchema>;

/** A logger for the daemon and exec: text or JSON lines, from a level up, to a writer (default stderr). */
export function createLogger(options: LoggerOptions = {}): Logger {
  const opts = parseOptions('createLogger', LoggerOptionsSchema, options);
  const format = opts.format;
  const min = ORDER[opts.level];
  const sink = opts.write;
  // Messages and fields may quote a remote URL: credentials are stripped from every line.
  const write = (line: string) => sink(redactText(line));
  const now = opts.now;
  const emit = (level: LogLevel, msg: string, fields: LogFields = {}): void => {
    if (ORDER[level] < min) return;
    const ts = now().toISOString();
    if (format === 'json') {
      const clean: LogFields = {};
      for (const [k, v] of Object.entries(fields)) clean[k] = v instanceof Error ? v.message : v;
      // snake_case keys, as every JSON we print (util/json-keys.ts).
      write(`${JSON.stringify({ ts, level, msg, ...(jsonKeys(clean) as LogFields) })}\n`);
    } else {
      const extra = Object.entries(fields)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${textValue(v)}`)
        .join(' ');
      write(`${ts} ${level.padEnd(5)} ${msg}${extra ? ` ${extra}` : ''}\n`);
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** A logger that drops everything (library callers that did not ask for logs). */
export const silentLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
