/**
 * A full disk (ENOSPC) and a read-only filesystem (EROFS) under publish, sync, the daemon's outbox,
 * WIP checkpoints, the catalog cache and `site` (issue 48 item 6). One real, small tmpfs holds the
 * repository (or the outbox, or the site) each case needs; ballast fills it, `mount -o remount,ro`
 * makes it read-only. Each case: a clear error with exit 3 (`no-space` / `read-only`, docs/cli.md),
 * nothing half-written left as truth (no ref moved, fsck clean, no outbox record lost, no cache
 * file trusted, no site manifest naming bytes that are not there), and the next command after the
 * space comes back completes with nothing lost. WIP recovery and the outbox on a full disk are in
 * test/wip-diskfull.test.ts; this file adds the other verbs and the read-only cases.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../src/daemon/outbox.js';
import { openRepo, resolveRef } from '../src/git/index.js';
import { loadCatalogRead, saveCatalogRead, CACHE_MIN_RUNS, cacheKey } from '../src/branch-read/catalog-cache.js';
import type { ListedRun } from '../src/branch-read/list.js';
import { Checkpointer } from '../src/wip/index.js';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { mountTmpfs, type Tmpfs } from './helpers/tmpfs.js';
import { appendRows } from './helpers/wip-fixtures.js';
import { makeRunWorkspace, makeUserRepo, RESULTS_REF, ARTIFACTS_REF, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let fs: Tmpfs;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  fs = mountTmpfs(await makeTempDir('disk-tmpfs'), '8m');
  user = await makeUserRepo();
  for (let i = 0; i < 3; i++) runs.push(await makeRunWorkspace({ experiment: 'disk', day: i, minute: i, rows: 4, seed: 11 + i }));
}, 120_000);
afterAll(async () => {
  // Writable again first (a failed case may have left it read-only), then unmounted.
  if (fs?.mounted) {
    try {
      fs.writable();
    } catch {
      // best effort: the lazy unmount below detaches it either way
    }
  }
  fs?.unmount();
  restore();
  await cleanupTempDirs();
});

/** A clone of the shared remote on the tmpfs (its git objects and refs there). */
async function cloneOnTmpfs(name: string): Promise<string> {
  const dir = join(fs.dir, name);
  await git(fs.dir, ['clone', '-q', user.remote, dir]);
  return dir;
}

const refOf = (dir: string, ref: string) => git(dir, ['rev-parse', '-q', '--verify', ref]).catch(() => null);
const fsck = (dir: string) => git(dir, ['fsck', '--no-dangling', '--no-progress']);

describe('publish and sync on a full disk and a read-only filesystem', () => {
  it('publish: exit 3 saying so, no ref moved, fsck clean; after space returns it lands', async (ctx) => {
    fs.require(ctx);
    const clone = await cloneOnTmpfs('pub');
    fs.fill();
    try {
      const r = await runCli(['publish', runs[0]!.dir], { cwd: clone });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/no space left/i);
      expect(await refOf(clone, RESULTS_REF)).toBeNull();
      expect(await refOf(clone, ARTIFACTS_REF)).toBeNull();
    } finally {
      fs.free();
    }
    expect(await fsck(clone)).toBe('');
    const ok = await runCli(['publish', runs[0]!.dir], { cwd: clone });
    expect(ok.code, ok.stderr).toBe(0);
    const listed = await runCli(['list', '--json'], { cwd: clone });
    expect(JSON.parse(listed.stdout).runs.map((x: { run_id: string }) => x.run_id)).toEqual([runs[0]!.runId]);

    // Read-only: the same, with the filesystem's own reason.
    const tip = await refOf(clone, RESULTS_REF);
    fs.readOnly();
    try {
      const r = await runCli(['publish', runs[1]!.dir], { cwd: clone });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/read-only/i);
      expect(await refOf(clone, RESULTS_REF)).toBe(tip);
    } finally {
      fs.writable();
    }
    const again = await runCli(['publish', runs[1]!.dir], { cwd: clone });
    expect(again.code, again.stderr).toBe(0);
    expect(await fsck(clone)).toBe('');
    rmSync(clone, { recursive: true, force: true });
  }, 120_000);

  it('sync: a full clone fails with exit 3 and loses nothing; the next sync takes in and pushes everything', async (ctx) => {
    fs.require(ctx);
    // Another machine has pushed a run; this clone (on the tmpfs) has one of its own to push.
    const other = await makeTempDir('disk-other');
    await git(other, ['clone', '-q', user.remote, 'o']);
    const pushed = await runCli(['publish', runs[2]!.dir, '--push', '--require-push'], { cwd: join(other, 'o') });
    expect(pushed.code, pushed.stderr).toBe(0);
    const clone = await cloneOnTmpfs('sync');
    rmSync(join(clone, '.git', 'refs', 'remotes'), { recursive: true, force: true });
    await git(clone, ['remote', 'set-url', 'origin', user.remote]);
    const mine = await runCli(['publish', runs[0]!.dir], { cwd: clone });
    expect(mine.code, mine.stderr).toBe(0);
    const localTip = await refOf(clone, RESULTS_REF);
    const remoteTip = await git(user.remote, ['rev-parse', RESULTS_REF]);

    fs.fill();
    try {
      const r = await runCli(['sync'], { cwd: clone });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout + r.stderr).toMatch(/no space left/i);
      // Nothing lost: the local run is still on the local branch, the remote is as it was.
      expect(await refOf(clone, RESULTS_REF)).toBe(localTip);
      expect(await git(user.remote, ['rev-parse', RESULTS_REF])).toBe(remoteTip);
    } finally {
      fs.free();
    }
    expect(await fsck(clone)).toBe('');
    const ok = await runCli(['sync'], { cwd: clone });
    expect(ok.code, ok.stderr).toBe(0);
    const listed = await runCli(['list', '--json'], { cwd: join(other, 'o') });
    await git(join(other, 'o'), ['fetch', '-q', 'origin']);
    const remoteRuns = await runCli(['list', '--json', '--fetch'], { cwd: join(other, 'o') });
    expect(listed.code).toBe(0);
    expect(
      JSON.parse(remoteRuns.stdout)
        .runs.map((x: { run_id: string }) => x.run_id)
        .sort(),
    ).toEqual([runs[0]!.runId, runs[2]!.runId].sort());
    rmSync(clone, { recursive: true, force: true });
  }, 120_000);
});

describe('the outbox, WIP checkpoints and the catalog cache on a read-only filesystem', () => {
  it('outbox: a clear error, exit 3; every record acknowledged before is still there', async (ctx) => {
    fs.require(ctx);
    const ob = new Outbox(join(fs.dir, 'ob', 'agentv-results', 'outbox.jsonl'));
    await ob.put({ kind: 'push-results' });
    await ob.put({ kind: 'publish', run_dir: '/r0', run_id: 'e/r0', wip_ref: null });
    fs.readOnly();
    try {
      const err = await ob.put({ kind: 'publish', run_dir: '/r1', run_id: 'e/r1', wip_ref: null }).then(
        () => null,
        (e: Error & { code?: string; cliExitCode?: number }) => e,
      );
      expect(err?.message).toMatch(/read-only filesystem; nothing was recorded/);
      expect(err?.cliExitCode).toBe(3);
      expect((await ob.pending()).map((i) => i.id).sort()).toEqual(['publish:/r0', 'push-results']);
    } finally {
      fs.writable();
    }
    await ob.put({ kind: 'publish', run_dir: '/r1', run_id: 'e/r1', wip_ref: null });
    expect((await ob.pending()).map((i) => i.id).sort()).toEqual(['publish:/r0', 'publish:/r1', 'push-results']);
    rmSync(join(fs.dir, 'ob'), { recursive: true, force: true });
  });

  it('WIP checkpoint: fails without moving its ref, then captures every row once writable', async (ctx) => {
    fs.require(ctx);
    const work = join(fs.dir, 'wip');
    await git(fs.dir, ['init', '-q', '-b', 'main', work]);
    const repo = await openRepo(work);
    const runDir = join(await makeTempDir('disk-wip-run'), 'exp', '2026-03-05T10-00-00-000Z');
    appendRows(runDir, 0, 3);
    const author = { name: 'WIP Test', email: 'wip@example.invalid' };
    const cp = await Checkpointer.open({ repo, runDir, author, host: 'h' });
    const first = await cp.checkpoint();
    appendRows(runDir, 3, 8);
    fs.readOnly();
    try {
      await expect(cp.checkpoint()).rejects.toThrow(/read-only/i);
      expect(await resolveRef(repo, cp.ref)).toBe(first.commit);
    } finally {
      fs.writable();
    }
    expect(await fsck(work)).toBe('');
    const next = await cp.checkpoint();
    expect(next).toMatchObject({ rows: 8, addedRows: 5, previous: first.commit });
    rmSync(work, { recursive: true, force: true });
  });

  it('catalog cache: a full or read-only disk costs only a read; a torn file is never trusted', async (ctx) => {
    fs.require(ctx);
    const work = join(fs.dir, 'cat');
    await git(fs.dir, ['init', '-q', '-b', 'main', work]);
    const repo = await openRepo(work);
    const sources = [{ tip: 'a'.repeat(40), where: 'local' as const }];
    const key = cacheKey(sources, undefined);
    const listed = Array.from({ length: CACHE_MIN_RUNS }, (_, i) => ({
      run_id: `disk/2026-01-01T00-00-${String(i).padStart(5, '0')}`,
      experiment: 'disk',
      timestamp: `2026-01-01T00:00:00.${String(i).padStart(5, '0')}Z`,
      targets: ['t'],
      path: `r${i}`,
      where: 'local',
    })) as unknown as ListedRun[];
    const read = { runs: listed, unreadable: 0 };
    const facets = { experiments: ['disk'], targets: ['t'] };
    const dir = join(repo.commonDir, 'agentv-results', 'catalog-reads');

    fs.fill();
    try {
      await saveCatalogRead(repo, key, read, facets); // best effort: no throw
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]); // no torn file, no temporary file
      expect(await loadCatalogRead(repo, key, 'all')).toBeNull();
    } finally {
      fs.free();
    }
    fs.readOnly();
    try {
      await saveCatalogRead(repo, key, read, facets);
      expect(await loadCatalogRead(repo, key, 'all')).toBeNull();
    } finally {
      fs.writable();
    }
    await saveCatalogRead(repo, key, read, facets);
    const [file] = readdirSync(dir);
    expect((await loadCatalogRead(repo, key, 'all'))?.runs.length).toBe(CACHE_MIN_RUNS);
    // A file cut short (as a full disk could leave one written in place) is read from the branch again.
    const whole = readFileSync(join(dir, file!));
    writeFileSync(join(dir, file!), whole.subarray(0, Math.floor(whole.length / 2)));
    expect(await loadCatalogRead(repo, key, 'all')).toBeNull();
    rmSync(work, { recursive: true, force: true });
  });
});

describe('site on a full disk and a read-only filesystem', () => {
  /**
   * Every file under `dir` with the sha256 of its bytes, sorted by path; the manifest as its parsed
   * content (its keys' order follows the build's concurrency).
   */
  async function files(dir: string): Promise<[string, unknown][]> {
    const found: [string, unknown][] = [];
    const walk = async (rel: string): Promise<void> => {
      for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(r);
        else {
          const bytes = await readFile(join(dir, r));
          found.push([r, r === '.agentv-site.json' ? JSON.parse(bytes.toString('utf8')) : createHash('sha256').update(bytes).digest('hex')]);
        }
      }
    };
    await walk('');
    return found.sort(([a], [b]) => (a < b ? -1 : 1));
  }

  it('exit 3 saying so, no manifest naming what is not there; the next site equals a clean build', async (ctx) => {
    fs.require(ctx);
    // A repository off the tmpfs with two runs; only the site's directory is on it.
    const repoDir = (await makeUserRepo()).work;
    for (const r of runs.slice(0, 2)) expect((await runCli(['publish', r.dir], { cwd: repoDir })).code).toBe(0);
    const cleanDir = join(await makeTempDir('disk-site-clean'), 'public');
    expect((await runCli(['site', '--out', cleanDir], { cwd: repoDir })).code).toBe(0);
    const clean = await files(cleanDir);

    const out = join(fs.dir, 'site');
    mkdirSync(out);
    // Room for the stamp and some of the files (a tmpfs counts whole pages), not for the whole site.
    let pages = 0;
    for (const [f] of clean) pages += Math.ceil(statSync(join(cleanDir, f)).size / 4096) || 1;
    expect(pages).toBeGreaterThan(8);
    fs.fill(Math.floor(pages / 2) * 4096);
    try {
      const r = await runCli(['site', '--out', out], { cwd: repoDir });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/no space left on the device .* while writing the site into/);
      expect(existsSync(join(out, '.agentv-site.json'))).toBe(false);
    } finally {
      fs.free();
    }
    const ok = await runCli(['site', '--out', out], { cwd: repoDir });
    expect(ok.code, ok.stderr).toBe(0);
    expect(await files(out)).toEqual(clean);

    // Read-only: the rebuild is refused by the filesystem, the built site stays as it was.
    fs.readOnly();
    try {
      const r = await runCli(['site', '--out', out, '--full'], { cwd: repoDir });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/read-only/);
    } finally {
      fs.writable();
    }
    expect(await files(out)).toEqual(clean);
    rmSync(out, { recursive: true, force: true });
  }, 120_000);
});
