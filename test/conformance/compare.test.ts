/**
 * `compare` and `trend` side by side with the real `agentv compare --json` / `agentv trend --json`
 * on the same inputs: the real fixture pairs, the three trend fixtures, a multi-target file, and
 * runs that `agentv eval` made in the sample project. Every field AgentV prints must come out of
 * ours with the same value (our extras may be added, never renamed or dropped), the outcome of
 * every test must match, and so must the exit code. `autoresearch record` must take the decision
 * the skill takes from `agentv compare --json`.
 *
 * AgentV only reads manifests named index.jsonl, so each fixture is copied to `<dir>/index.jsonl`
 * in a temp dir (never into the project).
 */
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { agentvEval, askAgentVOnce, describeWithAgentV, makeSampleProject, runAgentV } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { fixture, itWithFixtures } from '../helpers/fixtures.js';
import { isolateGitForSuite } from '../helpers/git-fixtures.js';

/** Every key AgentV printed is in ours with an equal value (recursively; arrays element by element). */
function expectSuperset(agentv: unknown, ours: unknown, path = '$'): void {
  if (Array.isArray(agentv)) {
    expect(Array.isArray(ours), `${path} is an array`).toBe(true);
    expect((ours as unknown[]).length, `${path}.length`).toBe(agentv.length);
    for (const [i, v] of agentv.entries()) expectSuperset(v, (ours as unknown[])[i], `${path}[${i}]`);
    return;
  }
  if (agentv !== null && typeof agentv === 'object') {
    expect(ours !== null && typeof ours === 'object', `${path} is an object`).toBe(true);
    for (const [k, v] of Object.entries(agentv)) {
      expect(Object.hasOwn(ours as object, k), `${path}.${k} present in ours`).toBe(true);
      expectSuperset(v, (ours as Record<string, unknown>)[k], `${path}.${k}`);
    }
    return;
  }
  expect(ours, path).toBe(agentv);
}

let tmp: string;
let n = 0;
async function asManifest(file: string): Promise<string> {
  const dir = join(tmp, `m${n++}`);
  await mkdir(dir, { recursive: true });
  await copyFile(file, join(dir, 'index.jsonl'));
  return join(dir, 'index.jsonl');
}

/** AgentV asked once per command line: the inputs never change after they are written (autoresearch's compares repeat the pairwise ones). */
const agentv = (args: string[], cwd: string) => askAgentVOnce(args, { cwd });

async function sideBySide(cmd: 'compare' | 'trend', args: string[], cwd: string) {
  const theirs = await agentv([cmd, ...args, '--json'], cwd);
  const ours = await runCli([cmd, ...args, '--json'], { cwd });
  expect(theirs.code, theirs.stderr).toBeLessThanOrEqual(1);
  expect(ours.code, ours.stderr).toBe(theirs.code);
  return { theirs: JSON.parse(theirs.stdout) as Record<string, any>, ours: JSON.parse(ours.stdout) as Record<string, any> };
}

async function expectSameCompare(baseline: string, candidate: string, extra: string[] = [], cwd = tmp) {
  const { theirs, ours } = await sideBySide('compare', [baseline, candidate, ...extra], cwd);
  expectSuperset(theirs, ours);
  expect(ours.matched.map((m: { outcome: string }) => m.outcome)).toEqual(theirs.matched.map((m: { outcome: string }) => m.outcome));
  return { theirs, ours };
}

describeWithAgentV("compare and trend give AgentV's answers", () => {
  isolateGitForSuite();
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'agentv-conf-compare-'));
  });

  itWithFixtures(
    'the compare fixtures, both ways and at three thresholds',
    async () => {
      const base = await asManifest(fixture('compare--baseline-results.jsonl'));
      const cand = await asManifest(fixture('compare--candidate-results.jsonl'));
      const { theirs } = await expectSameCompare(base, cand);
      // The case: at AgentV's default the pair is 1 win, not 4.
      expect(theirs.summary.wins).toBe(1);
      await expectSameCompare(cand, base); // a regression: both exit 1
      await expectSameCompare(base, cand, ['--threshold', '0']);
      await expectSameCompare(base, cand, ['--threshold', '0.05']);
    },
    240_000,
  );

  itWithFixtures(
    'the trend fixtures pairwise (several targets per file: last row wins) and a multi-target file against a changed copy',
    async () => {
      const names = ['2026-03-01T10-00-00-000Z', '2026-03-08T10-00-00-000Z', '2026-03-15T10-00-00-000Z'];
      const files = await Promise.all(names.map((d) => asManifest(fixture(`trend--${d}--index.jsonl`))));
      for (let i = 0; i < files.length; i++) for (let j = 0; j < files.length; j++) if (i !== j) await expectSameCompare(files[i]!, files[j]!);
      const bench = fixture('benchmark-tooling--combined-results.jsonl');
      const rows = (await readFile(bench, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { score: number; test_id: string });
      for (const [i, r] of rows.entries()) r.score = Math.max(0, Math.min(1, r.score + (i % 3 === 0 ? 0.2 : i % 3 === 1 ? -0.15 : 0.05)));
      rows.push({ test_id: 'only-in-candidate', score: 1 });
      const changed = join(tmp, 'bench-changed.jsonl');
      await writeFile(changed, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const { ours } = await expectSameCompare(await asManifest(bench), await asManifest(changed));
      expect(ours.unmatched.candidate_only).toEqual(['only-in-candidate']);
    },
    240_000,
  );

  itWithFixtures(
    'one run with several targets: the matrix, a target pair, and the matrix gate on a baseline target',
    async () => {
      const bench = await asManifest(fixture('benchmark-tooling--combined-results.jsonl'));
      const matrix = await sideBySide('compare', [bench], tmp);
      expectSuperset(matrix.theirs, matrix.ours);
      expect(matrix.ours.targets).toEqual(['gemini-3-flash-preview', 'gpt-4.1', 'gpt-5-mini']);
      const pair = await sideBySide('compare', [bench, '--baseline', 'gpt-4.1', '--candidate', 'gpt-5-mini'], tmp);
      expectSuperset(pair.theirs, pair.ours);
      // Our spelling gives the same answer.
      const ours = await runCli(['compare', bench, '--baseline-target', 'gpt-4.1', '--candidate-target', 'gpt-5-mini', '--json']);
      expectSuperset(pair.theirs, JSON.parse(ours.stdout));
      for (const baseline of ['gpt-5-mini', 'gemini-3-flash-preview']) {
        const gate = await sideBySide('compare', [bench, '--baseline', baseline], tmp); // exit codes compared inside
        expectSuperset(gate.theirs, gate.ours);
      }
      const narrowed = await sideBySide('compare', [bench, '--targets', 'gpt-5-mini', '--targets', 'gpt-4.1'], tmp);
      expectSuperset(narrowed.theirs, narrowed.ours);
    },
    240_000,
  );

  itWithFixtures(
    'trend on the three fixtures: pooled as agentv trend, and each target series (--by-target) as agentv trend --target classifies it',
    async () => {
      const dir = join(tmp, 'trend-runs');
      const names = ['2026-03-01T10-00-00-000Z', '2026-03-08T10-00-00-000Z', '2026-03-15T10-00-00-000Z'];
      const paths: string[] = [];
      for (const d of names) {
        await mkdir(join(dir, d), { recursive: true });
        await copyFile(fixture(`trend--${d}--index.jsonl`), join(dir, d, 'index.jsonl'));
        paths.push(join(dir, d, 'index.jsonl'));
      }
      // Default: one series, every target pooled, exactly agentv trend without --target.
      const pooled = await sideBySide('trend', paths, tmp);
      expect(pooled.ours.series).toHaveLength(1);
      expectSuperset(pooled.theirs.summary, pooled.ours.series[0].summary);
      expectSuperset(pooled.theirs.runs, pooled.ours.series[0].runs);
      expect(pooled.ours.series[0].summary).toMatchObject({ slope: -0.035, direction: 'degrading' });
      const ours = await runCli(['trend', ...paths, '--by-target', '--json']);
      expect(ours.code, ours.stderr).toBe(0);
      const report = JSON.parse(ours.stdout) as { series: { target: string; summary: Record<string, unknown>; runs: unknown[] }[] };
      expect(report.series.map((s) => s.target)).toEqual(['claude-sonnet', 'gpt-5']);
      // One AgentV run per target answers both the series and the gate: --fail-on-degrading changes
      // its exit code and its regression block, never its summary or runs.
      const gateTheirs = new Map<string, number>();
      for (const s of report.series) {
        const theirs = await runAgentV(['trend', ...paths, '--target', s.target, '--fail-on-degrading', '--json'], { cwd: tmp });
        expect(theirs.code, theirs.stderr).toBeLessThanOrEqual(1);
        gateTheirs.set(s.target, theirs.code);
        const t = JSON.parse(theirs.stdout) as { summary: unknown; runs: unknown };
        expectSuperset(t.summary, s.summary);
        expectSuperset(t.runs, s.runs);
      }
      // claude-sonnet falls 0.92 -> 0.86 -> 0.80: degrading; gpt-5 rises 0.88 -> 0.90 -> 0.91: improving.
      expect(report.series.map((s) => s.summary.direction)).toEqual(['degrading', 'improving']);
      // Both tools fail the gate on the degrading target, and pass it on the improving one.
      const gateOurs = await runCli(['trend', ...paths, '--target', 'claude-sonnet', '--fail-on-degrading']);
      expect(gateTheirs.get('claude-sonnet')).toBe(1);
      expect(gateOurs.code).toBe(1);
      expect(gateTheirs.get('gpt-5')).toBe(0);
      expect((await runCli(['trend', ...paths, '--target', 'gpt-5', '--fail-on-degrading'])).code).toBe(0);
    },
    240_000,
  );

  it('runs made by agentv eval in the sample project: compare pairwise, trend per target', async () => {
    const project = await makeSampleProject();
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) runs.push(await agentvEval(project, { experiment: 'conf' }));
    for (let i = 1; i < runs.length; i++) await expectSameCompare(runs[i - 1]!, runs[i]!, [], project);
    await expectSameCompare(runs[0]!, runs[3]!, ['--threshold', '0'], project);
    const pair = await sideBySide('compare', [runs[0]!, '--baseline', 'steady-agent', '--candidate', 'flaky-agent'], project);
    expectSuperset(pair.theirs, pair.ours);
    const matrix = await sideBySide('compare', [runs[1]!], project);
    expectSuperset(matrix.theirs, matrix.ours);
    // trend with no paths reads .agentv/results/ like `agentv trend --last`: pooled, then per target.
    const pooledOurs = JSON.parse((await runCli(['trend', '--json'], { cwd: project })).stdout) as { series: { summary: unknown; runs: unknown }[] };
    const pooledTheirs = JSON.parse((await runAgentV(['trend', ...runs, '--json'], { cwd: project })).stdout) as { summary: unknown; runs: unknown };
    expect(pooledOurs.series).toHaveLength(1);
    expectSuperset(pooledTheirs.summary, pooledOurs.series[0]!.summary);
    expectSuperset(pooledTheirs.runs, pooledOurs.series[0]!.runs);
    const ours = await runCli(['trend', '--by-experiment', '--by-target', '--json'], { cwd: project });
    expect(ours.code, ours.stderr).toBe(0);
    const report = JSON.parse(ours.stdout) as { series: { experiment: string; target: string; summary: Record<string, unknown>; runs: unknown[] }[] };
    expect(report.series.map((s) => `${s.experiment}/${s.target}`).sort()).toEqual(['conf/flaky-agent', 'conf/steady-agent']);
    for (const s of report.series) {
      const theirs = await runAgentV(['trend', ...runs, '--target', s.target, '--json'], { cwd: project });
      expect(theirs.code, theirs.stderr).toBe(0);
      const t = JSON.parse(theirs.stdout) as { summary: unknown; runs: unknown };
      expectSuperset(t.summary, s.summary);
      expectSuperset(t.runs, s.runs);
    }
    expect(report.series.find((s) => s.target === 'steady-agent')!.summary.direction).toBe('stable');

    // autoresearch record decides as the skill would from `agentv compare <last kept> <run> --json`.
    let kept = runs[0]!;
    for (let i = 0; i < runs.length; i++) {
      const r = await runCli(['autoresearch', 'record', runs[i]!, '--experiment', 'autoresearch-conf', '--mutation', `cycle ${i + 1}`, '--json'], {
        cwd: project,
      });
      expect(r.code, r.stderr).toBe(0);
      const line = JSON.parse(r.stdout) as { cycle: number; decision: string; compare?: Record<string, number> };
      expect(line.cycle).toBe(i + 1);
      if (i === 0) {
        expect(line.decision).toBe('keep');
        continue;
      }
      const theirs = await agentv(['compare', kept, runs[i]!, '--json'], project);
      const s = (JSON.parse(theirs.stdout) as { summary: { wins: number; losses: number; ties: number; mean_delta: number } }).summary;
      expect(line.compare).toEqual({ wins: s.wins, losses: s.losses, ties: s.ties, mean_delta: s.mean_delta });
      // Seed 004: wins > losses -> keep; otherwise (no artifacts given) drop.
      expect(line.decision).toBe(s.wins > s.losses ? 'keep' : 'drop');
      if (line.decision === 'keep') kept = runs[i]!;
    }
  }, 480_000);
});
