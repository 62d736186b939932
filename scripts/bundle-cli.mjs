#!/usr/bin/env node
/**
 * After `tsc`, bundle the command line (dist/cli/run.js, tsc's output of src/cli/run.ts, and all it
 * uses) into one CommonJS file, dist/cli/agentv-results.cjs, which the binary (dist/cli/main.js,
 * src/cli/main.ts) loads through node's `vm.Script` with V8's compiled code kept in the user's
 * cache. The CLI starts once per command, and git starts our merge driver once per conflicted file:
 * resolving and loading ~250 ES modules one by one took most of a command's start-up, and parsing
 * and compiling the bundle most of the rest (BENCHMARKS.md, "CLI start-up").
 *
 * One file, CommonJS: node 20 keeps no compiled code of an ES module, and V8 takes a cache for one
 * script. The command table's dynamic imports (src/cli/commands.ts) stay lazy inside it (esbuild
 * wraps each module a command imports on demand), so `merge-driver` still evaluates its own code
 * only, not the report's or the Dashboard's.
 *
 * The first line names the bundle by the hash of the rest (`// agentv-results bundle <16 hex>`):
 * the key of its cached code, so a cache of another build is never taken for this one.
 * The library files in dist/ stay as tsc wrote them, for programs that import the package.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cliDir = join(root, 'dist', 'cli');
const out = join(cliDir, 'agentv-results.cjs');
const tmp = `${out}.tmp`;

// The split bundle of earlier builds, if a dist/ from one is still here.
await rm(join(cliDir, 'chunks'), { recursive: true, force: true });
await build({
  entryPoints: [join(cliDir, 'run.js')],
  outfile: tmp,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // The S3 SDK (storage_mode hybrid) stays a package of its own, loaded from node_modules on first
  // use: with require (its CommonJS build), as every import() of the bundle, since a script run
  // from cached code has no loader for import() on node 20.
  external: ['@aws-sdk/client-s3'],
  supported: { 'dynamic-import': false },
  // import.meta.url, for the few modules that find files beside them: the bundle's own URL.
  define: { 'import.meta.url': '__agentvBundleUrl' },
  banner: { js: "'use strict';\nconst __agentvBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
// Every character outside ASCII escaped (esbuild keeps a few as written: in comments, in a regular
// expression): the binary reads the bundle as Latin-1, a one-byte string node makes without
// decoding UTF-8, about 5 ms of every start. An escape means the same in a string, a template and
// a regular expression; a surrogate pair becomes two escapes, which mean the pair.
const text = (await readFile(tmp, 'utf8')).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const id = createHash('sha256').update(text).digest('hex').slice(0, 16);
await writeFile(out, `// agentv-results bundle ${id}\n${text}`);
await rm(tmp);
