// What the shipped CLI bundle carries decides every command's start-up (BENCHMARKS.md, "CLI
// start-up"). Two things are guarded here:
// - `import { z } from 'zod'` hands esbuild zod's whole namespace object, so all of zod (its 50
//   locales, JSON-schema import, ...) lands in the bundle and is evaluated on every start;
//   `import * as z` lets esbuild keep only what is used.
// - the bundle is split at the command table (src/cli/commands.ts): main.js is the parser alone and
//   a command loads its own chunks, so the merge driver git starts once per conflicted file does not
//   load the report or the Dashboard.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli as runCli } from './helpers/cli.js';

const CLI_DIR = join(import.meta.dirname, '..', 'dist', 'cli');
const MAIN = join(CLI_DIR, 'main.js');
const CHUNKS = join(CLI_DIR, 'chunks');
const chunkFiles = (): string[] => readdirSync(CHUNKS).filter((f) => f.endsWith('.js'));
const read = (file: string): string => readFileSync(file, 'utf8');

/** Every chunk a file loads up front (static imports), following chunk to chunk. */
function staticClosure(file: string): Set<string> {
  const seen = new Set<string>();
  const visit = (f: string): void => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const m of read(f).matchAll(/^import\s[^;]*?from\s*"(\.{1,2}\/[^"]+)"/gm)) visit(join(f, '..', m[1]!));
    for (const m of read(f).matchAll(/^import\s*"(\.{1,2}\/[^"]+)"/gm)) visit(join(f, '..', m[1]!));
  };
  visit(file);
  return seen;
}

/** The chunk main.js loads for one command (`merge-driver: () => import("./chunks/…")`). */
function commandChunk(name: string): string {
  const main = read(MAIN);
  const at = main.indexOf(`${/^[a-z]+$/.test(name) ? name : JSON.stringify(name)}: () => import(`);
  expect(at, `command ${name} in main.js's table`).toBeGreaterThan(-1);
  const path = /import\("(\.\/chunks\/[^"]+)"\)/.exec(main.slice(at))![1]!;
  return join(CLI_DIR, path);
}

describe('the CLI bundle', () => {
  it("keeps zod's English messages and none of its other locales", () => {
    const text = [MAIN, ...chunkFiles().map((f) => join(CHUNKS, f))].map(read).join('\n');
    expect(text).toContain('Invalid input: expected');
    // Spanish and German messages (esbuild writes non-ASCII as escapes, so ASCII words are probed).
    expect(text).not.toContain('se esperaba');
    expect(text).not.toContain('erwartet');
  });

  it('stays under 2 MB in all (it was 2.06 MB with the whole of zod; 1.6 MB until storage_mode hybrid added ~32 KB, the S3 SDK itself staying external; 1.71 MB with the site command, the gate rules and the one opener; 1.90 MB with repeat runs, the noise-aware gate, flaky, runs-only adoption, network limits and the run resolver: ~4,500 lines of src/)', () => {
    const total = statSync(MAIN).size + chunkFiles().reduce((n, f) => n + statSync(join(CHUNKS, f)).size, 0);
    expect(total).toBeLessThan(2 * 1024 * 1024);
  });

  it('leaves the S3 SDK out (storage_mode hybrid imports it from node_modules on first use)', () => {
    const texts = [read(MAIN), ...chunkFiles().map((f) => read(join(CHUNKS, f)))];
    expect(texts.some((t) => t.includes('import("@aws-sdk/client-s3")'))).toBe(true);
    expect(texts.some((t) => t.includes('class S3Client'))).toBe(false);
  });

  it('main.js is the parser and the command table only: no zod, no git, no page', () => {
    const main = read(MAIN);
    expect(statSync(MAIN).size).toBeLessThan(200 * 1024);
    expect(main).not.toContain('Invalid input: expected');
    expect(main).not.toContain('fast-import');
    expect(main).not.toMatch(/<!doctype html>/i);
  });

  it("the merge driver's code does not load the report or the Dashboard", () => {
    const closure = [...staticClosure(commandChunk('merge-driver'))].map(read).join('\n');
    expect(closure).toContain('merge-driver');
    expect(closure).not.toMatch(/<!doctype html>/i);
    // The whole bundle does hold pages: the probe above can fail.
    expect(chunkFiles().some((f) => /<!doctype html>/i.test(read(join(CHUNKS, f))))).toBe(true);
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
