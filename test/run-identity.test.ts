/**
 * One identity for a run across AgentV's two branch layouts (issue 50, items 1 and 2), with the
 * real AgentV 4.42.4 client. AgentV 4.42 commits every finished run onto its LOCAL results branch
 * (`runs/<experiment>/<timestamp>/`) even with `auto_push` off; our daemon on that machine then
 * published the same run a second time at `<timestamp>/` (5.x's layout, the branch's majority).
 *
 * One 4.42 eval is shared by the file:
 *   - our publish of that run (what the daemon does) on a branch that holds 5.x-layout runs too
 *     lands in 4.42's layout, onto the copy 4.42 committed: no second copy, `list` counts it once;
 *   - with `results.layout: next` set, a machine that has not seen 4.42's copy yet writes it at the
 *     root (the old behaviour, the way a duplicate reached real branches); once both are on the
 *     remote, `list` still counts the run once, `status` names the duplicate, and `sync` removes the
 *     root copy by an ordinary commit (fast-forward push, never a force) and says so.
 */
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chooseCopy, rowKeys } from '../src/sync/repair-duplicates.js';
import { agentvStableEval, describeWithAgentVStable, makeStableSampleProject } from './helpers/agentv-client.js';
import { runCli } from './helpers/cli.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, publishRun } from './sync-helpers.js';

const BRANCH = 'agentv/results/v1';

async function remoteDirs(bare: string): Promise<string[]> {
  return (await git(bare, ['ls-tree', '-d', '--name-only', BRANCH]))
    .split('\n')
    .filter((p) => p !== '' && p !== 'runs' && p !== 'metadata' && !p.startsWith('.'));
}

async function stableDirs(bare: string, experiment: string): Promise<string[]> {
  return (await git(bare, ['ls-tree', '-d', '--name-only', `${BRANCH}:runs/${experiment}`]).catch(() => '')).split('\n').filter(Boolean);
}

describeWithAgentVStable('one run, one copy, whichever AgentV layout holds it (real AgentV 4.42.4)', () => {
  isolateGitForSuite();
  let bare: string;
  let v4: string;
  let run4: string;
  let ts: string;
  let q: string;
  const EXP = 'exp4';

  beforeAll(async () => {
    bare = await makeRemote();
    // Machine Q (ours) publishes a run at the root first: the remote holds 5.x-layout runs.
    q = await makeClone(bare, 'q');
    const ours = await publishRun(q, { experiment: 'ours', rows: 2 });
    expect(ours.push).toMatchObject({ landed: true });
    expect(ours.location.path.startsWith('runs/')).toBe(false);
    // Machine P: AgentV 4.42 with auto_push off, on a local results branch that started from the remote's.
    v4 = await makeStableSampleProject(await makeTempDir('identity-v4'));
    await git(v4, ['remote', 'add', 'origin', bare]);
    await git(v4, ['fetch', '-q', 'origin']);
    await git(v4, ['branch', BRANCH, `origin/${BRANCH}`]);
    await appendFile(join(v4, '.agentv', 'config.yaml'), `\nresults:\n  repo_path: .\n  branch: ${BRANCH}\n  auto_push: false\n`);
    run4 = await agentvStableEval(v4, { experiment: EXP });
    ts = basename(run4);
  }, 180_000);

  it("AgentV 4.42 with auto_push off commits its run locally; our publish of it lands on that copy in 4.42's layout, not a second one at the root", async () => {
    // The reproduction's first half: 4.42 committed the run on its local branch, nothing pushed.
    expect(await git(v4, ['ls-tree', '-d', '--name-only', `${BRANCH}:runs/${EXP}`])).toContain(ts);
    // The branch holds both layouts now: the run's writer decides (4.42's layout), and it is already there.
    const pub = await runCli(['publish', run4, '--push', '--json'], { cwd: v4 });
    expect(pub.code, pub.stderr).toBe(0);
    const out = JSON.parse(pub.stdout) as { location: { path: string }; layout: { layout: string; reason: string }; push: { landed: boolean } };
    expect(out.location.path).toBe(`runs/${EXP}/${ts}`);
    expect(out.layout.layout).toBe('stable');
    expect(out.push.landed).toBe(true);
    // On the remote: 4.42's copy once, no root copy.
    expect(await stableDirs(bare, EXP)).toEqual([ts]);
    expect(await remoteDirs(bare)).not.toContain(ts);
    // list counts it once (and our own run once).
    const list = await runCli(['list', '--json'], { cwd: v4 });
    expect(list.code, list.stderr).toBe(0);
    const runs = (JSON.parse(list.stdout) as { runs: { run_id: string; experiment: string }[] }).runs;
    expect(runs.filter((r) => r.experiment === EXP)).toHaveLength(1);
    expect(runs).toHaveLength(2);
  });

  it('even with results.layout set, a run the branch holds in the other layout is merged there, not added again', async () => {
    const config = join(v4, '.agentv', 'config.yaml');
    await writeFile(config, (await readFile(config, 'utf8')).replace('  auto_push: false\n', '  auto_push: false\n  layout: next\n'));
    const pub = await runCli(['publish', run4, '--json'], { cwd: v4 });
    expect(pub.code, pub.stderr).toBe(0);
    const out = JSON.parse(pub.stdout) as { status: string; location: { path: string }; layout: { layout: string; reason: string } };
    expect(out.location.path).toBe(`runs/${EXP}/${ts}`);
    expect(out.layout.reason).toMatch(/already holds this run/);
    expect(out.status).toBe('already-published');
  });

  it('a run held twice on the remote is listed once, named by status, and repaired by sync with an ordinary commit', async () => {
    // Q has not fetched since its own publish and is told to write the 5.x layout: its publish of
    // the 4.42 run goes to the root (what our daemon did before), and its push merges beside 4.42's copy.
    await mkdir(join(q, '.agentv'), { recursive: true });
    await writeFile(join(q, '.agentv', 'config.yaml'), 'results:\n  layout: next\n');
    const dup = await runCli(['publish', run4, '--push', '--json'], { cwd: q });
    expect(dup.code, dup.stderr).toBe(0);
    expect((JSON.parse(dup.stdout) as { location: { path: string } }).location.path).toBe(ts);
    expect(await remoteDirs(bare)).toContain(ts);
    expect(await stableDirs(bare, EXP)).toEqual([ts]);
    const remoteBefore = await git(bare, ['rev-parse', BRANCH]);

    const list = await runCli(['list', '--json'], { cwd: q });
    expect((JSON.parse(list.stdout) as { runs: { experiment: string }[] }).runs.filter((r) => r.experiment === EXP)).toHaveLength(1);
    const status = await runCli(['status', '--json'], { cwd: q });
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { duplicates: unknown[] }).duplicates).toEqual([
      { experiment: EXP, id: ts, root_path: ts, stable_path: `runs/${EXP}/${ts}` },
    ]);
    const statusText = await runCli(['status'], { cwd: q });
    expect(statusText.stdout).toContain(`run ${EXP} ${ts} is held twice`);

    const sync = await runCli(['sync'], { cwd: q });
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain(`run ${EXP} ${ts} was held twice: removed ${ts}, kept runs/${EXP}/${ts}`);
    // The root copy is gone from the remote, 4.42's stays; the remote only moved forward.
    expect(await remoteDirs(bare)).not.toContain(ts);
    expect(await stableDirs(bare, EXP)).toEqual([ts]);
    await git(bare, ['merge-base', '--is-ancestor', remoteBefore, BRANCH]);
    const catalog = await git(bare, ['grep', '-h', '-e', ts, BRANCH, '--', '.indexes']).catch(() => '');
    expect(catalog).toBe('');
    expect(await git(bare, ['fsck', '--full', '--no-progress', '--no-dangling'])).toBe('');
    const after = await runCli(['status', '--json'], { cwd: q });
    expect((JSON.parse(after.stdout) as { duplicates: unknown[] }).duplicates).toEqual([]);
    // A second sync has nothing to repair.
    const again = await runCli(['sync', '--json'], { cwd: q });
    expect((JSON.parse(again.stdout) as { duplicates?: unknown }).duplicates).toBeUndefined();
  });
});

describe('the duplicate repair never removes a copy through rows it cannot tell apart', () => {
  const dup = { experiment: 'demo', id: '2026-03-14T10-00-00-000Z', rootPath: '2026-03-14T10-00-00-000Z', stablePath: 'runs/demo/2026-03-14T10-00-00-000Z' };
  it('keeps both copies when rows name no test, or an index is unreadable', () => {
    const noIds = '{"score":1}\n{"score":0}\n';
    expect(chooseCopy(dup, { agentv5: false, rows: rowKeys(noIds) }, { rows: rowKeys('{"score":0.5}\n') }).removed).toBeNull();
    expect(chooseCopy(dup, { agentv5: false, rows: rowKeys(undefined) }, { rows: rowKeys('{"test_id":"a"}\n') }).removed).toBeNull();
    expect(chooseCopy(dup, { agentv5: false, rows: rowKeys('{"test_id":"a"}\n') }, { rows: rowKeys(undefined) }).removed).toBeNull();
  });
  it('still removes a copy whose named rows the other holds', () => {
    const r = chooseCopy(
      dup,
      { agentv5: false, rows: rowKeys('{"test_id":"a","target":"t"}\n') },
      { rows: rowKeys('{"test_id":"a","target":"t"}\n{"test_id":"b","target":"t"}\n') },
    );
    expect(r.removed).toBe(dup.rootPath);
  });
});
