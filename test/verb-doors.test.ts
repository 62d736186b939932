/**
 * One door per verb (issue 53), table-driven: every function the package exports is called through
 * the package root with options that do not fit (a wrong type, a missing field, a misspelt key) and
 * must fail at its door with one InvalidArgumentsError (exit 2) naming the option, before it does
 * anything; and each command, given a flag value that does not fit or no argument, exits 2 naming
 * the flag. The rows live in test/doors/, one file per group of verbs; this file checks that the
 * groups together own every exported function, each once, and that each owned verb has a row.
 */
import { describe, expect, it } from 'vitest';
import * as lib from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { branches } from './doors/branches.js';
import { judge } from './doors/judge.js';
import { live } from './doors/live.js';
import { publish } from './doors/publish.js';
import { runs } from './doors/runs.js';
import type { DoorGroup } from './doors/types.js';

const GROUPS: Record<string, DoorGroup> = { runs, branches, publish, live, judge };

/** Every function the package root exports: its verbs, the error classes left out (they are thrown, not called). */
const exported = Object.entries(lib)
  .filter(([name, v]) => typeof v === 'function' && !(v.prototype instanceof Error) && name !== 'AgentvResultsError')
  .map(([name]) => name)
  .sort();

async function failureOf(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('the door table covers the package', () => {
  it('owns every exported function in exactly one group', () => {
    const owned = Object.values(GROUPS).flatMap((g) => g.verbs);
    expect([...owned].sort()).toEqual(exported);
    expect(new Set(owned).size).toBe(owned.length);
  });
});

for (const [name, group] of Object.entries(GROUPS)) {
  describe(`doors: ${name}`, () => {
    it('has a row for every verb it owns (or says why any input is right)', () => {
      const withRow = new Set(group.rows.map((r) => r.verb));
      expect(group.verbs.filter((v) => !withRow.has(v) && !group.anyInput?.[v])).toEqual([]);
    });

    for (const row of group.rows) {
      it(`${row.verb}: ${row.what} → InvalidArgumentsError naming ${row.option || 'the options'} (exit 2)`, async () => {
        const err = await failureOf(() => row.call(lib));
        expect(err).toBeInstanceOf(lib.InvalidArgumentsError);
        const e = err as InstanceType<typeof lib.InvalidArgumentsError>;
        expect(e.cliExitCode).toBe(2);
        expect(e.verb).toBe(row.verb);
        expect(e.issues.map((i) => i.path)).toContain(row.option);
        expect(lib.exitCodeFor(e)).toBe(2);
      });
    }

    for (const row of group.cli) {
      it(`agentv-results ${row.argv.join(' ')} → exit 2 naming ${row.names}`, async () => {
        const r = await runCli(row.argv);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(row.names);
        expect(r.stderr).not.toMatch(/internal error|TypeError/);
      });
    }
  });
}
