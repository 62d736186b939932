/**
 * Repeat runs, read as AgentV reads them: real `agentv eval` runs with repeated attempts (5.x
 * `evaluate_options: {repeat: 3}`, its one strategy pass_any; 4.42 `execution.trials` with
 * pass_at_k, mean and confidence_interval), a scripted agent whose attempts a plan file decides
 * (test/helpers/repeat-runs.ts: two targets, one test passing 1 of 3 attempts on one target).
 * Our `summary` and `failures` count what each client's own `results summary` / `failures`
 * count; `show` carries every attempt of a 5.x row under the test's aggregate; `export` keeps
 * them all, and the exported bundle reads back the same.
 *
 * One eval per line and strategy for the whole file (4 evals, a few CPU-seconds).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AGENTV_BIN, AGENTV_STABLE_BIN, askAgentVOnce, describeWithAgentV, describeWithAgentVStable } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { makeRepeatProject, repeatEval, STABLE_STRATEGIES } from '../helpers/repeat-runs.js';
import type { RunAttemptStats } from '../../src/model/attempt-stats.js';
import type { ReportData, ReportDetail } from '../../src/report/types.js';
import { loadRun } from '../../src/runs/read/run-reader.js';
import { projectTest } from '../../src/report/projection.js';
import { loadScoreRows } from '../../src/compare/score-rows.js';

/** The JSON document a client printed (after any banner line). */
const jsonOf = (stdout: string): unknown => JSON.parse(stdout.slice(stdout.search(/[[{]/)));

interface Theirs {
  total: number;
  passed: number;
  failed: number;
}

async function agree(bin: string, project: string, runDir: string): Promise<{ theirs: Theirs; failures: string[] }> {
  const s = await askAgentVOnce(['results', 'summary', runDir], { cwd: project, bin });
  expect(s.code, s.stderr).toBe(0);
  const theirs = jsonOf(s.stdout) as Theirs;
  const ours = await runCli(['summary', runDir, '--json'], { cwd: project });
  expect(ours.code, ours.stderr).toBe(0);
  const mine = (JSON.parse(ours.stdout) as { summary: { total: number; passed: number; failed: number; errors: number } }).summary;
  expect(mine.total).toBe(theirs.total);
  expect(mine.passed).toBe(theirs.passed);
  expect(mine.failed + mine.errors).toBe(theirs.failed);

  const f = await askAgentVOnce(['results', 'failures', runDir], { cwd: project, bin });
  expect(f.code, f.stderr).toBe(0);
  const theirFailures = (jsonOf(f.stdout) as { test_id: string }[]).map((x) => x.test_id).sort();
  const myFailures = await runCli(['failures', runDir, '--json'], { cwd: project });
  const mineList = (JSON.parse(myFailures.stdout) as { failures: { test_id: string }[] }).failures.map((x) => x.test_id).sort();
  expect(mineList).toEqual(theirFailures);
  return { theirs, failures: theirFailures };
}

describeWithAgentV('AgentV 5.x repeat: summary, failures and show agree with `agentv results`', () => {
  isolateGitForSuite();
  let project = '';
  let runDir = '';
  beforeAll(async () => {
    project = await makeRepeatProject('agentv');
    runDir = await repeatEval('agentv', project, 'rep');
  }, 180_000);

  it('summary and failures count the test passed on 1 of 3 attempts as AgentV does (4 of 6 passed)', async () => {
    const { theirs, failures } = await agree(AGENTV_BIN, project, runDir);
    expect(theirs).toMatchObject({ total: 6, passed: 4, failed: 2 });
    expect(failures).toEqual(['never', 'never']);
  });

  it('show gives the aggregate and every attempt: verdict, score, answer, transcript; and the attempt statistics', async () => {
    const r = await runCli(['show', runDir, '--test-id', 'flaky', '--target', 'beta', '--json'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const c = (JSON.parse(r.stdout) as { cases: Record<string, unknown>[] }).cases;
    expect(c).toHaveLength(1);
    const flaky = c[0] as {
      verdict: string;
      score: number;
      assertions: { passed: number; total: number };
      attempts: {
        strategy: string;
        passed_samples: number;
        total_samples: number;
        pass_rate: number;
        ci95: { low: number; high: number };
        pass_at_k: Record<string, number>;
        pass_hat_k: Record<string, number>;
        list: { index: number; verdict: string; score: number; answer: string | null; transcript: string | null }[];
      };
    };
    expect(flaky.verdict).toBe('pass');
    expect(flaky.score).toBe(1);
    // The assertions shown beside the best attempt's score are the best attempt's.
    expect(flaky.assertions).toMatchObject({ passed: 1, total: 1 });
    expect(flaky.attempts).toMatchObject({ strategy: 'pass_any', passed_samples: 1, total_samples: 3 });
    expect(flaky.attempts.pass_rate).toBeCloseTo(1 / 3, 6);
    expect(flaky.attempts.ci95.low).toBeCloseTo(0.0615, 3);
    expect(flaky.attempts.pass_at_k['3']).toBe(1);
    expect(flaky.attempts.pass_hat_k['3']).toBe(0);
    expect(flaky.attempts.list.map((a) => a.verdict).sort()).toEqual(['fail', 'fail', 'pass']);
    for (const a of flaky.attempts.list) {
      expect(a.answer).toMatch(a.verdict === 'pass' ? /^PASS answer flaky call 3/ : /^nope flaky call [12]/);
      expect(a.transcript).toMatch(/sample-\d\/transcript\.json$/);
    }
    const text = await runCli(['show', runDir, '--test-id', 'flaky', '--target', 'beta'], { cwd: project });
    expect(text.stdout).toMatch(/attempts\s+1\/3 passed \(33%, 95% CI 6%–79%\), pass_any/);
    expect(text.stdout).toMatch(/#1\s+fail\s+0\.000/);
  });

  it('summary gives the attempt statistics: per test, per target and the run mean attempt success, in JSON, text and Markdown', async () => {
    const r = await runCli(['summary', runDir, '--json'], { cwd: project });
    const a = (JSON.parse(r.stdout) as { attempts: RunAttemptStats }).attempts;
    expect(a).toMatchObject({ passed_samples: 10, total_samples: 18 });
    expect(a.targets.alpha).toMatchObject({ passed_samples: 6, total_samples: 9 });
    expect(a.targets.beta).toMatchObject({ passed_samples: 4, total_samples: 9 });
    expect(a.targets.beta!.mean_pass_rate).toBeCloseTo((1 + 1 / 3 + 0) / 3, 6);
    expect(a.mean_pass_rate).toBeCloseTo(10 / 18, 6);
    const flaky = a.tests.find((t) => t.test_id === 'flaky' && t.target === 'beta')!;
    expect(flaky).toMatchObject({ strategy: 'pass_any', passed_samples: 1, total_samples: 3 });
    expect(flaky.pass_at_k['2']).toBeCloseTo(2 / 3, 6);
    const text = (await runCli(['summary', runDir], { cwd: project })).stdout;
    expect(text).toMatch(/beta\s+4\/9\s+44\.4%/);
    expect(text).toMatch(/flaky \(beta\)\s+1\/3 passed/);
    const md = (await runCli(['summary', runDir, '--format', 'markdown'], { cwd: project })).stdout;
    expect(md).toContain('| beta | 3 | 2 | 1 | 66.7% | 0.667 | 4/9 | 44.4% |');
    expect(md).toContain('| flaky (beta) | 1/3 passed (33%, 95% CI 6%–79%) | pass@3 1.00, pass^3 0.00 |');
  });

  it('the report and the Dashboard’s test view list each attempt under the aggregate; compare/gate score rows carry AgentV’s verdict', async () => {
    const out = join(await makeTempDir('repeat-report'), 'report.html');
    const r = await runCli(['report', runDir, '--out', out], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const html = await readFile(out, 'utf8');
    const island = (id: string) => JSON.parse(html.split(`<script type="application/json" id="${id}">`)[1]!.split('</script>')[0]!) as unknown;
    const data = island('report-data') as ReportData;
    const details = island('report-details') as ReportDetail[];
    expect(data.attempts).toMatchObject({ passed_samples: 10, total_samples: 18 });
    const i = data.tests.findIndex((t) => t.id === 'flaky' && data.targets[t.target] === 'beta');
    expect(data.tests[i]).toMatchObject({ verdict: 'pass', score: 1, attempts: [1, 3] });
    expect(html).toMatch(/data-stat="attempt_rate"><div class="v">55\.6%/);
    expect(html).toMatch(/Mean attempt success, beta/);
    const shown = details[i]!.attempts!;
    expect(shown.list.map((x) => x.verdict).sort()).toEqual(['fail', 'fail', 'pass']);
    expect(shown.list.every((x) => typeof x.answer === 'string' && /flaky call/.test(x.answer))).toBe(true);
    // The Dashboard's test view (and the site, which writes its answers) projects a test the same way.
    const run = await loadRun(runDir);
    const row = run.rows.find((x) => x.test_id === 'flaky' && x.target === 'beta')!;
    const view = await projectTest(run, row, { answerInline: true });
    expect(view.detail.attempts).toMatchObject({ passed_samples: 1, total_samples: 3, strategy: 'pass_any' });
    // compare and gate read score rows straight from AgentV's manifest: the aggregate verdict, and the attempts.
    const { rows } = await loadScoreRows(runDir);
    const sr = rows.find((x) => x.test_id === 'flaky' && x.target === 'beta')!;
    expect(sr).toMatchObject({ verdict: 'pass', score: 1, attempts: { passed: 1, total: 3, strategy: 'pass_any' } });
    const g = await runCli(['gate', runDir, runDir, '--json'], { cwd: project });
    expect(g.code, g.stdout + g.stderr).toBe(0);
  });

  it('failures names a repeated failing test’s attempts', async () => {
    const r = await runCli(['failures', runDir, '--json'], { cwd: project });
    const f = (
      JSON.parse(r.stdout) as { failures: { test_id: string; attempts: { passed_samples: number; total_samples: number; strategy: string } | null }[] }
    ).failures;
    expect(f.map((x) => x.attempts)).toMatchObject([
      { passed_samples: 0, total_samples: 3, strategy: 'pass_any' },
      { passed_samples: 0, total_samples: 3, strategy: 'pass_any' },
    ]);
    expect((await runCli(['failures', runDir], { cwd: project })).stdout).toMatch(/attempts\s+0\/3 passed \(0%, 95% CI 0%–56%\), pass_any/);
  });

  it('export keeps every attempt, and the exported bundle reads back the same counts and attempts', async () => {
    const out = join(await makeTempDir('repeat-export'), 'bundle');
    const e = await runCli(['export', runDir, '--out', out, '--experiment', 'rep'], { cwd: project });
    expect(e.code, e.stderr).toBe(0);
    const rows = (await readFile(join(out, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { test_id: string; target: string; verdict: string; samples?: { sample_path?: string }[] });
    expect(rows).toHaveLength(6);
    expect(rows.filter((r) => Array.isArray(r.samples) && r.samples.length === 3)).toHaveLength(6);
    const flaky = rows.find((r) => r.test_id === 'flaky' && r.target === 'beta')!;
    expect(flaky.verdict).toBe('pass');
    for (const s of flaky.samples!)
      expect(await readFile(join(out, (flaky as unknown as { result_dir: string }).result_dir, s.sample_path!, 'outputs', 'answer.md'), 'utf8')).toMatch(
        /flaky call/,
      );
    const s = JSON.parse((await runCli(['summary', out, '--json'], { cwd: project })).stdout) as { summary: { passed: number; total: number } };
    expect(s.summary).toMatchObject({ passed: 4, total: 6 });
    // AgentV reads the bundle too: every sample folder it names holds its result.json and grading.json.
    const v = await askAgentVOnce(['results', 'validate', out], { cwd: project, bin: AGENTV_BIN });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout + v.stderr).toMatch(/6 test\(s\), 0 error\(s\)/);
    const theirs = jsonOf((await askAgentVOnce(['results', 'summary', out], { cwd: project, bin: AGENTV_BIN })).stdout) as Theirs;
    expect(theirs).toMatchObject({ total: 6, passed: 4, failed: 2 });
    // A second derivation of the bundle (combine, publish) keeps them too.
    const again = join(await makeTempDir('repeat-export'), 'again');
    expect((await runCli(['export', out, '--out', again, '--experiment', 'rep'], { cwd: project })).code).toBe(0);
    const rows2 = (await readFile(join(again, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { samples?: unknown[] });
    expect(rows2.every((r) => Array.isArray(r.samples) && r.samples.length === 3)).toBe(true);
  });
});

describeWithAgentV('AgentV 5.x repeat: publish keeps every attempt', () => {
  isolateGitForSuite();

  it('a published repeat run, pulled back, shows each attempt with its answer', async () => {
    const project = await makeRepeatProject('agentv');
    const runDir = await repeatEval('agentv', project, 'rep');
    const base = await makeTempDir('repeat-publish');
    const remote = join(base, 'remote.git');
    const repo = join(base, 'repo');
    await git(base, ['init', '-q', '--bare', remote]);
    await git(base, ['init', '-q', '-b', 'main', repo]);
    await git(repo, ['commit', '-q', '--allow-empty', '-m', 'init']);
    await git(repo, ['remote', 'add', 'origin', remote]);
    const p = await runCli(['publish', runDir], { cwd: repo });
    expect(p.code, p.stdout + p.stderr).toBe(0);
    const runId = runDir.split('/').pop()!;
    const pulled = join(base, 'pulled');
    const pull = await runCli(['pull', runId, '--out', pulled], { cwd: repo });
    expect(pull.code, pull.stderr).toBe(0);
    const r = await runCli(['show', pulled, '--test-id', 'flaky', '--target', 'beta', '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    const a = (
      JSON.parse(r.stdout) as { cases: { verdict: string; attempts: { passed_samples: number; list: { verdict: string; answer: string | null }[] } }[] }
    ).cases[0]!;
    expect(a.verdict).toBe('pass');
    expect(a.attempts.passed_samples).toBe(1);
    expect(a.attempts.list.map((x) => [x.verdict, /flaky call/.test(x.answer ?? '')]).sort()).toEqual([
      ['fail', true],
      ['fail', true],
      ['pass', true],
    ]);
  });
});

describeWithAgentVStable('AgentV 4.42 trials: summary and failures agree with `agentv-stable results` for every strategy', () => {
  isolateGitForSuite();
  let project = '';
  const runs = new Map<string, string>();
  beforeAll(async () => {
    project = await makeRepeatProject('agentv-stable');
    for (const strategy of STABLE_STRATEGIES) runs.set(strategy, await repeatEval('agentv-stable', project, strategy, strategy));
  }, 300_000);

  describe.each(STABLE_STRATEGIES.map((s) => [s]))('%s', (strategy) => {
    it('summary and failures count what AgentV 4.42 counts', async () => {
      const { theirs } = await agree(AGENTV_STABLE_BIN, project, runs.get(strategy)!);
      // pass_at_k: the flaky test passes on beta (its third attempt); mean (1/3) and the
      // interval's lower bound (0) fail it.
      expect(theirs.passed).toBe(strategy === 'pass_at_k' ? 4 : 3);
    });
  });
});

describe('export and combine of results rows that carry their attempts', () => {
  isolateGitForSuite();

  it('export keeps every row’s samples and aggregation (100 of 100), combine keeps them, and the verdict is the strategy’s', async () => {
    const dir = await makeTempDir('repeat-jsonl');
    const rows = Array.from({ length: 100 }, (_, i) => {
      const passedAt = i % 4; // 0: no attempt passes; 1..3: only attempt k passes
      const samples = [1, 2, 3].map((k) => ({ sample: k, sample_index: k - 1, score: k === passedAt ? 1 : 0, status: k === passedAt ? 'passed' : 'failed' }));
      return {
        test_id: `t${String(i).padStart(3, '0')}`,
        target: i % 2 === 0 ? 'alpha' : 'beta',
        timestamp: '2026-12-01T10:00:00.000Z',
        score: passedAt > 0 ? 1 : 0,
        output: `answer ${i}`,
        samples,
        aggregation: { strategy: 'pass_any', passed_samples: passedAt > 0 ? 1 : 0, total_samples: 3, pass_rate: passedAt > 0 ? 0.333 : 0 },
      };
    });
    await writeFile(join(dir, 'results.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const half = (n: number) => join(dir, `part${n}.jsonl`);
    await writeFile(
      half(1),
      rows
        .slice(0, 50)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    await writeFile(
      half(2),
      rows
        .slice(50)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );

    const out = join(dir, 'bundle');
    expect((await runCli(['export', join(dir, 'results.jsonl'), '--out', out, '--experiment', 'rep'])).code).toBe(0);
    const index = (await readFile(join(out, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(index).toHaveLength(100);
    expect(
      index.filter(
        (r) => Array.isArray(r.samples) && (r.samples as unknown[]).length === 3 && (r.aggregation as { strategy?: string })?.strategy === 'pass_any',
      ),
    ).toHaveLength(100);
    expect(index.filter((r) => r.verdict === 'pass')).toHaveLength(75);

    const parts = [join(dir, 'p1'), join(dir, 'p2')];
    for (const [i, p] of parts.entries()) expect((await runCli(['export', half(i + 1), '--out', p, '--experiment', 'rep'])).code).toBe(0);
    const combined = join(dir, 'combined');
    const c = await runCli(['combine', ...parts, '--out', combined, '--experiment', 'rep']);
    expect(c.code, c.stderr).toBe(0);
    const back = (await readFile(join(combined, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(back.filter((r) => Array.isArray(r.samples) && (r.samples as unknown[]).length === 3)).toHaveLength(100);
    const s = JSON.parse((await runCli(['summary', combined, '--json'])).stdout) as { summary: { passed: number; total: number }; attempts: RunAttemptStats };
    expect(s.summary).toMatchObject({ passed: 75, total: 100 });
    expect(s.attempts).toMatchObject({ passed_samples: 75, total_samples: 300 });
  });
});
