/**
 * A row's attempts as AgentV writes them (5.x `samples` + `aggregation`, 4.42 `trials`, older
 * `attempts`), read by the one home (src/model/attempts.ts). Pure functions: the fast tier.
 */
import { describe, expect, it } from 'vitest';
import { attemptsOf } from '../src/model/attempts.js';

describe('attemptsOf', () => {
  it('reads a 5.x pass_any row: every sample, the best score, the test passed on one attempt of three', () => {
    const row = {
      test_id: 't',
      score: 1,
      execution_status: 'ok',
      samples: [
        { sample: 1, sample_index: 0, sample_path: 'sample-1', score: 0, status: 'failed', execution_status: 'quality_failure' },
        { sample: 2, sample_index: 1, sample_path: 'sample-2', score: 1, status: 'passed', execution_status: 'ok' },
        { sample: 3, sample_index: 2, sample_path: 'sample-3', score: 0, status: 'failed', execution_status: 'quality_failure' },
      ],
      aggregation: { strategy: 'pass_any', passed_samples: 1, total_samples: 3, pass_rate: 0.333 },
    };
    const a = attemptsOf(row);
    expect(a).toMatchObject({ passed: 1, total: 3, strategy: 'pass_any', verdict: 'pass', score: 1 });
    expect(a.attempts.map((x) => [x.index, x.verdict, x.score, x.path])).toEqual([
      [0, 'fail', 0, 'sample-1'],
      [1, 'pass', 1, 'sample-2'],
      [2, 'fail', 0, 'sample-3'],
    ]);
  });

  it('reads a 5.x row that ran once as one attempt with no strategy', () => {
    const a = attemptsOf({
      test_id: 't',
      score: 0.5,
      execution_status: 'quality_failure',
      samples: [{ sample: 1, sample_index: 0, score: 0.5, status: 'failed', execution_status: 'quality_failure' }],
    });
    expect(a).toMatchObject({ passed: 0, total: 1, strategy: null, verdict: 'fail' });
  });

  it('reads 4.42 trials (camelCase as the runner keeps them) and every strategy', () => {
    const trials = [
      { attempt: 0, score: 0.2, verdict: 'fail', executionStatus: 'quality_failure' },
      { attempt: 1, score: 0.9, verdict: 'pass', executionStatus: 'ok' },
      { attempt: 2, score: 0, executionStatus: 'execution_error', error: 'boom' },
    ];
    for (const strategy of ['pass_at_k', 'mean', 'confidence_interval']) {
      const a = attemptsOf({ test_id: 't', score: 0.37, trials, aggregation: { strategy } });
      expect(a).toMatchObject({ passed: 1, total: 3, strategy, verdict: 'pass', score: 0.37 });
      expect(a.attempts.map((x) => x.verdict)).toEqual(['fail', 'pass', 'error']);
      expect(a.attempts[2]!.error).toBe('boom');
    }
    expect(attemptsOf({ test_id: 't', score: 0.2, trials, aggregation: { strategy: 'pass_all' } }).verdict).toBe('fail');
  });

  it('a row without attempts is one attempt built from the row; all attempts errored is an error', () => {
    expect(attemptsOf({ test_id: 't', score: 1, verdict: 'pass' })).toMatchObject({ passed: 1, total: 1, strategy: null, verdict: 'pass' });
    expect(attemptsOf({ test_id: 't', score: 0.9 }).verdict).toBe('pass');
    expect(attemptsOf({ test_id: 't', score: 0, execution_status: 'execution_error' }).verdict).toBe('error');
    const errored = attemptsOf({
      test_id: 't',
      score: 0,
      attempts: [
        { attempt: 0, score: 0, execution_status: 'execution_error' },
        { attempt: 1, score: 0, execution_status: 'execution_error' },
      ],
      aggregation: { strategy: 'pass_any', passed_attempts: 0, total_attempts: 2 },
    });
    expect(errored).toMatchObject({ passed: 0, total: 2, verdict: 'error' });
  });

  it('survives hostile shapes without throwing', () => {
    for (const row of [{}, { samples: 'x' }, { samples: [null, 3, 'a'] }, { aggregation: [] }, { score: Number.NaN }]) {
      const a = attemptsOf(row as Record<string, unknown>);
      expect(a.total).toBeGreaterThanOrEqual(1);
      expect(a.attempts.length).toBe(a.total);
    }
  });
});
