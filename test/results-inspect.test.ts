/**
 * The read-only inspection commands: `summary`, `failures`, `show`.
 */
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { describeWithFixtures, fixture, fixtureFiles } from './helpers/fixtures.js';
import { summarizeRun } from '../src/runs/index.js';
import { exportRun, InputError, listFailures, showCases } from '../src/index.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-inspect-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
let n = 0;

async function exportRows(rows: Record<string, unknown>[]): Promise<string> {
  const src = join(tmp, `rows-${n}.jsonl`);
  await writeFile(src, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const out = join(tmp, `run-${n++}`);
  const r = await runCli(['export', src, '--out', out, '--experiment', 'inspect']);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

async function exportFixture(name: string): Promise<string> {
  const out = join(tmp, `fx-${n++}`);
  // The library's export (the CLI's is driven in export-e2e on every fixture): no process per fixture.
  await exportRun({ source: fixture(name), out });
  return out;
}

const HAND_ROWS = [
  {
    test_id: '001',
    suite: 'numbers',
    target: 'm1',
    score: 1,
    timestamp: '2026-03-01T10:00:00Z',
    assertions: [{ text: 'counts', passed: true }],
    output: [{ role: 'assistant', content: 'done', tool_calls: [{ tool: 'Read' }, { tool: 'Read' }, { tool: 'Grep' }] }],
    token_usage: { input: 100, output: 20 },
    cost_usd: 0.5,
    duration_ms: 2500,
  },
  {
    test_id: 'refund-eligibility',
    suite: 'support',
    target: 'm1',
    score: 0.25,
    timestamp: '2026-03-01T10:01:00Z',
    assertions: [
      { text: 'applies the refund policy', passed: false, evidence: 'offered a refund after 90 days' },
      { text: 'is polite', passed: true, evidence: 'yes' },
    ],
    scores: [{ name: 'policy', type: 'llm-grader', score: 0.25, verdict: 'fail', reasoning: 'ignored the 30-day window' }],
  },
  { test_id: 'refund-timeout', suite: 'support', target: 'm2', score: 0, timestamp: '2026-03-01T10:02:00Z', error: 'provider timed out after 120s' },
  { test_id: 'refund-ok', suite: 'support', target: 'm2', score: 0.95, timestamp: '2026-03-01T10:03:00Z' },
];

let hand: string;
beforeAll(async () => {
  hand = await exportRows(HAND_ROWS);
});

describe('summary', () => {
  it('prints per-target and overall metrics from summary.json', async () => {
    const r = await runCli(['summary', hand]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('run_id: 2026-03-01T10-00-00-000Z');
    expect(r.stdout).toMatch(/^m1 +2 +1 +1 +50\.0%/m);
    expect(r.stdout).toMatch(/^m2 +2 +1 +1 +50\.0%/m);
    expect(r.stdout).toContain('2/4 passed (50.0%)');
    const j = JSON.parse((await runCli(['summary', hand, '--json'])).stdout);
    expect(j).toMatchObject({ source: 'summary.json', summary: { total: 4, passed: 2, failed: 1, errors: 1 } });
  });

  it('recomputes the same numbers when summary.json is missing', async () => {
    const d = await exportRows(HAND_ROWS);
    const written = JSON.parse(await readFile(join(d, 'summary.json'), 'utf8'));
    await unlink(join(d, 'summary.json'));
    const r = await runCli(['summary', join(d, 'index.jsonl'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.source).toBe('recomputed');
    expect(j.reason).toContain('missing');
    const { export_metadata: _m, eval_file: _e, ...expected } = written;
    expect(j.summary).toMatchObject(expected);
    expect((await runCli(['summary', d])).stdout).toContain('recomputed from index.jsonl');
  });

  it('--target narrows (recomputing), --recompute ignores summary.json', async () => {
    const j = JSON.parse((await runCli(['summary', hand, '--target', 'm2', '--json'])).stdout);
    expect(j.source).toBe('recomputed');
    expect(j.summary).toMatchObject({ total: 2, passed: 1, failed: 0, errors: 1, targets: ['m2'] });
    const k = JSON.parse((await runCli(['summary', hand, '--recompute', '--json'])).stdout);
    expect(k).toMatchObject({ source: 'recomputed', summary: { total: 4 } });
  });

  it('a --target the run does not have is an input error naming the targets', async () => {
    const r = await runCli(['summary', hand, '--target', 'm9']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has no rows for target m9 (targets: m1, m2)');
  });

  it('a path that is not a run is an input error (exit 2)', async () => {
    const r = await runCli(['summary', join(tmp, 'nowhere')]);
    expect(r.code).toBe(2);
  });
});

describe('failures', () => {
  it('lists only fail/error cases with failed assertions, evidence, failing graders and error text', async () => {
    const r = await runCli(['failures', hand, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.total).toBe(4);
    expect(j.failures.map((f: { test_id: string }) => f.test_id)).toEqual(['refund-eligibility', 'refund-timeout']);
    expect(j.failures[0]).toMatchObject({
      verdict: 'fail',
      failed_assertions: [{ text: 'applies the refund policy', evidence: 'offered a refund after 90 days' }],
      failed_graders: [{ name: 'policy', type: 'llm-grader', verdict: 'fail', reasoning: 'ignored the 30-day window' }],
      assertions: { passed: 1, total: 2 },
      grading_problem: null,
    });
    expect(j.failures[1]).toMatchObject({ verdict: 'error', error: 'provider timed out after 120s' });
    const human = await runCli(['failures', hand]);
    expect(human.stdout).toContain('2 failing of 4 cases');
    expect(human.stdout).toContain('✗ applies the refund policy');
    expect(human.stdout).toContain('evidence: offered a refund after 90 days');
    expect(human.stdout).toContain('error: provider timed out after 120s');
  });

  it('filters by target and says so when nothing fails', async () => {
    const j = JSON.parse((await runCli(['failures', hand, '--target', 'm2', '--json'])).stdout);
    expect(j.failures.map((f: { test_id: string }) => f.test_id)).toEqual(['refund-timeout']);
    const ok = await exportRows([{ test_id: 'fine', score: 1 }]);
    const r = await runCli(['failures', ok]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No failing cases (1 case');
  });

  it('a filter matching no case is an input error, not "no failing cases"', async () => {
    const r = await runCli(['failures', hand, '--target', 'typo']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('matches --target "typo" (targets: m1, m2)');
  });

  it('still reports a failure whose grading.json is gone (its failed assertions from result.json)', async () => {
    const d = await exportRows(HAND_ROWS);
    const rows = (await readFile(join(d, 'index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    await unlink(join(d, rows[1].grading_path));
    const j = JSON.parse((await runCli(['failures', d, '--json'])).stdout);
    expect(j.failures[0]).toMatchObject({
      test_id: 'refund-eligibility',
      failed_assertions: [{ text: 'applies the refund policy', evidence: 'offered a refund after 90 days' }],
      grading_problem: expect.stringContaining('missing'),
    });
  });
});

describe('show', () => {
  it("globs (*, ?), several --test-id, and the sidecars' key facts", async () => {
    const r = await runCli(['show', hand, '--test-id', 'refund-*', '--test-id', '00?', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.cases.map((c: { test_id: string }) => c.test_id)).toEqual(['001', 'refund-eligibility', 'refund-timeout', 'refund-ok']);
    expect(j.cases[0]).toMatchObject({
      score: 1,
      verdict: 'pass',
      target: 'm1',
      duration_ms: 2500,
      total_tokens: 120,
      cost_usd: 0.5,
      usage_source: 'provider_reported',
      assertions: { passed: 1, total: 1 },
      tool_calls: { total: 3, by_tool: { Read: 2, Grep: 1 } },
      paths: { result_dir: 'numbers/001/m1/attempt-0', grading: 'numbers/001/m1/attempt-0/grading.json' },
    });
  });

  it('keeps a numeric-looking test id as typed ("001", not 1) and filters by --target', async () => {
    let j = JSON.parse((await runCli(['show', hand, '--test-id', '001', '--json'])).stdout);
    expect(j.cases.map((c: { test_id: string }) => c.test_id)).toEqual(['001']);
    j = JSON.parse((await runCli(['show', hand, '--test-id', 'refund-*', '--target', 'm2', '--json'])).stdout);
    expect(j.cases.map((c: { test_id: string }) => c.test_id)).toEqual(['refund-timeout', 'refund-ok']);
  });

  it('prints a readable block per case', async () => {
    const r = await runCli(['show', 'run-0', '--test-id', '001', '--dir', tmp]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('001  (suite numbers, target m1, attempt 0)');
    expect(r.stdout).toContain('tool calls  3 (Read 2, Grep 1)');
    expect(r.stdout).toContain('files       run-0/numbers/001/m1/attempt-0/');
    expect(r.stdout).toMatch(/grading +grading\.json/);
  });

  it('no match is an input error naming the filter', async () => {
    const r = await runCli(['show', hand, '--test-id', 'nothing-*']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('matches --test-id "nothing-*"');
  });

  it('failures and show share one filter rule: the library verbs refuse a filter matching nothing alike, and accept one that matches', async () => {
    for (const filters of [{ targets: ['typo'] }, { testIds: ['nothing-*'] }, { targets: ['m1'], testIds: ['nothing-*'] }]) {
      const errors = await Promise.all(
        [listFailures({ run: hand, ...filters }), showCases({ run: hand, ...filters })].map((p) =>
          p.then(
            () => null,
            (e: unknown) => e,
          ),
        ),
      );
      for (const err of errors) expect(err).toBeInstanceOf(InputError);
      expect((errors[0] as Error).message).toBe((errors[1] as Error).message);
    }
    const shown = await showCases({ run: hand, targets: ['m1'] });
    const failing = await listFailures({ run: hand, targets: ['m1'] });
    expect(shown.cases.length).toBeGreaterThan(0);
    expect(failing.total).toBe(shown.cases.length);
  });
});

describeWithFixtures('inspection on real fixtures', () => {
  // Export and read back through the library API (in-process: 22 fixtures).
  it.each(fixtureFiles().map((f) => [f.split('/').pop()!]))('summary agrees with export, read or recomputed: %s', async (name) => {
    const out = await exportFixture(name);
    const written = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
    const read = await summarizeRun({ run: out });
    const recomputed = await summarizeRun({ run: join(out, 'index.jsonl'), recompute: true });
    expect(read.source).toBe('summary.json');
    expect(recomputed.source).toBe('recomputed');
    for (const key of [
      'total',
      'passed',
      'failed',
      'errors',
      'pass_rate',
      'mean_score',
      'duration_ms',
      'total_tokens',
      'cost_usd',
      'run_summary',
      'timestamp',
    ]) {
      expect(read.summary[key], key).toEqual(written[key]);
      expect(recomputed.summary[key], `${key} (recomputed)`).toEqual(written[key]);
    }
  });

  it('failures on trace-analysis: the two failing cases with their failed assertions', async () => {
    const out = await exportFixture('trace-analysis--multi-agent.eval.results.jsonl');
    const j = JSON.parse((await runCli(['failures', out, '--json'])).stdout);
    expect(j.failures.map((f: { test_id: string; target: string }) => `${f.test_id}@${f.target}`)).toEqual([
      'research-question@gpt-4o',
      'data-analysis@claude-sonnet',
    ]);
    expect(j.failures[0].failed_assertions.map((a: { text: string }) => a.text)).toEqual(['Missing critical source from 2025']);
    expect(j.failures[1].failed_assertions.map((a: { text: string }) => a.text)).toEqual(['Missing visualization', 'Incomplete statistical analysis']);
    // Those are the row's own assertions (result.json); grading.json is AgentV's tree, one component per grader.
    const grading = JSON.parse(await readFile(join(out, j.failures[0].grading_path), 'utf8'));
    expect(grading.component_results.map((c: { assertion: { name: string } }) => c.assertion.name)).toEqual([
      'response_quality',
      'routing_accuracy',
      'step_efficiency',
    ]);
  });

  it('show on trace-analysis: tool calls come from metrics.json', async () => {
    const out = await exportFixture('trace-analysis--multi-agent.eval.results.jsonl');
    const j = JSON.parse((await runCli(['show', out, '--test-id', 'research-question', '--json'])).stdout);
    expect(j.cases).toHaveLength(1);
    const metrics = JSON.parse(await readFile(join(out, j.cases[0].paths.metrics), 'utf8'));
    expect(j.cases[0].tool_calls).toEqual({ total: metrics.total_tool_calls, by_tool: metrics.tool_calls });
    expect(j.cases[0]).toMatchObject({ score: 0.75, verdict: 'fail', target: 'gpt-4o', assertions: { passed: 2, total: 3 } });
  });
});
