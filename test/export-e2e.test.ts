import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  GradingSchema,
  IndexRowSchema,
  MetricsSchema,
  ResultSchema,
  SummarySchema,
  BenchmarkSchema,
  RunTimingSchema,
  AttemptTimingSchema,
  TranscriptSchema,
  ProjectionBundleSchema,
} from '../src/model/artifacts.js';
import { runCli, CLI_PATH } from './helpers/cli.js';
import { describeWithFixtures, fixtureFiles, fixture } from './helpers/fixtures.js';
import { writeSyntheticResults } from '../bench/synthetic.mjs';
import { waitFor } from './helpers/wip-fixtures.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-export-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = async () => {
  const d = join(tmp, `case-${n++}`);
  await mkdir(d, { recursive: true });
  return d;
};

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(dir, p));
    }
  };
  await walk(dir);
  return out.sort();
}

async function treeBytes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of await listFiles(dir)) out[f] = await readFile(join(dir, f), 'utf8');
  return out;
}

const SIDECAR_SCHEMAS = {
  'grading.json': GradingSchema,
  'metrics.json': MetricsSchema,
  'result.json': ResultSchema,
  'timing.json': AttemptTimingSchema,
  'transcript.json': TranscriptSchema,
} as const;

/** Every artifact of a bundle parses against its schema and the index agrees with the tree. */
async function expectValidBundle(dir: string) {
  const index = (await readFile(join(dir, 'index.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => IndexRowSchema.parse(JSON.parse(l)));
  const summary = SummarySchema.parse(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')));
  BenchmarkSchema.parse(JSON.parse(await readFile(join(dir, 'benchmark.json'), 'utf8')));
  RunTimingSchema.parse(JSON.parse(await readFile(join(dir, 'timing.json'), 'utf8')));
  expect(summary.total).toBe(index.length);
  expect(summary.passed + summary.failed + summary.errors).toBe(index.length);
  expect(new Set(index.map((r) => r.projection_identity.id)).size).toBe(index.length);
  for (const r of index) {
    for (const [name, schema] of Object.entries(SIDECAR_SCHEMAS)) {
      const path = join(dir, r.result_dir, name);
      const exists = await stat(path).then(
        () => true,
        () => false,
      );
      if (name === 'transcript.json') expect(exists).toBe(r.transcript_path !== null);
      else expect(exists).toBe(true);
      if (exists) schema.parse(JSON.parse(await readFile(path, 'utf8')));
    }
  }
  return { index, summary };
}

describeWithFixtures('export on every real AgentV fixture', () => {
  for (const file of fixtureFiles()) {
    it(`exports ${file.split('/').pop()}`, async () => {
      const cwd = await fresh();
      const res = await runCli(['export', file, '--json'], { cwd });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const out = JSON.parse(res.stdout);
      const inputRows = (await readFile(file, 'utf8')).split('\n').filter((l) => l.trim()).length;
      expect(out.rows).toBe(inputRows);
      expect(out.out.startsWith(join(cwd, '.agentv/results/'))).toBe(true);
      const { index } = await expectValidBundle(out.out);
      expect(index.length).toBe(inputRows);
      // The default location is .agentv/results/<run_id>, where AgentV lists runs.
      expect(relative(join(cwd, '.agentv/results'), out.out)).toBe(out.run_id);
    });
  }

  it('writes the companion layout with seed 001 mappings for an N-way run', async () => {
    const cwd = await fresh();
    const res = await runCli(['export', fixture('benchmark-tooling--combined-results.jsonl'), '--layout', 'companion', '--out', 'comp'], { cwd });
    expect(res.code).toBe(0);
    const files = await listFiles(join(cwd, 'comp'));
    expect(files).toContain('benchmark.json');
    expect(files).toContain('timing.json');
    // three targets share test ids: each gets its own grading file, none overwritten
    expect(files.filter((f) => f.startsWith('grading/'))).toHaveLength(9);
    const bench = JSON.parse(await readFile(join(cwd, 'comp/benchmark.json'), 'utf8'));
    // As aggregate_benchmark.py: a delta of the first two configurations is always there.
    expect(Object.keys(bench.run_summary)).toEqual(['gemini-3-flash-preview', 'gpt-4.1', 'gpt-5-mini', 'delta']);
    // gpt-4.1 scores 0.85, 0.80, 0.90 -> mean 0.85, sample stddev 0.05
    expect(bench.run_summary['gpt-4.1'].score).toEqual({ mean: 0.85, stddev: 0.05, min: 0.8, max: 0.9 });
  });

  it('maps grader reasoning to expectation evidence in the companion grading files', async () => {
    const cwd = await fresh();
    await runCli(['export', fixture('multi-turn-conversation--suite.baseline.jsonl'), '--layout', 'companion', '--out', 'c'], { cwd });
    const g = JSON.parse(await readFile(join(cwd, 'c/grading/support-context-retention.json'), 'utf8'));
    expect(g.expectations[0]).toMatchObject({ text: 'Turn 1 retains customer identity and order context', passed: true });
    expect(g.expectations[0].evidence).toContain('Sarah');
    expect(g.summary.total).toBe(g.expectations.length);
    expect(g.evaluators.map((e: { name: string }) => e.name)).toContain('contains-#98765');
    expect(g.conversation).toBeUndefined();
  });
});

describe('skill-creator layout follows the reader rules', () => {
  it('writes integer eval ids, run-<k>, outputs/, eval_metadata.json, no timing block', async () => {
    const cwd = await fresh();
    const src = join(cwd, 'in.jsonl');
    const rows = [
      {
        test_id: 'a-b',
        score: 1,
        target: 'with skill',
        duration_ms: 2000,
        token_usage: { input: 1, output: 2 },
        assertions: [{ text: 'x', passed: true }],
        input: 'prompt a',
        output: 'has </script> inside',
      },
      { test_id: 'a-b', score: 0.5, target: 'baseline', duration_ms: 4000, assertions: [{ text: 'x', passed: false }] },
      { test_id: 'c', score: 1, target: 'with skill', attempt: 0 },
      { test_id: 'c', score: 0, target: 'with skill', attempt: 1 },
    ];
    await writeFile(src, rows.map((r) => JSON.stringify(r)).join('\n'));
    const res = await runCli(['export', src, '--layout', 'skill-creator', '--out', 'sc'], { cwd });
    expect(res.code).toBe(0);
    const root = join(cwd, 'sc/iteration-1');
    const evals = (await readdir(root)).filter((d) => d.startsWith('eval-')).sort();
    expect(evals).toEqual(['eval-1', 'eval-2']);
    // The eval's prompt is the one a row of it carries, even when a later row of it has none.
    expect(JSON.parse(await readFile(join(root, 'eval-1/eval_metadata.json'), 'utf8')).prompt).toBe('prompt a');
    const bench = JSON.parse(await readFile(join(root, 'benchmark.json'), 'utf8'));
    // Re-read the tree the way skill-creator's aggregate script does and compare with our runs[].
    const seen: { eval_id: number; configuration: string; run_number: number; pass_rate: number; time_seconds: number }[] = [];
    for (const e of evals) {
      const meta = JSON.parse(await readFile(join(root, e, 'eval_metadata.json'), 'utf8'));
      expect(Number.isInteger(meta.eval_id)).toBe(true);
      expect(meta).toHaveProperty('prompt');
      expect(Array.isArray(meta.assertions)).toBe(true);
      for (const config of (await readdir(join(root, e), { withFileTypes: true })).filter((d) => d.isDirectory())) {
        // generate_review.py looks for the prompt in the run folder or its parent only.
        expect(JSON.parse(await readFile(join(root, e, config.name, 'eval_metadata.json'), 'utf8'))).toMatchObject({
          eval_id: meta.eval_id,
          eval_name: meta.eval_name,
        });
        for (const run of (await readdir(join(root, e, config.name))).filter((d) => d !== 'eval_metadata.json').sort()) {
          expect(run).toMatch(/^run-\d+$/);
          const dir = join(root, e, config.name, run);
          expect((await stat(join(dir, 'outputs'))).isDirectory()).toBe(true);
          const grading = JSON.parse(await readFile(join(dir, 'grading.json'), 'utf8'));
          expect(grading).not.toHaveProperty('timing');
          expect(typeof grading.summary.pass_rate).toBe('number');
          for (const x of grading.expectations) expect(Object.keys(x)).toEqual(expect.arrayContaining(['text', 'passed', 'evidence']));
          const timing = JSON.parse(await readFile(join(dir, 'timing.json'), 'utf8'));
          seen.push({
            eval_id: meta.eval_id,
            configuration: config.name,
            run_number: Number(run.split('-')[1]),
            pass_rate: grading.summary.pass_rate,
            time_seconds: timing.total_duration_seconds,
          });
        }
      }
    }
    expect(seen).toHaveLength(4);
    const ours = bench.runs.map((r: { eval_id: number; configuration: string; run_number: number; result: { pass_rate: number; time_seconds: number } }) => ({
      eval_id: r.eval_id,
      configuration: r.configuration,
      run_number: r.run_number,
      pass_rate: r.result.pass_rate,
      time_seconds: r.result.time_seconds,
    }));
    for (const s of seen) {
      // configuration is the folder's name, as the script reads it.
      expect(ours).toContainEqual(s);
    }
    for (const [config, stats] of Object.entries(bench.run_summary) as [string, Record<string, { mean: number; stddev: number; min: number; max: number }>][]) {
      if (config === 'delta') continue;
      for (const k of ['pass_rate', 'time_seconds', 'tokens'])
        for (const f of ['mean', 'stddev', 'min', 'max']) expect(typeof (stats[k] as Record<string, number>)[f]).toBe('number');
    }
    expect(
      await readFile(
        join(
          root,
          'eval-1/with_skill-' + (await readdir(join(root, 'eval-1'))).find((d) => d.startsWith('with_skill-'))!.split('with_skill-')[1],
          'run-1/outputs/answer.md',
        ),
        'utf8',
      ),
    ).toBe('has </script> inside');
  });
});

describe('determinism and identity', () => {
  it('gives byte-identical trees and the same ids whatever --out is', async () => {
    const cwd = await fresh();
    const src = join(cwd, 'results.jsonl');
    await writeSyntheticResults(src, { rows: 40, seed: 7 });
    const a = await runCli(['export', src, '--out', 'one', '--json'], { cwd });
    const b = await runCli(['export', src, '--out', 'deeper/two', '--json'], { cwd });
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(JSON.parse(a.stdout).run_id).toBe(JSON.parse(b.stdout).run_id);
    expect(await treeBytes(join(cwd, 'one'))).toEqual(await treeBytes(join(cwd, 'deeper/two')));
    // Exporting again to the default place lands in the same directory with the same bytes.
    const c1 = JSON.parse((await runCli(['export', src, '--json'], { cwd })).stdout);
    const before = await treeBytes(c1.out);
    const c2 = JSON.parse((await runCli(['export', src, '--json'], { cwd })).stdout);
    expect(c2.out).toBe(c1.out);
    expect(await treeBytes(c2.out)).toEqual(before);
  });
});

describe('duplicate policies', () => {
  const rows = [
    { test_id: 'a', score: 0.2, output: 'first', timestamp: '2026-01-01T00:00:00Z' },
    { test_id: 'b', score: 1, timestamp: '2026-01-01T00:00:01Z' },
    { test_id: 'a', score: 0.9, timestamp: '2026-01-01T00:00:02Z' },
  ];
  it('update keeps the later row and drops sidecars only the older one had', async () => {
    const cwd = await fresh();
    await writeFile(join(cwd, 'r.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    const res = await runCli(['export', 'r.jsonl', '--out', 'o', '--json'], { cwd });
    expect(res.code).toBe(0);
    const index = (await readFile(join(cwd, 'o/index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.map((r) => [r.test_id, r.score])).toEqual([
      ['b', 1],
      ['a', 0.9],
    ]);
    expect(index[1].answer_path).toBeNull();
    await expect(stat(join(cwd, 'o', 'default/a/default/attempt-0/outputs/answer.md'))).rejects.toThrow();
    expect(JSON.parse(res.stdout).duplicates).toEqual({ updated: 1, skipped: 0 });
  });
  it('skip keeps the first row', async () => {
    const cwd = await fresh();
    await writeFile(join(cwd, 'r.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    await runCli(['export', 'r.jsonl', '--out', 'o', '--duplicate-policy', 'skip'], { cwd });
    const index = (await readFile(join(cwd, 'o/index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.map((r) => [r.test_id, r.score])).toEqual([
      ['a', 0.2],
      ['b', 1],
    ]);
    expect(JSON.parse(await readFile(join(cwd, 'o/summary.json'), 'utf8')).export_metadata.duplicate_policy).toBe('skip');
  });
  it('error names both lines and writes nothing', async () => {
    const cwd = await fresh();
    await writeFile(join(cwd, 'r.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    const res = await runCli(['export', 'r.jsonl', '--out', 'o', '--duplicate-policy', 'error'], { cwd });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/r\.jsonl:3: duplicate of line 1/);
    expect(await readdir(cwd)).toEqual(['r.jsonl']);
  });
  it('applies across exports into the same run directory', async () => {
    const cwd = await fresh();
    await writeFile(
      join(cwd, 'part1.jsonl'),
      JSON.stringify({ test_id: 'a', score: 0.1, timestamp: '2026-01-01T00:00:00Z' }) +
        '\n' +
        JSON.stringify({ test_id: 'b', score: 1, timestamp: '2026-01-01T00:00:00Z' }),
    );
    await writeFile(join(cwd, 'part2.jsonl'), JSON.stringify({ test_id: 'a', score: 0.95, timestamp: '2026-01-01T00:00:00Z' }));
    expect((await runCli(['export', 'part1.jsonl', '--out', 'o', '--experiment', 'e'], { cwd })).code).toBe(0);
    const err = await runCli(['export', 'part2.jsonl', '--out', 'o', '--experiment', 'e', '--duplicate-policy', 'error'], { cwd });
    expect(err.code).toBe(2);
    expect(err.stderr).toMatch(/already exported/);
    await runCli(['export', 'part2.jsonl', '--out', 'o', '--experiment', 'e', '--duplicate-policy', 'skip'], { cwd });
    let index = (await readFile(join(cwd, 'o/index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.map((r) => [r.test_id, r.score])).toEqual([
      ['a', 0.1],
      ['b', 1],
    ]);
    await runCli(['export', 'part2.jsonl', '--out', 'o', '--experiment', 'e'], { cwd });
    index = (await readFile(join(cwd, 'o/index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.map((r) => [r.test_id, r.score])).toEqual([
      ['b', 1],
      ['a', 0.95],
    ]);
    await expectValidBundle(join(cwd, 'o'));
  });
  it('refuses to mix a different run into an existing run directory', async () => {
    const cwd = await fresh();
    await writeFile(join(cwd, 'x.jsonl'), JSON.stringify({ test_id: 'a', score: 1, timestamp: '2026-01-01T00:00:00Z' }));
    await writeFile(join(cwd, 'y.jsonl'), JSON.stringify({ test_id: 'a', score: 1, timestamp: '2026-02-01T00:00:00Z' }));
    await runCli(['export', 'x.jsonl', '--out', 'o'], { cwd });
    const res = await runCli(['export', 'y.jsonl', '--out', 'o'], { cwd });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/already holds run 20/);
  });
});

describe('dry run, raw content and projection bundle', () => {
  const row = { test_id: 't', score: 1, timestamp: '2026-01-01T00:00:00Z', input: 'SECRET PROMPT', output: 'SECRET ANSWER' };
  it('--dry-run prints a planned bundle without raw content and writes nothing', async () => {
    const cwd = await fresh();
    await writeFile(join(cwd, 'r.jsonl'), JSON.stringify(row));
    const res = await runCli(['export', 'r.jsonl', '--dry-run'], { cwd });
    expect(res.code).toBe(0);
    const bundle = ProjectionBundleSchema.parse(JSON.parse(res.stdout));
    expect(bundle.artifact_refs.status).toBe('planned_export');
    expect(res.stdout).not.toContain('SECRET');
    expect(Object.keys(bundle.projections[0]!.artifacts)).not.toContain('answer_path');
    expect(await readdir(cwd)).toEqual(['r.jsonl']);
    const raw = await runCli(['export', 'r.jsonl', '--dry-run', '--include-raw-content'], { cwd });
    expect(raw.stdout).toContain('SECRET ANSWER');
    expect(JSON.parse(raw.stdout).capture.raw_content_included).toBe(true);
  });
  it('--projection-bundle writes an emitted bundle; raw row bytes only with --include-raw-content', async () => {
    const cwd = await fresh();
    await writeFile(join(cwd, 'r.jsonl'), JSON.stringify(row));
    await runCli(['export', 'r.jsonl', '--out', 'o', '--projection-bundle'], { cwd });
    const bundle = JSON.parse(await readFile(join(cwd, 'o/projection_bundle.json'), 'utf8'));
    expect(bundle.artifact_refs.status).toBe('emitted');
    const index = JSON.parse((await readFile(join(cwd, 'o/index.jsonl'), 'utf8')).trim());
    expect(bundle.projections[0].projection_identity).toEqual(index.projection_identity);
    expect(index.transcript_raw_path).toBeNull();
    await runCli(['export', 'r.jsonl', '--out', 'p', '--include-raw-content'], { cwd });
    const withRaw = JSON.parse((await readFile(join(cwd, 'p/index.jsonl'), 'utf8')).trim());
    expect(await readFile(join(cwd, 'p', withRaw.transcript_raw_path), 'utf8')).toBe(JSON.stringify(row) + '\n');
  });
});

describe('bad input', () => {
  async function exportOf(content: string | Buffer, extra: string[] = []) {
    const cwd = await fresh();
    await writeFile(join(cwd, 'in.jsonl'), content);
    const res = await runCli(['export', 'in.jsonl', '--out', 'o', ...extra], { cwd });
    return { cwd, res, written: (await readdir(cwd)).filter((f) => f !== 'in.jsonl') };
  }

  it('a malformed line: exit 2, file:line, what to do, nothing written', async () => {
    const { res, written } = await exportOf('{"test_id":"a","score":1}\n{"test_id": "b", "score": }\n');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^agentv-results: in\.jsonl:2: not valid JSON \(.+\) — fix or drop the line, or pass --skip-invalid\n$/);
    expect(written).toEqual([]);
  });

  it('--skip-invalid warns per skipped line and exports the rest', async () => {
    const { cwd, res } = await exportOf('{"test_id":"a","score":1}\nnot json\n{"score":1}\n{"test_id":"c","score":"x"}\n', ['--skip-invalid']);
    expect(res.code).toBe(0);
    expect(res.stderr.match(/^warning: in\.jsonl:\d+: skipped/gm)).toHaveLength(3);
    expect((await readFile(join(cwd, 'o/index.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it('rows without test_id or score are named', async () => {
    expect((await exportOf('{"score":1}\n')).res.stderr).toMatch(/in\.jsonl:1: .*test_id/);
    expect((await exportOf('{"test_id":"a"}\n')).res.stderr).toMatch(/in\.jsonl:1: .*score/);
  });

  it('an empty file is an input error', async () => {
    const { res, written } = await exportOf('\n\n');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/no result rows/);
    expect(written).toEqual([]);
  });

  it('non-UTF-8 bytes are reported with their line', async () => {
    const { res } = await exportOf(
      Buffer.concat([Buffer.from('{"test_id":"a","score":1}\n{"test_id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('","score":1}\n')]),
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/in\.jsonl:2: line is not valid UTF-8/);
  });

  it('a line of several MB is exported intact', async () => {
    const big = 'x'.repeat(6 * 1024 * 1024);
    const { cwd, res } = await exportOf(JSON.stringify({ test_id: 'big', score: 1, output: big }) + '\n');
    expect(res.code).toBe(0);
    expect((await stat(join(cwd, 'o/default/big/default/attempt-0/outputs/answer.md'))).size).toBe(big.length);
  });

  it('hostile ids never write outside --out', async () => {
    const ids = ['../../escape', '/abs/olute', 'a/b/c', '..', 'CON', 'ctl\u0001\u001b[31m', 'new\nline', '.git'];
    const rows = ids.map((id, i) => ({ test_id: id, suite: i % 2 ? '../suite' : '.', target: '../../t', score: 1, output: 'o' }));
    const { cwd, res } = await exportOf(rows.map((r) => JSON.stringify(r)).join('\n'));
    expect(res.code).toBe(0);
    expect((await readdir(cwd)).sort()).toEqual(['in.jsonl', 'o']);
    const files = await listFiles(join(cwd, 'o'));
    for (const f of files) expect(f.split('/').every((seg) => seg !== '..' && seg !== '.git' && !/[\u0000-\u001f]/.test(seg))).toBe(true);
    const index = (await readFile(join(cwd, 'o/index.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(index.map((r) => r.test_id)).toEqual(ids);
  });

  it('usage errors exit 2', async () => {
    const cwd = await fresh();
    expect((await runCli(['export', 'missing.jsonl'], { cwd })).code).toBe(2);
    const badLayout = await runCli(['export', 'x.jsonl', '--layout', 'zip'], { cwd });
    expect(badLayout.code).toBe(2);
    // The flag is named and the layouts listed (the schema's enum, the same list the library refuses with).
    expect(badLayout.stderr).toMatch(/--layout: .*"bundle"\|"companion"\|"skill-creator"/);
    expect((await runCli(['export', 'x.jsonl', '--no-such-flag'], { cwd })).code).toBe(2);
  });
});

describe('run workspaces as the source', () => {
  it('re-exporting our own workspace round-trips its rows and keeps runner files', async () => {
    const cwd = await fresh();
    const src = join(cwd, 'results.jsonl');
    await writeSyntheticResults(src, { rows: 12, seed: 3 });
    await runCli(['export', src, '--out', 'ws'], { cwd });
    await writeFile(join(cwd, 'ws/runner-notes.txt'), 'kept');
    const res = await runCli(['export', 'ws', '--out', 'again', '--json'], { cwd });
    expect(res.code).toBe(0);
    const a = await readFile(join(cwd, 'ws/index.jsonl'), 'utf8');
    const b = await readFile(join(cwd, 'again/index.jsonl'), 'utf8');
    expect(b).toBe(a);
    expect(await readFile(join(cwd, 'again/runner-notes.txt'), 'utf8')).toBe('kept');
    const ga = await treeBytes(join(cwd, 'ws'));
    const gb = await treeBytes(join(cwd, 'again'));
    expect(gb).toEqual(ga);
  });

  it('derives what a runner left out when its index.jsonl holds plain result rows', async () => {
    const cwd = await fresh();
    const ws = join(cwd, '.agentv/results/my-exp/2026-03-01T10-00-00-000Z');
    await mkdir(ws, { recursive: true });
    await writeFile(join(ws, 'index.jsonl'), JSON.stringify({ test_id: 'a', score: 1, timestamp: '2026-03-01T10:00:00.000Z', output: 'hi' }) + '\n');
    await writeFile(join(ws, 'custom.log'), 'runner log');
    const res = await runCli(['export', ws, '--json'], { cwd });
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.run_id).toBe('2026-03-01T10-00-00-000Z');
    expect(out.out).toBe(ws);
    await expectValidBundle(ws);
    expect(await readFile(join(ws, 'custom.log'), 'utf8')).toBe('runner log');
  });
});

describe('atomicity', () => {
  it('an export killed mid-way leaves no run directory under its real name', async () => {
    const cwd = await fresh();
    const src = join(cwd, 'big.jsonl');
    // 1,500 test directories (<suite>/<test>) once staged; each kill waits for a point of progress
    // (this process' staging directory holding at least so many), not for a delay, so the kill
    // lands mid-way however fast or loaded the machine is (the last one with 900 still to go).
    await writeSyntheticResults(src, { rows: 3000, seed: 11, turns: 2 });
    const testDirs = async (staging: string): Promise<number> => {
      let n = 0;
      for (const e of await readdir(staging, { withFileTypes: true })) if (e.isDirectory()) n += (await readdir(join(staging, e.name))).length;
      return n;
    };
    for (const atLeast of [1, 100, 600]) {
      const child = spawn(process.execPath, [CLI_PATH, 'export', src, '--out', 'run'], { cwd, stdio: 'ignore' });
      const mine = `.run.tmp-${child.pid}-`;
      await waitFor(
        `the export to stage ${atLeast} test directories`,
        async () => {
          const staging = (await readdir(cwd)).find((n) => n.startsWith(mine));
          return staging !== undefined && (await testDirs(join(cwd, staging))) >= atLeast;
        },
        150_000,
        20,
      );
      expect(child.exitCode, 'the export was still running when killed').toBeNull();
      child.kill('SIGKILL');
      await new Promise((r) => child.on('close', r));
      const names = await readdir(cwd);
      expect(names).not.toContain('run');
      for (const name of names.filter((x) => x !== 'big.jsonl')) expect(name.startsWith('.run.tmp-')).toBe(true);
    }
    // The next export cleans up staging left by dead processes and succeeds.
    const ok = await runCli(['export', src, '--out', 'run', '--json'], { cwd, timeoutMs: 120_000 });
    expect(ok.code).toBe(0);
    expect((await readdir(cwd)).sort()).toEqual(['big.jsonl', 'run']);
    expect(JSON.parse(ok.stdout).rows).toBe(3000);
  }, 480_000);
});
