/**
 * A run is opened once per command (src/runs/read/run-handle.ts): the folder walked once answers the
 * run-path check as the disk does, another layout is derived once into a scratch copy the handle
 * removes, publish leaves no scratch copy behind, and the Dashboard's run cache keeps a bounded
 * number of runs, removing what falls out.
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportRun, publish } from '../src/index.js';
import { openRun } from '../src/runs/read/run-handle.js';
import { RunCache } from '../src/serve/run-cache.js';
import { checkRunPathSync } from '../src/runs/read/run-files.js';
import { runSafetyProblems } from '../src/runs/read/run-safety.js';
import { RunTree } from '../src/runs/read/run-tree.js';
import { fixture, describeWithFixtures } from './helpers/fixtures.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';

let restoreEnv: () => void;
beforeAll(() => {
  restoreEnv = useIsolatedGitEnv();
});
afterAll(async () => {
  restoreEnv();
  await cleanupTempDirs();
});

/** The scratch copies under `root` (this process's scratch root: other test files' processes share the temp dir). */
function scratchCopies(root: string): Set<string> {
  const out = new Set<string>();
  for (const r of readdirSync(tmpdir()).filter((n) => n === root)) {
    const runs = existsSync(join(tmpdir(), r)) ? readdirSync(join(tmpdir(), r)) : [];
    for (const c of runs) out.add(join(r, c));
  }
  return out;
}

/** This process's scratch root (made by the first derived copy, one per process), learnt by deriving one. */
async function ownScratchRoot(foreign: string): Promise<string> {
  const handle = await openRun(foreign);
  const dir = (await handle.load()).dir!;
  await handle.dispose();
  return basename(dirname(dir));
}

describeWithFixtures('run handle', () => {
  const RESULTS = 'basic--suite.baseline.jsonl';

  const bundle = () => bundleOf(RESULTS);

  /** A folder whose index.jsonl holds AgentV's plain result rows: read through a derived copy. */
  async function foreignRun(): Promise<string> {
    const dir = await makeTempDir('run-handle-foreign');
    await writeFile(join(dir, 'index.jsonl'), await readFile(fixture(RESULTS)));
    return dir;
  }

  it('the walk answers every path as the run-path check on disk does, and a folder with a link is checked on disk', async () => {
    const dir = await bundle();
    const tree = RunTree.walk(dir);
    expect(tree.plain).toBe(true);
    const index = (await readFile(join(dir, 'index.jsonl'), 'utf8')).split('\n')[0]!;
    const row = JSON.parse(index) as { result_dir: string; grading_path: string };
    for (const rel of [
      'index.jsonl',
      'summary.json',
      row.result_dir,
      row.grading_path,
      'nope.json',
      `${row.result_dir}/nope`,
      '../x',
      '/etc/passwd',
      '.git/config',
    ]) {
      const disk = checkRunPathSync(dir, rel);
      const walked = tree.check(rel);
      expect({ rel, kind: walked.kind, isDir: walked.kind === 'ok' ? walked.isDir : null }).toEqual({
        rel,
        kind: disk.kind,
        isDir: disk.kind === 'ok' ? disk.isDir : null,
      });
    }
    expect(tree.read(row.grading_path)).toEqual({ kind: 'ok', data: await readFile(join(dir, row.grading_path)) });

    await symlink('/etc/passwd', join(dir, 'notes.txt'));
    const linked = RunTree.walk(dir);
    expect(linked.plain).toBe(false);
    expect(linked.irregular).toEqual([{ path: 'notes.txt', what: 'a symbolic link' }]);
    expect(linked.check('notes.txt').kind).toBe('bad');
    const rows = (await readFile(join(dir, 'index.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // The one safety check says the same with the walk as without it.
    const withTree = runSafetyProblems(dir, rows, [], { tree: linked });
    expect(withTree.map((p) => p.file)).toEqual(['notes.txt']);
    expect(withTree).toEqual(runSafetyProblems(dir, rows));
  });

  it('kept contents are read from disk once: a file changed after the first read is still the bytes validation saw', async () => {
    const dir = await bundle();
    const tree = RunTree.walk(dir, { keep: true });
    const first = tree.read('summary.json');
    await writeFile(join(dir, 'summary.json'), '{"changed":true}');
    expect(tree.read('summary.json')).toEqual(first);
    expect(tree.take('summary.json')).toEqual(first.kind === 'ok' ? first.data : null);
    // Taken: the next reader reads the disk again.
    expect(tree.take('summary.json').toString()).toBe('{"changed":true}');
  });

  it('another layout is derived once into a copy the handle owns, and dispose removes it', async () => {
    const handle = await openRun(await foreignRun());
    expect(handle.layout).toBe('bundle');
    const first = handle.load();
    expect(handle.load()).toBe(first);
    const loaded = await first;
    expect(loaded.layout).toBe('agentv');
    expect(loaded.rows.length).toBeGreaterThan(0);
    expect(existsSync(loaded.dir!)).toBe(true);
    await handle.dispose();
    expect(existsSync(loaded.dir!)).toBe(false);
    await expect(handle.load({ experiment: 'other' })).rejects.toThrow(/after dispose/);
  });

  it('publish leaves no scratch copy behind (validation derived one), and the Dashboard cache holds at most its bound', async () => {
    const repo = await makeTempDir('run-handle-repo');
    await git(repo, ['init', '-q', '-b', 'main']);
    const own = await ownScratchRoot(await foreignRun());
    const before = scratchCopies(own);
    const published = await publish({ run: await foreignRun(), cwd: repo, push: false });
    expect(published.status).toBe('published');
    expect([...scratchCopies(own)].filter((c) => !before.has(c))).toEqual([]);

    // Two more runs, then a cache of two: the run used least recently falls out, its copy removed.
    const ids = [published.runId];
    for (const name of ['assert--suite.baseline.jsonl', 'assert-set--suite.baseline.jsonl'])
      ids.push((await publish({ run: await bundleOf(name), cwd: repo, push: false })).runId);
    expect(new Set(ids).size).toBe(3);
    const cache = new RunCache(2);
    try {
      const first = await cache.workspace({ cwd: repo }, ids[0]!);
      const loaded = await cache.run({ cwd: repo }, ids[0]!);
      expect(loaded.rows.length).toBeGreaterThan(0);
      await cache.workspace({ cwd: repo }, ids[1]!);
      // A use moves the first run to the end: the second one falls out next.
      await cache.run({ cwd: repo }, ids[0]!);
      const third = await cache.workspace({ cwd: repo }, ids[2]!);
      expect(cache.size).toBe(2);
      expect(cache.has({ cwd: repo }, ids[0]!)).toBe(true);
      expect(cache.has({ cwd: repo }, ids[1]!)).toBe(false);
      expect(existsSync(first) && existsSync(third)).toBe(true);
      // Evicted and asked again: pulled again, and the bound still holds.
      const again = await cache.run({ cwd: repo }, ids[1]!);
      expect(again.rows.length).toBeGreaterThan(0);
      expect(cache.size).toBe(2);
      expect(cache.has({ cwd: repo }, ids[0]!)).toBe(false);
    } finally {
      await cache.close();
    }
  });

  async function bundleOf(name: string): Promise<string> {
    const root = await makeTempDir('run-handle');
    const out = join(root, 'run');
    await exportRun({ source: fixture(name), out });
    return out;
  }
});
