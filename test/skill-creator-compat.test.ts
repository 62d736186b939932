/**
 * skill-creator compatibility, exactly (issue 11, point 6). Every real AgentV fixture is exported
 * with `--layout skill-creator` through the CLI; then this file reads the tree back by the rules of
 * skill-creator's own readers, reimplemented here from their documented behaviour (their code is
 * not vendored):
 *
 * - aggregate_benchmark.py: eval-* folders and, inside, configuration folders holding run-*
 *   folders, each sorted by name as text; eval id from eval-N/eval_metadata.json; pass rate from
 *   grading.json summary.pass_rate; seconds from grading.json's timing block, else timing.json
 *   (which also gives tokens); tokens falling back to execution_metrics.output_chars; statistics
 *   with Python's sum (current CPython: compensated), sample stddev, round(x, 4); delta of the
 *   first two configurations formatted "+.2f" / "+.1f" / "+.0f".
 * - generate_review.py: every folder holding outputs/ is a run (never descending into skill,
 *   inputs, node_modules, .git, __pycache__); its prompt and eval id come from eval_metadata.json
 *   in the run folder or its parent.
 *
 * Python's rounding is reimplemented here on the exact binary value with BigInt arithmetic, a
 * different route from src/runs/export/python-numbers.ts (decimal strings), so the two check each other.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { describeWithFixtures, fixtureFiles } from './helpers/fixtures.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-skill-creator-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));

// ---- Python number rules, on exact binary values ------------------------------------------------

/** x = sign * mantissa * 2^exp exactly. */
function exactParts(x: number): { negative: boolean; mantissa: bigint; exp: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  if (biased === 0) return { negative, mantissa: fraction, exp: -1074 };
  return { negative, mantissa: fraction | (1n << 52n), exp: biased - 1075 };
}

/** round(|x| * 10^digits) half-to-even, computed on the exact rational value. */
function scaledHalfEven(x: number, digits: number): { negative: boolean; q: bigint } {
  const { negative, mantissa, exp } = exactParts(x);
  let num = mantissa * 10n ** BigInt(digits);
  let den = 1n;
  if (exp >= 0) num <<= BigInt(exp);
  else den <<= BigInt(-exp);
  let q = num / den;
  const twice = 2n * (num % den);
  if (twice > den || (twice === den && q % 2n === 1n)) q += 1n;
  return { negative, q };
}

function decimal(q: bigint, digits: number): string {
  if (digits === 0) return q.toString();
  const s = q.toString().padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

/** Python's round(x, digits). */
function round(x: number, digits: number): number {
  if (Number.isInteger(x)) return x;
  const { negative, q } = scaledHalfEven(x, digits);
  const v = Number(decimal(q, digits));
  return negative ? -v : v;
}

/** Python's f"{x:+.<digits>f}". */
function signedFixed(x: number, digits: number): string {
  const { negative, q } = scaledHalfEven(x, digits);
  return `${negative ? '-' : '+'}${decimal(q, digits)}`;
}

/**
 * Python's sum() over numbers from JSON (integers read as ints) in current CPython: leading ints
 * exactly, one plain int + float, then Neumaier's compensation over the rest.
 */
function pythonSum(values: number[], integersAreInts: boolean): number {
  let i = 0;
  let intSum = 0;
  while (integersAreInts && i < values.length && Number.isInteger(values[i])) intSum += values[i++]!;
  if (i === values.length) return intSum;
  let hi = intSum + values[i++]!;
  let lo = 0;
  for (; i < values.length; i++) {
    const x = values[i]!;
    const t = hi + x;
    lo += Math.abs(hi) >= Math.abs(x) ? hi - t + x : x - t + hi;
    hi = t;
  }
  return lo !== 0 && Number.isFinite(lo) ? hi + lo : hi;
}

type Stat = { mean: number; stddev: number; min: number; max: number };
function calculateStats(values: number[]): Stat {
  if (values.length === 0) return { mean: 0, stddev: 0, min: 0, max: 0 };
  const n = values.length;
  const mean = pythonSum(values, true) / n;
  const stddev =
    n > 1
      ? Math.sqrt(
          pythonSum(
            values.map((x) => (x - mean) * (x - mean)),
            false,
          ) /
            (n - 1),
        )
      : 0;
  return { mean: round(mean, 4), stddev: round(stddev, 4), min: round(Math.min(...values), 4), max: round(Math.max(...values), 4) };
}

// ---- aggregate_benchmark.py, as documented --------------------------------------------------

const readJson = async (p: string) => JSON.parse(await readFile(p, 'utf8'));
const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );
const isDir = (p: string) =>
  stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface TheirRun {
  eval_id: number;
  configuration: string;
  run_number: number;
  result: { pass_rate: number; passed: number; failed: number; total: number; time_seconds: number; tokens: number; tool_calls: number; errors: number };
}

async function loadRunResults(benchmarkDir: string): Promise<Map<string, TheirRun[]>> {
  const results = new Map<string, TheirRun[]>();
  const evalDirs = (await readdir(benchmarkDir)).filter((d) => d.startsWith('eval-')).sort(byName);
  for (const [idx, evalName] of evalDirs.entries()) {
    const evalDir = join(benchmarkDir, evalName);
    const meta = join(evalDir, 'eval_metadata.json');
    const evalId: number = (await exists(meta)) ? ((await readJson(meta)).eval_id ?? idx) : Number(evalName.split('-')[1]);
    for (const config of (await readdir(evalDir)).sort(byName)) {
      const configDir = join(evalDir, config);
      if (!(await isDir(configDir))) continue;
      const runDirs = (await readdir(configDir)).filter((d) => d.startsWith('run-')).sort(byName);
      if (runDirs.length === 0 && !(await exists(join(configDir, 'grading.json')))) continue;
      if (!results.has(config)) results.set(config, []);
      const entries: [number, string][] = runDirs.length ? runDirs.map((d) => [Number(d.split('-')[1]), join(configDir, d)]) : [[1, configDir]];
      for (const [runNumber, runDir] of entries) {
        const grading = await readJson(join(runDir, 'grading.json'));
        const summary = grading.summary ?? {};
        let timeSeconds: number = grading.timing?.total_duration_seconds ?? 0;
        let tokens: number | undefined;
        if (timeSeconds === 0 && (await exists(join(runDir, 'timing.json')))) {
          const timing = await readJson(join(runDir, 'timing.json'));
          timeSeconds = timing.total_duration_seconds ?? 0;
          tokens = timing.total_tokens ?? 0;
        }
        const metrics = grading.execution_metrics ?? {};
        if (!tokens) tokens = metrics.output_chars ?? 0;
        results.get(config)!.push({
          eval_id: evalId,
          configuration: config,
          run_number: runNumber,
          result: {
            pass_rate: summary.pass_rate ?? 0,
            passed: summary.passed ?? 0,
            failed: summary.failed ?? 0,
            total: summary.total ?? 0,
            time_seconds: timeSeconds,
            tokens: tokens!,
            tool_calls: metrics.total_tool_calls ?? 0,
            errors: metrics.errors_encountered ?? 0,
          },
        });
      }
    }
  }
  return results;
}

function aggregateResults(results: Map<string, TheirRun[]>): Record<string, unknown> {
  const summary: Record<string, Record<string, Stat>> = {};
  for (const [config, runs] of results) {
    summary[config] = {
      pass_rate: calculateStats(runs.map((r) => r.result.pass_rate)),
      time_seconds: calculateStats(runs.map((r) => r.result.time_seconds)),
      tokens: calculateStats(runs.map((r) => r.result.tokens)),
    };
  }
  const configs = [...results.keys()];
  const primary = configs.length >= 1 ? summary[configs[0]!] : undefined;
  const baseline = configs.length >= 2 ? summary[configs[1]!] : undefined;
  const mean = (s: Record<string, Stat> | undefined, k: string) => s?.[k]?.mean ?? 0;
  return {
    ...summary,
    delta: {
      pass_rate: signedFixed(mean(primary, 'pass_rate') - mean(baseline, 'pass_rate'), 2),
      time_seconds: signedFixed(mean(primary, 'time_seconds') - mean(baseline, 'time_seconds'), 1),
      tokens: signedFixed(mean(primary, 'tokens') - mean(baseline, 'tokens'), 0),
    },
  };
}

// ---- generate_review.py's run discovery, as documented ---------------------------------------

const SKIP = new Set(['node_modules', '.git', '__pycache__', 'skill', 'inputs']);

async function findRuns(root: string): Promise<{ id: string; prompt: string; eval_id: unknown }[]> {
  const runs: { id: string; prompt: string; eval_id: unknown }[] = [];
  const walk = async (dir: string): Promise<void> => {
    if (await isDir(join(dir, 'outputs'))) {
      let prompt = '';
      let evalId: unknown = null;
      for (const candidate of [join(dir, 'eval_metadata.json'), join(dir, '..', 'eval_metadata.json')]) {
        if (!(await exists(candidate))) continue;
        const meta = await readJson(candidate);
        prompt = meta.prompt ?? '';
        evalId = meta.eval_id;
        if (prompt) break;
      }
      runs.push({ id: relative(root, dir).replace(/\//g, '-'), prompt: prompt || '(No prompt found)', eval_id: evalId });
      return;
    }
    for (const child of (await readdir(dir)).sort(byName)) {
      if (!SKIP.has(child) && (await isDir(join(dir, child)))) await walk(join(dir, child));
    }
  };
  await walk(root);
  return runs;
}

// ---- the checks ---------------------------------------------------------------------------------

async function exportSkillCreator(source: string, name: string): Promise<string> {
  const out = join(tmp, name);
  const res = await runCli(['export', source, '--layout', 'skill-creator', '--out', out], { cwd: tmp });
  expect(res.code, res.stderr).toBe(0);
  return out;
}

async function expectAggregateAgrees(out: string): Promise<{ runs: number }> {
  const iteration = join(out, 'iteration-1');
  const ours = await readJson(join(iteration, 'benchmark.json'));
  const results = await loadRunResults(iteration);
  const theirs = aggregateResults(results);
  // Same configurations in the same order (it decides delta), same statistics to the digit.
  expect(Object.keys(ours.run_summary)).toEqual(Object.keys(theirs));
  for (const [config, stats] of Object.entries(theirs)) {
    if (config === 'delta') expect(ours.run_summary.delta).toEqual(stats);
    else
      for (const [metric, value] of Object.entries(stats as Record<string, Stat>))
        expect(ours.run_summary[config][metric], `${config}.${metric}`).toEqual(value);
  }
  // Every run the script reads is one of our runs[], with the same numbers.
  const theirRuns = [...results.values()].flat();
  expect(ours.runs).toHaveLength(theirRuns.length);
  for (const r of theirRuns) expect(ours.runs).toContainEqual(expect.objectContaining(r));
  return { runs: theirRuns.length };
}

async function expectReviewFindsEveryPrompt(out: string, runCount: number): Promise<void> {
  const runs = await findRuns(out);
  expect(runs).toHaveLength(runCount);
  for (const run of runs) {
    expect(run.prompt, run.id).not.toBe('(No prompt found)');
    expect(run.eval_id, run.id).toBe(Number(run.id.match(/eval-(\d+)/)![1]));
  }
}

describe('Python number rules used by the checks', () => {
  // Values printed by CPython: round(0.03125, 4), round(2.675, 2), f"{0.125:+.2f}", f"{2.5:+.0f}" …
  it('round half-to-even on the exact binary value, as Python does', () => {
    expect([round(0.03125, 4), round(1.00005, 4), round(0.00005, 4), round(2.675, 2), round(-0.03125, 4)]).toEqual([0.0312, 1.0001, 0.0001, 2.67, -0.0312]);
    expect([signedFixed(0.125, 2), signedFixed(2.5, 0), signedFixed(-0.001, 2), signedFixed(0.25, 1), signedFixed(3.5, 0)]).toEqual([
      '+0.12',
      '+2',
      '-0.00',
      '+0.2',
      '+4',
    ]);
  });
});

describeWithFixtures('skill-creator layout: every real AgentV fixture', () => {
  for (const file of fixtureFiles()) {
    it(`${basename(file)}: aggregate_benchmark.py's run_summary equals benchmark.json; generate_review.py finds every prompt`, async () => {
      const out = await exportSkillCreator(file, basename(file, '.jsonl'));
      const { runs } = await expectAggregateAgrees(out);
      expect(runs).toBeGreaterThan(0);
      await expectReviewFindsEveryPrompt(out, runs);
    }, 60_000);
  }
});

describe('skill-creator layout: the rules at their edges', () => {
  it('orders configurations as the script discovers them, rounds ties as Python, falls back to output_chars', async () => {
    const { writeFile } = await import('node:fs/promises');
    const src = join(tmp, 'edges.jsonl');
    const rows = [];
    // Twelve tests so that eval-10..12 sort before eval-2; targets first seen as "zeta" then "alpha".
    for (let i = 0; i < 12; i++) {
      for (const target of ['zeta', 'alpha']) {
        const assertions = Array.from({ length: 16 }, (_, k) => ({ text: `a${k}`, passed: target === 'zeta' && i === 0 && k === 0 }));
        rows.push({
          test_id: `t${i}`,
          target,
          score: 0.5,
          duration_ms: 1500 + i,
          output: 'x'.repeat(3 + i),
          assertions,
          ...(i % 2 ? { token_usage: { input: 1, output: 2 } } : {}),
        });
      }
    }
    // Pass rates 1/16 and 0 average to 0.03125: a tie Python rounds to 0.0312 (Math.round: 0.0313).
    for (let i = 0; i < 2; i++)
      rows.push({
        test_id: `t${i}`,
        target: 'tie',
        score: 1,
        assertions: Array.from({ length: 16 }, (_, k) => ({ text: `a${k}`, passed: i === 0 && k === 0 })),
      });
    rows.push({ test_id: 't0', target: 'skill', score: 1, input: 'a prompt' });
    await writeFile(src, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const out = await exportSkillCreator(src, 'edges');
    const { runs } = await expectAggregateAgrees(out);
    expect(runs).toBe(27);
    await expectReviewFindsEveryPrompt(out, runs);
    const ours = await readJson(join(out, 'iteration-1/benchmark.json'));
    // eval-1 holds all three configurations: sorted by folder name, "alpha" comes first.
    expect(Object.keys(ours.run_summary)[0]).toBe('alpha');
    expect(ours.run_summary.tie.pass_rate.mean).toBe(0.0312);
    // A target named "skill" would be skipped by generate_review.py: it gets a suffixed folder.
    expect(Object.keys(ours.run_summary).filter((k) => /^skill-[0-9a-f]{8}$/.test(k))).toHaveLength(1);
    expect(await isDir(join(out, 'iteration-1/eval-1/skill'))).toBe(false);
  }, 60_000);
});
