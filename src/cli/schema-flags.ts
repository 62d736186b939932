/**
 * A command's flags, made from its verb's schema (options/verb-options.ts): every field that carries
 * `flag(...)` metadata becomes a commander option with that spelling and help, and the flags of an
 * invocation become the verb's options object by the field's type (a number option's text is
 * parsed, a repeatable one kept as a list, a boolean taken as given). Nothing is converted by hand
 * beside the schema; the verb's own door then parses the object once.
 *
 * A flag whose text does not fit its field is a usage error naming the flag (`--keep-days`), so
 * the CLI never reports the library's field name for what the user typed.
 */
import { Option } from 'commander';
import * as z from 'zod';
import { defaultOf, flagMetaOf, valueKindOf, type FlagMeta } from '../options/verb-options.js';
import { parseDuration } from './errors.js';
import { UsageError } from '../errors/cli-errors.js';
import type { CommandBuilder, Flags } from './program.js';

type ObjectSchema = z.ZodObject<z.ZodRawShape>;

/** The fields of `schema` that are flags, in the schema's order: [option key, its flag metadata]. */
function flaggedFields(schema: ObjectSchema): [string, z.ZodType, FlagMeta][] {
  const out: [string, z.ZodType, FlagMeta][] = [];
  for (const [key, field] of Object.entries(schema.shape)) {
    const meta = flagMetaOf(field as z.ZodType);
    if (meta) out.push([key, field as z.ZodType, meta]);
  }
  return out;
}

export interface SchemaFlagChoice {
  /** Only these fields become flags (default: every flagged field). */
  only?: readonly string[];
  /** These fields are not flags of this command (a positional argument sets them, or the command fixes them). */
  except?: readonly string[];
  /** This command's own help line for a field (the flag is the same; what it does here is worded for the command). */
  help?: Readonly<Record<string, string>>;
}

const chosen = (key: string, choice: SchemaFlagChoice) => (!choice.only || choice.only.includes(key)) && !choice.except?.includes(key);

/** Adds a commander option for every flagged field of `schema` the choice keeps. */
export function schemaFlags(builder: CommandBuilder, schema: ObjectSchema, choice: SchemaFlagChoice = {}): CommandBuilder {
  for (const [key, field, meta] of flaggedFields(schema)) {
    if (!chosen(key, choice)) continue;
    const shown = meta.showDefault ? ` (default: ${JSON.stringify(defaultOf(field))})` : '';
    builder.option(meta.flag, (choice.help?.[key] ?? meta.help) + shown);
    if (meta.negate) builder.option(meta.negate.flag, meta.negate.help);
  }
  return builder;
}

/**
 * Adds the flags of these fields in this order (a command whose help lists the target flags after
 * its own, say), each with the command's help line when `help` has one.
 */
export function schemaFlagsInOrder(
  builder: CommandBuilder,
  schema: ObjectSchema,
  keys: readonly string[],
  help: SchemaFlagChoice['help'] = {},
): CommandBuilder {
  for (const key of keys) {
    // A plain Error on purpose: a bug in a command's definition (a key that is not a flag), met when the CLI is built.
    if (!flagMetaOf((schema.shape[key] ?? z.never()) as z.ZodType)) throw new Error(`${key} is not a flagged field of this schema`);
    schemaFlags(builder, schema, { only: [key], help });
  }
  return builder;
}

/** The target flags as most commands list them, after their own: --remote, --config, --project, --dir. */
export const TARGET_FLAGS_LAST = ['remote', 'configFile', 'project', 'cwd'] as const;

const attributeOf = (spelling: string) => new Option(spelling).attributeName();
const flagName = (spelling: string) => spelling.split(/[ ,]/)[0]!;

/** Every value a repeatable option was given, as typed. */
const allValues = (v: unknown): string[] => (v === undefined || v === null || typeof v === 'boolean' ? [] : (Array.isArray(v) ? v : [v]).map(String));

/** The one value of a value option as typed (the last one wins, as with any repeated flag); an empty one is none. */
function lastValue(spelling: string, v: unknown): string | undefined {
  const all = allValues(v);
  if (all.length === 0 && v === true) throw new UsageError(`${flagName(spelling)} needs a value`);
  const value = all[all.length - 1];
  return value === '' ? undefined : value;
}

/**
 * The verb's options from this invocation's flags: `given` (positional arguments, what the command
 * fixes) and then each flagged field the user set, turned into its type. A value that does not fit
 * its field is a usage error naming the flag.
 */
export function optionsFromFlags<S extends ObjectSchema>(schema: S, flags: Flags, given: Partial<z.input<S>> = {}, choice: SchemaFlagChoice = {}): z.input<S> {
  const out: Record<string, unknown> = { ...given };
  for (const [key, field, meta] of flaggedFields(schema)) {
    if (!chosen(key, choice) || key in given) continue;
    const raw = flags[attributeOf(meta.flag)];
    if (raw === undefined) continue;
    let value: unknown;
    const kind = valueKindOf(field);
    if (meta.as === 'duration') {
      const text = lastValue(meta.flag, raw);
      value = text === undefined ? undefined : parseDuration(flagName(meta.flag).slice(2), text, 0);
    } else if (meta.as === 'seconds') {
      const text = lastValue(meta.flag, raw);
      value = text === undefined ? undefined : Number(text) * 1000;
      if (text !== undefined && !Number.isFinite(value as number))
        throw new UsageError(`${flagName(meta.flag)} must be a number of seconds (got ${JSON.stringify(text)})`);
    } else if (kind === 'boolean') value = raw === true || raw === false ? raw : raw !== undefined;
    else if (kind === 'array') value = allValues(raw);
    else if (kind === 'number') {
      const text = lastValue(meta.flag, raw);
      value = text === undefined ? undefined : Number(text);
      if (text !== undefined && !Number.isFinite(value as number))
        throw new UsageError(`${flagName(meta.flag)} must be a number (got ${JSON.stringify(text)})`);
    } else value = lastValue(meta.flag, raw);
    if (value === undefined) continue;
    const fits = field.safeParse(value);
    if (!fits.success) throw new UsageError(`${flagName(meta.flag)}: ${fits.error.issues[0]?.message ?? 'invalid value'} (got ${JSON.stringify(raw)})`);
    out[key] = value;
  }
  // The verb's door parses this object (a required field the flags did not give is reported there).
  return out as z.input<S>;
}
