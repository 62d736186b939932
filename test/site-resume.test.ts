/**
 * `site` owns what an interrupted build of its own left (issue 48 item 5): a real `site` process
 * killed with SIGKILL half-way (once a few of its files exist: a positive signal), then `site`
 * again succeeds and its output equals a clean build's — the same files, the same bytes, the same
 * manifest, no stamp and no temporary file left. A directory that is not ours is still refused,
 * and a file the user added to a built site (older than the interrupted build's stamp) is kept.
 */
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive } from '../src/util/process-alive.js';
import { CLI_PATH, runCli } from './helpers/cli.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

const MANIFEST = '.agentv-site.json';
const STAMP = '.agentv-results-site';

let restore: () => void;
let user: UserRepoFixture;
let clean: Map<string, string>;
let cleanDir = '';

/** Every file under `dir` (relative, '/'-separated) with the sha256 of its bytes. */
async function files(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(r);
      else
        found.set(
          r,
          createHash('sha256')
            .update(await readFile(join(dir, r)))
            .digest('hex'),
        );
    }
  };
  await walk('');
  return found;
}

const manifestOf = async (dir: string) => JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Record<string, unknown>;
/** Sorted by path; the manifest's bytes left out (its keys' order follows the build's concurrency): it is compared parsed. */
const sorted = (m: Map<string, string>) => [...m].map(([f, h]): [string, string] => [f, f === MANIFEST ? 'manifest' : h]).sort(([a], [b]) => (a < b ? -1 : 1));

/**
 * Starts `site --out out` and SIGKILLs it once `atLeast` files exist under `out` (polled every few
 * ms, bounded). Resolves with whether it was killed before its manifest was written.
 */
async function killMidway(out: string, atLeast: number): Promise<boolean> {
  const child = spawn(process.execPath, [CLI_PATH, 'site', '--out', out], { cwd: user.work, stdio: 'ignore', env: { ...process.env, NO_COLOR: '1' } });
  const exited = new Promise<void>((ok) => child.on('close', () => ok()));
  let done = false;
  void exited.then(() => (done = true));
  try {
    // A bounded poll: at most 20,000 looks, 3 ms apart (a minute at the least), until the site exits.
    for (let i = 0; !done && i < 20_000; i++, await new Promise((r) => setTimeout(r, 3))) {
      const n = existsSync(out) ? (await files(out).catch(() => new Map())).size : 0;
      if (n >= atLeast) {
        child.kill('SIGKILL');
        break;
      }
    }
  } finally {
    if (!done && child.pid !== undefined && processAlive(child.pid)) child.kill('SIGKILL');
    await exited;
  }
  return !existsSync(join(out, MANIFEST));
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  for (const [i, experiment] of ['nightly', 'nightly', 'nightly', 'smoke', 'smoke'].entries()) {
    const run = await makeRunWorkspace({ experiment, day: i, minute: i, rows: 5, seed: i + 1 });
    const r = await runCli(['publish', run.dir], { cwd: user.work });
    expect(r.code, r.stderr).toBe(0);
  }
  cleanDir = join(await makeTempDir('site-clean'), 'public');
  const r = await runCli(['site', '--out', cleanDir], { cwd: user.work });
  expect(r.code, r.stderr).toBe(0);
  clean = await files(cleanDir);
  expect(clean.has(STAMP)).toBe(false);
}, 180_000);

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('site resumes what an interrupted build of its own left', () => {
  it('after kill -9 during the first build, site succeeds and equals a clean build', async () => {
    const parent = await makeTempDir('site-killed');
    let out = '';
    // The kill must land before the build ends: a few files in of a build of ~60. Tried again
    // (bounded) only if this loaded machine let a build finish before the poll saw its files.
    let midway = false;
    for (let attempt = 0; attempt < 5 && !midway; attempt++) {
      out = join(parent, `public-${attempt}`);
      midway = await killMidway(out, 4);
    }
    expect(midway, 'a site build was killed before it wrote its manifest').toBe(true);
    const left = await readdir(out);
    expect(left).toContain(STAMP); // written first, before any content
    expect(left).not.toContain(MANIFEST);

    const again = await runCli(['site', '--out', out], { cwd: user.work });
    expect(again.code, again.stderr).toBe(0);
    const resumed = await files(out);
    expect(sorted(resumed)).toEqual(sorted(clean));
    expect(await manifestOf(out)).toEqual(await manifestOf(cleanDir));
  }, 180_000);

  it('an interrupted rebuild: its new and temporary files go, a file the user added before it stays', async () => {
    const out = join(await makeTempDir('site-rebuild'), 'public');
    expect((await runCli(['site', '--out', out], { cwd: user.work })).code).toBe(0);
    const built = await manifestOf(out);
    // The user's CNAME, added to the built site (older than the interrupted build).
    await writeFile(join(out, 'CNAME'), 'results.example.org\n');
    const older = new Date(Date.now() - 7200_000);
    await utimes(join(out, 'CNAME'), older, older);
    const past = new Date(Date.now() - 3600_000);
    // What a rebuild stopped half-way leaves: its stamp, a file it wrote, a temporary file, a changed file.
    await writeFile(join(out, STAMP), `${JSON.stringify({ tool: 'agentv-results site', pid: 2 ** 22 + 1 })}\n`);
    await utimes(join(out, STAMP), past, past);
    await mkdir(join(out, 'api', 'runs', 'gone'), { recursive: true });
    await writeFile(join(out, 'api', 'runs', 'gone', 'index.json'), '{"half":');
    await writeFile(join(out, 'api', '.catalog.json.tmp-4194305-0badc0de'), '{"ru');
    await writeFile(join(out, 'index.html'), '<!doctype html><title>half</title>');

    const r = await runCli(['site', '--out', out], { cwd: user.work });
    expect(r.code, r.stderr).toBe(0);
    const after = await files(out);
    expect(after.get('CNAME')).toBeDefined();
    after.delete('CNAME');
    expect(sorted(after)).toEqual(sorted(clean));
    expect(await manifestOf(out)).toEqual(built);
    expect(built).toEqual(await manifestOf(cleanDir));
    expect(await readFile(join(out, 'CNAME'), 'utf8')).toBe('results.example.org\n');
  }, 120_000);

  it('site --full also removes what the last build wrote and no run produces any more', async () => {
    const out = join(await makeTempDir('site-full'), 'public');
    expect((await runCli(['site', '--out', out], { cwd: user.work })).code).toBe(0);
    // A file the last build wrote for a run that is gone since (as after an expire).
    const m = (await manifestOf(out)) as { files: Record<string, [string, number]> };
    await mkdir(join(out, 'api', 'runs', 'expired'), { recursive: true });
    await writeFile(join(out, 'api', 'runs', 'expired', '_.json'), '{}');
    m.files['api/runs/expired/_.json'] = [createHash('sha256').update('{}').digest('hex'), 2];
    await writeFile(join(out, MANIFEST), `${JSON.stringify(m)}\n`);
    const r = await runCli(['site', '--out', out, '--full', '--json'], { cwd: user.work });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).files_removed).toBe(1);
    expect(sorted(await files(out))).toEqual(sorted(clean));
  }, 120_000);

  it('still refuses a directory that is neither a site nor a build of ours in progress', async () => {
    const dir = join(await makeTempDir('site-foreign'), 'notes');
    await mkdir(dir);
    await writeFile(join(dir, 'notes.txt'), 'keep me');
    // A stamp-like file that is not ours does not make it ours.
    await writeFile(join(dir, STAMP), '{"tool":"something else"}');
    const r = await runCli(['site', '--out', dir], { cwd: user.work });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a site agentv-results built/);
    expect((await readdir(dir)).sort()).toEqual([STAMP, 'notes.txt']);
  }, 60_000);
});
