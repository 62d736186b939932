/**
 * The public verbs check their options at the boundary: a caller of the library (not only the CLI)
 * that passes a number where a path goes, or a string where a list goes, gets one clear
 * InvalidArgumentsError (exit 2) naming the field, instead of a TypeError deep inside. Each verb's
 * schema lives beside it, its options type inferred from it (`z.infer`): one definition. The schemas
 * only check the types and let unknown keys pass (options grow); the verbs keep the object they were
 * given (callbacks, clocks and loggers are not cloned).
 */
import * as z from 'zod';
import { InvalidArgumentsError } from '../errors/errors.js';

const optStr = z.string().optional();
/** A callback option: checked to be a function, typed as `F` (the schema cannot see its signature). */
export const fnOf = <F extends (...args: never[]) => unknown>() => z.custom<F>((v) => typeof v === 'function', 'expected a function');

/** The fields of TargetOptions (repo/target.ts) every verb that reaches the branches takes. */
export const TargetFields = {
  cwd: optStr,
  env: z.record(z.string(), z.string().optional()).optional(),
  remote: optStr,
  configFile: optStr,
  project: optStr,
  overrides: z.record(z.string(), z.unknown()).optional(),
};

/** Throws InvalidArgumentsError (exit 2) when `value` does not fit `schema`; returns nothing to keep the caller's object. */
export function checkOptions(verb: string, schema: z.ZodType, value: unknown): void {
  const r = schema.safeParse(value);
  if (r.success) return;
  throw new InvalidArgumentsError(
    verb,
    r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  );
}
