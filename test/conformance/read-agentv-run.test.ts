/**
 * What `agentv eval` writes, our commands read: a real run of the offline sample project goes
 * through summary, failures, show, validate, export, report, compare and a scratch derivation
 * (our bundle of it, AgentV's files alongside), and every number and assertion is checked against
 * what AgentV's own `results` commands say about the same run.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { agentvEval, describeWithAgentV, makeSampleProject, runAgentV } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { isolateGitForSuite } from '../helpers/git-fixtures.js';
import { deriveScratchCopy, loadRun } from '../../src/runs/read/run-reader.js';

interface AgentVAssertion {
  text: string;
  passed: boolean;
  evidence?: string;
}

describeWithAgentV('our commands on a run agentv eval just wrote', () => {
  isolateGitForSuite();
  let project = '';
  let runDir = '';
  let runId = '';
  const agentv = async (args: string[]) => {
    const r = await runAgentV(args, { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout.slice(r.stdout.search(/[[{]/)));
  };
  const ours = async (args: string[]) => {
    const r = await runCli(args, { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    return r;
  };

  beforeAll(async () => {
    project = await makeSampleProject();
    runDir = await agentvEval(project, { experiment: 'conf' });
    runId = runDir.split('/').pop()!;
  }, 120_000);

  it('summary counts what agentv results summary counts', async () => {
    const theirs = await agentv(['results', 'summary', runDir]);
    const mine = JSON.parse((await ours(['summary', runDir, '--json'])).stdout);
    expect(mine.run_id).toBe(runId);
    expect(mine.experiment).toBe('conf');
    expect(mine.summary.total).toBe(theirs.total);
    expect(mine.summary.passed).toBe(theirs.passed);
    expect(mine.summary.failed + mine.summary.errors).toBe(theirs.failed);
    // AgentV's "pass_rate.mean" of a run is its mean score.
    expect(mine.summary.mean_score).toBeCloseTo(theirs.pass_rate.mean, 2);
  });

  it('failures lists the failed assertions agentv results failures lists, with their evidence', async () => {
    const theirs = (await agentv(['results', 'failures', runDir])) as { test_id: string; assertions: AgentVAssertion[] }[];
    const mine = JSON.parse((await ours(['failures', runDir, '--json'])).stdout) as {
      failures: { test_id: string; failed_assertions: { text: string; evidence: string }[] }[];
    };
    const norm = (list: { test_id: string; items: { text: string; evidence: string }[] }[]) => list.map((x) => JSON.stringify([x.test_id, x.items])).sort();
    expect(norm(mine.failures.map((f) => ({ test_id: f.test_id, items: f.failed_assertions })))).toEqual(
      norm(
        theirs.map((t) => ({ test_id: t.test_id, items: t.assertions.filter((a) => !a.passed).map((a) => ({ text: a.text, evidence: a.evidence ?? '' })) })),
      ),
    );
    expect(mine.failures.length).toBeGreaterThan(0);
  });

  it('show counts the assertions agentv results show displays for every test', async () => {
    const mine = JSON.parse((await ours(['show', runDir, '--json'])).stdout) as { cases: { test_id: string; assertions: { passed: number; total: number } }[] };
    expect(mine.cases.length).toBeGreaterThan(0);
    for (const testId of new Set(mine.cases.map((c) => c.test_id))) {
      const theirs = (await agentv(['results', 'show', runDir, '-t', testId])) as { assertions: AgentVAssertion[] };
      // AgentV shows the first row of a test id; every target of the sample suite has the same checks.
      const mineCase = mine.cases.find((c) => c.test_id === testId)!;
      expect(mineCase.assertions.total).toBe(theirs.assertions.length);
    }
  });

  it('validate accepts it, export and report read it, compare reads it as input', async () => {
    const v = JSON.parse((await ours(['validate', runDir, '--json'])).stdout);
    expect(v.valid).toBe(true);
    expect(v.layout).toBe('agentv');

    const out = join(project, 'exported');
    await ours(['export', runDir, '--out', out]);
    const exported = await loadRun(out);
    expect(exported.runId).toBe(runId);
    expect(exported.rows.length).toBe(JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')).counts.total_tests);

    const html = join(project, 'report.html');
    await ours(['report', runDir, '--out', html]);
    expect(await readFile(html, 'utf8')).toContain('says-42');

    const cmp = await runCli(['compare', runDir, runDir, '--json'], { cwd: project });
    expect(cmp.code, cmp.stderr).toBe(0);
    // AgentV's compare shape: matched[] by test id alone (one entry per test id, whatever the
    // targets), and the same entries `agentv compare` gives for the same two sources.
    const report = JSON.parse(cmp.stdout) as { matched: { test_id: string; outcome: string }[] };
    expect(report.matched.map((m) => m.test_id).sort()).toEqual([...new Set(exported.rows.map((r) => r.test_id))].sort());
    expect(report.matched.every((m) => m.outcome === 'tie')).toBe(true);
    const theirs = (await agentv(['compare', runDir, runDir, '--json'])) as { matched: { test_id: string; outcome: string }[] };
    const pairs = (list: { test_id: string; outcome: string }[]) => list.map((m) => `${m.test_id}:${m.outcome}`).sort();
    expect(pairs(report.matched)).toEqual(pairs(theirs.matched));
  });

  it("a derived copy of our bundle with AgentV's files riding along (carryRunnerFiles); the run itself untouched", async () => {
    const before = (await readdir(runDir)).sort();
    const copy = await deriveScratchCopy(runDir, { carryRunnerFiles: true });
    const run = await loadRun(copy);
    expect(run.layout).toBe('bundle');
    expect(run.runId).toBe(runId);
    expect(run.experiment).toBe('conf');
    const testDir = before.find((n) => /--[0-9a-f]{12}$/.test(n))!;
    expect(existsSync(join(copy, testDir, 'sample-1', 'grading.json'))).toBe(true);
    expect((await readdir(runDir)).sort()).toEqual(before);
    expect(existsSync(join(runDir, 'index.jsonl'))).toBe(false);
  });
});
