/**
 * `agentv-results archive` as a user runs it, over a bare remote: a dry run lists and moves
 * nothing; the rollover pushes the archive month and the live branches (no force: the remote
 * refuses non-fast-forward updates); `list` and `pull` still find the archived runs; a bad window
 * is a usage error. The user's checkout is never touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import {
  ARTIFACTS_REF,
  RESULTS_REF,
  cli,
  expectFsckClean,
  expectUntouched,
  makeRunWorkspace,
  makeUserRepo,
  tip,
  type RunWorkspace,
} from './publish-helpers.js';

const MONTH_REF = 'refs/heads/agentv/results-archive/v1/2026-03';

/** The run directories on an archive branch: one level under its day folders (`<YYYY-MM-DD>/<run>`). */
async function archivedRuns(dir: string, ref: string): Promise<string[]> {
  const dirs = (await git(dir, ['ls-tree', '-r', '-d', '--name-only', ref])).split('\n').filter(Boolean);
  return dirs.filter((p) => p.split('/').length === 2).map((p) => p.split('/')[1]!);
}
// The runs are from March 2026: a window this wide keeps them by age, so only --keep-runs decides.
const WINDOW = ['--keep-days', '100000', '--keep-runs', '1'];

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  runs.push(await makeRunWorkspace({ day: 0, rows: 2 }));
  runs.push(await makeRunWorkspace({ day: 1, minute: 3, rows: 2, seed: 3 }));
  runs.push(await makeRunWorkspace({ day: 2, minute: 6, rows: 2, seed: 5 }));
  for (const r of runs) {
    const p = await cli(['publish', r.dir, '--push'], user.work);
    expect(p.code, p.stderr).toBe(0);
  }
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('archive (CLI)', () => {
  it('--dry-run lists the runs that would move and moves nothing', async () => {
    const before = await tip(user.remote, RESULTS_REF);
    const r = await cli(['archive', ...WINDOW, '--dry-run', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { dry_run: boolean; archived: { run_id: string }[]; live: number };
    expect(j.dry_run).toBe(true);
    expect(j.archived.map((a) => a.run_id).sort()).toEqual([runs[0]!.runId, runs[1]!.runId].sort());
    expect(j.live).toBe(1);
    expect(await tip(user.remote, RESULTS_REF)).toBe(before);
    expect(await tip(user.work, MONTH_REF)).toBeNull();
  });

  it('moves the older runs to the month archive, pushes both without force, and list/pull still find them', async () => {
    const r = await expectUntouched(user.work, () => cli(['archive', ...WINDOW], user.work));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Archived ${runs[0]!.runId} -> agentv/results-archive/v1/2026-03`);
    expect(r.stdout).toMatch(/Archived 2 runs; 1 live; AgentV's listing [\d,]+ KiB -> [\d,]+ KiB \(budget 768 KiB\)\./);
    // On the remote: the archive month holds the two runs, the live branch only the newest.
    expect(await tip(user.remote, MONTH_REF)).toBe(await tip(user.work, MONTH_REF));
    expect(await tip(user.remote, RESULTS_REF)).toBe(await tip(user.work, RESULTS_REF));
    expect(await tip(user.remote, ARTIFACTS_REF)).toBe(await tip(user.work, ARTIFACTS_REF));
    const live = await git(user.remote, ['ls-tree', '--name-only', RESULTS_REF]);
    expect(live.split('\n')).toContain(runs[2]!.runId);
    expect(live.split('\n')).not.toContain(runs[0]!.runId);
    expect((await archivedRuns(user.remote, MONTH_REF)).sort()).toEqual([runs[0]!.runId, runs[1]!.runId].sort());

    const list = await cli(['list', '--json'], user.work);
    const rows = (JSON.parse(list.stdout) as { runs: { run_id: string; archived?: string }[] }).runs;
    expect(rows.map((x) => x.run_id).sort()).toEqual(runs.map((x) => x.runId).sort());
    expect(rows.find((x) => x.run_id === runs[0]!.runId)!.archived).toBe('2026-03');

    const out = join(user.root, 'back');
    const pulled = await cli(['pull', runs[0]!.runId, '--out', out, '--with-artifacts'], user.work);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(existsSync(join(out, 'index.jsonl'))).toBe(true);
    await expectFsckClean(user.remote);
  });

  it("a teammate's clone pulls an archived run, payloads included, from the remote's archive", async () => {
    const mate = join(user.root, 'mate');
    await git(user.root, ['init', '-q', mate]);
    await git(mate, ['remote', 'add', 'origin', user.remote]);
    const out = join(user.root, 'mate-pulled');
    const r = await cli(['pull', runs[1]!.runId, '--fetch', '--with-artifacts', '--out', out], mate);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(out, 'index.jsonl'))).toBe(true);
    // The archive came in as remote-tracking refs only: no local branch was created.
    expect(await tip(mate, MONTH_REF)).toBeNull();
  });

  it('running it again moves nothing', async () => {
    const before = await tip(user.work, RESULTS_REF);
    const r = await cli(['archive', ...WINDOW, '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { archived: unknown[] }).archived).toEqual([]);
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
  });

  it('a window that is not a whole number >= 0 is a usage error (exit 2) and writes nothing', async () => {
    const before = await tip(user.work, RESULTS_REF);
    for (const bad of [
      ['--keep-days', '-1'],
      ['--keep-runs', 'many'],
      ['--keep-runs', '1.5'],
    ]) {
      const r = await cli(['archive', ...bad], user.work);
      expect(r.code, `${bad.join(' ')}: ${r.stderr}`).toBe(2);
    }
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
  });

  it('the daemon rolls over on its schedule (--once: one rollover after its publishing) and pushes', async () => {
    const extra = await makeRunWorkspace({ day: 3, minute: 9, rows: 2, seed: 9 });
    expect((await cli(['publish', extra.dir, '--push'], user.work)).code).toBe(0);
    expect(await archivedRuns(user.remote, MONTH_REF)).not.toContain(runs[2]!.runId);
    const d = await cli(['daemon', '--once', '--archive-every', '1d', ...WINDOW, '--log-format', 'json'], user.work);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr).toContain('archive rollover');
    // The run that was the newest before `extra` moved to the archive, on the remote too.
    expect(await archivedRuns(user.remote, MONTH_REF)).toContain(runs[2]!.runId);
    expect((await git(user.remote, ['ls-tree', '--name-only', RESULTS_REF])).split('\n')).toContain(extra.runId);
    const bad = await cli(['daemon', '--once', '--keep-runs', '1'], user.work);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--archive-every');
  });
});
