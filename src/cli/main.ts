#!/usr/bin/env node
/**
 * The `agentv-results` binary. It runs the command line (cli/run.ts), which the build bundles into
 * one file, dist/cli/agentv-results.cjs (scripts/bundle-cli.mjs), and keeps the code V8 compiled
 * for it in the user's cache folder (`code-cache/` in util/cache-dir.ts), one file per command:
 * the next start of that command skips parsing and compiling what it ran before, about a third of
 * a command's start-up (BENCHMARKS.md, "CLI start-up").
 *
 * The cache is only ever an acceleration:
 *   - it is keyed by the bundle's own hash, node's version and the machine's architecture, and V8
 *     checks it again (a cache it does not accept is ignored and written anew);
 *   - a cache file that is not a regular file, is too large, belongs to another user or is writable
 *     by others is not used (compiled code is run, not only read: util/safe-open.ts `ownOnly`);
 *   - it is written once the command has succeeded (exit 0; not by a command's `--help`), to a
 *     temporary file renamed into place, so two commands starting together never read half a file;
 *     a cache folder that cannot be written costs nothing but the next start's compile;
 *   - `AGENTV_RESULTS_CODE_CACHE=off` turns it off.
 * Without the bundle (tsc's output alone, before scripts/bundle-cli.mjs ran), cli/run.ts is run as
 * ES modules, uncached.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { isAbsent } from '../errors/errors.js';
import { cacheDir } from '../util/cache-dir.js';
import { readRegularFileSync } from '../util/safe-open.js';

const BUNDLE = fileURLToPath(new URL('./agentv-results.cjs', import.meta.url));
/** The bundle's first line names it: `// agentv-results bundle <sha256 of the rest, 16 hex>`. */
const BUNDLE_ID = /^\/\/ agentv-results bundle ([0-9a-f]{16})\n/;
/** A compiled cache is a few MiB; anything far larger is not one of ours. */
const CACHE_LIMIT = 64 * 1024 * 1024;
/** A cache of another bundle (an older install) is removed once it has not been written for this long. */
const STALE_MS = 7 * 24 * 3600 * 1000;

let source: string | null = null;
try {
  // ASCII only (scripts/bundle-cli.mjs escapes the rest): Latin-1 reads it without decoding UTF-8.
  source = readFileSync(BUNDLE, 'latin1');
} catch (err) {
  // observed: no bundle (tsc's output alone) runs the command line module by module below
  if (!isAbsent(err)) throw err;
}
if (source === null) await import('./run.js');
else runBundle(source);

function runBundle(text: string): void {
  const id = BUNDLE_ID.exec(text)?.[1];
  const file = id === undefined ? null : cacheFile(id);
  let cached: Buffer | undefined;
  let fresh = false;
  if (file !== null) {
    try {
      cached = readRegularFileSync(file, { kind: 'state', limit: CACHE_LIMIT, ownOnly: true });
    } catch (err) {
      // observed: absent or refused (a pipe, another user's file): compiled afresh, then written anew
      if (!isAbsent(err)) fresh = true;
    }
  }
  // The bundle has no import(): scripts/bundle-cli.mjs makes each a require.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${text}\n})`, { filename: BUNDLE, cachedData: cached });
  const rejected = cached !== undefined && script.cachedDataRejected === true;
  if (process.env.AGENTV_RESULTS_DEBUG && file !== null) {
    process.stderr.write(`agentv-results: code cache ${cached === undefined ? 'miss' : rejected ? 'rejected' : 'hit'} (${file})\n`);
  }
  if (file !== null && (cached === undefined || rejected || fresh) && worthKeeping()) {
    process.once('exit', (code) => {
      if (code === 0) keepCache(file, script);
    });
  }
  const module = { exports: {}, filename: BUNDLE, id: BUNDLE, loaded: false };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE));
}

/** Where this command's compiled code is kept, or null when it is not kept. */
function cacheFile(id: string): string | null {
  if (process.env.AGENTV_RESULTS_CODE_CACHE === 'off' || process.getuid === undefined) return null;
  const args = process.argv.slice(2);
  const command = args.find((a) => !a.startsWith('-'));
  // No command: the version alone compiles far less than the overview help, so it keeps its own.
  const none = args.includes('--version') || args.includes('-V') ? '_version' : '_';
  const name = command === undefined ? none : /^[a-z][a-z0-9-]{0,40}$/.test(command) ? command : '_';
  try {
    return join(cacheDir(process.env), 'code-cache', `${id}-${process.version}-${process.arch}-${name}.bin`);
  } catch {
    // observed: no home folder to find (os.homedir throws with neither $HOME nor a passwd entry): no cache, the command runs
    return null;
  }
}

/**
 * Whether this start's compiled code is worth keeping: a command's help compiles little of the
 * command, so it reads the command's cache but never writes it; the overview help and the version
 * (no command) keep theirs, each its own.
 */
function worthKeeping(): boolean {
  const args = process.argv.slice(2);
  return !args.some((a) => !a.startsWith('-')) || !args.some((a) => a === '--help' || a === '-h');
}

function keepCache(file: string, script: Script): void {
  const dir = dirname(file);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, file);
    pruneOthers(dir, file);
  } catch {
    // observed: a cache folder we cannot write (read-only, full) costs the next start its compile, nothing else
    try {
      unlinkSync(tmp);
    } catch {
      // observed: nothing was written, or it is already gone
    }
  }
}

/**
 * Caches of other bundles (an older version's) and temporary files a killed start left, unwritten
 * for a week: gone.
 */
function pruneOthers(dir: string, file: string): void {
  const prefix = `${file.slice(dir.length + 1, file.indexOf('-', dir.length + 1))}-`;
  for (const name of readdirSync(dir)) {
    const ours = name.endsWith('.bin') || /\.bin\.\d+\.tmp$/.test(name);
    if (!ours || (name.endsWith('.bin') && name.startsWith(prefix))) continue;
    const path = join(dir, name);
    if (Date.now() - statSync(path).mtimeMs > STALE_MS) unlinkSync(path);
  }
}
