/**
 * One door per verb (issue 53), the CLI's side: a command's verb options come from the verb's own
 * schema (`schemaFlags` makes the flags, `optionsFromFlags` the options object), never from a flag
 * converted by hand beside it, and no verb keeps the deprecated check-and-discard. Read from the
 * source, so a new hand conversion fails here before it drifts from the schema. The few flags still
 * read by hand are not any verb's option; each is listed with why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const CLI = join(SRC, 'cli');

/** Flags a command still turns into a value by hand, each with why it is no verb option. Never grow it. */
const BY_HAND: Record<string, string> = {
  "cli/daemon.ts: stringFlag('webhook'": "the URL is webhookFrom's positional argument (its own door checks it), not a daemon option",
  "cli/gate.ts: stringFlag('markdown-out'": 'where the CLI writes its Markdown copy: output of the command, no option of gateCheck',
  "cli/run-names.ts: oneOf('format'": 'how a command prints (text, json, markdown): presentation, no verb option',
};

/** The helpers that convert a flag's text by hand, and reading a flag's text into a number or string. */
const HAND = /\b(numberFlag|stringFlags?|configFlags|windowFlags|oneOf|parseDuration)\(\s*'([a-z-]+)'|\b(Number|String|parseInt|parseFloat)\(flags\.\w+/g;

const files = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));

describe('the CLI takes verb options from the verb schema', () => {
  it('converts no verb option by hand in src/cli (the flags come from the schema)', () => {
    const found: string[] = [];
    for (const f of files(CLI)) {
      if (['errors.ts', 'flags.ts', 'schema-flags.ts'].includes(f)) continue; // where the helpers themselves live
      const text = readFileSync(join(CLI, f), 'utf8');
      for (const m of text.matchAll(HAND)) found.push(m[1] ? `cli/${f}: ${m[1]}('${m[2]}'` : `cli/${f}: ${m[3]}(flags.`);
    }
    expect(found.filter((k) => !BY_HAND[k]).sort()).toEqual([]);
    // The allow-list holds only what is still there (it shrinks with the code).
    expect(Object.keys(BY_HAND).filter((k) => !found.includes(k))).toEqual([]);
  });

  it('keeps no check-and-discard door: every verb parses its options with parseOptions or parseArgs', () => {
    const offenders = files(SRC).filter((f) => /\bcheckOptions\(/.test(readFileSync(join(SRC, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('catches a hand conversion when there is one (the pattern can fail)', () => {
    const sample = "const n = numberFlag('keep-days', flags.keepDays, 0); const s = Number(flags.offset);";
    expect([...sample.matchAll(HAND)].length).toBe(2);
  });
});
