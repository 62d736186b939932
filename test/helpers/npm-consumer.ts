/**
 * npm as a user runs it, for the install tests (test/package-install.test.ts and its git-URL
 * twin): this machine's npm configuration and cache, and a consumer project that installs a packed
 * tarball offline (its lockfile written from this project's own, so npm takes every dependency
 * from the cache).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './fixtures.js';
import { makeTempDir } from './git-fixtures.js';

export const exec = promisify(execFile);
export const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  dependencies: Record<string, string>;
  bin: Record<string, string>;
  engines: Record<string, string>;
  scripts: Record<string, string>;
};

// Taken before the suite isolates git (a private HOME would hide npm's cache).
export const USER_ENV = { ...process.env };

/** npm with this machine's own npm configuration and cache. */
export async function npm(args: string[], cwd: string, timeout = 0): Promise<{ stdout: string; stderr: string }> {
  return exec('npm', args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024, env: { ...USER_ENV, npm_config_update_notifier: 'false' } });
}

/**
 * The consumer's lockfile: the tarball, and this project's locked runtime dependencies (not the dev
 * ones); `extra` adds packages the consumer depends on itself, locked as this project locks them.
 */
export function consumerLock(tarball: string, extra: Record<string, string> = {}): unknown {
  const own = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; dependencies?: Record<string, string> }>;
  };
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { [pkg.name]: `file:${tarball}`, ...extra } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: `file:${tarball}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(own.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
  // The extras and what they depend on, as this project locked them (dev or not).
  const todo = Object.keys(extra);
  while (todo.length) {
    const name = todo.pop()!;
    const entry = own.packages[`node_modules/${name}`];
    if (!entry || packages[`node_modules/${name}`]) continue;
    const { dev: _dev, ...rest } = entry;
    packages[`node_modules/${name}`] = rest;
    todo.push(...Object.keys(entry.dependencies ?? {}));
  }
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

/** npm-installs the tarball (and `extra`) offline into a new directory; returns it and npm's output. */
export async function installConsumer(tarball: string, extra: Record<string, string> = {}): Promise<{ dir: string; log: string }> {
  const dir = await makeTempDir('agentv-consumer');
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { [pkg.name]: `file:${tarball}`, ...extra } }),
  );
  await writeFile(join(dir, 'package-lock.json'), JSON.stringify(consumerLock(tarball, extra)));
  const r = await npm(['ci', '--offline', '--no-audit', '--no-fund'], dir);
  return { dir, log: r.stdout + r.stderr };
}
