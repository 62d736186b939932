/**
 * `combine`: shards add up to the whole, experiments are never mixed silently, duplicates are
 * an error or resolved by timestamp, the output is a new, valid run with its own identity; a
 * folder holding runs (CI shards as downloaded, a real AgentV 4.42 run in each) stands for them.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { describeWithFixtures, fixture } from './helpers/fixtures.js';
import { agentvStableEval, describeWithAgentVStable, makeStableSampleProject } from './helpers/agentv-client.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-combine-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
let n = 0;

/** Export hand-written rows as a run workspace. */
async function run(rows: Record<string, unknown>[], experiment = 'shards'): Promise<string> {
  const name = `run-${n++}`;
  const src = join(tmp, `${name}.jsonl`);
  await writeFile(src, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const out = join(tmp, name);
  const r = await runCli(['export', src, '--out', out, '--experiment', experiment]);
  expect(r.code, r.stderr).toBe(0);
  return out;
}

const row = (test_id: string, target: string, score: number, timestamp: string, extra: Record<string, unknown> = {}) => ({
  test_id,
  target,
  score,
  timestamp,
  suite: 'suite',
  assertions: [{ text: `${test_id} works`, passed: score >= 0.8, evidence: `score ${score}` }],
  ...extra,
});

async function index(dir: string): Promise<Record<string, any>[]> {
  return (await readFile(join(dir, 'index.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}
const json = async (p: string) => JSON.parse(await readFile(p, 'utf8'));

describe('combine: shards', () => {
  it('two shards -> counts add up, identities rewritten, sidecars copied, the result validates', async () => {
    const s1 = await run([row('a', 'm1', 1, '2026-03-01T10:00:05Z'), row('b', 'm1', 0.2, '2026-03-01T10:00:06Z'), row('c', 'm2', 0.9, '2026-03-01T10:00:07Z')]);
    const s2 = await run([row('d', 'm1', 0.85, '2026-03-01T10:00:01Z'), row('e', 'm2', 0.1, '2026-03-01T10:00:09Z', { error: 'timeout' })]);
    const out = join(tmp, 'combined-1');
    const r = await runCli(['combine', s1, s2, '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    // run_id from the data: the earliest timestamp is shard 2's 10:00:01
    expect(result.run_id).toBe('2026-03-01T10-00-01-000Z');
    expect(result.rows).toBe(5);

    const summary = await json(join(out, 'summary.json'));
    expect(summary).toMatchObject({
      run_id: '2026-03-01T10-00-01-000Z',
      experiment: 'shards',
      total: 5,
      passed: 3,
      failed: 1,
      errors: 1,
      timestamp: '2026-03-01T10:00:01.000Z',
    });
    expect(summary.run_summary.m1).toMatchObject({ total: 3, passed: 2, failed: 1, errors: 0 });
    expect(summary.run_summary.m2).toMatchObject({ total: 2, passed: 1, failed: 0, errors: 1 });
    expect(summary.combine_metadata).toEqual({
      sources: [
        { run_id: '2026-03-01T10-00-05-000Z', experiment: 'shards', rows: 3, kept: 3 },
        { run_id: '2026-03-01T10-00-01-000Z', experiment: 'shards', rows: 2, kept: 2 },
      ],
      on_duplicate: 'error',
      duplicates_replaced: 0,
    });
    expect((await json(join(out, 'benchmark.json'))).runs).toHaveLength(5);
    expect((await json(join(out, 'timing.json'))).tests).toBe(5);

    const rows = await index(out);
    expect(rows.map((x) => x.test_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const x of rows) {
      expect(x.run_id).toBe('2026-03-01T10-00-01-000Z');
      expect(x.projection_identity.run_id).toBe(x.run_id);
      expect((await stat(join(out, x.grading_path))).isFile()).toBe(true);
    }
    // Shard 1 rows now belong to another run: new projection ids.
    const before = await index(s1);
    expect(rows[0]!.projection_identity.id).not.toBe(before[0]!.projection_identity.id);
    expect(await json(join(out, rows[0]!.grading_path))).toEqual(await json(join(s1, before[0]!.grading_path)));

    const v = await runCli(['validate', out]);
    expect(v.code, v.stdout).toBe(0);
    // No staging leftovers beside the output.
    expect((await readdir(tmp)).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('sources spanning experiments need --experiment (exit 2 saying so); with it, the label is recorded', async () => {
    const a = await run([row('a', 'm', 1, '2026-03-02T10:00:00Z')], 'exp-a');
    const b = await run([row('b', 'm', 1, '2026-03-02T11:00:00Z')], 'exp-b');
    const out = join(tmp, 'mixed');
    let r = await runCli(['combine', a, b, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the sources span experiments exp-a \(.*\); exp-b \(.*\) — pass --experiment <name>/);
    expect(
      await stat(out).then(
        () => true,
        () => false,
      ),
    ).toBe(false);

    r = await runCli(['combine', a, b, '--out', out, '--experiment', 'merged']);
    expect(r.code, r.stderr).toBe(0);
    expect((await json(join(out, 'summary.json'))).experiment).toBe('merged');
    for (const x of await index(out)) {
      expect(x.experiment).toBe('merged');
      expect(x.run_id).toBe('2026-03-02T10-00-00-000Z');
    }
  });

  it('duplicates: error by default, naming both sources and lines', async () => {
    const a = await run([row('x', 'm', 0.5, '2026-03-03T10:00:00Z'), row('y', 'm', 1, '2026-03-03T10:00:01Z')]);
    const b = await run([row('y', 'm', 0.3, '2026-03-03T12:00:00Z')]);
    const r = await runCli(['combine', a, b, '--out', join(tmp, 'dup-error')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`y (target m, attempt 0) is in both ${a} (index.jsonl:2) and ${b} (index.jsonl:1)`);
    expect(r.stderr).toContain('--on-duplicate latest');
  });

  it('duplicates: latest keeps the later timestamp, whichever source it is in', async () => {
    const newer = await run([row('y', 'm', 0.3, '2026-03-03T12:00:00Z')]);
    const older = await run([row('x', 'm', 0.5, '2026-03-03T10:00:00Z'), row('y', 'm', 1, '2026-03-03T10:00:01Z')]);
    const out = join(tmp, 'dup-latest');
    const r = await runCli(['combine', newer, older, '--out', out, '--on-duplicate', 'latest', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).duplicates_replaced).toBe(1);
    const rows = await index(out);
    expect(rows.map((x) => [x.test_id, x.score])).toEqual([
      ['y', 0.3],
      ['x', 0.5],
    ]);
    expect(await json(join(out, 'summary.json'))).toMatchObject({ total: 2, passed: 0, failed: 2 });
  });

  it('duplicates: latest with equal timestamps keeps the source given later', async () => {
    const first = await run([row('t', 'm', 0.1, '2026-03-04T10:00:00Z')]);
    const second = await run([row('t', 'm', 0.9, '2026-03-04T10:00:00Z')]);
    const out1 = join(tmp, 'tie-1');
    const out2 = join(tmp, 'tie-2');
    expect((await runCli(['combine', first, second, '--out', out1, '--on-duplicate', 'latest'])).code).toBe(0);
    expect((await runCli(['combine', second, first, '--out', out2, '--on-duplicate', 'latest'])).code).toBe(0);
    expect((await index(out1))[0]!.score).toBe(0.9);
    expect((await index(out2))[0]!.score).toBe(0.1);
  });

  it('refuses a non-empty --out, accepts an empty one, and defaults to .agentv/results/<run_id>', async () => {
    const a = await run([row('a', 'm', 1, '2026-03-05T10:00:00Z')]);
    const b = await run([row('b', 'm', 1, '2026-03-05T11:00:00Z')]);
    const busy = join(tmp, 'busy');
    await mkdir(busy);
    await writeFile(join(busy, 'keep.txt'), 'mine');
    let r = await runCli(['combine', a, b, '--out', busy]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('already exists and is not empty');
    expect(await readFile(join(busy, 'keep.txt'), 'utf8')).toBe('mine');

    const empty = join(tmp, 'empty');
    await mkdir(empty);
    r = await runCli(['combine', a, b, '--out', empty]);
    expect(r.code, r.stderr).toBe(0);
    expect(await index(empty)).toHaveLength(2);

    const cwd = join(tmp, 'project');
    await mkdir(cwd);
    r = await runCli(['combine', a, b], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(await index(join(cwd, '.agentv/results/2026-03-05T10-00-00-000Z'))).toHaveLength(2);
  });

  it('refuses the same source twice, a source with malformed lines, and --out inside a source', async () => {
    const a = await run([row('a', 'm', 1, '2026-03-06T10:00:00Z')]);
    let r = await runCli(['combine', a, join(a, 'index.jsonl'), '--out', join(tmp, 'twice')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the same run workspace as');

    const broken = await run([row('b', 'm', 1, '2026-03-06T11:00:00Z')]);
    await writeFile(join(broken, 'index.jsonl'), (await readFile(join(broken, 'index.jsonl'), 'utf8')) + '{oops\n');
    r = await runCli(['combine', a, broken, '--out', join(tmp, 'broken-out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/index\.jsonl:2: not valid JSON .*before combining/);

    const c = await run([row('c', 'm', 1, '2026-03-06T12:00:00Z')]);
    r = await runCli(['combine', a, c, '--out', join(a, 'nested')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is inside source');
  });
});

describeWithFixtures('combine: shards of a real fixture add up to the whole run', () => {
  it('trace-analysis split in two shards combines to the same counts as exporting it whole', async () => {
    const file = fixture('trace-analysis--multi-agent.eval.results.jsonl');
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const whole = join(tmp, 'fx-whole');
    expect((await runCli(['export', file, '--out', whole, '--experiment', 'trace'])).code).toBe(0);
    const shards: string[] = [];
    for (const [i, part] of [lines.slice(0, 2), lines.slice(2)].entries()) {
      const src = join(tmp, `fx-shard-${i}.jsonl`);
      await writeFile(src, part.join('\n') + '\n');
      const out = join(tmp, `fx-shard-${i}`);
      expect((await runCli(['export', src, '--out', out, '--experiment', 'trace'])).code).toBe(0);
      shards.push(out);
    }
    const out = join(tmp, 'fx-combined');
    const r = await runCli(['combine', ...shards, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const a = await json(join(whole, 'summary.json'));
    const b = await json(join(out, 'summary.json'));
    for (const key of ['run_id', 'total', 'passed', 'failed', 'errors', 'pass_rate', 'mean_score', 'duration_ms', 'total_tokens', 'cost_usd', 'run_summary'])
      expect(b[key], key).toEqual(a[key]);
    // Same run id and the same case fields: the same projection ids as the whole export.
    expect((await index(out)).map((x) => x.projection_identity.id).sort()).toEqual((await index(whole)).map((x) => x.projection_identity.id).sort());
    expect((await runCli(['validate', out])).code).toBe(0);
  });
});

describeWithAgentVStable('combine: shards as a CI artifact holds them, AgentV 4.42 (npm `agentv`)', () => {
  it('takes shards/<n>/runs/<experiment>/<ts>/ as uploaded: by the shard folder, by shards/*/* (its runs/ folder) and by shards/ itself', async () => {
    const project = await makeStableSampleProject(tmp);
    const runDir = await agentvStableEval(project, { experiment: 'ci' });
    const rows = (await readFile(join(runDir, 'index.jsonl'), 'utf8')).trim().split('\n').length;
    // Two shards as download-artifact lays them out: each job's .agentv/results/ (its runs/ folder:
    // the sample project also commits a 5.x run of another experiment, which a fresh CI clone would not make).
    const shards = join(tmp, 'stable-shards');
    for (const shard of ['shard-1', 'shard-2']) await cp(join(project, '.agentv', 'results', 'runs'), join(shards, shard, 'runs'), { recursive: true });
    // The two shards hold one run twice: the duplicates name both, so each source was found.
    const twice = await runCli(['combine', '--out', join(tmp, 'stable-twice'), '--', shards]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/is in both .*shard-1\/runs\/ci\/[^ ]+ \(index\.jsonl:1\) and .*shard-2\/runs\/ci\//);
    for (const [i, source] of [join(shards, 'shard-1'), join(shards, 'shard-1', 'runs')].entries()) {
      const out = join(tmp, `stable-combined-${i}`);
      const r = await runCli(['combine', source, '--out', out, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as { rows: number; experiment: string; sources: { path: string }[] };
      expect(result.rows).toBe(rows);
      expect(result.experiment).toBe('ci');
      expect(result.sources.map((s) => s.path)).toEqual([join(source, relative(source, join(shards, 'shard-1', 'runs', 'ci', basename(runDir))))]);
      expect((await runCli(['validate', out])).code).toBe(0);
    }
  }, 120_000);

  it('a folder holding no run is refused as before (exit 2, not a run workspace)', async () => {
    const empty = join(tmp, 'no-runs', 'shard-1', 'runs');
    await mkdir(empty, { recursive: true });
    const r = await runCli(['combine', join(tmp, 'no-runs'), '--out', join(tmp, 'no-runs-out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a run workspace/);
  });
});
