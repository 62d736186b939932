/**
 * Rollover racing a publish and another rollover over git:// (a git daemon on 127.0.0.1 whose
 * bare remote refuses non-fast-forward pushes): everything merges, nothing is forced, no run is
 * duplicated or lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARCHIVE_RESULTS_PREFIX } from '../src/archive/rollover.js';
import { rolloverAndPush } from '../src/archive/push-archive.js';
import { publish } from '../src/publish/publish.js';
import { cleanupTempDirs, freePort, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { RESULTS_REF, expectFsckClean, makeRunWorkspace, makeUserRepo, startDaemonOn, type Daemon } from './publish-helpers.js';
import { join } from 'node:path';

let restore: () => void;
let daemon: Daemon | null = null;
const NOW = new Date('2026-03-20T12:00:00Z');

beforeAll(() => {
  restore = useIsolatedGitEnv();
});
afterAll(async () => {
  await daemon?.stop();
  restore();
  await cleanupTempDirs();
});

async function catalogIds(dir: string, ref: string): Promise<string[]> {
  const files = (await git(dir, ['ls-tree', '--name-only', `${ref}:.indexes`])).split('\n').filter((f) => f.startsWith('agentv-results.'));
  const ids: string[] = [];
  for (const f of files)
    for (const l of (await git(dir, ['cat-file', 'blob', `${ref}:.indexes/${f}`])).split('\n').filter(Boolean))
      ids.push((JSON.parse(l) as { run_id: string }).run_id);
  return ids.sort();
}
const rootDirs = async (dir: string, ref: string) =>
  new Set((await git(dir, ['ls-tree', '-d', '--name-only', ref])).split('\n').filter((d) => d && !d.startsWith('.')));

describe('rollover over git:// against a remote that refuses non-fast-forward pushes', () => {
  it('a rollover on one machine and a publish plus a rollover on another merge without conflicts or duplicates', async () => {
    const port = await freePort();
    const a = await makeUserRepo('remote-url', `git://127.0.0.1:${port}/remote.git`);
    daemon = await startDaemonOn(a.root, port);
    expect(await git(a.remote, ['config', 'receive.denyNonFastForwards'])).toBe('true');

    const old = [
      await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 2 }),
      await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 7, rows: 2, seed: 2 }),
      await makeRunWorkspace({ experiment: 'smoke', day: 1, minute: 3, rows: 2, seed: 4 }),
    ];
    const recent = await makeRunWorkspace({ experiment: 'nightly', day: 5, minute: 1, rows: 2, seed: 6 });
    for (const r of [...old, recent]) await publish({ run: r.dir, cwd: a.work, push: true });

    // Machine B: its own clone of the remote, with the branches fetched.
    const bRoot = await makeTempDir('archive-b-');
    const b = join(bRoot, 'work');
    await git(bRoot, ['clone', '--quiet', `git://127.0.0.1:${port}/remote.git`, b]);
    await git(b, ['fetch', '--quiet', 'origin', 'refs/heads/agentv/*:refs/heads/agentv/*']);
    const fresh = await makeRunWorkspace({ experiment: 'nightly', day: 6, minute: 2, rows: 2, seed: 8 });

    // A archives the old runs while B publishes a new one, both pushing.
    const [rolled, published] = await Promise.all([
      rolloverAndPush({ cwd: a.work, keepDays: 4, now: NOW, push: true }),
      publish({ run: fresh.dir, cwd: b, push: true }),
    ]);
    expect(rolled.archived.map((x) => x.run_id).sort()).toEqual(old.map((r) => r.runId).sort());
    expect(rolled.push?.archiveLanded).toBe(true);
    expect(published).toBeTruthy();

    // B (still holding the old runs live, as of its last fetch) rolls over too: the same runs
    // land on the same archive ref from both machines.
    const bRolled = await rolloverAndPush({ cwd: b, keepDays: 4, now: NOW, push: true });
    expect(bRolled.push?.archiveLanded, bRolled.push?.message).toBe(true);
    // A syncs whatever is left to push (its live branch may have lost the race to B's publish).
    await rolloverAndPush({ cwd: a.work, keepDays: 4, now: NOW, push: true });

    const remote = a.remote;
    const live = await rootDirs(remote, RESULTS_REF);
    const archive = new Set<string>();
    for (const day of await rootDirs(remote, `${ARCHIVE_RESULTS_PREFIX}2026-03`))
      for (const d of await rootDirs(remote, `${ARCHIVE_RESULTS_PREFIX}2026-03:${day}`)) archive.add(`${day}/${d}`);
    for (const x of rolled.archived) {
      expect(live.has(x.path)).toBe(false);
      expect(archive.has(`${x.day}/${x.path}`)).toBe(true);
    }
    expect(live.size).toBe(2); // recent + fresh
    // Every run exactly once in the catalog, archived ones marked.
    const ids = await catalogIds(remote, RESULTS_REF);
    expect(ids).toEqual([...old, recent, fresh].map((r) => r.runId).sort());
    expect(new Set(ids).size).toBe(ids.length);
    // Nothing forced: each remote tip descends from what A first pushed.
    const log = await git(remote, ['log', '--format=%s', RESULTS_REF]);
    expect(log).toMatch(/roll .* over to the archive/);
    await expectFsckClean(remote);
  }, 120_000);
});
