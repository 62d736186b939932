/**
 * `trend`: hand-computed slopes on the three real trend fixtures (claude-sonnet falls, gpt-5
 * rises), the thresholds and the gate, local runs found under .agentv/results/, runs read from a
 * results branch through publish/list/pull (a real bare remote), and the library function.
 * Side by side with the real `agentv trend`: test/conformance/compare.test.ts.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trend } from '../src/index.js';
import { regressionMarks } from '../src/trend/index.js';
import { runCli } from './helpers/cli.js';
import { describeWithFixtures, fixture } from './helpers/fixtures.js';
import { cleanupTempDirs, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { cli, makeUserRepo } from './publish-helpers.js';

const DAYS = ['2026-03-01T10-00-00-000Z', '2026-03-08T10-00-00-000Z', '2026-03-15T10-00-00-000Z'];
const tmp = await mkdtemp(join(tmpdir(), 'agentv-trend-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

interface TrendJson {
  series: {
    experiment: string;
    target: string;
    runs: { mean_score: number; run_id?: string; matched_test_count: number; regression: boolean; pass_rate: number | null; cost_usd: number | null }[];
    summary: { slope: number; direction: string; run_count: number; matched_test_count: number; r_squared: number };
    regression: { triggered: boolean };
  }[];
  skipped: { experiment: string; target: string; reason: string }[];
  triggered: boolean;
  source: string;
}

async function trendCli(args: string[], cwd?: string): Promise<{ code: number; json: TrendJson; stderr: string; stdout: string }> {
  const r = await runCli(['trend', ...args, '--json'], { cwd });
  return { code: r.code, json: r.code === 2 ? (undefined as never) : (JSON.parse(r.stdout) as TrendJson), stderr: r.stderr, stdout: r.stdout };
}

describe('trend: regression marks follow the slope rule', () => {
  it('never on a flat or rising line, only where a degrading line fell', () => {
    expect(regressionMarks([0.8, 0.8, 0.8, 0.8])).toEqual([false, false, false, false]);
    expect(regressionMarks([0.5, 0.6, 0.7])).toEqual([false, false, false]);
    // A dip inside an improving series is not a regression by the rule (the series is not degrading).
    expect(regressionMarks([0.5, 0.7, 0.69, 0.9])).toEqual([false, false, false, false]);
    // A noisy flat line: drops smaller than the threshold's slope are not marked.
    expect(regressionMarks([0.8, 0.805, 0.8, 0.805, 0.8])).toEqual([false, false, false, false, false]);
    expect(regressionMarks([0.9, 0.8, 0.85, 0.7])).toEqual([false, true, false, true]);
    // The threshold is the trend's: at 0.2 per run, the same fall is stable.
    expect(regressionMarks([0.9, 0.8, 0.85, 0.7], 0.2)).toEqual([false, false, false, false]);
  });
});

describeWithFixtures('trend: the three real trend fixtures', () => {
  const files = DAYS.map((d) => fixture(`trend--${d}--index.jsonl`));

  it('pooled by default: one series over every target, as agentv trend without --target', async () => {
    const { code, json } = await trendCli(files);
    expect(code).toBe(0);
    expect(json.series).toHaveLength(1);
    // (0.94+0.90+0.88)/3, (0.88+0.84+0.90)/3, (0.82+0.78+0.91)/3 -> slope -0.035
    expect(json.series[0]!.runs.map((r) => r.mean_score)).toEqual([0.906667, 0.873333, 0.836667]);
    expect(json.series[0]).toMatchObject({ experiment: null, target: null, targets: ['claude-sonnet', 'gpt-5'] });
    expect(json.series[0]!.summary).toMatchObject({ slope: -0.035, direction: 'degrading', matched_test_count: 2 });
    // Marks where the falling line fell, none on the first point.
    expect(json.series[0]!.runs.map((r) => r.regression)).toEqual([false, true, true]);
  });

  it('--by-target: one series per target, hand-computed slopes and directions', async () => {
    const { code, json } = await trendCli([...files, '--by-target']);
    expect(code).toBe(0);
    const [claude, gpt] = json.series;
    // claude-sonnet: (0.94+0.90)/2 = 0.92, (0.88+0.84)/2 = 0.86, (0.82+0.78)/2 = 0.80 -> slope -0.06
    expect(claude!.target).toBe('claude-sonnet');
    expect(claude!.runs.map((r) => r.mean_score)).toEqual([0.92, 0.86, 0.8]);
    expect(claude!.summary).toMatchObject({ slope: -0.06, direction: 'degrading', run_count: 3, matched_test_count: 2, r_squared: 1 });
    // gpt-5: 0.88, 0.90, 0.91 -> slope (0.91 - 0.88) / 2 = 0.015
    expect(gpt!.target).toBe('gpt-5');
    expect(gpt!.summary).toMatchObject({ slope: 0.015, direction: 'improving' });
    expect(json.triggered).toBe(false);
    // AgentV's rows state no verdict: a pass is a score at AgentV's threshold 0.8 (0.78 fails); they carry no cost.
    expect(claude!.runs.map((r) => r.pass_rate)).toEqual([1, 1, 0.5]);
    expect(gpt!.runs.map((r) => r.pass_rate)).toEqual([1, 1, 1]);
    expect(json.series.flatMap((s) => s.runs.map((r) => r.cost_usd))).toEqual([null, null, null, null, null, null]);
  });

  it('--slope-threshold 0.02 makes gpt-5 stable; --fail-on-degrading exits 1 on claude-sonnet only', async () => {
    const { json } = await trendCli([...files, '--by-target', '--slope-threshold', '0.02']);
    expect(json.series.map((s) => s.summary.direction)).toEqual(['degrading', 'stable']);
    const gate = await trendCli([...files, '--by-target', '--fail-on-degrading']);
    expect(gate.code).toBe(1);
    expect(gate.json.triggered).toBe(true);
    expect(gate.json.series.map((s) => s.regression.triggered)).toEqual([true, false]);
    expect((await trendCli([...files, '--fail-on-degrading', '--target', 'gpt-5'])).code).toBe(0);
    const human = await runCli(['trend', ...files, '--by-target', '--fail-on-degrading']);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/all experiments × claude-sonnet: degrading \(slope -0\.0600 per run/);
  });

  it('--last 2 keeps the two newest runs of each series', async () => {
    const { json } = await trendCli([...files, '--last', '2', '--target', 'claude-sonnet']);
    expect(json.series[0]!.runs.map((r) => r.mean_score)).toEqual([0.86, 0.8]);
    expect(json.series[0]!.summary.slope).toBe(-0.06);
  });

  it('a single run is reported as not classified, and bad flags are usage errors', async () => {
    const { code, json } = await trendCli([files[0]!, '--by-target']);
    expect(code).toBe(0);
    expect(json.series).toEqual([]);
    expect(json.skipped[0]).toMatchObject({ target: 'claude-sonnet', reason: 'a trend needs at least 2 runs' });
    expect((await trendCli([files[0]!])).json.skipped).toEqual([{ experiment: null, target: null, runs: 1, reason: 'a trend needs at least 2 runs' }]);
    expect((await runCli(['trend', ...files, '--slope-threshold', '-1'])).code).toBe(2);
    expect((await runCli(['trend', ...files, '--last', '1'])).code).toBe(2);
    expect((await runCli(['trend', join(tmp, 'missing-run')])).code).toBe(2);
  });

  it('with no paths, reads the runs under .agentv/results/ (the library function too)', async () => {
    const project = join(tmp, 'project');
    // AgentV's <run_id>/, ours <experiment>/<ts>/ and the seeds' runs/<experiment>/<ts>/, side by side.
    const where = [DAYS[0]!, join('exp', DAYS[1]!), join('runs', 'exp', DAYS[2]!)];
    for (let i = 0; i < DAYS.length; i++) {
      await mkdir(join(project, '.agentv', 'results', where[i]!), { recursive: true });
      await copyFile(fixture(`trend--${DAYS[i]}--index.jsonl`), join(project, '.agentv', 'results', where[i]!, 'index.jsonl'));
    }
    await mkdir(join(project, '.agentv', 'results', 'runs', 'exp', '_autoresearch'), { recursive: true });
    await writeFile(join(project, '.agentv', 'results', 'runs', 'exp', '_autoresearch', 'iterations.jsonl'), '{"cycle":1}\n');
    const { code, json } = await trendCli(['--by-target'], project);
    expect(code).toBe(0);
    expect(json.source).toBe('local');
    expect(json.series[0]!.summary.run_count).toBe(3);
    expect(json.series.map((s) => [s.target, s.summary.direction])).toEqual([
      ['claude-sonnet', 'degrading'],
      ['gpt-5', 'improving'],
    ]);
    const lib = await trend({ cwd: project, target: 'gpt-5' });
    expect(lib.series.map((s) => s.summary.slope)).toEqual([0.015]);
    const empty = await runCli(['trend'], { cwd: tmp });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no runs under');
  });
});

describeWithFixtures('trend --published: runs listed and pulled from the results branch', () => {
  let restore: () => void;
  let work: string;
  beforeAll(async () => {
    restore = useIsolatedGitEnv();
    const user = await makeUserRepo();
    work = user.work;
    for (const d of DAYS) {
      const out = join(tmp, `pub-${d}`);
      const e = await cli(['export', fixture(`trend--${d}--index.jsonl`), '--out', out, '--experiment', 'review'], tmp);
      expect(e.code, e.stderr).toBe(0);
      const p = await cli(['publish', out, '--push'], work);
      expect(p.code, p.stderr).toBe(0);
    }
  }, 180_000);
  afterAll(async () => {
    restore?.();
    await cleanupTempDirs();
  });

  it('classifies the published series as the local ones, naming runs by their run ids', async () => {
    const r = await cli(['trend', '--published', '--by-experiment', '--by-target', '--json'], work);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as TrendJson;
    expect(json.source).toBe('published');
    expect(json.series.map((s) => [s.experiment, s.target, s.summary.slope, s.summary.direction])).toEqual([
      ['review', 'claude-sonnet', -0.06, 'degrading'],
      ['review', 'gpt-5', 0.015, 'improving'],
    ]);
    expect(json.series[0]!.runs.every((p) => typeof p.run_id === 'string' && p.run_id.length > 0)).toBe(true);
    const gate = await cli(['trend', '--published', '--experiment', 'review', '--target', 'claude-sonnet', '--fail-on-degrading'], work);
    expect(gate.code).toBe(1);
    const none = await cli(['trend', '--published', '--experiment', 'nope'], work);
    expect(none.code).toBe(2);
  }, 120_000);
});
