/**
 * The gate that knows noise on real AgentV 5.x repeat runs (issue 49): a scripted agent whose
 * attempts a plan file decides (test/helpers/repeat-runs.ts; `repeat: 3`, two targets), four runs
 * published as AgentV wrote them, then a candidate where `always` on alpha passes only 1 attempt of
 * 3 (its best attempt still scores 1: AgentV's pass_any passes it) and `flaky` on beta, which passes
 * 1 of 3 over its history, draws 0 of 3. The gate reads the four runs' light rows: it names
 * `always (alpha)` (reliability) and lists `flaky (beta)` as noisy without failing on it; with
 * `--history 0` it does the opposite. Five real evals for the file.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { describeWithAgentV } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { isolateGitForSuite } from '../helpers/git-fixtures.js';
import { makeRepeatProject, repeatEval } from '../helpers/repeat-runs.js';
import type { GateReport } from '../../src/gate/gate.js';

const HISTORY_PLAN = 'alpha always * pass\nbeta always * pass\nalpha flaky * pass\nbeta flaky 3 pass\n';
const CANDIDATE_PLAN = 'alpha always 3 pass\nbeta always * pass\nalpha flaky * pass\n';

describeWithAgentV('gate --history on real AgentV 5.x repeat runs', () => {
  isolateGitForSuite();
  let project = '';
  let baseId = '';
  let candidate = '';

  beforeAll(async () => {
    project = await makeRepeatProject('agentv');
    for (let i = 0; i < 4; i++) {
      const run = await repeatEval('agentv', project, 'rep');
      const p = await runCli(['publish', run, '--no-push', '--json'], { cwd: project });
      expect(p.code, p.stderr).toBe(0);
      baseId = (JSON.parse(p.stdout) as { location: { run_id: string } }).location.run_id;
    }
    const t = await runCli(['tag', baseId, '+baseline', '--no-push'], { cwd: project });
    expect(t.code, t.stderr).toBe(0);
    await writeFile(join(project, 'plan.txt'), CANDIDATE_PLAN);
    candidate = await repeatEval('agentv', project, 'rep');
    await writeFile(join(project, 'plan.txt'), HISTORY_PLAN);
  }, 600_000);

  it('names the reliability drop the best attempt hides, spares the noisy test', async () => {
    const g = await runCli(['gate', '@baseline', candidate, '--json'], { cwd: project });
    expect(g.code, g.stderr).toBe(1);
    const r = JSON.parse(g.stdout) as GateReport;
    expect(r.history).toMatchObject({ applied: true, requested: 10 });
    expect(r.history.runs).toHaveLength(4);
    expect(r.regressions.map((t) => [t.test_id, t.target, t.reason])).toEqual([['always', 'alpha', 'reliability']]);
    expect(r.regressions[0]!.attempts).toMatchObject({ history: { runs: 4, passed: 12, total: 12 }, candidate: { passed: 1, total: 3 } });
    expect(r.noisy.map((t) => [t.test_id, t.target, t.regressed, `${t.history.passed}/${t.history.total}`])).toEqual([['flaky', 'beta', false, '4/12']]);
    // The score and verdict rule alone: the noisy test fails the gate, the reliability drop passes.
    const today = JSON.parse((await runCli(['gate', '@baseline', candidate, '--json', '--history', '0'], { cwd: project })).stdout) as GateReport;
    expect(today.regressions.map((t) => [t.test_id, t.target])).toEqual([['flaky', 'beta']]);
    // flaky over the published line names the noisy test.
    const f = JSON.parse((await runCli(['flaky', '--experiment', 'rep', '--json'], { cwd: project })).stdout) as {
      tests: { test_id: string; target: string; class: string }[];
    };
    expect(f.tests.filter((t) => t.class === 'flaky').map((t) => [t.test_id, t.target])).toEqual([['flaky', 'beta']]);
  });
});
