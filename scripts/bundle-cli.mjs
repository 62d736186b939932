#!/usr/bin/env node
/**
 * After `tsc`, replace dist/cli/main.js with one bundled file. The CLI starts once per command, and
 * git starts our merge driver once per conflicted file: resolving and loading ~250 ES modules one
 * by one took most of a command's start-up (BENCHMARKS.md, "CLI start-up"). The library files in
 * dist/ stay as tsc wrote them, for programs that import the package; tsc's own entry is kept as
 * dist/cli/unbundled.js (same behaviour, loaded module by module) for the start-up benchmark.
 */
import { build } from 'esbuild';
import { rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'cli', 'main.js');
const unbundled = join(root, 'dist', 'cli', 'unbundled.js');
const tmp = join(root, 'dist', 'cli', 'main.bundle.tmp.js');

await rename(entry, unbundled);

await build({
  entryPoints: [unbundled],
  outfile: tmp,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS dependencies (proper-lockfile, graceful-fs) call require() for node built-ins.
  banner: { js: "import { createRequire as __agentvCreateRequire } from 'node:module'; const require = __agentvCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
await rename(tmp, entry);
// tsc's map describes the unbundled file.
await rename(`${entry}.map`, `${unbundled}.map`).catch(() => rm(`${entry}.map`, { force: true }));
