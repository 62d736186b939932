/**
 * Two machines publish rows of the same AgentV 5 run (AgentV's own layout: `summary.json` beside
 * `.internal/index.jsonl`); the second one's push is rejected, and `sync` merges the rows by
 * identity. The run's summary.json on the merged branch must be AgentV's own summary of the
 * merged rows: the real client recomputes it (`agentv eval aggregate`) from a checkout of the
 * merged run and the two are compared byte for byte; AgentV's `results validate` accepts the run,
 * and our `list` counts every test.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, projectWithRemote, runAgentV } from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';

const BRANCH = 'agentv/results/v1';

describeWithAgentV("a merge recomputes AgentV's own summary.json of an AgentV-layout run", () => {
  isolateGitForSuite();

  it('rows from two machines merge, and summary.json is byte for byte what `agentv eval aggregate` makes of the merged run', async () => {
    const { project, remote } = await projectWithRemote(false);
    const run = await agentvEval(project, { experiment: 'demo' });
    const runId = run.split('/').pop()!;
    const lines = (await readFile(join(run, '.internal', 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(lines).toHaveLength(6);

    // Machine B: a clone of the project holding the same run.
    const other = join(await makeTempDir('agentv-summary-merge'), 'b');
    await git(project, ['clone', '-q', remote, other]);
    await cp(join(project, '.agentv'), join(other, '.agentv'), { recursive: true });
    const runB = join(other, '.agentv', 'results', runId);

    // Each machine holds some of the rows (two in common), its summary.json AgentV's own for them.
    const keep = async (dir: string, idx: number[]) => {
      await writeFile(join(dir, '.internal', 'index.jsonl'), `${idx.map((i) => lines[i]).join('\n')}\n`);
      const r = await runAgentV(['eval', 'aggregate', dir], { cwd: project });
      expect(r.code, r.stdout + r.stderr).toBe(0);
    };
    await keep(run, [0, 1, 2, 3]);
    // AgentV's eval committed the whole run (6 rows) to A's local results branch; a publish never
    // drops rows the branch has (append-only-rows.ts), so A would publish all 6 and there would be
    // nothing to merge. Machine A holds only its shard: the branch AgentV wrote is set aside.
    await git(project, ['update-ref', '-d', `refs/heads/${BRANCH}`]);
    await keep(runB, [0, 1, 4, 5]);

    const a = await cli(['publish', run, '--push'], project);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const b = await cli(['publish', runB, '--push'], other);
    expect(b.code, b.stdout + b.stderr).toBe(0);
    expect(`${b.stdout}${b.stderr}`).not.toMatch(/conflict/i);
    expect(await git(remote, ['for-each-ref', 'refs/heads/agentv/results-sync'])).toBe('');

    // A checkout of the merged run, and AgentV's own summary of it.
    const viewer = join(await makeTempDir('agentv-summary-merge-view'), 'v');
    await git(project, ['clone', '-q', '-b', BRANCH, remote, viewer]);
    const merged = join(viewer, runId);
    expect((await readFile(join(merged, '.internal', 'index.jsonl'), 'utf8')).split('\n').filter(Boolean).sort()).toEqual([...lines].sort());
    const ours = await readFile(join(merged, 'summary.json'), 'utf8');
    const judged = join(await makeTempDir('agentv-summary-merge-judge'), runId);
    await cp(merged, judged, { recursive: true });
    const agg = await runAgentV(['eval', 'aggregate', judged], { cwd: project });
    expect(agg.code, agg.stdout + agg.stderr).toBe(0);
    const theirs = await readFile(join(judged, 'summary.json'), 'utf8');
    expect(ours).toBe(theirs);
    expect((JSON.parse(ours) as { counts: { total_tests: number } }).counts.total_tests).toBe(6);

    const validate = await runAgentV(['results', 'validate', merged], { cwd: project });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);

    const listed = await cli(['list', '--fetch', '--json'], project);
    expect(listed.code, listed.stderr).toBe(0);
    const row = (JSON.parse(listed.stdout) as { runs: { run_id: string; total: number; passed: number }[] }).runs.find((r) => r.run_id === runId);
    const counts = (JSON.parse(ours) as { counts: { total_tests: number; passed_tests: number } }).counts;
    expect([row?.total, row?.passed]).toEqual([counts.total_tests, counts.passed_tests]);
  }, 240_000);
});
