// What the shipped CLI carries, and how it starts, decide every command's start-up (BENCHMARKS.md,
// "CLI start-up"). Guarded here:
// - `import { z } from 'zod'` hands esbuild zod's whole namespace object, so all of zod (its 50
//   locales, JSON-schema import, ...) lands in the bundle and is evaluated on every start;
//   `import * as z` lets esbuild keep only what is used.
// - the command table's imports (src/cli/commands.ts) stay lazy inside the one-file bundle: the
//   merge driver git starts once per conflicted file does not evaluate the report or the Dashboard.
// - the binary (src/cli/main.ts) keeps V8's compiled code of the bundle per command in the cache
//   folder, and a cache it cannot trust or write never changes what a command does.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnCli as runCli } from './helpers/cli.js';

const CLI_DIR = join(import.meta.dirname, '..', 'dist', 'cli');
const MAIN = join(CLI_DIR, 'main.js');
const BUNDLE = join(CLI_DIR, 'agentv-results.cjs');
const read = (file: string): string => readFileSync(file, 'utf8');

/**
 * The modules a module's first evaluation evaluates: esbuild wraps each module imported on demand
 * as `var init_x = __esm({ "dist/…"() { init_y(); …; its top-level code } })`; followed init to init.
 */
function evaluatedWith(bundle: string, path: string): Set<string> {
  const inits = new Map<string, { path: string; body: string }>();
  for (const part of bundle.split(/\nvar (?=init_\w+ = __esm\(\{)/).slice(1)) {
    const m = /^(init_\w+) = __esm\(\{\n {2}"([^"]+)"\(\) \{/.exec(part);
    if (m) inits.set(m[1]!, { path: m[2]!, body: part.slice(0, part.indexOf('\n});')) });
  }
  const start = [...inits].find(([, v]) => v.path === path)?.[0];
  expect(start, `${path} is a module evaluated on demand`).toBeDefined();
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const init = inits.get(name);
    if (!init || seen.has(init.path)) return;
    seen.add(init.path);
    for (const call of init.body.matchAll(/\b(init_\w+)\(\)/g)) visit(call[1]!);
  };
  visit(start!);
  return seen;
}

describe('the CLI bundle', () => {
  it("keeps zod's English messages and none of its other locales", () => {
    const text = read(BUNDLE);
    expect(text).toContain('Invalid input: expected');
    // Spanish and German messages (esbuild writes non-ASCII as escapes, so ASCII words are probed).
    expect(text).not.toContain('se esperaba');
    expect(text).not.toContain('erwartet');
  });

  it('stays under 2.25 MB (2.06 MB with the whole of zod as split chunks; 1.90 MB split before repeat runs and the noise-aware gate landed; 2.01 MB as one CommonJS file, whose on-demand wrappers add ~70 KB)', () => {
    expect(statSync(BUNDLE).size).toBeLessThan(2.25 * 1024 * 1024);
  });

  it('is ASCII only, as the binary reads it (Latin-1, no UTF-8 decoding), and keeps what its escapes stand for', () => {
    expect(/[^\x00-\x7f]/.test(readFileSync(BUNDLE, 'latin1'))).toBe(false);
    // The one regular expression esbuild kept as written (cli/format.ts: an em dash is an empty
    // numeric table cell) is escaped, and still matches an em dash.
    const numericCell = /\/(\^\[-\+\]\?[^/\n]*\|\^\\u2014\$)\//.exec(read(BUNDLE));
    expect(numericCell, 'the numeric-cell pattern of cli/format.ts, escaped').not.toBeNull();
    expect(new RegExp(numericCell![1]!).test('\u2014')).toBe(true);
    expect(new RegExp(numericCell![1]!).test('-')).toBe(false);
  });

  it('leaves the S3 SDK out (storage_mode hybrid imports it from node_modules on first use)', () => {
    const text = read(BUNDLE);
    expect(text).toContain('require("@aws-sdk/client-s3")');
    // The one loader a script run from cached code has: no import() is left for node to resolve.
    expect(text).not.toMatch(/\bimport\(/);
    expect(text).not.toContain('class S3Client');
  });

  it('main.js is the loader only: no zod, no git, no page, no command', () => {
    const main = read(MAIN);
    expect(statSync(MAIN).size).toBeLessThan(20 * 1024);
    for (const absent of ['Invalid input: expected', 'fast-import', 'merge-driver']) expect(main).not.toContain(absent);
    expect(main).not.toMatch(/<!doctype html>/i);
  });

  it("the merge driver's code does not evaluate the report or the Dashboard", () => {
    const bundle = read(BUNDLE);
    const driver = evaluatedWith(bundle, 'dist/cli/merge-driver.js');
    expect([...driver].some((p) => p.startsWith('dist/merge/'))).toBe(true);
    expect([...driver].filter((p) => /^dist\/(report|serve|site)\//.test(p))).toEqual([]);
    // The probe can fail: the report command's code does evaluate the page's.
    expect([...evaluatedWith(bundle, 'dist/cli/report.js')].some((p) => p.startsWith('dist/report/'))).toBe(true);
  });

  it('every command is reachable: --help lists them all, and each one shows its own help', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]);
    for (const name of ['export', 'publish', 'merge-driver', 'serve', 'wip', 'expire']) expect(listed).toContain(name);
    const version = await runCli(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const one = await runCli(['merge-driver', '--help']);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('merge-driver');
    const typo = await runCli(['publsh']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('publish');
  });
});

describe("the binary's compiled-code cache", () => {
  let work: string;
  let files: { base: string; ours: string; theirs: string };
  let merged: string;
  const id = () => /^\/\/ agentv-results bundle ([0-9a-f]{16})\n/.exec(read(BUNDLE))![1]!;
  const cacheName = (command: string) => `${id()}-${process.version}-${process.arch}-${command}.bin`;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'agentv-code-cache-'));
    const row = (n: number) => `${JSON.stringify({ test_id: `t${n}`, score: n / 10 })}\n`;
    files = { base: join(work, 'base.jsonl'), ours: join(work, 'ours.jsonl'), theirs: join(work, 'theirs.jsonl') };
    writeFileSync(files.base, row(1));
    writeFileSync(files.theirs, row(1) + row(3));
    merged = row(1) + row(2) + row(3);
  });

  /** The merge driver on fresh inputs, as git starts it: exit 0 and the union in `ours`. */
  async function mergeOnce(cache: string, env: Record<string, string> = {}) {
    writeFileSync(files.ours, readFileSync(files.base, 'utf8') + `${JSON.stringify({ test_id: 't2', score: 0.2 })}\n`);
    const r = await runCli(['merge-driver', 'jsonl', files.base, files.ours, files.theirs, 'index.jsonl'], {
      env: { AGENTV_RESULTS_CACHE: cache, AGENTV_RESULTS_DEBUG: '1', ...env },
      timeoutMs: 30_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(read(files.ours).split('\n').sort()).toEqual(merged.split('\n').sort());
    return /code cache (\w+)/.exec(r.stderr)?.[1] ?? 'none';
  }

  it("is written by a command's first success and used by the next start of that command", async () => {
    const cache = join(work, 'first');
    expect(await mergeOnce(cache)).toBe('miss');
    const file = join(cache, 'code-cache', cacheName('merge-driver'));
    expect(statSync(file).size).toBeGreaterThan(10_000);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = statSync(file).mtimeMs;
    expect(await mergeOnce(cache)).toBe('hit');
    expect(statSync(file).mtimeMs).toBe(written);
    // A command's help and a failed command compile little of the command: nothing is kept for them.
    const help = await runCli(['publish', '--help'], { env: { AGENTV_RESULTS_CACHE: cache } });
    expect(help.code).toBe(0);
    const failed = await runCli(['validate', join(work, 'no-such-run')], { env: { AGENTV_RESULTS_CACHE: cache } });
    expect(failed.code).toBe(2);
    expect(readdirSync(join(cache, 'code-cache'))).toEqual([cacheName('merge-driver')]);
    // The version and the overview help, no command at all, keep theirs, each its own.
    for (const args of [['--version'], ['--help']]) {
      const env = { AGENTV_RESULTS_CACHE: cache, AGENTV_RESULTS_DEBUG: '1' };
      expect((await runCli(args, { env })).stderr).toContain('code cache miss');
      expect((await runCli(args, { env })).stderr).toContain('code cache hit');
    }
    expect(readdirSync(join(cache, 'code-cache')).sort()).toEqual([cacheName('_'), cacheName('_version'), cacheName('merge-driver')].sort());
  });

  it('a cache V8 refuses, a pipe, or a file others may write is never run: the command answers the same and the cache is written anew', async () => {
    const cache = join(work, 'hostile');
    const dir = join(cache, 'code-cache');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, cacheName('merge-driver'));
    writeFileSync(file, Buffer.alloc(4096, 7), { mode: 0o600 });
    expect(await mergeOnce(cache)).toBe('rejected');
    expect(readFileSync(file).equals(Buffer.alloc(4096, 7))).toBe(false);
    expect(await mergeOnce(cache)).toBe('hit');

    // Others may write it: the good cache is not used, and is replaced by one only we may write.
    chmodSync(file, 0o666);
    expect(await mergeOnce(cache)).toBe('miss');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await mergeOnce(cache)).toBe('hit');

    // A named pipe with no writer where the cache belongs: no hang (the run has a deadline), no use.
    execFileSync('rm', ['-f', file]);
    execFileSync('mkfifo', [file]);
    expect(await mergeOnce(cache)).toBe('miss');
    expect(statSync(file).isFile()).toBe(true);
  });

  it('a cache folder that cannot be written, or AGENTV_RESULTS_CODE_CACHE=off, changes nothing but the cache', async () => {
    const blocked = join(work, 'blocked');
    writeFileSync(blocked, 'a file where the cache folder belongs');
    expect(await mergeOnce(blocked)).toBe('miss');
    expect(await mergeOnce(blocked)).toBe('miss');
    const off = join(work, 'off');
    expect(await mergeOnce(off, { AGENTV_RESULTS_CODE_CACHE: 'off' })).toBe('none');
    expect(existsSync(off)).toBe(false);
  });

  it("another build's caches and a killed start's temporary file are removed once a week old; this build's, recent ones and others' files stay", async () => {
    const cache = join(work, 'prune');
    const dir = join(cache, 'code-cache');
    mkdirSync(dir, { recursive: true });
    const old = join(dir, `0000000000000000-${process.version}-${process.arch}-publish.bin`);
    const recent = join(dir, `1111111111111111-${process.version}-${process.arch}-publish.bin`);
    const notOurs = join(dir, 'notes.txt');
    // A start killed while it wrote its cache, long ago.
    const leftover = join(dir, `${cacheName('merge-driver')}.4242.tmp`);
    for (const f of [old, recent, notOurs, leftover]) writeFileSync(f, 'x');
    const tenDaysAgo = (Date.now() - 10 * 24 * 3600 * 1000) / 1000;
    for (const f of [old, notOurs, leftover]) utimesSync(f, tenDaysAgo, tenDaysAgo);
    expect(await mergeOnce(cache)).toBe('miss');
    expect(readdirSync(dir).sort()).toEqual([cacheName('merge-driver'), recent.slice(dir.length + 1), 'notes.txt'].sort());
  });
});
