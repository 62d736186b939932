/**
 * Every run layout we accept is read by every command: AgentV 5 workspaces
 * (`.internal/index.jsonl` + `<test>--<hash>/sample-N/`), today's pipeline bench output, older
 * pipeline bench (root index.jsonl with `graders[]` and a `pass` verdict), Era-A `run-N/`
 * folders, and our own bundle. Each layout is generated here in miniature (never copied from
 * real files); the conformance suite checks the same against runs the real AgentV writes.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { compareRuns, exportRun, listFailures, loadRun, showCases, summarizeRun, validateRun } from '../src/index.js';
import { inspectRun, findRunDirs } from '../src/runs/read/run-dir-state.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-read-layouts-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function put(root: string, files: Record<string, unknown>): Promise<void> {
  for (const [rel, value] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, typeof value === 'string' ? value : JSON.stringify(value, null, 2) + '\n');
  }
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** A component as AgentV writes it in grading.json: a grader with its leaf check nested. */
function component(name: string, type: string, pass: boolean, reason: string) {
  return {
    pass,
    score: pass ? 1 : 0,
    reason: pass ? 'Grader passed.' : reason,
    component_results: [{ pass, score: pass ? 1 : 0, reason, assertion: { name, type, weight: 1, value: reason } }],
    assertion: { name, type, weight: 1 },
  };
}

/** An AgentV 5 run: two tests x one target, one passing (score 1) and one at 0.5 that fails its grading. */
async function agentv5Run(root: string, runId = '2026-05-01T10-00-00-000Z'): Promise<string> {
  const dir = join(root, '.agentv', 'results', runId);
  const tests = [
    {
      id: 'greets',
      hash: 'aaaaaaaaaaaa',
      score: 0.5,
      pass: false,
      comps: [component('contains-hello', 'contains', false, 'Output does not contain "hello"'), component('regex-hi', 'regex', true, 'Output matches /hi/')],
    },
    { id: 'says-42', hash: 'bbbbbbbbbbbb', score: 1, pass: true, comps: [component('contains-42', 'contains', true, 'Output contains "42"')] },
  ];
  const rows = tests.map((t) => ({
    timestamp: '2026-05-01T10:00:00.100Z',
    test_id: t.id,
    suite: 'demo',
    score: t.score,
    target: 'agent-a',
    duration_ms: 120,
    scores: t.comps.map((c) => ({ name: c.assertion.name, type: c.assertion.type, pass: c.pass, score: c.score, reason: c.reason, weight: 1 })),
    samples: [{ sample: 1, sample_index: 0, sample_path: 'sample-1', score: t.score, status: t.pass ? 'passed' : 'failed' }],
    execution_status: t.pass ? 'ok' : 'quality_failure',
    result_dir: `${t.id}--${t.hash}`,
    grading_path: `${t.id}--${t.hash}/sample-1/grading.json`,
    summary_path: `${t.id}--${t.hash}/summary.json`,
    answer_path: `${t.id}--${t.hash}/sample-1/outputs/answer.md`,
    transcript_path: `${t.id}--${t.hash}/sample-1/transcript.json`,
    metrics_path: `${t.id}--${t.hash}/sample-1/metrics.json`,
    projection_identity: { schema_version: 'agentv.projection_identity.v1', id: `agentv-prj-${t.hash}` },
    experiment: 'nightly',
  }));
  const files: Record<string, unknown> = {
    '.internal/index.jsonl': jsonl(rows),
    'summary.json': {
      run_id: runId,
      counts: { total_tests: 2, passed_tests: 1 },
      tests: rows.map((r) => ({ test_id: r.test_id })),
      metadata: { experiment: 'nightly', eval_file: 'evals/demo.eval.yaml' },
    },
  };
  for (const t of tests) {
    const base = `${t.id}--${t.hash}`;
    files[`${base}/summary.json`] = { total_samples: 1, passed_samples: t.pass ? 1 : 0 };
    files[`${base}/sample-1/grading.json`] = {
      pass: t.pass,
      score: t.score,
      reason: t.pass ? 'All grading components passed.' : 'One or more grading components failed.',
      component_results: t.comps,
    };
    files[`${base}/sample-1/result.json`] = { status: t.pass ? 'passed' : 'failed' };
    files[`${base}/sample-1/metrics.json`] = {
      schema_version: 'agentv.metrics.v2',
      tokens: { total: 30, input: 20, output: 10, reasoning: 0, source: 'provider_reported' },
      cost: { usd: 0.01, source: 'provider_reported' },
      tool_call_counts: { Read: 2 },
    };
    files[`${base}/sample-1/transcript.json`] = {
      schema_version: 'agentv.normalized_transcript.v1',
      turns: [
        { type: 'user', content: [{ type: 'text', text: `prompt of ${t.id}` }] },
        { type: 'assistant', content: [{ type: 'text', text: `answer of ${t.id}` }] },
      ],
    };
    files[`${base}/sample-1/outputs/answer.md`] = `answer of ${t.id}\n`;
  }
  await put(dir, files);
  return dir;
}

describe('reading an AgentV 5 run workspace', () => {
  it("summary, failures, show and validate give AgentV's counts, assertions and evidence", async () => {
    const dir = await agentv5Run(join(tmp, 'p1'));
    const summary = await summarizeRun({ run: dir });
    expect(summary.run_id).toBe('2026-05-01T10-00-00-000Z');
    expect(summary.experiment).toBe('nightly');
    expect(summary.layout).toBe('agentv');
    expect(summary.dir).toBe(dir);
    expect(summary.summary.total).toBe(2);
    // The grading verdict decides, as in AgentV: greets scored 0.5 and failed its grading.
    expect(summary.summary.passed).toBe(1);
    expect(summary.summary.total_tokens).toBe(60);

    const failures = await listFailures({ run: dir });
    expect(failures.failures.map((f) => f.test_id)).toEqual(['greets']);
    const f = failures.failures[0]!;
    expect(f.assertions).toEqual({ passed: 1, total: 2 });
    expect(f.failed_assertions).toEqual([{ text: 'Output does not contain "hello"', evidence: 'Output does not contain "hello"' }]);

    const show = await showCases({ run: dir });
    const says = show.cases.find((c) => c.test_id === 'says-42')!;
    expect(says.verdict).toBe('pass');
    expect(says.tool_calls?.total).toBe(2);

    const v = await validateRun({ run: dir });
    expect(v.problems).toEqual([]);
    expect(v.rows).toBe(2);
    // Reading never writes into AgentV's run directory.
    expect(existsSync(join(dir, 'index.jsonl'))).toBe(false);
    expect((await readdir(dir)).sort()).toEqual(['.internal', 'greets--aaaaaaaaaaaa', 'says-42--bbbbbbbbbbbb', 'summary.json']);
  });

  it('accepts the run directory, its .internal/index.jsonl, and reports a row that is not a result without failing the others', async () => {
    const dir = await agentv5Run(join(tmp, 'p2'));
    const viaIndex = await loadRun(join(dir, '.internal', 'index.jsonl'));
    expect(viaIndex.rows).toHaveLength(2);
    await appendFile(join(dir, '.internal', 'index.jsonl'), '{"test_id": "broken"}\n');
    const run = await loadRun(dir);
    expect(run.rows).toHaveLength(2);
    expect(run.issues).toEqual([{ file: '.internal/index.jsonl', line: 3, message: expect.stringMatching(/score/) }]);
    const v = await validateRun({ run: dir });
    expect(v.valid).toBe(false);
  });

  it('export derives our bundle from it (CLI), with the run id and experiment AgentV recorded', async () => {
    const dir = await agentv5Run(join(tmp, 'p3'));
    const out = join(tmp, 'p3-out');
    const r = await runCli(['export', dir, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const run = await loadRun(out);
    expect(run.layout).toBe('bundle');
    expect(run.runId).toBe('2026-05-01T10-00-00-000Z');
    expect(run.experiment).toBe('nightly');
    expect(run.rows.map((x) => [x.test_id, x.verdict, x.assertions_summary.total])).toEqual([
      ['greets', 'fail', 2],
      ['says-42', 'pass', 1],
    ]);
  });

  it('compare reads two AgentV runs', async () => {
    const a = await agentv5Run(join(tmp, 'p4'), '2026-05-01T10-00-00-000Z');
    const b = await agentv5Run(join(tmp, 'p4'), '2026-05-02T10-00-00-000Z');
    const report = await compareRuns({ baseline: a, candidate: b });
    expect(report.matched.length).toBe(2);
  });

  it('the daemon sees an AgentV run as finished only once its final summary and whole index are written', async () => {
    const root = join(tmp, 'p5');
    const dir = await agentv5Run(root);
    const results = join(root, '.agentv', 'results');
    expect(await findRunDirs(results)).toEqual([dir]);
    const done = await inspectRun(dir);
    expect(done).toMatchObject({ layout: 'agentv', hasIndex: true, hasSummary: true, summaryComplete: true });
    // The stub AgentV writes before the first test: no tests yet.
    await writeFile(join(dir, 'summary.json'), JSON.stringify({ run_id: 'x', tests: [], metadata: { planned_test_count: 2 } }));
    expect(await inspectRun(dir)).toMatchObject({ hasSummary: false, summaryComplete: false });
    // Final summary written, index not yet rewritten in full.
    await writeFile(join(dir, 'summary.json'), JSON.stringify({ run_id: 'x', tests: [{}, {}, {}] }));
    expect((await inspectRun(dir))?.hasSummary).toBe(false);
  });
});

describe('reading pipeline bench and Era-A layouts', () => {
  it("today's pipeline bench (.internal/index.jsonl, grading.json per test, response.md)", async () => {
    const dir = join(tmp, 'bench-now');
    await put(dir, {
      '.internal/index.jsonl': jsonl([
        {
          timestamp: '2026-04-01T09:00:00Z',
          test_id: 't1',
          suite: 's',
          experiment: 'bench',
          score: 0.9,
          target: 'claude',
          scores: [{ name: 'rubric', type: 'llm-grader', pass: true, score: 0.9, weight: 1, reason: 'Grader passed.' }],
          execution_status: 'ok',
          grading_path: 's/t1/grading.json',
          metrics_path: 's/t1/metrics.json',
          response_path: 's/t1/response.md',
        },
        // pipeline bench writes execution_status ok whatever the score: its grading.json decides.
        {
          timestamp: '2026-04-01T09:00:00Z',
          test_id: 't2',
          suite: 's',
          experiment: 'bench',
          score: 0.3,
          target: 'claude',
          scores: [{ name: 'rubric', type: 'llm-grader', pass: false, score: 0.3, weight: 1, reason: 'Grader failed.' }],
          execution_status: 'ok',
          grading_path: 's/t2/grading.json',
          metrics_path: 's/t2/metrics.json',
        },
      ]),
      's/t1/grading.json': {
        pass: true,
        score: 0.9,
        reason: 'All grading components passed.',
        component_results: [
          {
            pass: true,
            score: 0.9,
            reason: 'ok',
            assertion: { name: 'rubric', type: 'llm-grader' },
            component_results: [{ pass: true, score: 1, reason: 'cites the source', assertion: { value: 'Cites a source' } }],
          },
        ],
      },
      's/t2/grading.json': {
        pass: false,
        score: 0.3,
        reason: 'One or more grading components failed.',
        component_results: [
          {
            pass: false,
            score: 0.3,
            reason: 'no',
            assertion: { name: 'rubric', type: 'llm-grader' },
            component_results: [{ pass: false, score: 0, reason: 'no citation at all', assertion: { value: 'Cites a source' } }],
          },
        ],
      },
      's/t1/response.md': 'the response\n',
      'summary.json': { run_id: 'bench-run', metadata: { experiment: 'bench' } },
    });
    const s = await summarizeRun({ run: dir });
    expect([s.summary.total, s.summary.passed]).toEqual([2, 1]);
    const f = await listFailures({ run: dir });
    expect(f.failures[0]!.failed_assertions).toEqual([{ text: 'Cites a source', evidence: 'no citation at all' }]);
  });

  it('older pipeline bench (root index.jsonl with graders[] and pass) and Era-A run-N/ folders', async () => {
    const dir = join(tmp, 'era-a');
    await put(dir, {
      'index.jsonl': jsonl([
        {
          test_id: 'old-1',
          score: 0.85,
          pass: true,
          target: 'm',
          graders: [{ name: 'g', type: 'code-grader', score: 0.85, weight: 1, assertions: [{ text: 'has header', passed: true, evidence: 'line 1' }] }],
        },
        { test_id: 'old-2', score: 0.2, target: 'm', result_dir: 'old-2', trials: [{ attempt: 0, run_path: 'run-1' }] },
      ]),
      'old-2/run-1/grading.json': {
        pass: false,
        score: 0.2,
        reason: 'failed',
        component_results: [{ pass: false, score: 0.2, reason: 'header missing', assertion: { name: 'has-header', type: 'contains', value: 'has header' } }],
      },
      'old-2/run-1/outputs/answer.md': 'no header here\n',
    });
    const s = await summarizeRun({ run: dir });
    expect([s.summary.total, s.summary.passed]).toEqual([2, 1]);
    const f = await listFailures({ run: dir });
    expect(f.failures.map((x) => [x.test_id, x.failed_assertions])).toEqual([['old-2', [{ text: 'has header', evidence: 'header missing' }]]]);
    const v = await validateRun({ run: dir });
    expect(v.problems).toEqual([]);
  });

  it('a directory with no manifest at all is still refused with a clear message', async () => {
    const dir = join(tmp, 'nothing');
    await mkdir(dir, { recursive: true });
    const r = await runCli(['summary', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a run workspace \(neither index\.jsonl nor \.internal\/index\.jsonl\)/);
  });
});

describe('our own bundle still reads as it is', () => {
  it('is not re-derived', async () => {
    const src = join(tmp, 'plain.jsonl');
    await writeFile(src, jsonl([{ test_id: 'a', score: 1, target: 't', timestamp: '2026-01-01T00:00:00Z' }]));
    const out = join(tmp, 'plain-out');
    await exportRun({ source: src, out });
    const run = await loadRun(out);
    expect(run.layout).toBe('bundle');
    expect(run.dir).toBe(out);
  });
});
