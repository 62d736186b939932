/**
 * `status` lists every sync branch on the remote, not only the ones this repository set aside:
 * a run AgentV 5.x parked on `agentv/results-sync/<utc>-<branch slug>-<rand6>` (it does so for
 * every contended push on git before 2.40) is named, with its review hint and the command that
 * resolves it, once the clone has fetched it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, git, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, publishRun, RESULTS_REF } from './sync-helpers.js';

describe('status names sync branches written elsewhere', () => {
  let restoreEnv: () => void = () => {};
  beforeAll(() => {
    restoreEnv = useIsolatedGitEnv();
  });
  afterAll(async () => {
    restoreEnv();
    await cleanupTempDirs();
  });

  it("lists AgentV's parked run from the remote-tracking refs beside our own, and drops it once the remote no longer has it", async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote, 'a');
    expect((await publishRun(a, { experiment: 'ours' })).push).toMatchObject({ landed: true });
    // What AgentV 5.x pushes when it parks a run: a branch on top of the results branch, named its way.
    const parked = 'agentv/results-sync/20261127T120000Z-agentv-results-v1-a1b2c3';
    await git(a, ['push', '-q', 'origin', `${RESULTS_REF}:refs/heads/${parked}`]);
    const b = await makeClone(remote, 'b');
    await git(b, ['fetch', '-q', 'origin']);
    const r = await runCli(['status', '--json'], { cwd: b });
    expect(r.code, r.stderr).toBe(0);
    const section = JSON.parse(r.stdout).extra['sync-branches'] as { open: Record<string, unknown>[] };
    expect(section.open).toEqual([
      expect.objectContaining({
        branch: parked,
        seen_from: 'remote',
        on_remote: true,
        created_at: '20261127T120000Z',
        resolve_command: `agentv-results sync --resolve ${parked}`,
        review_hint: expect.stringContaining(`origin/${parked}`),
      }),
    ]);
    // Gone from the remote (and pruned on fetch): no longer listed.
    await git(a, ['push', '-q', 'origin', `:refs/heads/${parked}`]);
    await git(b, ['fetch', '-q', '--prune', 'origin']);
    const after = JSON.parse((await runCli(['status', '--json'], { cwd: b })).stdout);
    expect(after.extra['sync-branches']).toBeUndefined();
  });
});
