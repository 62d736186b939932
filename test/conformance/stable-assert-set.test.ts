/**
 * An assert-set in AgentV 4.42's layout (issue 50 item 5), judged by the real 4.42.4 client: the
 * same suite — an assert-set holding an assert-set and a grader, beside a plain grader (six graders
 * in all) — run once by 4.42's own `eval` (`composite`, published by its `auto_push`) and once by
 * AgentV 5.x (`assert-set`), which we publish in 4.42's layout. Then, on one branch:
 *
 * - our index line carries the assert-set's members, with their scores, at every depth, as 4.42's
 *   own index does (the same six scores in the same tree);
 * - our grading.json holds the top-level graders, as 4.42's does;
 * - 4.42's Dashboard (run detail and test view) shows a score for as many graders of our run as of
 *   its own: the top-level ones. It reads graders from grading.json only, which 4.42's eval writes
 *   without members; whatever the index holds, its Dashboard cannot show a member's score
 *   (docs/agentv.md says so).
 *
 * Full-matrix tier: two AgentV evals and one 4.42 Dashboard.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  AGENTV_STABLE_BIN,
  agentvEval,
  agentvStableEval,
  describeWithAgentVStable,
  HAS_AGENTV,
  makeSampleProject,
  makeStableSampleProject,
  startAgentVServe,
  type AgentVServer,
} from '../helpers/agentv-client.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';

const BRANCH = 'agentv/results/v1';
const TEST_ID = 'nested-set';

/** 4.42's spelling: `composite` with an aggregator, members under `assertions`. */
const STABLE_SUITE = `name: sets
description: An assert-set inside an assert-set, beside a plain grader.
execution:
  targets: [steady-agent]
tests:
  - id: ${TEST_ID}
    criteria: nested assert-sets
    input: What is the answer?
    assertions:
      - name: outer
        type: composite
        aggregator:
          type: weighted_average
        assertions:
          - name: inner
            type: composite
            aggregator:
              type: weighted_average
            assertions:
              - name: has-42
                type: contains
                value: "42"
              - name: has-nope
                type: contains
                value: nope
          - name: has-hello
            type: contains
            value: Hello
      - name: plain
        type: contains
        value: "42"
`;

/** 5.x's spelling of the same suite: `assert-set`, members under `assert`. */
const NEXT_SUITE = `name: sets
description: An assert-set inside an assert-set, beside a plain grader.
providers:
  - steady-agent
prompts:
  - "{{ input }}"
tests:
  - id: ${TEST_ID}
    vars:
      input: What is the answer?
    assert:
      - name: outer
        type: assert-set
        assert:
          - name: inner
            type: assert-set
            assert:
              - name: has-42
                type: contains
                value: "42"
              - name: has-nope
                type: contains
                value: nope
          - name: has-hello
            type: contains
            value: Hello
      - name: plain
        type: contains
        value: "42"
`;

interface Grader {
  name?: string;
  type?: string;
  score?: unknown;
  scores?: Grader[];
  assertions?: { text: string }[];
}

/** Every grader of a tree as [depth, score], in order: the shape and the scores, whatever each line names a type. */
function tree(graders: Grader[] | undefined, depth = 0): [number, unknown][] {
  return (graders ?? []).flatMap((g) => [[depth, g.score] as [number, unknown], ...tree(g.scores, depth + 1)]);
}

/** How many graders, at any depth, carry a numeric score. */
function scored(graders: Grader[] | undefined): number {
  return tree(graders).filter(([, s]) => typeof s === 'number').length;
}

describeWithAgentVStable("an assert-set in 4.42's layout, ours beside 4.42's own", () => {
  isolateGitForSuite();
  let viewer = '';
  let own = { runId: '', path: '' };
  let ours = { runId: '', path: '' };
  let server: AgentVServer | null = null;
  const blob = async (rel: string) => git(viewer, ['cat-file', 'blob', `origin/${BRANCH}:${rel}`]);
  const indexLine = async (runPath: string) => JSON.parse((await blob(`${runPath}/index.jsonl`)).split('\n')[0]!) as { scores?: Grader[] };
  const grading = async (runPath: string) => JSON.parse(await blob(`${runPath}/sets/${TEST_ID}/grading.json`)) as { graders?: Grader[] };

  beforeAll(async () => {
    if (!HAS_AGENTV) throw new Error('this differential needs AgentV 5.x beside 4.42.4 (../shared/agentv-client)');
    const base = await makeTempDir('stable-assert-set');
    const origin = join(base, 'origin.git');
    await git(base, ['init', '-q', '--bare', origin]);

    // 4.42's own: its eval, published by its auto_push.
    const team = await makeStableSampleProject(join(base, 'team'));
    await writeFile(join(team, 'evals', 'demo.eval.yaml'), STABLE_SUITE);
    await git(team, ['remote', 'add', 'origin', origin]);
    await git(team, ['push', '-q', 'origin', 'main']);
    await writeFile(join(team, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n  auto_push: true\n`);
    const ts = (await agentvStableEval(team, { experiment: 'own' })).split('/').pop()!;
    own = { runId: `own::${ts}`, path: `runs/own/${ts}` };

    // Ours: AgentV 5.x's run of the same suite, published by us in 4.42's layout.
    const next = await makeSampleProject(join(base, 'next'));
    await writeFile(join(next, 'evals', 'demo.eval.yaml'), NEXT_SUITE);
    await git(next, ['remote', 'add', 'origin', origin]);
    const ws = await agentvEval(next, { experiment: 'ours' });
    const r = await cli(['publish', ws, '--push', '--json'], next, { env: { AGENTV_RESULTS_LAYOUT: 'stable' } });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { location: { path: string; run_id: string }; push: { landed: boolean } };
    expect(out.push.landed).toBe(true);
    ours = { runId: out.location.run_id, path: out.location.path };
    expect(ours.path).toMatch(/^runs\/ours\//);

    // 4.42's Dashboard over a fresh clone, its local results branch made from the remote's.
    viewer = join(base, 'viewer');
    await git(base, ['clone', '-q', origin, viewer]);
    await git(viewer, ['branch', '-q', BRANCH, `origin/${BRANCH}`]);
    await mkdir(join(viewer, '.agentv'), { recursive: true });
    await writeFile(join(viewer, '.agentv', 'config.yaml'), `results:\n  repo_path: .\n  branch: ${BRANCH}\n`);
    server = await startAgentVServe(viewer, [], { bin: AGENTV_STABLE_BIN, home: await makeTempDir('stable-assert-set-home') });
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("our index line carries the assert-set's members and their scores at every depth, as 4.42's own index does", async () => {
    const theirs = await indexLine(own.path);
    const mine = await indexLine(ours.path);
    // outer (0.75) > inner (0.5) > has-42 (1), has-nope (0); has-hello (1); plain (1): six graders.
    expect(tree(theirs.scores)).toEqual([
      [0, 0.75],
      [1, 0.5],
      [2, 1],
      [2, 0],
      [1, 1],
      [0, 1],
    ]);
    expect(tree(mine.scores)).toEqual(tree(theirs.scores));
    expect(scored(mine.scores)).toBe(6);
    // Each member keeps its own assertions, as 4.42 writes them.
    const member = (g: Grader[] | undefined) => g?.[0]?.scores?.[0]?.scores?.[1];
    expect(member(theirs.scores)?.assertions?.map((a) => a.text)).toEqual(['Output does not contain "nope"']);
    expect(member(mine.scores)?.assertions?.map((a) => a.text)).toEqual(['Output does not contain "nope"']);
  });

  it("our grading.json holds the top-level graders only, as 4.42's eval writes it", async () => {
    const theirs = await grading(own.path);
    const mine = await grading(ours.path);
    expect(tree(theirs.graders)).toEqual([
      [0, 0.75],
      [0, 1],
    ]);
    expect(tree(mine.graders)).toEqual(tree(theirs.graders));
  });

  it("4.42's Dashboard shows a score for as many graders of our run as of its own: the top level, 2 of 6", async () => {
    const url = server!.url;
    const counts: Record<string, { detail: number; test: number; inIndex: number }> = {};
    for (const [who, run] of [
      ['own', own],
      ['ours', ours],
    ] as const) {
      const id = encodeURIComponent(`remote::${run.runId}`);
      const detail = await fetch(`${url}/api/runs/${id}`);
      expect(detail.status, who).toBe(200);
      const results = ((await detail.json()) as { results: { testId: string; scores?: Grader[] }[] }).results;
      expect(results.map((x) => x.testId)).toEqual([TEST_ID]);
      const view = await fetch(`${url}/api/runs/${id}/evals/${TEST_ID}`);
      expect(view.status, who).toBe(200);
      const test = ((await view.json()) as { eval: { scores?: Grader[] } }).eval;
      counts[who] = { detail: scored(results[0]!.scores), test: scored(test.scores), inIndex: scored((await indexLine(run.path)).scores) };
    }
    expect(counts.ours).toEqual(counts.own);
    expect(counts.own).toEqual({ detail: 2, test: 2, inIndex: 6 });
  });
});
