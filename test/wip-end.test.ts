/**
 * A plain `publish --push` ends the run's WIP, as exec and the daemon do: once the run is on the
 * remote, its WIP branch goes locally and on the remote (leased on the tip seen), and `wip list`
 * no longer shows it. A WIP that captured rows the published workspace lacks is kept, and so is
 * every WIP while the publish has not reached the remote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { appendRows, row } from './helpers/wip-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo } from './publish-helpers.js';
import { openRepo, updateRef, writeCommit } from '../src/git/index.js';

const ENV = { AGENTV_RESULTS_HOST: 'laptop' };
let restore: () => void;

beforeAll(() => {
  restore = useIsolatedGitEnv();
});
afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

const wipRefs = async (dir: string) => (await git(dir, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/wip'])).split('\n').filter(Boolean);

async function checkpointed(seed: number) {
  const user = await makeUserRepo();
  const run = await makeRunWorkspace({ seed, rows: 4, minute: seed });
  const c = await cli(['wip', 'checkpoint', run.dir, '--push'], user.work, { env: ENV });
  expect(c.code, c.stderr).toBe(0);
  expect(await wipRefs(user.remote)).toHaveLength(1);
  return { user, run };
}

describe('publish ends the WIP', () => {
  it("publish --push deletes the run's WIP branch here and on the remote; wip list no longer shows it", async () => {
    const { user, run } = await checkpointed(1);
    const p = await cli(['publish', run.dir, '--push'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/WIP branch agentv\/wip\/laptop\/\S+ deleted: the run is published/);
    expect(await wipRefs(user.work)).toEqual([]);
    expect(await wipRefs(user.remote)).toEqual([]);
    const list = await cli(['wip', 'list', '--json'], user.work, { env: ENV });
    expect((JSON.parse(list.stdout) as { branches: unknown[] }).branches).toEqual([]);
  });

  it('publish --json reports what it did with the WIP', async () => {
    const { user, run } = await checkpointed(2);
    const p = await cli(['publish', run.dir, '--push', '--json'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect((JSON.parse(p.stdout) as { wip: { status: string }[] }).wip).toMatchObject([{ status: 'deleted' }]);
  });

  it('keeps the WIP while the publish has not reached the remote (--no-push)', async () => {
    const { user, run } = await checkpointed(3);
    const p = await cli(['publish', run.dir, '--no-push'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect(await wipRefs(user.work)).toHaveLength(1);
    expect(await wipRefs(user.remote)).toHaveLength(1);
    // The next publish that pushes ends it.
    const again = await cli(['publish', run.dir, '--push'], user.work, { env: ENV });
    expect(again.code, again.stderr).toBe(0);
    expect(await wipRefs(user.remote)).toEqual([]);
  });

  it('keeps a WIP that captured rows the published workspace no longer has', async () => {
    const { user, run } = await checkpointed(4);
    const index = join(run.dir, 'index.jsonl');
    const lines = (await readFile(index, 'utf8')).split('\n').filter(Boolean);
    await writeFile(index, lines.slice(0, -1).join('\n') + '\n'); // a row the WIP holds is gone
    // The summary still counts the row, so `validate` (and publish by default) rejects the run.
    const refused = await cli(['publish', run.dir, '--push'], user.work, { env: ENV });
    expect(refused.code).toBe(2);
    const p = await cli(['publish', run.dir, '--push', '--allow-invalid'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/WIP branch agentv\/wip\/laptop\/\S+ kept: .*holds rows the published run does not have/);
    expect(await wipRefs(user.work)).toHaveLength(1);
    expect(await wipRefs(user.remote)).toHaveLength(1);
  });

  // A run checkpointed while it ran holds plain result rows; publishing it derives the workspace in
  // place, which rewrites index.jsonl. Its rows are all published: the WIP ends all the same.
  async function inProgress(rows: number) {
    const user = await makeUserRepo();
    const dir = join(await makeTempDir('agentv-inprogress'), 'nightly', 'run-7');
    appendRows(dir, 0, rows);
    const c = await cli(['wip', 'checkpoint', dir, '--push'], user.work, { env: ENV });
    expect(c.code, c.stderr).toBe(0);
    expect(await wipRefs(user.remote)).toHaveLength(1);
    return { user, dir };
  }

  it('ends the WIP of a run checkpointed in progress (plain rows), which the publish derives in place', async () => {
    const { user, dir } = await inProgress(3);
    appendRows(dir, 3, 5);
    const p = await cli(['publish', dir, '--push', '--json'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect((JSON.parse(p.stdout) as { derived: boolean; wip: { status: string }[] }).wip).toMatchObject([{ status: 'deleted' }]);
    expect(await wipRefs(user.work)).toEqual([]);
    expect(await wipRefs(user.remote)).toEqual([]);
  });

  it('ends it on the publish that lands, when an earlier one (--no-push) already derived the workspace', async () => {
    const { user, dir } = await inProgress(3);
    expect((await cli(['publish', dir, '--no-push'], user.work, { env: ENV })).code).toBe(0);
    expect(await wipRefs(user.remote)).toHaveLength(1);
    const p = await cli(['publish', dir, '--push'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/WIP branch agentv\/wip\/laptop\/\S+ deleted: the run is published/);
    expect(await wipRefs(user.remote)).toEqual([]);
  });

  it('keeps the WIP of a run in progress when the published workspace lost a row it captured', async () => {
    const { user, dir } = await inProgress(3);
    // The runner started over: row 0 is gone, rows 1-2 are written again and row 3 is new.
    await writeFile(join(dir, 'index.jsonl'), [1, 2, 3].map((i) => `${JSON.stringify(row(i))}\n`).join(''));
    const p = await cli(['publish', dir, '--push'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/WIP branch agentv\/wip\/laptop\/\S+ kept: .*holds rows the published run does not have/);
    expect(await wipRefs(user.remote)).toHaveLength(1);
  });

  // Issue 24: the end is by row identity, whatever the workspace's index looks like and wherever
  // it was published from.
  it('ends the WIP when a copy of the checkpointed workspace (plain rows) is published from another directory', async () => {
    const { user, dir } = await inProgress(3);
    const copy = join(await makeTempDir('agentv-copy'), 'nightly', 'run-7');
    appendRows(copy, 0, 4); // the same rows (and one more), written elsewhere: other bytes once derived
    const p = await cli(['publish', copy, '--push', '--json'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    expect((JSON.parse(p.stdout) as { wip: { status: string }[] }).wip).toMatchObject([{ status: 'deleted' }]);
    expect(await wipRefs(user.remote)).toEqual([]);
    expect(dir).not.toBe(copy);
  });

  it("ends AgentV's own checkpoint of the published run directory once its rows are on the branch; keeps one holding a row the run lacks", async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ seed: 9, rows: 4, minute: 9 });
    const repo = await openRepo(user.work);
    const lines = (await readFile(join(run.dir, 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const checkpoint = async (host: string, rows: string[]) => {
      const { commit } = await writeCommit(repo, {
        parent: null,
        files: [
          { path: `${run.runId}/.internal/index.jsonl`, data: `${rows.join('\n')}\n` },
          { path: `${run.runId}/summary.json`, data: '{}\n' },
        ],
        message: `wip(results): checkpoint agentv/wip/${host}/${run.runId} 2026-03-14T10:09:30.000Z`,
        author: { name: 'AgentV', email: 'agentv@results-repo', date: '2026-03-14T10:09:30Z' },
      });
      await updateRef(repo, `refs/heads/agentv/wip/${host}/${run.runId}`, commit, null);
      await git(user.work, ['push', '-q', 'origin', `agentv/wip/${host}/${run.runId}`]);
    };
    await checkpoint('pod-1', lines.slice(0, 2));
    await checkpoint('pod-2', [lines[0]!, JSON.stringify(row(99))]);
    const p = await cli(['publish', run.dir, '--push', '--json'], user.work, { env: ENV });
    expect(p.code, p.stderr).toBe(0);
    const wip = (JSON.parse(p.stdout) as { wip: { branch: string; status: string }[] }).wip;
    expect(wip.find((w) => w.branch.includes('pod-1'))).toMatchObject({ status: 'deleted' });
    expect(wip.find((w) => w.branch.includes('pod-2'))).toMatchObject({ status: 'kept' });
    expect(await wipRefs(user.remote)).toEqual([`refs/heads/agentv/wip/pod-2/${run.runId}`]);
  });
});
