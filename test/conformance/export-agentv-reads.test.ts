/**
 * What we write, AgentV reads: our bundle exports of every real result file and of a real
 * `agentv eval` run pass `agentv results validate` with 0 errors, land where AgentV lists runs
 * (`.agentv/results/<run_id>/`), and `agentv results failures` shows our assertions.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, makeSampleProject, runAgentV } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { exportRun } from '../../src/index.js';
import { describeWithFixtures, fixture, fixtureFiles, HAS_FIXTURES } from '../helpers/fixtures.js';
import { isolateGitForSuite } from '../helpers/git-fixtures.js';

interface AgentVAssertion {
  text: string;
  passed: boolean;
  evidence?: string;
}

(HAS_FIXTURES ? describeWithAgentV : describeWithFixtures)('agentv results reads our exports', () => {
  isolateGitForSuite();
  let project = '';
  beforeAll(async () => {
    project = await makeSampleProject();
  }, 60_000);

  const validate = async (dir: string) => {
    const r = await runAgentV(['results', 'validate', dir], { cwd: project });
    const errors = /(\d+) error\(s\)/.exec(r.stdout)?.[1];
    return { code: r.code, errors: errors === undefined ? 0 : Number(errors), out: r.stdout + r.stderr };
  };

  it('every real result file, exported with defaults, lands in .agentv/results/<run_id> and validates with 0 errors', async () => {
    const files = fixtureFiles();
    expect(files.length).toBeGreaterThan(0);
    // Our export in-process (export-e2e drives the CLI on every file); AgentV's validate is the judge.
    for (const name of files) {
      const { outDir, runId } = await exportRun({ source: name, cwd: project });
      const out = { out: outDir!, run_id: runId };
      expect(out.out).toBe(join(project, '.agentv', 'results', out.run_id));
      const v = await validate(out.out);
      expect(v.errors, `${name}\n${v.out}`).toBe(0);
      expect(v.code, `${name}\n${v.out}`).toBe(0);
    }
  }, 600_000);

  it('agentv results failures shows the failed assertions our failures shows', async () => {
    const r = await runCli(['export', fixture('rubric--suite.baseline.jsonl'), '--out', join(project, 'rubric-run'), '--json'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const dir = join(project, 'rubric-run');
    const theirs = await runAgentV(['results', 'failures', dir], { cwd: project });
    expect(theirs.code, theirs.stderr).toBe(0);
    const parsed = JSON.parse(theirs.stdout.slice(theirs.stdout.indexOf('['))) as { test_id: string; assertions: AgentVAssertion[] }[];
    const mine = JSON.parse((await runCli(['failures', dir, '--json'], { cwd: project })).stdout) as {
      failures: { test_id: string; failed_assertions: { text: string }[] }[];
    };
    // AgentV lists a test when its score is below 1; each failed assertion of ours is one of AgentV's.
    const theirFailed = new Map(parsed.map((t) => [t.test_id, t.assertions.filter((a) => !a.passed).map((a) => a.text)]));
    let shown = 0;
    for (const f of mine.failures) {
      expect(theirFailed.get(f.test_id), f.test_id).toEqual(f.failed_assertions.map((a) => a.text));
      shown += f.failed_assertions.length;
    }
    expect(shown).toBeGreaterThan(0);
    // And the passing assertions too: AgentV shows every assertion we wrote.
    const total = parsed.reduce((n, t) => n + t.assertions.length, 0);
    expect(total).toBeGreaterThan(shown);
  }, 120_000);

  it('our export of a real agentv eval run validates with 0 errors', async () => {
    const run = await agentvEval(project, { experiment: 'roundtrip' });
    const out = join(project, 'bundle-of-agentv-run');
    const r = await runCli(['export', run, '--out', out], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const v = await validate(out);
    expect(v.errors, v.out).toBe(0);
    // Exporting the AgentV run onto itself is refused: AgentV's directory is never rewritten.
    const before = (await readdir(run)).sort();
    const self = await runCli(['export', run, '--out', run], { cwd: project });
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/AgentV's own run directory/);
    expect((await readdir(run)).sort()).toEqual(before);
  }, 180_000);
});
