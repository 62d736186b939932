/**
 * Issue 37, never lose data on a depth-1 clone: two CI jobs (depth-1 clones, as actions/checkout
 * makes them) each hold a shard of one run AgentV wrote, and publish it with `publish --push`.
 * A depth-1 clone commits on the team's tip (it cannot find a merge base), so the second publish
 * meets the first one's rows in the run's directory: it must keep them (exactly once each) and
 * recompute the run's summary over the union, as a merge would, so the real client's `results
 * validate` and our `validate` accept the run. Both layouts: 5.x (AgentV's `<run_id>/` workspace)
 * and 4.42 (`runs/<experiment>/<timestamp>/`).
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import {
  agentvEval,
  agentvStableEval,
  describeWithAgentV,
  describeWithAgentVStable,
  makeStableSampleProject,
  projectWithRemote,
  runAgentV,
  runAgentVStable,
} from '../helpers/agentv-client.js';
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

describeWithAgentVStable('shards of one AgentV 4.42 run published from two depth-1 clones', () => {
  isolateGitForSuite();

  it('the remote holds every row exactly once with its files, and both validates accept the run', async () => {
    const base = await makeTempDir('agentv-shallow-shards-stable');
    const remote = join(base, 'origin.git');
    await git(base, ['init', '-q', '--bare', remote]);
    const project = await makeStableSampleProject(join(base, 'team'));
    await git(project, ['remote', 'add', 'origin', remote]);
    await git(project, ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'second']);
    await git(project, ['push', '-q', 'origin', 'main']);
    const run = await agentvStableEval(project, { experiment: 'demo' });
    const rel = relative(project, run);
    const lines = (await readFile(join(run, 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const testOf = (l: string) => (JSON.parse(l) as { test_id: string }).test_id;
    expect(new Set(lines.map(testOf)).size).toBe(3);

    // Each CI job holds the rows of two of the three tests (one test in common), its own files for them.
    const [first, , third] = [...new Set(lines.map(testOf))].sort();
    const shard = async (name: string, without: string): Promise<string> => {
      const clone = join(base, name);
      await git(base, ['clone', '-q', '--depth', '1', '-b', 'main', `file://${remote}`, clone]);
      const dir = join(clone, rel);
      await cp(run, dir, { recursive: true });
      await writeFile(join(dir, 'index.jsonl'), `${lines.filter((l) => testOf(l) !== without).join('\n')}\n`);
      return clone;
    };
    const a = await shard('a', third!);
    const b = await shard('b', first!);
    for (const clone of [a, b]) {
      const r = await cli(['publish', rel, '--push', '--json'], clone);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { push: { landed: boolean }; layout: { layout: string } };
      expect([out.push.landed, out.layout.layout]).toEqual([true, 'stable']);
    }
    expect(await git(b, ['rev-parse', '--is-shallow-repository'])).toBe('true');

    const viewer = join(base, 'viewer');
    await git(base, ['clone', '-q', '-b', BRANCH, remote, viewer]);
    const onBranch = join(viewer, 'runs', 'demo', run.split('/').pop()!);
    const onRemote = (await readFile(join(onBranch, 'index.jsonl'), 'utf8')).split('\n').filter(Boolean);
    expect([...onRemote].sort()).toEqual([...lines].sort());
    for (const l of onRemote) {
      const grading = (JSON.parse(l) as { grading_path: string }).grading_path;
      expect(await readFile(join(onBranch, grading), 'utf8')).toBe(await readFile(join(run, grading), 'utf8'));
    }
    const validate = await runAgentVStable(['results', 'validate', onBranch], { cwd: project });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    const ourValidate = await cli(['validate', onBranch], project);
    expect(ourValidate.code, ourValidate.stdout + ourValidate.stderr).toBe(0);
  }, 240_000);
});
