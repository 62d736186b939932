/**
 * Issue 37, judged with runs AgentV wrote itself: AgentV 5.x's and AgentV 4.42.4's own `auto_push`
 * each publish one run onto one remote served by a real `git daemon` on 127.0.0.1 (one writer at a
 * time: AgentV 5.x parks a push that races on an `agentv/results-sync/*` branch, which is not what
 * this test is about). The machine that wrote last tags and reviews them with our CLI; then a
 * depth-1 clone of `main`, as actions/checkout makes it (no results branch, no tracking ref), runs
 * each verb with `--fetch` and must answer what the writer answers.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import {
  agentvEval,
  agentvStableEval,
  configureResults,
  describeWithAgentV,
  describeWithAgentVStable,
  makeSampleProject,
  makeStableSampleProject,
} from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir, startGitDaemon, subcommand, traceGitProcesses, type GitDaemon } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';

const BRANCH = 'agentv/results/v1';

/** A verb's --json answer; gate and compare exit 1 on a regression, which is an answer too. */
async function json<T = Record<string, unknown>>(args: string[], dir: string): Promise<T> {
  const r = await cli([...args, '--json'], dir);
  expect(r.code === 0 || (r.code === 1 && /^(gate|compare)$/.test(args[0]!)), `${args.join(' ')} in ${dir}: exit ${r.code}: ${r.stderr}`).toBe(true);
  return JSON.parse(r.stdout) as T;
}

/** An answer without the scratch directories a read materializes a published run into. */
const sameAnswer = (d: unknown): unknown => JSON.parse(JSON.stringify(d).replace(/\/tmp\/agentv-[\w-]+?-[A-Za-z0-9]{6}\//g, '<scratch>/'));

/** Every file under a directory with its content, by relative path. */
async function treeOf(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    out[path.slice(dir.length + 1)] = await readFile(path, 'utf8');
  }
  return out;
}

describeWithAgentV('runs written by AgentV auto_push (5.x and 4.42.4), read from a depth-1 clone', () => {
  describeWithAgentVStable('with the stable client beside it', () => {
    isolateGitForSuite();
    let daemon: GitDaemon | null = null;
    afterAll(async () => {
      await daemon?.stop();
    });

    it('every verb answers on a depth-1 clone with --fetch what it answers on the machine that wrote the runs', async () => {
      const base = await makeTempDir('agentv-autopush');
      await git(base, ['init', '-q', '--bare', '-b', 'main', 'team.git']);
      await git(join(base, 'team.git'), ['config', 'receive.denyNonFastForwards', 'true']);
      daemon = await startGitDaemon(base);
      const url = daemon.url('team.git');

      // AgentV 5.x publishes its run itself (runs at the branch root).
      const next = await makeSampleProject(await makeTempDir('agentv-next'));
      await git(next, ['remote', 'add', 'origin', url]);
      await git(next, ['push', '-q', 'origin', 'main']);
      await configureResults(next, true);
      const nextRun = (await agentvEval(next, { experiment: 'nightly' })).split('/').pop()!;

      // Then, not racing it, AgentV 4.42.4 on another machine (runs/<experiment>/<timestamp>/).
      const stable = await makeStableSampleProject(await makeTempDir('agentv-stable'));
      await git(stable, ['remote', 'add', 'origin', url]);
      await git(stable, ['fetch', '-q', 'origin', 'main']);
      await writeFile(join(stable, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n  auto_push: true\n`);
      const stableDir = await agentvStableEval(stable, { experiment: 'nightly' });
      const bare = join(base, 'team.git');
      const onRemote = await git(bare, ['ls-tree', '-d', '--name-only', BRANCH]);
      expect(onRemote.split('\n'), 'both auto_push runs on the remote').toContain(nextRun);
      expect(await git(bare, ['ls-tree', '-d', '--name-only', BRANCH, 'runs/nightly/'])).toContain(stableDir.split('/').pop()!);

      // The writer (the 5.x machine) lists both; its ids for the two AgentV runs.
      const writer = next;
      const listed = await json<{ runs: { run_id: string; writer?: string }[] }>(['list', '--fetch'], writer);
      const ids = listed.runs.map((r) => r.run_id);
      expect(ids).toHaveLength(2);
      expect(ids).toContain(nextRun);
      const stableRun = ids.find((id) => id !== nextRun)!;
      // Our tag and review note on the AgentV runs, pushed from the writer.
      expect((await cli(['tag', stableRun, '+baseline'], writer)).code).toBe(0);
      const index = await git(writer, ['show', `refs/remotes/origin/${BRANCH}:${nextRun}/.internal/index.jsonl`]);
      const testId = (JSON.parse(index.split('\n')[0]!) as { test_id: string }).test_id;
      expect((await cli(['feedback', nextRun, testId, 'flaky agent again', '--reviewer', 'ana'], writer)).code).toBe(0);

      // CI: a depth-1 clone of main, no results branch and no tracking ref.
      const ci = join(await makeTempDir('agentv-ci'), 'ci');
      await git(base, ['clone', '-q', '--depth', '1', url, ci]);
      expect(await git(ci, ['for-each-ref', '--format=%(refname)', 'refs/remotes/origin/agentv/'])).toBe('');

      const verbs: { name: string; args: string[]; pick: (out: any) => unknown }[] = [
        { name: 'tag', args: ['tag', stableRun], pick: sameAnswer },
        { name: 'feedback', args: ['feedback', nextRun], pick: sameAnswer },
        {
          name: 'list',
          args: ['list'],
          pick: (l: { runs: { run_id: string; total: number; passed: number; tags?: string[] }[] }) =>
            l.runs.map((r) => ({ run_id: r.run_id, total: r.total, passed: r.passed, tags: r.tags ?? [] })),
        },
        { name: 'summary (5.x run)', args: ['summary', nextRun], pick: sameAnswer },
        { name: 'summary (4.42 run)', args: ['summary', stableRun], pick: sameAnswer },
        // Which tip a read came from differs by design (the writer has a local branch, CI only the tracking ref).
        { name: 'trend --published', args: ['trend', '--published'], pick: ({ read: _read, ...rest }) => sameAnswer(rest) },
        { name: 'gate @baseline', args: ['gate', '@baseline', nextRun], pick: sameAnswer },
        { name: 'compare', args: ['compare', stableRun, nextRun], pick: sameAnswer },
        { name: 'status layout', args: ['status'], pick: (s) => s.layout },
      ];
      for (const v of verbs) {
        const expected = v.pick(await json(v.args, writer));
        expect(expected, v.name).toBeTruthy();
        expect(v.pick(await json([...v.args, '--fetch'], ci)), `${v.name} --fetch on a depth-1 clone`).toEqual(expected);
      }
      const dry = ['archive', '--keep-runs', '1', '--keep-days', '0', '--max-listing-bytes', '0', '--dry-run'];
      const pick = (r: { archived: unknown; live: unknown }) => ({ archived: r.archived, live: r.live });
      expect(pick(await json(dry, ci))).toEqual(pick(await json(dry, writer)));

      // A CI gate on its own fresh depth-1 clone asks the remote once (one depth-1 fetch for the
      // candidate and the baseline both), and answers as the writer does.
      const ci2 = join(await makeTempDir('agentv-ci'), 'ci');
      await git(base, ['clone', '-q', '--depth', '1', url, ci2]);
      const gate = ['gate', '@baseline', nextRun];
      const traced = await traceGitProcesses(() => json([...gate, '--fetch'], ci2));
      const fetches = traced.argvs.filter((a) => subcommand(a) === 'fetch');
      expect(fetches, JSON.stringify(fetches)).toHaveLength(1);
      expect(fetches[0]).toContain('--depth=1');
      expect(sameAnswer(traced.result)).toEqual(sameAnswer(await json(gate, writer)));
      // pull of one run: the same files, byte for byte.
      const pulledHere = join(await makeTempDir('agentv-pulled'), 'run');
      expect((await cli(['pull', nextRun, '--out', pulledHere], writer)).code).toBe(0);
      const pulledThere = join(await makeTempDir('agentv-pulled'), 'run');
      expect((await cli(['pull', nextRun, '--fetch', '--out', pulledThere], ci)).code).toBe(0);
      expect(await treeOf(pulledThere)).toEqual(await treeOf(pulledHere));
      // Not answers that agree by being empty.
      expect((await json<{ tags: string[] }>(['tag', stableRun], ci)).tags).toEqual(['baseline']);
      const notes = await json<{ notes: { test_id: string; reviewer: string; feedback: string }[] }>(['feedback', nextRun], ci);
      expect(notes.notes).toMatchObject([{ test_id: testId, reviewer: 'ana', feedback: 'flaky agent again' }]);
      expect((await json<{ layout: { runs: { next: number; stable: number } } }>(['status'], ci)).layout.runs).toMatchObject({ next: 1, stable: 1 });
      // The CI clone fetched the tip, not the history: it is still shallow and holds one commit of the results branch.
      expect(await git(ci, ['rev-parse', '--is-shallow-repository'])).toBe('true');
      expect(await git(ci, ['rev-list', '--count', `refs/remotes/origin/${BRANCH}`])).toBe('1');
    }, 180_000);
  });
});
