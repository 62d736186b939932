/**
 * Issue 37, never lose data on a depth-1 clone: two CI jobs (depth-1 clones, as actions/checkout
 * makes them) each hold a shard of one run AgentV wrote, and publish it with `publish --push`.
 * A depth-1 clone commits on the team's tip (it cannot find a merge base), so the second publish
 * meets the first one's rows in the run's directory: it must keep them (exactly once each) and
 * recompute the run's summary over the union, as a merge would, so the real client's `results
 * validate` and our `validate` accept the run. The 5.x layout (AgentV's `<run_id>/` workspace).
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, projectWithRemote, runAgentV } from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';

const BRANCH = 'agentv/results/v1';

describeWithAgentV('shards of one AgentV run published from two depth-1 clones', () => {
  isolateGitForSuite();

  it('the remote holds every row exactly once, the summary is AgentV’s own of the union, and both validates accept it', async () => {
    const { project, remote } = await projectWithRemote(false);
    const run = await agentvEval(project, { experiment: 'demo' });
    const runId = run.split('/').pop()!;
    const lines = (await readFile(join(run, '.internal', 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(lines).toHaveLength(6);
    // A second commit on main, so a depth-1 clone has a boundary (is shallow), as a CI checkout of a real history.
    await git(project, ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'second']);
    await git(project, ['push', '-q', 'origin', 'main']);

    // Two CI jobs: depth-1 clones of main, no results branch; each holds a shard (two rows in common).
    const base = await makeTempDir('agentv-shallow-shards');
    const shard = async (name: string, idx: number[]): Promise<{ clone: string; dir: string }> => {
      const clone = join(base, name);
      await git(base, ['clone', '-q', '--depth', '1', '-b', 'main', `file://${remote}`, clone]);
      const dir = join(base, `${name}-run`, runId);
      await cp(run, dir, { recursive: true });
      await writeFile(join(dir, '.internal', 'index.jsonl'), `${idx.map((i) => lines[i]).join('\n')}\n`);
      const agg = await runAgentV(['eval', 'aggregate', dir], { cwd: project });
      expect(agg.code, agg.stdout + agg.stderr).toBe(0);
      return { clone, dir };
    };
    const a = await shard('a', [0, 1, 2, 3]);
    const b = await shard('b', [0, 1, 4, 5]);
    for (const s of [a, b]) {
      const r = await cli(['publish', s.dir, '--push', '--json'], s.clone);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { push: { landed: boolean } }).push.landed).toBe(true);
    }
    expect(await git(b.clone, ['rev-parse', '--is-shallow-repository'])).toBe('true');

    const viewer = join(base, 'viewer');
    await git(base, ['clone', '-q', '-b', BRANCH, remote, viewer]);
    const merged = join(viewer, runId);
    const onRemote = (await readFile(join(merged, '.internal', 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect(onRemote.sort()).toEqual([...lines].sort());
    // Every row's own files are there (the first shard's rows kept theirs).
    for (const l of onRemote) {
      const dir = (JSON.parse(l) as { result_dir?: string }).result_dir;
      if (dir) expect(await git(viewer, ['ls-tree', '--name-only', `HEAD:${runId}/${dir}`])).not.toBe('');
    }

    const ours = await readFile(join(merged, 'summary.json'), 'utf8');
    const judged = join(await makeTempDir('agentv-shallow-shards-judge'), runId);
    await cp(merged, judged, { recursive: true });
    const agg = await runAgentV(['eval', 'aggregate', judged], { cwd: project });
    expect(agg.code, agg.stdout + agg.stderr).toBe(0);
    expect(ours).toBe(await readFile(join(judged, 'summary.json'), 'utf8'));

    const validate = await runAgentV(['results', 'validate', merged], { cwd: project });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    const ourValidate = await cli(['validate', merged], project);
    expect(ourValidate.code, ourValidate.stdout + ourValidate.stderr).toBe(0);

    const listed = await cli(['list', '--fetch', '--json'], a.clone);
    expect(listed.code, listed.stderr).toBe(0);
    const row = (JSON.parse(listed.stdout) as { runs: { run_id: string; total: number }[] }).runs.find((r) => r.run_id === runId);
    expect(row?.total).toBe((JSON.parse(ours) as { counts: { total_tests: number } }).counts.total_tests);
  }, 240_000);
});
