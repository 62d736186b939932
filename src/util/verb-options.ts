/**
 * The public verbs check their options at the boundary: a caller of the library (not only the CLI)
 * that passes a number where a path goes, or a string where a list goes, gets one clear
 * InvalidArgumentsError (exit 2) naming the field, instead of a TypeError deep inside. The schemas
 * are loose (unknown keys pass: options grow) and only check the types; the verbs keep the object
 * they were given (callbacks, clocks and loggers are not cloned).
 */
import * as z from 'zod';
import { InvalidArgumentsError } from './errors.js';

const str = z.string();
const optStr = z.string().optional();
const optBool = z.boolean().optional();
const optNum = z.number().optional();
/** A callback option: checked to be a function, typed as `F` (the schema cannot see its signature). */
export const fnOf = <F extends (...args: never[]) => unknown>() => z.custom<F>((v) => typeof v === 'function', 'expected a function');
const optFn = fnOf().optional();

/** The fields of TargetOptions (results-branch/repo/target.ts) every verb that reaches the branches takes. */
export const TargetFields = {
  cwd: optStr,
  env: z.record(z.string(), z.string().optional()).optional(),
  remote: optStr,
  configFile: optStr,
  project: optStr,
  overrides: z.record(z.string(), z.unknown()).optional(),
};

export const ExportOptionsSchema = z.looseObject({
  source: str,
  out: optStr,
  layout: optStr,
  experiment: optStr,
  duplicatePolicy: optStr,
  projectionBundle: optBool,
  dryRun: optBool,
  includeRawContent: optBool,
  skipInvalid: optBool,
  threshold: optNum,
  cwd: optStr,
  maxLineBytes: optNum,
  carryRunnerFiles: optBool,
  collectIndexRows: optBool,
  onWarning: optFn,
  onProgress: optFn,
});

export const PublishOptionsSchema = z.looseObject({
  ...TargetFields,
  run: str,
  push: optBool,
  requirePush: optBool,
  message: optStr,
  experiment: optStr,
  allowInvalid: optBool,
  now: optFn,
  onStep: optFn,
});

/** Throws InvalidArgumentsError (exit 2) when `value` does not fit `schema`; returns nothing to keep the caller's object. */
export function checkOptions(verb: string, schema: z.ZodType, value: unknown): void {
  const r = schema.safeParse(value);
  if (r.success) return;
  throw new InvalidArgumentsError(
    verb,
    r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  );
}
