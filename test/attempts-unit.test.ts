/**
 * A row's attempts as AgentV writes them (5.x `samples` + `aggregation`, 4.42 `trials`, older
 * `attempts`), read by the one home (src/model/attempts.ts). Pure functions: the fast tier.
 */
import { describe, expect, it } from 'vitest';
import { attemptsOf } from '../src/model/attempts.js';
import { attemptStats, meanAttemptRate, passAtK, passHatK, wilsonInterval } from '../src/model/attempt-stats.js';
import { InvalidArgumentsError } from '../src/errors/errors.js';

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

describe('attempt statistics', () => {
  const choose = (n: number, k: number): number => {
    if (k < 0 || k > n) return 0;
    let r = 1;
    for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
    return r;
  };

  it('pass@k and pass^k equal the binomial forms for every n, c, k up to 12', () => {
    for (let n = 1; n <= 12; n++) {
      for (let c = 0; c <= n; c++) {
        for (let k = 1; k <= n; k++) {
          expect(passAtK(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 12);
          expect(passHatK(n, c, k)).toBeCloseTo(choose(c, k) / choose(n, k), 12);
        }
      }
    }
    expect(passAtK(3, 1, 1)).toBeCloseTo(1 / 3, 12);
    expect(passAtK(3, 1, 3)).toBe(1);
    expect(passHatK(3, 3, 3)).toBe(1);
    expect(passHatK(3, 2, 3)).toBe(0);
  });

  it('the Wilson interval matches published values and stays inside [0, 1]', () => {
    // 1 of 3 and 0 of 10 at 95%: the textbook Wilson score intervals.
    const a = wilsonInterval(1, 3);
    expect(a.low).toBeCloseTo(0.0615, 4);
    expect(a.high).toBeCloseTo(0.7923, 4);
    const b = wilsonInterval(0, 10);
    expect(b.low).toBe(0);
    expect(b.high).toBeCloseTo(0.2775, 4);
    const c = wilsonInterval(10, 10);
    expect(c.high).toBe(1);
    expect(c.low).toBeCloseTo(0.7225, 4);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });

  it('attemptStats carries AgentV names and k up to the attempts; the mean rate averages pairs', () => {
    const s = attemptStats(1, 3);
    expect(s).toMatchObject({ passed_samples: 1, total_samples: 3, pass_rate: 1 / 3 });
    expect(Object.keys(s.pass_at_k)).toEqual(['1', '2', '3']);
    expect(s.pass_at_k['2']).toBeCloseTo(2 / 3, 12);
    expect(s.pass_hat_k['1']).toBeCloseTo(1 / 3, 12);
    expect(
      meanAttemptRate([
        { passed: 1, total: 3 },
        { passed: 3, total: 3 },
        { passed: 0, total: 0 },
      ]),
    ).toBeCloseTo(2 / 3, 12);
    expect(meanAttemptRate([])).toBeNull();
  });

  it('an argument outside its range is an input error naming it, never a NaN answer; the edges of the range still answer', () => {
    const named = (fn: () => unknown): string[] => {
      try {
        fn();
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidArgumentsError);
        return (err as InvalidArgumentsError).issues.map((i) => i.path);
      }
      return [];
    };
    expect(named(() => passAtK(3, 4, 1))).toEqual(['c']);
    expect(named(() => passHatK(2, 1, 1.5))).toEqual(['k']);
    expect(named(() => wilsonInterval(1, Number.POSITIVE_INFINITY))).toEqual(['total']);
    expect(named(() => attemptStats(1, 3, -1))).toEqual(['maxK']);
    expect(named(() => meanAttemptRate([{ passed: 3, total: 2 }]))).toEqual(['pairs.0.passed']);
    // The edges: one attempt, none passed, k = n; no trials; more passed than run clamps in the interval only.
    expect(passAtK(1, 0, 1)).toBe(0);
    expect(passHatK(1, 1, 1)).toBe(1);
    expect(wilsonInterval(5, 3)).toEqual(wilsonInterval(3, 3));
    expect(attemptStats(0, 0)).toMatchObject({ passed_samples: 0, total_samples: 0, pass_rate: 0, pass_at_k: {}, ci95: { low: 0, high: 1 } });
    expect(attemptStats(2, 3, 0).pass_at_k).toEqual({});
  });
});
