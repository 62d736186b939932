/**
 * The door of the pure statistics functions (attempt-stats.ts, attempts.ts): their positional
 * arguments checked by hand, cheaply, because the Dashboard's browser script imports model/ and
 * must not carry a schema library. A wrong argument is the same InvalidArgumentsError (exit 2)
 * naming the argument that `parseArgs` (options/) throws for the other verbs, never a NaN answer.
 */
import { InvalidArgumentsError } from '../errors/errors.js';

/** What a number argument must be: an integer, and at least / at most a bound. */
export interface NumberRule {
  int?: boolean;
  min?: number;
  max?: number;
  /** Strictly above `min`. */
  above?: number;
}

/** `value` as a number that keeps `rule`, or an InvalidArgumentsError of `verb` naming `name`. */
export function numberArg(verb: string, name: string, value: unknown, rule: NumberRule = {}): number {
  let problem: string | null = null;
  if (typeof value !== 'number') problem = `expected a number, received ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;
  else if (!Number.isFinite(value)) problem = `expected a finite number, received ${value}`;
  else if (rule.int && !Number.isInteger(value)) problem = `expected an integer, received ${value}`;
  else if (rule.min !== undefined && value < rule.min) problem = `must be at least ${rule.min} (received ${value})`;
  else if (rule.above !== undefined && !(value > rule.above)) problem = `must be above ${rule.above} (received ${value})`;
  else if (rule.max !== undefined && value > rule.max) problem = `must be at most ${rule.max} (received ${value})`;
  if (problem !== null) throw new InvalidArgumentsError(verb, [{ path: name, message: problem }]);
  return value as number;
}

/** `value` as a plain object (a result row), or an InvalidArgumentsError of `verb` naming `name`. */
export function objectArg(verb: string, name: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentsError(verb, [
      { path: name, message: `expected an object, received ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}` },
    ]);
  return value as Record<string, unknown>;
}

/** `value` as an array, or an InvalidArgumentsError of `verb` naming `name`. */
export function arrayArg(verb: string, name: string, value: unknown): readonly unknown[] {
  if (!Array.isArray(value))
    throw new InvalidArgumentsError(verb, [{ path: name, message: `expected an array, received ${value === null ? 'null' : typeof value}` }]);
  return value;
}
