#!/usr/bin/env node
/**
 * After `tsc`, replace dist/cli/main.js with a bundle. The CLI starts once per command, and git
 * starts our merge driver once per conflicted file: resolving and loading ~250 ES modules one by
 * one took most of a command's start-up (BENCHMARKS.md, "CLI start-up"). The bundle is split at the
 * command table's dynamic imports (src/cli/commands.ts): main.js holds the parser, each command's
 * code lives in dist/cli/chunks/ with the code commands share, so `publish` or `merge-driver` loads
 * and evaluates its own code only, not the report, the Dashboard and the daemon.
 * The library files in dist/ stay as tsc wrote them, for programs that import the package; tsc's
 * own entry is kept as dist/cli/unbundled.js (same behaviour, loaded module by module) for the
 * start-up benchmark.
 */
import { build } from 'esbuild';
import { readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cliDir = join(root, 'dist', 'cli');
const entry = join(cliDir, 'main.js');
const unbundled = join(cliDir, 'unbundled.js');
const chunks = join(cliDir, 'chunks');
const tmp = join(cliDir, '.bundle.tmp');

await rename(entry, unbundled);
await rm(tmp, { recursive: true, force: true });

await build({
  entryPoints: { main: unbundled },
  outdir: tmp,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The S3 SDK (storage_mode hybrid) stays a package of its own, loaded from node_modules on first use.
  external: ['@aws-sdk/client-s3'],
  // CommonJS dependencies (proper-lockfile, graceful-fs) call require() for node built-ins; every
  // chunk is its own module, so each gets its own require.
  banner: { js: "import { createRequire as __agentvCreateRequire } from 'node:module'; const require = __agentvCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

await rm(chunks, { recursive: true, force: true });
await rename(join(tmp, 'chunks'), chunks);
await rename(join(tmp, 'main.js'), entry);
const left = await readdir(tmp);
if (left.length > 0) throw new Error(`bundle-cli: unexpected output ${left.join(', ')}`);
await rm(tmp, { recursive: true });
