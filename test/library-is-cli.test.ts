/**
 * Issue 41, "the library is the CLI", first step: every function or value cli/ calls from the
 * library should be one src/index.ts exports, so a program can do what a command does. This test
 * is the ratchet: the functions cli/ still calls that the package does not export are listed
 * below with the reason each stays private; a new one fails the test (export it, or move the logic
 * behind an exported verb), and one that gets exported (or no longer imported) must leave the list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/** Value names (not `type` ones) of an import or export list, by their name in the source module. */
const valueNames = (list: string): string[] =>
  list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && !s.startsWith('type '))
    .map((s) => s.split(/\s+as\s+/)[0]!.trim());

// What cli/ still imports that the package does not export, each with why it stays out of the
// public surface: none is a verb; each is how the CLI words or prints what a verb returned (the same
// words the library's own messages use, so they have one home below cli/), or how its process ends.
// A program gets the data from the verb; these only turn it into the CLI's text. Never grow it.
const KNOWN_UNEXPORTED: Record<string, string> = {
  writeOutputFile:
    'gate --markdown-out writes the Markdown it printed by the one rule for output files (a program has the Markdown functions and writes where it likes)',
  diskErrorOf: 'the CLI puts a raw ENOSPC/EDQUOT/EROFS that reached it into words with its path (the verbs throw DiskError themselves)',
  isDiskRefusal: 'the CLI recognises a raw full-disk or read-only error before wording it (diskErrorOf)',
  formatAttemptRate: 'show, summary and failures write an attempt rate with its interval for people (the report and the Dashboard use the same wording)',
  formatPassK: 'show and summary write pass@k and pass^k for people (the report uses the same wording)',
  publishedRunId: 'tag, pull and feedback turn a run path into the published run id with the same identity before calling the verb',
  flagMetaOf:
    "how cli/schema-flags.ts reads the flag a schema field carries (the flags are made from the verb's exported schema; a program passes options, not flags)",
  defaultOf: "how cli/schema-flags.ts shows a field's schema default in a flag's help line (a program reads the exported schema itself)",
  valueKindOf: "how cli/schema-flags.ts turns a flag's text into its field's type (the same plumbing; a program passes typed options)",
  BUG_REPORT_HINT: 'the CLI process says how to report a bug on exit 70 (a program has the error itself and exitCodeFor)',
  cacheDir: "the binary keeps its compiled code in the user's cache folder (managed clones live there too; a program runs its own code)",
  readRegularFileSync: 'the binary reads its compiled-code cache through the one opener, refusing a file others may write (a program reads its own files)',
  isAbsent: "the binary tells a missing bundle or cache from an unreadable one (a program has node's errors itself)",
  CheckFailed:
    'how the CLI process ends a command whose check failed (exit 1); defined with every other error in src/errors/, the verbs return their verdict as data instead',
  UsageError:
    "how the CLI process refuses a bad flag or argument (exit 2); defined with every other error in src/errors/, a program's bad options are the verbs' InvalidArgumentsError",
  describeAge: "status's wording of how long ago the remote was last heard from (also in the library's read notes)",
  describePolicy: "expire's wording of a retention policy (also in the library's errors about expired runs)",
  describeSyncBranch: "sync's wording of a sync branch it left (also in the library's fallback messages)",
  fmtBytes: 'report and site print sizes in MB (the HTML report uses the same wording)',
  gateTestName: "gate's text table names a test `id (target)` (the webhook event uses the same naming)",
  jsonKeys: "--json's key style, snake_case with data keys kept (the Dashboard API answers in the same style)",
  layoutName: "publish and status name a branch layout for people (the library's layout errors use the same names)",
  redactDeep: '--json output with credentials in URLs masked (the outbox journal masks the same way)',
  redactText: "error text with credentials masked before the CLI prints it (git's and the store's errors mask the same way)",
  seriesName: "trend's text names a series `experiment × target`",
};

describe('the library is the CLI', () => {
  it('cli/ calls nothing from the library that the package does not export, beyond the known list', () => {
    // The package's entry points: the root and its two documented subpaths (package.json "exports").
    const exported = new Set<string>();
    for (const entry of ['index.ts', 'model/index.ts', 'merge/index.ts']) {
      const text = readFileSync(join(SRC, entry), 'utf8');
      for (const m of text.matchAll(/export\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)) for (const n of valueNames(m[1]!)) exported.add(n);
      // `export * from './x.js'`: every value x.ts exports.
      for (const m of text.matchAll(/export\s*\*\s*from\s*'(\.\/[^']+)\.js'/g)) {
        const module = readFileSync(join(SRC, dirname(entry), `${m[1]!}.ts`), 'utf8');
        for (const d of module.matchAll(/^export\s+(?:async\s+)?(?:function|const|class)\s+(\w+)/gm)) exported.add(d[1]!);
      }
    }
    const unexported = new Map<string, Set<string>>();
    const imported = new Set<string>();
    for (const rel of readdirSync(join(SRC, 'cli'), { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts')) continue;
      const text = readFileSync(join(SRC, 'cli', rel), 'utf8');
      // Imports from outside cli/ (a relative path that climbs out of it).
      for (const m of text.matchAll(/^import\s*\{([^}]*)\}\s*from\s*'(\.\.\/[^']+)'/gm)) {
        for (const n of valueNames(m[1]!)) {
          imported.add(n);
          if (exported.has(n)) continue;
          if (!unexported.has(n)) unexported.set(n, new Set());
          unexported.get(n)!.add(`src/cli/${rel}`);
        }
      }
    }
    // The reading works: the public verbs the commands are shells over are seen as exported.
    for (const verb of ['publish', 'exportRun', 'gateCheck', 'compareRuns', 'listRuns']) {
      expect(exported.has(verb), verb).toBe(true);
      expect(imported.has(verb), verb).toBe(true);
    }
    const found = [...unexported.keys()].sort();
    const added = found.filter((n) => !(n in KNOWN_UNEXPORTED)).map((n) => `${n} (${[...unexported.get(n)!].join(', ')})`);
    const gone = Object.keys(KNOWN_UNEXPORTED).filter((n) => !unexported.has(n));
    expect(added, 'cli/ calls a library function the package does not export').toEqual([]);
    expect(gone, 'exported now (or no longer used by cli/): drop it from KNOWN_UNEXPORTED').toEqual([]);
  });
});
