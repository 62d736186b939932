/**
 * A git killed during the ref update (issue 13, hole 3): the `.lock` file it leaves and the
 * half-moved pair (artifacts moved, results not). A stale lock is recognised and cleared, the
 * interrupted pair is completed, `status` reports it meanwhile, and a lock that may still be held
 * is left alone with a message that says what to do.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, makeRunWorkspace, makeUserRepo, tip } from './publish-helpers.js';

isolateGitForSuite();

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim() as unknown as number;
}

describe('a ref lock left by a killed git', () => {
  it('a fresh lock is left alone: exit 3 with what to do; status reports it; once stale it is cleared', async () => {
    const user = await makeUserRepo();
    const run1 = await makeRunWorkspace({ minute: 1 });
    expect((await cli(['publish', run1.dir], user.work)).code).toBe(0);
    const lock = join(user.work, '.git', `${RESULTS_REF}.lock`);
    await writeFile(lock, '');
    const run2 = await makeRunWorkspace({ minute: 2 });
    const blocked = await cli(['publish', run2.dir], user.work);
    expect(blocked.code, blocked.stderr).toBe(3);
    expect(blocked.stderr).toContain(lock);
    expect(blocked.stderr).toMatch(/another git process may be updating this ref — wait for it; if none is running .*delete that file and retry/);
    const st = await cli(['status', '--json'], user.work);
    const report = JSON.parse(st.stdout) as { extra: Record<string, { message: string; locks: string[] }> };
    expect(report.extra['interrupted-update']?.locks[0]).toContain(lock);
    expect((await cli(['status'], user.work)).stdout).toMatch(/interrupted-update/);

    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    expect(JSON.parse((await cli(['status', '--json'], user.work)).stdout).extra['interrupted-update'].locks[0]).toMatch(/leftover of a killed git/);
    const ok = await cli(['publish', run2.dir], user.work);
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(lock)).toBe(false);
    expect(JSON.parse((await cli(['status', '--json'], user.work)).stdout).extra['interrupted-update']).toBeUndefined();
  }, 180_000);

  it('a pair update interrupted after moving the artifacts branch is completed by the next write', async () => {
    const user = await makeUserRepo();
    const run1 = await makeRunWorkspace({ minute: 1 });
    expect((await cli(['publish', run1.dir], user.work)).code).toBe(0);
    const before = { results: await tip(user.work, RESULTS_REF), artifacts: await tip(user.work, ARTIFACTS_REF) };
    const run2 = await makeRunWorkspace({ minute: 2 });
    expect((await cli(['publish', run2.dir], user.work)).code).toBe(0);
    const after = { results: await tip(user.work, RESULTS_REF), artifacts: await tip(user.work, ARTIFACTS_REF) };
    // Put the repository in the state a kill between the two renames leaves: artifacts moved,
    // results not, its lock file behind, and the dead publisher's journal.
    await git(user.work, ['update-ref', RESULTS_REF, before.results!, after.results!]);
    const lock = join(user.work, '.git', `${RESULTS_REF}.lock`);
    await writeFile(lock, `${after.results}\n`);
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    const pid = Number(deadPid());
    await mkdir(join(user.work, '.git', 'agentv-results'), { recursive: true });
    await writeFile(
      join(user.work, '.git', 'agentv-results', `ref-txn.${pid}.json`),
      JSON.stringify({
        pid,
        started: new Date().toISOString(),
        updates: [
          { ref: ARTIFACTS_REF, old: before.artifacts, new: after.artifacts },
          { ref: RESULTS_REF, old: before.results, new: after.results },
        ],
      }),
    );
    const st = JSON.parse((await cli(['status', '--json'], user.work)).stdout) as { pending: boolean; extra: Record<string, { message: string }> };
    expect(st.extra['interrupted-update']?.message).toMatch(new RegExp(`process ${pid} died after moving ${ARTIFACTS_REF} but not ${RESULTS_REF}`));

    const run3 = await makeRunWorkspace({ minute: 3 });
    const r = await cli(['publish', run3.dir], user.work);
    expect(r.code, r.stderr).toBe(0);
    const list = await cli(['list', '--json'], user.work);
    for (const run of [run1, run2, run3]) expect(list.stdout).toContain(run.runId);
    // Both branches moved together: results' previous tip is the completed one.
    expect(await git(user.work, ['rev-parse', `${RESULTS_REF}~1`])).toBe(after.results);
    expect(existsSync(lock)).toBe(false);
  }, 180_000);
});
