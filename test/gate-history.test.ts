/**
 * The gate that knows noise (issue 49 item 3): the decision on the issue's own cases (a test that
 * passed 24 of 24 attempts over 8 runs and passes 1 of 3 now is named, kind `reliability`; a test
 * that passes about half its attempts and draws 0 of 3 is listed as noisy and does not fail the
 * gate), the one-sided Fisher test and Tarone's count checked by hand, and the same cases end to
 * end: 8 runs with repeats published to a real results branch, the gate reading the baseline's line
 * (`--history`, `--confidence`, too little history said so, `--history 0` = today's rule); and
 * `flaky` (item 4) over the same runs: classes, flips, intervals, strongest evidence first.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { cli, makeUserRepo } from './publish-helpers.js';
import { decideGate, type GateCase } from '../src/gate/gate-decision.js';
import type { GateReport } from '../src/gate/gate.js';
import type { FlakyReport } from '../src/trend/flaky.js';
import { flakyClass } from '../src/trend/flaky.js';
import { startServer } from '../src/serve/server.js';
import type { FlakyAnswer, TestDetailAnswer } from '../src/serve/api-types.js';
import { fisherLowerP, fisherMinP, noiseTest, taroneK } from '../src/model/noise-test.js';

const row = (passed: number, total: number) => ({ score: passed > 0 ? 1 : 0, verdict: passed > 0 ? 'pass' : 'fail', attempts: { passed, total } });

describe('the one-sided test and its multiplicity control', () => {
  it('Fisher’s one-sided p is the hypergeometric tail, by hand', () => {
    // 24/24 vs 1/3: both failures in the candidate's 3 of 27 attempts: C(25,1)·C(2,2)/C(27,3) = 25/2925.
    expect(fisherLowerP({ passed: 24, total: 24 }, { passed: 1, total: 3 })).toBeCloseTo(25 / 2925, 12);
    // 12/24 vs 0/3: the candidate's 3 attempts all among the 15 failures: C(15,3)/C(27,3).
    expect(fisherLowerP({ passed: 12, total: 24 }, { passed: 0, total: 3 })).toBeCloseTo(455 / 2925, 12);
    // Nothing lower than the history: p = 1.
    expect(fisherLowerP({ passed: 24, total: 24 }, { passed: 3, total: 3 })).toBeCloseTo(1, 12);
    expect(fisherMinP({ passed: 0, total: 50 }, { passed: 0, total: 5 })).toBe(1);
    expect(() => fisherLowerP({ passed: 3, total: 2 }, { passed: 0, total: 1 })).toThrow(RangeError);
  });

  it('Tarone counts only the tests that could reach alpha/K', () => {
    expect(taroneK([1, 1, 1, 1e-6], 0.05)).toBe(1);
    expect(taroneK([1e-6, 1e-6, 1e-6], 0.05)).toBe(3);
    const t = noiseTest(
      [
        { history: { passed: 24, total: 24 }, candidate: { passed: 1, total: 3 } },
        { history: { passed: 12, total: 24 }, candidate: { passed: 0, total: 3 } },
        { history: { passed: 24, total: 24 }, candidate: { passed: 3, total: 3 } },
      ],
      0.05,
    );
    expect([t.k, t.named]).toEqual([1, [true, false, false]]);
  });
});

describe('decideGate: the issue’s cases', () => {
  const cases: GateCase[] = [
    // 24 of 24 over 8 runs, 1 of 3 now: the best attempt still scores 1.
    { test_id: 'reliable', baseline: row(3, 3), candidate: row(1, 3), history: { runs: 8, passed: 24, total: 24 } },
    // About half over the same history, 0 of 3 now: an ordinary draw for it.
    { test_id: 'coin', baseline: row(2, 3), candidate: row(0, 3), history: { runs: 8, passed: 12, total: 24 } },
    { test_id: 'steady', baseline: row(3, 3), candidate: row(3, 3), history: { runs: 8, passed: 24, total: 24 } },
  ];

  it('names the reliability drop, lists the noisy test without failing on it', () => {
    const d = decideGate(cases, { tolerance: 0.1, alpha: 0.05 });
    expect(d.regressions.map((t) => [t.test_id, t.reason, t.noisy])).toEqual([['reliable', 'reliability', false]]);
    expect(d.regressions[0]!.attempts).toEqual({
      history: { runs: 8, passed: 24, total: 24 },
      candidate: { passed: 1, total: 3 },
      p: expect.closeTo(25 / 2925, 10),
    });
    expect(d.noisy.map((t) => [t.test_id, t.regressed])).toEqual([['coin', false]]);
    expect(d.noise).toMatchObject({ alpha: 0.05, k: 1, judged: 3 });
  });

  it('today’s rule (alpha null) fails the noisy test and misses the reliability drop', () => {
    const d = decideGate(cases, { tolerance: 0.1, alpha: null });
    // Its verdict flipped with its score (1 -> 0): a score drop past the tolerance.
    expect(d.regressions.map((t) => [t.test_id, t.reason])).toEqual([['coin', 'score']]);
    expect(d.noisy).toEqual([]);
    expect(d.noise).toBeNull();
  });

  it('a noisy test that collapses past its own noise is named; a history of one run is today’s rule for that test', () => {
    const d = decideGate(
      [
        { test_id: 'coin', baseline: row(5, 10), candidate: row(0, 10), history: { runs: 10, passed: 50, total: 100 } },
        { test_id: 'new', baseline: row(1, 1), candidate: row(0, 1), history: { runs: 1, passed: 1, total: 1 } },
      ],
      { tolerance: 0.1, alpha: 0.05 },
    );
    // Both dropped 1 -> 0; the stronger evidence (the smaller p) first.
    expect(d.regressions.map((t) => [t.test_id, t.reason, t.noisy ?? null])).toEqual([
      ['coin', 'score', true],
      ['new', 'score', null],
    ]);
    expect(d.noisy.map((t) => [t.test_id, t.regressed])).toEqual([['coin', true]]);
  });
});

describe('gate --history on a results branch (8 published runs with repeats)', () => {
  let restore: () => void;
  let user: UserRepoFixture;
  let tmp: string;
  let baseId: string;
  let n = 0;
  // The 5.x repeat row: every attempt in `samples`, the test scored by its best attempt (pass_any).
  const repeatRow = (test_id: string, outcomes: number[], minute: number, i: number) => {
    const passed = outcomes.filter((x) => x === 1).length;
    return {
      test_id,
      target: 'agent',
      timestamp: `2026-03-14T10:${String(minute).padStart(2, '0')}:0${i}.000Z`,
      score: Math.max(...outcomes),
      samples: outcomes.map((x, k) => ({
        sample: k + 1,
        sample_index: k,
        score: x,
        status: x === 1 ? 'passed' : 'failed',
        execution_status: x === 1 ? 'ok' : 'quality_failure',
      })),
      aggregation: { strategy: 'pass_any', passed_samples: passed, total_samples: outcomes.length, pass_rate: passed / outcomes.length },
    };
  };
  async function runFile(minute: number, plan: Record<string, number[]>): Promise<string> {
    const f = join(tmp, `run-${n++}.jsonl`);
    await writeFile(
      f,
      Object.entries(plan)
        .map(([id, o], i) => JSON.stringify(repeatRow(id, o, minute, i)))
        .join('\n') + '\n',
    );
    return f;
  }
  async function publish(f: string, experiment: string): Promise<string> {
    const r = await cli(['publish', f, '--experiment', experiment, '--no-push', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { location: { run_id: string } }).location.run_id;
  }
  const gate = async (args: string[]) => {
    const r = await cli(['gate', ...args, '--json'], user.work);
    expect([0, 1], r.stderr).toContain(r.code);
    return { code: r.code, json: JSON.parse(r.stdout) as GateReport };
  };
  let candidate: string;

  beforeAll(async () => {
    restore = useIsolatedGitEnv();
    tmp = await makeTempDir('agentv-gate-history');
    user = await makeUserRepo();
    // A run of another experiment between them: not the baseline's line.
    await publish(await runFile(0, { reliable: [0, 0, 0], coin: [0, 0, 0], steady: [0, 0, 0] }), 'other');
    for (let run = 0; run < 8; run++) {
      const coin = run % 2 === 0 ? [1, 1, 0] : [0, 1, 0]; // 12 of 24 over the 8 runs
      baseId = await publish(await runFile(run + 1, { reliable: [1, 1, 1], coin, steady: [1, 1, 1] }), 'nightly');
    }
    const t = await cli(['tag', baseId, '+baseline', '--no-push'], user.work);
    expect(t.code, t.stderr).toBe(0);
    candidate = await runFile(30, { reliable: [0, 1, 0], coin: [0, 0, 0], steady: [1, 1, 1] });
  }, 180_000);
  afterAll(async () => {
    restore?.();
    await cleanupTempDirs();
  });

  it('reads the baseline’s line, names the reliability drop, spares the noisy test', async () => {
    const g = await gate(['@baseline', candidate]);
    expect(g.code).toBe(1);
    expect(g.json.history).toMatchObject({ requested: 10, applied: true, tarone_k: 1 });
    expect(g.json.history.runs).toHaveLength(8);
    expect(g.json.history.runs[0]).toBe(baseId);
    expect(g.json.history.note).toMatch(/8 runs of history read \(asked 10\): experiment nightly has 8 published runs up to the baseline/);
    expect(g.json.regressions.map((t) => [t.test_id, t.reason])).toEqual([['reliable', 'reliability']]);
    expect(g.json.regressions[0]!.attempts).toMatchObject({ history: { runs: 8, passed: 24, total: 24 }, candidate: { passed: 1, total: 3 } });
    expect(g.json.noisy.map((t) => [t.test_id, t.regressed, t.history.passed, t.history.total])).toEqual([['coin', false, 12, 24]]);
    const md = await cli(['gate', '@baseline', candidate, '--format', 'markdown'], user.work);
    expect(md.stdout).toMatch(/\| reliable \| 1\.000 \| 1\.000 \| ±0\.000 \| reliability \| 1\/3 vs 24\/24 over 8 runs, p 0\.0085 \|/);
    expect(md.stdout).toMatch(/#### Noisy tests \(1\)/);
    expect(md.stdout).toMatch(/\| coin \| 0\/3 \| 12\/24 over 8 runs \| 0\.1556 \| within its noise \|/);
  });

  it('--confidence sets the bar; --history 0 and too little history apply today’s rule, saying so', async () => {
    const strict = await gate(['@baseline', candidate, '--confidence', '0.999']);
    expect([strict.code, strict.json.regressions.length, strict.json.history.confidence]).toEqual([0, 0, 0.999]);
    const today = await gate(['@baseline', candidate, '--history', '0']);
    expect(today.json.history).toMatchObject({ applied: false, requested: 0 });
    expect(today.json.regressions.map((t) => [t.test_id, t.reason])).toEqual([['coin', 'score']]);
    const one = await gate(['@baseline', candidate, '--history', '1']);
    expect(one.json.history.applied).toBe(false);
    expect(one.json.history.note).toMatch(/too little history \(fewer than 2 runs\): today's rule applied/);
    const text = await cli(['gate', '@baseline', candidate], user.work);
    expect(text.stdout).toMatch(/noisy \(1\)/);
    expect((await cli(['gate', '@baseline', candidate, '--history', '-1'], user.work)).code).toBe(2);
    expect((await cli(['gate', '@baseline', candidate, '--confidence', '2'], user.work)).code).toBe(2);
  });

  it('flaky names the noisy test over the published line, strongest evidence first; runs given work too', async () => {
    const r = await cli(['flaky', '--experiment', 'nightly', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const f = JSON.parse(r.stdout) as FlakyReport;
    expect(f.runs).toHaveLength(8);
    expect(f.runs[7]!.run_id).toBe(baseId);
    expect(f.tests.map((t) => [t.test_id, t.class, t.passed, t.total, t.runs, t.flips])).toEqual([
      ['coin', 'flaky', 12, 24, 8, 0],
      ['reliable', 'stable pass', 24, 24, 8, 0],
      ['steady', 'stable pass', 24, 24, 8, 0],
    ]);
    expect(f.tests[0]!.interval.low).toBeGreaterThan(0.25);
    expect(f.tests[0]!.interval.high).toBeLessThan(0.75);
    expect(f.summary).toEqual({ 'newly failing': 0, flaky: 1, 'stable fail': 0, 'stable pass': 2 });
    // The candidate after the line: the reliable test becomes newly failing when its run fails outright.
    const broken = await runFile(40, { reliable: [0, 0, 0], coin: [1, 0, 0], steady: [1, 1, 1] });
    const given = await cli(['flaky', baseId, broken, '--json'], user.work);
    expect(given.code, given.stderr).toBe(0);
    const g = JSON.parse(given.stdout) as FlakyReport;
    expect(g.tests.map((t) => [t.test_id, t.class, t.flips])).toEqual([
      ['reliable', 'newly failing', 1],
      ['coin', 'flaky', 0],
      ['steady', 'stable pass', 0],
    ]);
    const md = await cli(['flaky', '--experiment', 'nightly', '--format', 'markdown'], user.work);
    expect(md.stdout).toMatch(/\| coin \| agent \| flaky \| 12\/24 \| 50% \[\d+%, \d+%\] \| 0 \| ✓✓✓✓✓✓✓✓ \|/);
    const text = await cli(['flaky', '--experiment', 'nightly'], user.work);
    expect(text.stdout).toMatch(/8 runs of nightly: 1 flaky, 0 newly failing, 0 stable fail, 2 stable pass/);
  });

  it('the Dashboard’s /api/flaky is the same answer, and a test’s page learns its experiment to ask it', async () => {
    const server = await startServer({ cwd: user.work });
    try {
      const res = await fetch(`${server.url}/api/flaky?experiment=nightly`);
      expect(res.status).toBe(200);
      const api = (await res.json()) as FlakyAnswer;
      const cli_ = JSON.parse((await cli(['flaky', '--experiment', 'nightly', '--json'], user.work)).stdout) as FlakyReport;
      expect(api.tests).toEqual(cli_.tests);
      expect(api.tests[0]!.history.map((c) => `${c.passed}/${c.total}`)).toEqual(['2/3', '1/3', '2/3', '1/3', '2/3', '1/3', '2/3', '1/3']);
      const detail = (await (await fetch(`${server.url}/api/runs/${encodeURIComponent(baseId)}/tests/coin?target=agent`)).json()) as TestDetailAnswer;
      expect(detail.experiment).toBe('nightly');
      expect((await fetch(`${server.url}/api/flaky?experiment=nightly&last=x`)).status).toBe(400);
    } finally {
      await server.close();
    }
  });

  it('flakyClass: one failing run after passes is newly failing; mixed attempts are flaky', () => {
    const c = (passed: number, total: number) => ({ run_id: 'r', passed, total, verdict: passed > 0 ? ('pass' as const) : ('fail' as const) });
    expect(flakyClass([c(3, 3), c(3, 3), c(0, 3)])).toBe('newly failing');
    expect(flakyClass([c(3, 3), c(1, 3), c(3, 3)])).toBe('flaky');
    expect(flakyClass([c(0, 3), c(0, 3)])).toBe('stable fail');
    expect(flakyClass([c(3, 3)])).toBe('stable pass');
    expect(flakyClass([c(0, 3)])).toBe('stable fail');
  });
});
