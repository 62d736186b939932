/**
 * The gate on real AgentV runs with two targets (the sample project's steady-agent and
 * flaky-agent, its two providers): when steady-agent falls from 2/3 to 0/3 and
 * flaky-agent does not move, the gate fails and names both tests with their target, where matching
 * by test id alone (compare's default, AgentV's rule) would have compared only flaky-agent's rows
 * — and compare says so in its report and names --all-targets.
 * flaky-agent is made steady in the copy (its command answers at random in the sample), so the
 * only change between the two runs is the one the test makes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, makeSampleProject } from './helpers/agentv-client.js';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, makeTempDir } from './helpers/git-fixtures.js';
import type { GateReport } from '../src/gate/gate.js';

afterAll(() => cleanupTempDirs());

/** The providers file with both agents' commands replaced. */
async function setAgents(project: string, steady: string, flaky: string): Promise<void> {
  const file = join(project, '.agentv', 'providers.yaml');
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  const at = (label: string) => lines.findIndex((l) => l.includes(`label: ${label}`)) + 1;
  const command = (answer: string) => `  command: bash -c 'printf "${answer}\\n" > {OUTPUT_FILE}'`;
  lines[at('steady-agent')] = command(steady);
  lines[at('flaky-agent')] = command(flaky);
  await writeFile(file, lines.join('\n'));
}

describeWithAgentV('gate on real agentv runs with two targets', () => {
  it('steady-agent regresses while flaky-agent holds: the gate fails naming both tests with their target; compare says what pooling hid', async () => {
    const project = await makeSampleProject(await makeTempDir('agentv-gate-real'));
    await setAgents(project, 'The answer is 42, hello. Hello!', '42, hello. Hello!');
    const baseline = await agentvEval(project, { experiment: 'ci' });
    await setAgents(project, 'no idea', '42, hello. Hello!');
    const candidate = await agentvEval(project, { experiment: 'ci' });

    const g = await runCli(['gate', baseline, candidate, '--json']);
    expect(g.code, g.stderr).toBe(1);
    const report = JSON.parse(g.stdout) as GateReport;
    expect(report.match).toBe('test+target');
    expect(report.regressions.map((t) => [t.test_id, t.target]).sort()).toEqual([
      ['greets', 'steady-agent'],
      ['says-42', 'steady-agent'],
    ]);
    const md = await runCli(['gate', baseline, candidate, '--format', 'markdown']);
    expect(md.stdout).toMatch(/❌ Eval gate failed: 2 regressions/);
    expect(md.stdout).toMatch(/\| says-42 \(steady-agent\) \| 1\.000 \| 0\.000 \|/);

    // compare, AgentV's rule: the last row of each test id. It says what that left out.
    const c = await runCli(['compare', baseline, candidate, '--json']);
    const cmp = JSON.parse(c.stdout) as { match: string; pooled: { collapsed_rows: number; targets: string[]; flag: string } | null };
    expect(cmp.match).toBe('test');
    expect(cmp.pooled).toMatchObject({ targets: ['flaky-agent', 'steady-agent'], flag: '--all-targets' });
    expect(cmp.pooled!.collapsed_rows).toBeGreaterThanOrEqual(6);
  }, 300_000);
});
