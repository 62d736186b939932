/**
 * Each public verb's door. A verb parses the options it was given once, here, with its schema:
 * the types are checked, the defaults are in the schema, an unknown key is refused, and the parsed
 * value is what the verb passes on (nothing below the door re-derives a default). A caller of the
 * library (not only the CLI) that passes a number where a path goes, forgets a required field or
 * misspells one gets one InvalidArgumentsError (exit 2) naming the option, instead of a TypeError
 * deep inside.
 *
 * The same schema makes the command's flags: a field that carries `flag(...)` metadata is a CLI
 * option with that spelling and help (cli/schema-flags.ts reads it), so a flag and the option it
 * sets are defined once. Callbacks, clocks and loggers are checked to be functions or objects and
 * kept as given (zod does not clone them).
 */
import * as z from 'zod';
import { InvalidArgumentsError } from '../errors/errors.js';

/** The CLI flag a schema field is set by: its spelling as commander takes it, its help line, and an optional `--no-…` twin. */
export interface FlagMeta {
  flag: string;
  help: string;
  /** The `--no-…` flag that sets the field to false. */
  negate?: { flag: string; help: string };
  /**
   * How the flag's text becomes the value when its type alone does not say: `duration` (`14d`, `12h`,
   * `30m`, `45s`, `2w`: milliseconds); `seconds` (a number of seconds, `--interval 30`: milliseconds).
   */
  as?: 'duration' | 'seconds';
  /** Show the field's schema default in the help line (`(default: "bundle")`), as a hand-written commander default did. */
  showDefault?: boolean;
}

/** Metadata for `.meta()`: the field is the CLI flag `spelling` (`--remote <name>`, `--json`), with this help. */
export function flag(spelling: string, help: string, more: Pick<FlagMeta, 'negate' | 'as' | 'showDefault'> = {}): FlagMeta & Record<string, unknown> {
  return { flag: spelling, help, ...more };
}

/** A callback option: checked to be a function, typed as `F` (the schema cannot see its signature). */
export const fnOf = <F extends (...args: never[]) => unknown>() => z.custom<F>((v) => typeof v === 'function', 'expected a function');

/** An object option the schema does not look inside (a logger, a repository handle): checked to be an object, kept as given. */
export const objectOf = <T extends object>() => z.custom<T>((v) => typeof v === 'object' && v !== null, 'expected an object');

/**
 * The `cwd` of a verb that reads runs by path, not a repository: relative paths resolve from here
 * (default: the process's working directory), `--dir` on the command line.
 */
export const PathsCwdField = z
  .string()
  .default(() => process.cwd())
  .meta(flag('--dir <dir>', 'Working directory used to resolve relative paths'));

/** The fields of TargetOptions (repo/target.ts) every verb that reaches the branches takes. */
export const TargetFields = {
  /** Working directory: the repository and relative paths resolve from here (default: the process's). */
  cwd: z
    .string()
    .default(() => process.cwd())
    .meta(flag('--dir <dir>', 'Working directory (the repository and relative paths resolve from here)')),
  /** The environment settings are read from (default: the process's). */
  env: z
    .custom<NodeJS.ProcessEnv>(
      // process.env itself is no plain object (z.record refuses it): any object whose values are strings.
      (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => x === undefined || typeof x === 'string'),
      'expected an environment (names to strings)',
    )
    .optional(),
  /** The remote (default: results.remote, else origin). */
  remote: z.string().optional().meta(flag('--remote <name>', 'Remote to read and push (default: results.remote, else origin)')),
  /** The configuration file (default: .agentv/config.yaml, searched upward). */
  configFile: z.string().optional().meta(flag('--config <file>', 'Configuration file (default: .agentv/config.yaml, searched upward)')),
  /** Which projects[] entry of the configuration applies. */
  project: z
    .string()
    .optional()
    .meta(
      flag(
        '--project <id>',
        'Which projects[] entry of the configuration applies (default: AGENTV_PROJECT, else the project whose path holds the working directory)',
      ),
    ),
  /** Configuration values that win over the file's (dotted keys, as the file spells them). */
  overrides: z.record(z.string(), z.unknown()).optional(),
};

/**
 * The target fields in the order the reading and archive commands print their flags (`--remote`,
 * `--config`, `--project`, then `--dir`): the same fields as TargetFields, one definition of that order.
 */
export const TargetFieldsDirLast = {
  remote: TargetFields.remote,
  configFile: TargetFields.configFile,
  project: TargetFields.project,
  cwd: TargetFields.cwd,
  env: TargetFields.env,
  overrides: TargetFields.overrides,
};

type Issue = { path: string; message: string };

function issuesOf(error: z.ZodError): Issue[] {
  const out: Issue[] = [];
  for (const i of error.issues) {
    const at = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') for (const k of i.keys) out.push({ path: at ? `${at}.${k}` : k, message: 'not an option of this verb' });
    else out.push({ path: at, message: i.message });
  }
  return out;
}

/**
 * The door: `value` parsed with `schema` (defaults applied, unknown keys refused), or an
 * InvalidArgumentsError (exit 2) naming each option that does not fit. `undefined` is read as `{}`
 * (a verb whose options are all optional may be called with none).
 */
export function parseOptions<S extends z.ZodType>(verb: string, schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value === undefined ? {} : value);
  if (r.success) return r.data;
  throw new InvalidArgumentsError(verb, issuesOf(r.error));
}

/**
 * The door of a verb that takes positional arguments: each argument parsed with the schema of its
 * name, in order; the error names the argument.
 */
export function parseArgs<T extends Record<string, z.ZodType>>(verb: string, shape: T, args: readonly unknown[]): { [K in keyof T]: z.output<T[K]> } {
  const names = Object.keys(shape);
  const value: Record<string, unknown> = {};
  names.forEach((n, i) => {
    if (args[i] !== undefined) value[n] = args[i];
  });
  if (args.length > names.length) throw new InvalidArgumentsError(verb, [{ path: '', message: `takes ${names.length} argument(s), got ${args.length}` }]);
  return parseOptions(verb, z.strictObject(shape), value) as { [K in keyof T]: z.output<T[K]> };
}

/** The flag metadata of a schema field, looked up through optional/default/nullable wrappers. */
export function flagMetaOf(field: z.ZodType): FlagMeta | undefined {
  let at: z.ZodType | undefined = field;
  for (let depth = 0; at && depth < 8; depth++) {
    const meta = at.meta() as Partial<FlagMeta> | undefined;
    if (meta && typeof meta.flag === 'string' && typeof meta.help === 'string') return meta as FlagMeta;
    const def: { innerType?: z.ZodType } = (at as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def;
    at = def.innerType;
  }
  return undefined;
}

/** The default a schema field gives when it is not set (looked up through its wrappers), or undefined. */
export function defaultOf(field: z.ZodType): unknown {
  let at: z.ZodType | undefined = field;
  for (let depth = 0; at && depth < 8; depth++) {
    const def: { type: string; innerType?: z.ZodType; defaultValue?: unknown } = (
      at as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; defaultValue?: unknown } } }
    )._zod.def;
    if (def.type === 'default') return def.defaultValue;
    at = def.innerType;
  }
  return undefined;
}

/** The kind of value a field takes under its wrappers: what a CLI flag's text is turned into. */
export function valueKindOf(field: z.ZodType): 'boolean' | 'number' | 'array' | 'string' | 'other' {
  let at: z.ZodType | undefined = field;
  for (let depth = 0; at && depth < 8; depth++) {
    const def: { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[] } = (
      at as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[] } } }
    )._zod.def;
    if (def.type === 'boolean') return 'boolean';
    // A switch with a third state the CLI does not spell (`allTargets: boolean | 'auto'`): the flag sets true.
    if (def.type === 'union' && def.options?.some((o) => valueKindOf(o) === 'boolean')) return 'boolean';
    if (def.type === 'number' || def.type === 'int') return 'number';
    if (def.type === 'array') return 'array';
    if (def.type === 'string' || def.type === 'enum' || def.type === 'literal') return 'string';
    at = def.innerType ?? def.in;
  }
  return 'other';
}
