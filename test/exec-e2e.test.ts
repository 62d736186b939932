/**
 * `exec` end to end with real processes: a script that writes rows slowly, checkpointed while it
 * runs; published and pushed when it exits; its status passed through; signals forwarded; and the
 * crash story — SIGKILL mid-run, `wip recover` on a second clone, resume, publish, every row once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lsTree, openRepo, readBlobs } from '../src/git/index.js';
import { runCli } from './helpers/cli.js';
import { freePort, git, gitsRunningIn, makeTempDir, makeUserRepoWithRemote, snapshotCheckout, isolateGitForSuite } from './helpers/git-fixtures.js';
import { killPid, restartableGitDaemon, startCli, startProcess, testIds, waitFor, WRITER, type Proc } from './helpers/wip-fixtures.js';

isolateGitForSuite();

const started: Proc[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const p of started.splice(0)) await p.stop(2_000);
  for (const pid of pids.splice(0)) killPid(pid);
});

const ENV = { AGENTV_RESULTS_HOST: 'hosta' };

function exec(work: string, runDir: string, writerArgs: string[], extra: string[] = []): Proc {
  const p = startCli(
    ['exec', '--out', runDir, '--interval', '0.2', '--every-rows', '3', '--push', ...extra, '--', process.execPath, WRITER, runDir, ...writerArgs],
    { cwd: work, env: ENV },
  );
  started.push(p);
  return p;
}

/** Test ids of a run on the results branch, by its directory at the branch root (AgentV's bare run id). */
async function publishedIds(gitDir: string, runPathPrefix: string): Promise<string[]> {
  const repo = await openRepo(gitDir);
  const entries = await lsTree(repo, 'refs/heads/agentv/results/v1', { path: `${runPathPrefix}/index.jsonl`, recursive: false });
  const sha = entries.find((e) => e.path.endsWith('index.jsonl'))?.sha;
  if (!sha) return [];
  return testIds((await readBlobs(repo, [sha])).get(sha)!.toString('utf8'));
}

describe('exec', () => {
  it('checkpoints while the command runs, publishes and pushes when it exits, deletes the WIP branch, exits 0', async () => {
    const fx = await makeUserRepoWithRemote();
    const before = await snapshotCheckout(fx.work);
    const runDir = join(await makeTempDir('exec-runs'), 'exp', '2026-03-01T10-00-00-000Z');
    const p = exec(fx.work, runDir, ['--rows', '24', '--delay-ms', '40', '--sidecars']);
    // While it runs, the WIP branch lands on the remote.
    await waitFor('WIP branch on the remote', async () => (await git(fx.remote, ['for-each-ref', 'refs/heads/agentv/wip'])) !== '', 30_000);
    const code = await p.exited;
    // How many checkpoints land while a one-second writer runs depends on the machine's load (on a
    // loaded host the first may come only with the flush at exit): that one was made is what holds.
    expect(p.stderr()).toMatch(/checkpoint run=exp\/2026-03-01T10-00-00-000Z checkpoint=[1-9]\d* rows=\d+/);
    expect(code).toBe(0);
    expect(p.stderr()).toMatch(/published run=2026-03-01T10-00-00-000Z/);
    expect(p.stderr()).toMatch(/WIP branch deleted/);
    expect(await publishedIds(fx.remote, '2026-03-01T10-00-00-000Z')).toHaveLength(24);
    expect(await git(fx.remote, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
    expect(await git(fx.work, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
    expect(await snapshotCheckout(fx.work)).toEqual(before);
  });

  it('passes the command status through; an unfinished run stays on its (pushed) WIP branch', async () => {
    const fx = await makeUserRepoWithRemote();
    const runDir = join(await makeTempDir('exec-runs'), 'exp', '2026-03-02T10-00-00-000Z');
    const p = exec(fx.work, runDir, ['--rows', '7', '--delay-ms', '10', '--no-summary', '--exit-code', '7']);
    expect(await p.exited).toBe(7);
    expect(p.stderr()).toMatch(/run did not finish/);
    const list = JSON.parse((await runCli(['wip', 'list', '--json', '--dir', fx.work], { env: ENV })).stdout) as {
      branches: { rows: number; where: string }[];
    };
    expect(list.branches).toEqual([expect.objectContaining({ rows: 7, where: 'in-sync' })]);
    expect(await git(fx.work, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/results'])).toBe('');
  });

  it('a command that cannot start is a usage error (exit 2)', async () => {
    const fx = await makeUserRepoWithRemote();
    const res = await runCli(['exec', '--', 'definitely-not-a-command-xyz'], { cwd: fx.work });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/command not found: definitely-not-a-command-xyz/);
    expect((await runCli(['exec'], { cwd: fx.work })).code).toBe(2);
  });

  it('forwards SIGTERM to the command, flushes a checkpoint, and exits with the command status', async () => {
    const fx = await makeUserRepoWithRemote();
    const base = await makeTempDir('exec-runs');
    const runDir = join(base, 'exp', '2026-03-03T10-00-00-000Z');
    const p = exec(fx.work, runDir, ['--rows', '400', '--delay-ms', '30', '--trap-term', '--pid-file', `${runDir}.pid`]);
    const writerPid = Number(await waitFor('writer pid', () => (existsSync(`${runDir}.pid`) ? readFileSync(`${runDir}.pid`, 'utf8') : ''), 20_000));
    pids.push(writerPid);
    await waitFor('a first checkpoint', () => /checkpoint run=/.test(p.stderr()), 20_000);
    p.kill('SIGTERM');
    expect(await p.exited).toBe(143);
    expect(existsSync(join(base, 'exp', '2026-03-03T10-00-00-000Z.term-received'))).toBe(true);
    expect(p.stderr()).toMatch(/forwarding signal to the command signal=SIGTERM/);
    // Every complete row the command wrote is in the (pushed) WIP branch.
    const onDisk = testIds(readFileSync(join(runDir, 'index.jsonl'), 'utf8').replace(/[^\n]*$/, ''));
    const list = JSON.parse((await runCli(['wip', 'list', '--json', '--dir', fx.work], { env: ENV })).stdout) as {
      branches: { rows: number; where: string }[];
    };
    expect(list.branches[0]).toMatchObject({ rows: onDisk.length, where: 'in-sync' });
  });

  it('finds the run under --root when --out is not given', async () => {
    const fx = await makeUserRepoWithRemote();
    const root = join(fx.work, '.agentv', 'results');
    const runDir = join(root, 'found', '2026-03-04T10-00-00-000Z');
    const p = startCli(['exec', '--interval', '0.2', '--no-push', '--', process.execPath, WRITER, runDir, '--rows', '12', '--delay-ms', '30'], {
      cwd: fx.work,
      env: ENV,
    });
    started.push(p);
    expect(await p.exited).toBe(0);
    expect(p.stderr()).toMatch(/checkpoint run=found\/2026-03-04T10-00-00-000Z/);
    expect(p.stderr()).toMatch(/published run=2026-03-04T10-00-00-000Z/);
    // Not pushed: the local WIP branch stays until the run reaches the remote.
    expect(await publishedIds(join(fx.work, '.git'), '2026-03-04T10-00-00-000Z')).toHaveLength(12);
  });
});

describe('the remote down for the whole run', () => {
  it('exec keeps everything locally and queues it; `daemon --once` delivers it when the remote is back', async () => {
    const fx = await makeUserRepoWithRemote();
    const port = await freePort();
    await git(fx.work, ['remote', 'set-url', 'origin', `git://127.0.0.1:${port}/remote.git`]); // nothing listens there yet
    const runDir = join(await makeTempDir('exec-runs'), 'exp', '2026-03-07T10-00-00-000Z');
    const p = exec(fx.work, runDir, ['--rows', '15', '--delay-ms', '20']);
    expect(await p.exited).toBe(0); // the command's status; the run is safe locally
    expect(p.stderr()).toMatch(/WIP push did not land/);
    expect(p.stderr()).toMatch(/push did not land; queued in the outbox/);
    const status = JSON.parse((await runCli(['status', '--json', '--dir', fx.work])).stdout) as {
      pending: boolean;
      extra: { outbox: { queued: { kind: string }[] }; wip: { branches: { rows: number }[] } };
    };
    expect(status.pending).toBe(true);
    expect(status.extra.outbox.queued.map((q) => q.kind).sort()).toEqual(['finalize-wip', 'push-results']);
    // The finished run is committed on the local results branch; its WIP branch waits for the push.
    expect(status.extra.wip.branches[0]?.rows).toBeGreaterThan(0);
    expect(await publishedIds(join(fx.work, '.git'), '2026-03-07T10-00-00-000Z')).toHaveLength(15);

    const gd = await restartableGitDaemon(fx.root, port);
    try {
      const once = await runCli(['daemon', '--once', '--push', '--dir', fx.work], { env: ENV });
      expect(once.code).toBe(0);
      expect(await publishedIds(fx.remote, '2026-03-07T10-00-00-000Z')).toHaveLength(15);
      expect(await git(fx.work, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
      expect(await git(fx.remote, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
    } finally {
      await gd.stop();
    }
  });
});

describe('the crash story', () => {
  it('SIGKILL mid-run, recover on a second clone, resume, publish: every row exactly once', async () => {
    const fx = await makeUserRepoWithRemote();
    const base = await makeTempDir('exec-runs');
    const runDir = join(base, 'nightly', '2026-03-05T10-00-00-000Z');
    const p = exec(fx.work, runDir, ['--rows', '60', '--delay-ms', '40', '--sidecars', '--pid-file', `${runDir}.pid`]);
    const writerPid = Number(await waitFor('writer pid', () => (existsSync(`${runDir}.pid`) ? readFileSync(`${runDir}.pid`, 'utf8') : ''), 20_000));
    pids.push(writerPid);
    // Wait for a checkpoint with some rows on the remote, then kill -9 exec and its command.
    await waitFor(
      'a pushed checkpoint',
      async () => /checkpoint=2 /.test(p.stderr()) && (await git(fx.remote, ['for-each-ref', 'refs/heads/agentv/wip'])) !== '',
      30_000,
    );
    p.kill('SIGKILL');
    killPid(writerPid);
    expect(await p.exited).toBe(137);
    // A checkpoint push the kill left running lands (or aborts) on its own: wait for it, or it could
    // put machine A's WIP branch back on the remote after machine B has published and removed it.
    await waitFor("the killed exec's git processes to end", () => gitsRunningIn([fx.work, fx.remote]).length === 0, 30_000, 20);
    expect(await git(fx.work, ['fsck', '--no-dangling'])).toBe('');

    // Machine B.
    const bDir = join(await makeTempDir('machine-b'), 'clone');
    await git(fx.root, ['clone', '-q', fx.remote, bDir]);
    const envB = { AGENTV_RESULTS_HOST: 'hostb' };
    const rec = await runCli(['wip', 'recover', 'nightly/2026-03-05T10-00-00-000Z', '--json', '--dir', bDir], { env: envB });
    expect(rec.code).toBe(0);
    const recovered = JSON.parse(rec.stdout) as { out: string; rows: number; branch: string };
    expect(recovered.rows).toBeGreaterThan(0);
    // Every row of the last pushed checkpoint came back, in order, once.
    const ids = testIds(readFileSync(join(recovered.out, 'index.jsonl'), 'utf8'));
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => `t-${String(i).padStart(4, '0')}`));

    // Resume under exec on machine B: writes only the missing rows, then publishes.
    const resume = startCli(
      [
        'exec',
        '--out',
        recovered.out,
        '--interval',
        '0.2',
        '--push',
        '--',
        process.execPath,
        WRITER,
        recovered.out,
        '--rows',
        '60',
        '--delay-ms',
        '5',
        '--sidecars',
        '--resume',
      ],
      { cwd: bDir, env: envB },
    );
    started.push(resume);
    expect(await resume.exited).toBe(0);
    expect(resume.stderr()).toMatch(/published run=2026-03-05T10-00-00-000Z/);
    const published = await publishedIds(fx.remote, '2026-03-05T10-00-00-000Z');
    expect(published).toHaveLength(60);
    expect(new Set(published).size).toBe(60);
    // The WIP branch went away everywhere once the publish was confirmed on the remote.
    expect(await git(fx.remote, ['for-each-ref', 'refs/heads/agentv/wip'])).toBe('');
  });
});

describe('wip checkpoint --watch', () => {
  it('checkpoints while the run grows and flushes on SIGINT before exiting 130', async () => {
    const fx = await makeUserRepoWithRemote();
    const runDir = join(await makeTempDir('watch-runs'), 'exp', '2026-03-06T10-00-00-000Z');
    const w = startProcess(process.execPath, [WRITER, runDir, '--rows', '400', '--delay-ms', '20', '--no-summary', '--pid-file', `${runDir}.pid`]);
    started.push(w);
    await waitFor('the run to start', () => existsSync(join(runDir, 'index.jsonl')), 20_000);
    const p = startCli(['wip', 'checkpoint', runDir, '--watch', '--interval', '0.2', '--every-rows', '5', '--no-push', '--dir', fx.work], {
      cwd: fx.work,
      env: ENV,
    });
    started.push(p);
    await waitFor('two checkpoints', () => (p.stdout().match(/checkpoint \d+ of/g) ?? []).length >= 2, 20_000);
    // Stop the writer first so the flush has a fixed target, then interrupt the watcher.
    await w.stop(2_000);
    p.kill('SIGINT');
    expect(await p.exited).toBe(130);
    const complete = testIds(readFileSync(join(runDir, 'index.jsonl'), 'utf8').replace(/[^\n]*$/, ''));
    const list = JSON.parse((await runCli(['wip', 'list', '--json', '--no-fetch', '--dir', fx.work], { env: ENV })).stdout) as { branches: { rows: number }[] };
    expect(list.branches[0]?.rows).toBe(complete.length);
  });
});
