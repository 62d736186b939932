#!/usr/bin/env node
/**
 * The build's stamp: a hash of everything the build reads (src/, package.json, tsconfig.json and
 * the bundling scripts), written into dist/ as the last step of `npm run build`. The test runs
 * that use dist/ compare it with the tree before any test starts (test/helpers/build-check.ts), so
 * a test never silently runs the previous build after src/ changed.
 *
 *   node scripts/build-stamp.mjs write   # the build's last step
 *   node scripts/build-stamp.mjs check   # exit 1 with the reason when dist/ is stale
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAMP_FILE = join('dist', '.build-stamp.json');

/** The inputs of the build, relative to `root`, sorted: src/ whole, and the files that steer it. */
export function buildInputs(root) {
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(relative(root, p).split(sep).join('/'));
    }
  };
  walk(join(root, 'src'));
  for (const f of ['package.json', 'tsconfig.json', 'scripts/bundle-cli.mjs', 'scripts/bundle-clients.mjs']) if (existsSync(join(root, f))) files.push(f);
  return files.sort();
}

/** sha256 over every input's path and bytes. */
export function sourceHash(root) {
  const h = createHash('sha256');
  for (const f of buildInputs(root)) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(root, f)));
    h.update('\0');
  }
  return h.digest('hex');
}

export function writeStamp(root) {
  writeFileSync(join(root, STAMP_FILE), `${JSON.stringify({ hash: sourceHash(root), inputs: buildInputs(root).length })}\n`);
}

/** null when dist/ was built from the tree as it is; else why not, and what to do. */
export function staleBuild(root) {
  const fix = 'Run `npm run build` (or `npm test`, which builds first); `npm run test:fast` runs from src/ and needs no build.';
  const file = join(root, STAMP_FILE);
  if (!existsSync(file)) return `The build is missing or stale: ${STAMP_FILE} is not there (no build yet, or one that failed or predates the stamp). ${fix}`;
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return `The build is stale: ${STAMP_FILE} is unreadable. ${fix}`;
  }
  if (stamp?.hash !== sourceHash(root))
    return `The build is stale: src/, package.json, tsconfig.json or a bundling script changed since dist/ was built, so the tests would run the previous code. ${fix}`;
  return null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
  const verb = process.argv[2];
  if (verb === 'write') writeStamp(root);
  else if (verb === 'check') {
    const why = staleBuild(root);
    if (why) {
      console.error(why);
      process.exit(1);
    }
  } else {
    console.error('usage: node scripts/build-stamp.mjs write|check');
    process.exit(2);
  }
}
