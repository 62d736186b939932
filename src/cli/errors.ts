/**
 * Exit codes (ARCHITECTURE.md, exit codes): 0 ok; 1 the command ran and its check failed; 2 usage or input
 * error; 3 git/remote failure; 70 a bug (an error that is not one of ours), said as such. Every command runs through `runCommand`, so an error always
 * becomes one clear line on stderr and the right code, never a stack trace (unless
 * AGENTV_RESULTS_DEBUG is set).
 */
import { setNoticeSink } from '../util/notices.js';
import { redactText } from '../errors/redact.js';
import { AgentvResultsError, BUG_REPORT_HINT, diskErrorOf, EXIT, exitCodeFor, isDiskRefusal } from '../errors/errors.js';
import { UsageError, CheckFailed } from '../errors/cli-errors.js';

export { EXIT, exitCodeFor };

/** The stderr lines of a failure: one line; an unexpected error (exit 70) also says it is a bug and what to report. */
export function failureText(err: unknown): string {
  // A disk that refused a write deep in a command (ENOSPC, EDQUOT, EROFS) is said in words, with the path it was writing.
  if (isDiskRefusal(err) && !(err instanceof AgentvResultsError)) err = diskErrorOf(err, (err as NodeJS.ErrnoException).path ?? 'a file');
  const message = redactText(err instanceof Error ? `${exitCodeFor(err) === EXIT.bug ? `${err.name}: ` : ''}${err.message}` : String(err));
  if (exitCodeFor(err) !== EXIT.bug) return `agentv-results: ${message}\n`;
  return `agentv-results: internal error: ${message}\nagentv-results: ${BUG_REPORT_HINT}\n`;
}

export async function runCommand(fn: () => Promise<number | void>): Promise<void> {
  // What the library says once per command (util/notices.ts) goes to stderr, once.
  setNoticeSink((text) => process.stderr.write(`agentv-results: ${text}\n`));
  try {
    const code = await fn();
    process.exitCode = code ?? 0;
  } catch (err) {
    const code = exitCodeFor(err);
    const quiet = err instanceof CheckFailed && err.quiet;
    if (!quiet) {
      process.stderr.write(failureText(err));
      if (process.env.AGENTV_RESULTS_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    }
    process.exitCode = code;
  }
}

export function oneOf<T extends string>(flag: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`--${flag} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
}

export function numberFlag(flag: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`--${flag} must be a number (got ${JSON.stringify(value)})`);
  return n;
}

/** "14d", "12h", "30m", "45s", "2w" -> ms. */
export function parseDuration(flag: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)(s|m|h|d|w)$/.exec(String(value).trim());
  if (!m) throw new UsageError(`--${flag} must be a duration like 14d, 12h, 30m or 45s (got ${JSON.stringify(value)})`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit * 1000;
}
