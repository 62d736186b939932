import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseInputRow } from '../src/model/input-row.js';
import { sanitizeSegment, timestampSlug, slugToIso } from '../src/model/path-segments.js';
import { safeRelativePath } from '../src/runs/read/run-files.js';
import { normalizeRow, diffFiles } from '../src/runs/export/normalize.js';
import { readJsonlLines } from '../src/runs/export/jsonl-reader.js';
import { RunAggregator } from '../src/runs/export/aggregate.js';
import { attemptDir } from '../src/runs/export/row-files.js';
import { projectionIdentity } from '../src/runs/export/projection-identity.js';
import { normalizedTranscript, TranscriptSchema, transcriptMessages } from '../src/model/transcript.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-unit-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

function row(value: Record<string, unknown>) {
  const parsed = parseInputRow(value);
  if (!parsed.ok) throw new Error(parsed.problem);
  return normalizeRow(parsed.row);
}

describe('input rows', () => {
  it('maps the camelCase aliases real writers use', () => {
    const r = row({
      testId: 'x',
      score: 0.4,
      executionStatus: 'quality_failure',
      durationMs: 1234,
      tokenUsage: { input: 10, output: 5 },
      costUsd: 0.012,
      trace: { eventCount: 1, toolCalls: { rg: 1 }, errorCount: 0 },
    });
    expect(r.test_id).toBe('x');
    expect(r.duration_ms).toBe(1234);
    expect(r.usage).toMatchObject({ input: 10, output: 5, total: 15, source: 'provider_reported' });
    expect(r.cost_usd).toBe(0.012);
    expect(r.metrics.tool_calls).toEqual({ rg: 1 });
    expect(r.execution_status).toBe('quality_failure');
  });

  it('prefers the snake_case spelling when a row carries both', () => {
    const r = row({ test_id: 'snake', testId: 'camel', score: 1 });
    expect(r.test_id).toBe('snake');
  });

  it('names the missing field in its problem', () => {
    expect(parseInputRow({ score: 1 })).toMatchObject({ ok: false });
    expect((parseInputRow({ score: 1 }) as { problem: string }).problem).toMatch(/test_id/);
    expect((parseInputRow({ test_id: 'a' }) as { problem: string }).problem).toMatch(/score/);
    expect((parseInputRow({ test_id: 'a', score: 'high' }) as { problem: string }).problem).toMatch(/score/);
    expect((parseInputRow([1, 2]) as { problem: string }).problem).toMatch(/JSON object/);
  });

  it('defaults target, attempt, variant and source_target as seed 002 says', () => {
    const r = row({ test_id: 't', score: 1 });
    expect([r.target, r.attempt, r.variant, r.source_target, r.suite]).toEqual(['default', 0, null, 'default', 'default']);
  });

  it('takes output as a string or a message list and finds the final answer', () => {
    expect(row({ test_id: 't', score: 1, output: 'plain answer' }).answer).toBe('plain answer');
    const r = row({
      test_id: 't',
      score: 1,
      input: [{ role: 'user', content: 'q?' }],
      output: [
        { role: 'assistant', content: 'thinking', tool_calls: [{ tool: 'Read', input: { f: 1 } }, { tool: 'Read' }, { tool: 'Bash' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'final' }] },
      ],
    });
    expect(r.answer).toBe('final');
    expect(r.metrics.tool_calls).toEqual({ Read: 2, Bash: 1 });
    expect(r.metrics.total_tool_calls).toBe(3);
    expect(r.metrics.total_steps).toBe(2);
    expect(r.input_messages).toHaveLength(1);
  });

  it('uses the answer field when there is no output', () => {
    expect(row({ test_id: 't', score: 1, answer: 'hello' }).answer).toBe('hello');
  });
});

describe('expectations (seed 001 mapping)', () => {
  it('keeps row assertions and fills evidence from the grader that reported them', () => {
    const r = row({
      test_id: 't',
      score: 1,
      assertions: [
        { text: 'A', passed: true },
        { text: 'B', passed: false, evidence: 'own' },
      ],
      scores: [{ name: 'g', type: 'llm-grader', score: 1, assertions: [{ text: 'A', passed: true, evidence: 'from grader' }] }],
    });
    expect(r.expectations).toEqual([
      { text: 'A', passed: true, evidence: 'from grader' },
      { text: 'B', passed: false, evidence: 'own' },
    ]);
  });

  it('maps hits and misses with the grader reasoning as evidence', () => {
    const r = row({
      test_id: 't',
      score: 0.5,
      scores: [{ name: 'g', type: 'llm-grader', score: 0.5, hits: ['h1'], misses: ['m1', 'm2'], reasoning: 'because' }],
    });
    expect(r.expectations).toEqual([
      { text: 'h1', passed: true, evidence: 'because' },
      { text: 'm1', passed: false, evidence: 'because' },
      { text: 'm2', passed: false, evidence: 'because' },
    ]);
  });

  it('does not double count a composite grader and its children', () => {
    const r = row({
      test_id: 't',
      score: 1,
      scores: [
        {
          name: 'gate',
          type: 'assert-set',
          score: 1,
          scores: [
            { name: 'a', type: 'x', score: 1, assertions: [{ text: 'one', passed: true }] },
            { name: 'b', type: 'y', score: 0, verdict: 'fail' },
          ],
        },
      ],
    });
    expect(r.expectations.map((e) => [e.text, e.passed])).toEqual([
      ['one', true],
      ['b', false],
    ]);
  });

  it('derives one expectation from the score when a row has nothing else', () => {
    const r = row({ test_id: 't', score: 0.5 });
    expect(r.expectations).toHaveLength(1);
    expect(r.expectations[0]!.passed).toBe(false);
  });
});

describe('verdicts', () => {
  it('passes at the threshold, honours explicit verdicts, and flags execution errors', () => {
    expect(row({ test_id: 't', score: 0.8 }).verdict).toBe('pass');
    expect(row({ test_id: 't', score: 0.79 }).verdict).toBe('fail');
    expect(row({ test_id: 't', score: 0.1, verdict: 'pass' }).verdict).toBe('pass');
    expect(row({ test_id: 't', score: 1, execution_status: 'execution_error', error: 'boom' }).verdict).toBe('error');
  });
});

describe('paths from data', () => {
  it('keeps safe segments verbatim and rewrites the rest injectively', () => {
    expect(sanitizeSegment('code-review-001')).toBe('code-review-001');
    const hostile = ['..', '.', '', 'a/b', 'a_b', '../../etc', 'CON', 'nul.txt', 'tab\there', 'x\u0000y', '.hidden', 'trailing.', 'é'];
    const out = hostile.map(sanitizeSegment);
    for (const s of out) {
      expect(s).not.toMatch(/[/\\\u0000-\u001f]/);
      expect(s === '.' || s === '..' || s === '').toBe(false);
      expect(s.startsWith('.')).toBe(false);
    }
    expect(new Set(out).size).toBe(out.length);
    expect(sanitizeSegment('a/b')).not.toBe(sanitizeSegment('a_b'));
    expect(sanitizeSegment('x'.repeat(500)).length).toBeLessThanOrEqual(96);
  });

  it('rejects manifest paths that escape the run', () => {
    for (const bad of ['../x', '/etc/passwd', 'a/../../b', 'a//b', 'a\\b', '.git/config', 'a/./b', '']) expect(safeRelativePath(bad)).toBeNull();
    expect(safeRelativePath('suite/t/attempt-0/grading.json')).toBe('suite/t/attempt-0/grading.json');
  });

  it('turns timestamps into run directory names and back', () => {
    expect(timestampSlug('2026-02-20T21:38:00.970Z')).toBe('2026-02-20T21-38-00-970Z');
    expect(slugToIso('2026-02-20T21-38-00-970Z')).toBe('2026-02-20T21:38:00.970Z');
    expect(timestampSlug('not a date')).toBeNull();
  });

  it('gives distinct attempts distinct directories', () => {
    const base = { test_id: 't', score: 1, target: 'm' };
    const dirs = [
      row(base),
      row({ ...base, attempt: 1 }),
      row({ ...base, variant: 'b' }),
      row({ ...base, source_target: 'other' }),
      row({ ...base, target: 'n' }),
    ].map(attemptDir);
    expect(new Set(dirs).size).toBe(5);
  });

  it('keeps the projection identity stable and sensitive to every owned field', () => {
    const a = row({ test_id: 't', score: 1 });
    expect(projectionIdentity('e/1', a).id).toBe(projectionIdentity('e/1', a).id);
    expect(projectionIdentity('e/1', a).id).not.toBe(projectionIdentity('e/2', a).id);
    expect(projectionIdentity('e/1', a).id).not.toBe(projectionIdentity('e/1', row({ test_id: 't', score: 1, trace_id: 'tr' })).id);
    expect(projectionIdentity('e/1', a).id).toBe(projectionIdentity('e/1', row({ test_id: 't', score: 0.2 })).id);
  });
});

describe('diffFiles', () => {
  it('classifies created, deleted and modified files', () => {
    const diff = '--- a/x.ts\n+++ b/x.ts\n@@\n--- /dev/null\n+++ b/new.ts\n@@\n--- a/old.log\n+++ /dev/null\n';
    expect(diffFiles(diff)).toEqual({ created: ['new.ts'], deleted: ['old.log'], modified: ['x.ts'] });
  });
});

describe('jsonl reader', () => {
  async function lines(content: Buffer | string, maxLineBytes?: number) {
    const p = join(tmp, `f-${Math.random()}.jsonl`);
    await writeFile(p, content);
    const out = [];
    for await (const l of readJsonlLines(p, { maxLineBytes })) out.push(l);
    return out;
  }

  it('numbers lines, strips CR and a BOM, and keeps a last line without newline', async () => {
    const out = await lines('\ufeff{"a":1}\r\n\n{"b":2}');
    expect(out.map((l) => [l.lineNo, l.ok && l.text])).toEqual([
      [1, '{"a":1}'],
      [2, ''],
      [3, '{"b":2}'],
    ]);
  });

  it('reports invalid UTF-8 with its line number', async () => {
    const out = await lines(Buffer.concat([Buffer.from('{"a":1}\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])]));
    expect(out[1]).toMatchObject({ lineNo: 2, ok: false, problem: expect.stringMatching(/UTF-8/) });
  });

  it('reports an over-long line without buffering it and carries on', async () => {
    const out = await lines(`${'x'.repeat(5000)}\n{"ok":1}\n`, 1000);
    expect(out[0]).toMatchObject({ ok: false, problem: expect.stringMatching(/limit/) });
    expect(out[1]).toMatchObject({ ok: true, text: '{"ok":1}' });
  });

  it('reassembles multi-byte characters split across read chunks', async () => {
    const big = 'é'.repeat(1024 * 1024); // 2 MiB of 2-byte chars: crosses the 1 MiB chunk boundary
    const out = await lines(JSON.stringify({ t: big }) + '\n');
    expect(out[0]!.ok && JSON.parse(out[0]!.text).t).toBe(big);
  });
});

describe('aggregates', () => {
  it('matches skill-creator statistics (sample stddev, 4-digit rounding)', () => {
    const agg = new RunAggregator();
    const mk = (score: number, passed: number, total: number, duration: number) =>
      ({
        test_id: `t${score}`,
        target: 'm',
        suite: 's',
        score,
        verdict: score >= 0.8 ? 'pass' : 'fail',
        duration_ms: duration,
        total_tokens: 100,
        cost_usd: 0.01,
        assertions_summary: { passed, failed: total - passed, total },
        scores: [{ name: 'g', type: 'x', score }],
      }) as never;
    agg.add(mk(1, 2, 2, 1000));
    agg.add(mk(0.5, 1, 2, 3000));
    agg.add(mk(0, 0, 2, 2000));
    const b = agg.benchmark({ run_id: 'e/1', experiment: 'e', timestamp: null, eval_file: 'f', threshold: 0.8 }) as {
      run_summary: Record<string, Record<string, { mean: number; stddev: number; min: number; max: number }>>;
      per_evaluator_summary: Record<string, { n: number }>;
    };
    // pass rates 1, 0.5, 0 -> mean 0.5; sample variance ((0.5^2)*2)/2 = 0.25 -> stddev 0.5
    expect(b.run_summary.m!.pass_rate).toEqual({ mean: 0.5, stddev: 0.5, min: 0, max: 1 });
    expect(b.run_summary.m!.time_seconds).toEqual({ mean: 2, stddev: 1, min: 1, max: 3 });
    expect(b.per_evaluator_summary.g!.n).toBe(3);
    const s = agg.summary({ run_id: 'e/1', experiment: 'e', timestamp: null, eval_file: 'f', threshold: 0.8 }) as {
      total: number;
      passed: number;
      failed: number;
      pass_rate: number;
    };
    expect([s.total, s.passed, s.failed, s.pass_rate]).toEqual([3, 1, 2, 0.3333]);
  });
});

describe('transcript.json: one shape written, both read', () => {
  const messages = [
    { role: 'system', content: 'be brief', tool_calls: [] },
    { role: 'user', content: 'hi', tool_calls: [] },
    {
      role: 'assistant',
      content: 'looking',
      tool_calls: [
        { tool_name: 'Read', input: { path: 'a' }, output: 'x', duration_ms: 5 },
        { tool_name: 'Ls', input: {} },
      ],
    },
    { role: 'tool', content: 'x', tool_calls: [] },
    { role: 'assistant', content: '', tool_calls: [] },
  ];
  const summary = { messages: 5, turns: 1, tool_calls: 2, chars: 17 };

  it("writes AgentV's normalized shape, which reads back to the same messages", () => {
    const doc = normalizedTranscript({ testId: 't', target: 'm', messages, summary });
    expect(TranscriptSchema.safeParse(doc).success).toBe(true);
    expect(doc.schema_version).toBe('agentv.normalized_transcript.v1');
    const turns = doc.turns as { type: string }[];
    expect(turns.map((t) => t.type)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(transcriptMessages(JSON.parse(JSON.stringify(doc)))).toEqual([
      messages[0],
      messages[1],
      { ...messages[2], tool_calls: [messages[2]!.tool_calls[0], { tool_name: 'Ls', input: {} }] },
      messages[3],
      messages[4],
    ]);
  });

  it('still reads the earlier agentv.transcript.v1 documents, and nothing from others', () => {
    const legacy = { schema_version: 'agentv.transcript.v1', messages, transcript_summary: summary };
    expect(TranscriptSchema.safeParse(legacy).success).toBe(true);
    expect(transcriptMessages(legacy)).toEqual(messages);
    expect(transcriptMessages({ schema_version: 'x' })).toEqual([]);
    expect(transcriptMessages('not a doc')).toEqual([]);
  });
});
