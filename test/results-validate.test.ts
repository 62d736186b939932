/**
 * `validate`: a clean export is valid, and every corruption we can think of is caught with a
 * clear `<file>:<line>: message`, exit 1, and the same facts in `--json`.
 */
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { exportRun, validateRun } from '../src/index.js';
import { describeWithFixtures, fixtureFiles } from './helpers/fixtures.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-validate-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
let n = 0;

const ROWS = [
  {
    test_id: 'alpha',
    suite: 's',
    target: 'm1',
    score: 1,
    timestamp: '2026-03-01T10:00:00Z',
    assertions: [{ text: 'says hi', passed: true, evidence: 'it did' }],
    answer: 'hi',
    output: [{ role: 'assistant', content: 'hi' }],
  },
  {
    test_id: 'beta',
    suite: 's',
    target: 'm1',
    score: 0.4,
    timestamp: '2026-03-01T10:01:00Z',
    assertions: [{ text: 'cites', passed: false, evidence: 'no citation' }],
  },
  { test_id: 'gamma', suite: 's', target: 'm2', score: 0.9, timestamp: '2026-03-01T10:02:00Z', assertions: [{ text: 'ok', passed: true }] },
];

let pristine: string;

beforeAll(async () => {
  const src = join(tmp, 'results.jsonl');
  await writeFile(src, ROWS.map((r) => JSON.stringify(r)).join('\n') + '\n');
  pristine = join(tmp, 'pristine');
  const r = await runCli(['export', src, '--out', pristine, '--experiment', 'val']);
  expect(r.code, r.stderr).toBe(0);
});

/** A fresh copy of the pristine run to corrupt. */
async function copy(): Promise<string> {
  const d = join(tmp, `case-${n++}`);
  await cp(pristine, d, { recursive: true });
  return d;
}

async function indexLines(dir: string): Promise<Record<string, unknown>[]> {
  return (await readFile(join(dir, 'index.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

async function writeIndex(dir: string, rows: unknown[]): Promise<void> {
  await writeFile(join(dir, 'index.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

/** Run validate from inside the run (`validate .`), so problems read `index.jsonl:3: ...`; human and JSON. */
async function check(dir: string, ...extra: string[]) {
  const human = await runCli(['validate', '.', ...extra], { cwd: dir });
  const json = await runCli(['validate', '.', '--json', ...extra], { cwd: dir });
  return {
    human,
    json: JSON.parse(json.stdout) as {
      valid: boolean;
      problems: { file: string; line?: number; message: string }[];
      notes: { file: string; line?: number; message: string }[];
    },
    jsonCode: json.code,
  };
}

describe('validate: a clean run', () => {
  it('is valid, exit 0', async () => {
    const { human, json, jsonCode } = await check(pristine);
    expect(human.code, human.stdout + human.stderr).toBe(0);
    expect(human.stdout).toMatch(/✓ \.: valid \(3 rows\)/);
    expect(jsonCode).toBe(0);
    expect(json.valid).toBe(true);
    expect(json.problems).toEqual([]);
  });

  it('accepts the index.jsonl path and --dir', async () => {
    const r = await runCli(['validate', 'pristine/index.jsonl', '--dir', tmp]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('is an input error (exit 2) for a directory that is not a run', async () => {
    const d = join(tmp, 'not-a-run');
    await mkdir(d);
    const r = await runCli(['validate', d]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a run workspace/);
  });
});

describe('validate: corruptions', () => {
  it('a missing sidecar', async () => {
    const d = await copy();
    const [row] = await indexLines(d);
    await unlink(join(d, row!.grading_path as string));
    const { human, json } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`index.jsonl:1: grading_path ${row!.grading_path} does not exist — the grading sidecar is missing`);
    expect(json.valid).toBe(false);
    expect(json.problems).toContainEqual({ file: 'index.jsonl', line: 1, message: expect.stringContaining('grading_path') });
  });

  it('a sidecar with bad JSON', async () => {
    const d = await copy();
    const [, row] = await indexLines(d);
    await writeFile(join(d, row!.metrics_path as string), '{"schema_version": "agentv.metrics.v1",');
    const { human, json } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`${row!.metrics_path}: not valid JSON`);
    expect(human.stdout).toContain('referenced by index.jsonl:2');
    expect(json.problems.map((p) => p.file)).toContain(row!.metrics_path);
  });

  it('a sidecar failing its schema', async () => {
    const d = await copy();
    const [row] = await indexLines(d);
    const metrics = JSON.parse(await readFile(join(d, row!.metrics_path as string), 'utf8'));
    metrics.schema_version = 'agentv.metrics.v0';
    await writeFile(join(d, row!.metrics_path as string), JSON.stringify(metrics));
    const grading = JSON.parse(await readFile(join(d, row!.grading_path as string), 'utf8'));
    grading.component_results[0].pass = 'yes';
    await writeFile(join(d, row!.grading_path as string), JSON.stringify(grading));
    const { human } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(new RegExp(`${row!.metrics_path}: does not match the metrics schema: schema_version`));
    expect(human.stdout).toMatch(new RegExp(`${row!.grading_path}: does not match the grading schema: component_results\\.0\\.pass`));
  });

  it('a grading.json carrying a timing block (skill-creator would read tokens from it)', async () => {
    const d = await copy();
    const [row] = await indexLines(d);
    const grading = JSON.parse(await readFile(join(d, row!.grading_path as string), 'utf8'));
    grading.timing = { total_tokens: 1 };
    await writeFile(join(d, row!.grading_path as string), JSON.stringify(grading));
    const { human } = await check(d);
    expect(human.stdout).toContain('grading.json must not carry a timing block');
  });

  it('wrong summary counts, overall and per target', async () => {
    const d = await copy();
    const summary = JSON.parse(await readFile(join(d, 'summary.json'), 'utf8'));
    summary.total = 4;
    summary.passed = 3;
    summary.run_summary.m1.failed = 0;
    await writeFile(join(d, 'summary.json'), JSON.stringify(summary, null, 2));
    const { human, json } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('summary.json: total is 4 but index.jsonl has 3');
    expect(human.stdout).toContain('summary.json: passed is 3 but index.jsonl has 2');
    expect(human.stdout).toContain('summary.json: run_summary.m1.failed is 0 but index.jsonl has 1');
    expect(json.problems.filter((p) => p.file === 'summary.json')).toHaveLength(3);
  });

  it('a summary missing a target, and one with an extra target', async () => {
    const d = await copy();
    const summary = JSON.parse(await readFile(join(d, 'summary.json'), 'utf8'));
    summary.run_summary.ghost = summary.run_summary.m2;
    delete summary.run_summary.m2;
    await writeFile(join(d, 'summary.json'), JSON.stringify(summary));
    const { human } = await check(d);
    expect(human.stdout).toContain('summary.json: run_summary has no entry for target m2');
    expect(human.stdout).toContain('summary.json: run_summary.ghost counts 1 row(s) but index.jsonl has none for that target');
  });

  it('a duplicated row (same projection id and same case)', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    await writeIndex(d, [...rows, rows[0]]);
    const { human } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/index\.jsonl:4: duplicate projection_identity\.id pi_[0-9a-f]{32} \(first on line 1\)/);
    expect(human.stdout).toContain('index.jsonl:4: duplicate case alpha (target m1, attempt 0) in suite s (first on line 1)');
    // The summary now disagrees too: 4 rows, 3 counted.
    expect(human.stdout).toContain('summary.json: total is 3 but index.jsonl has 4');
  });

  it('the same case under another projection id is still a duplicate', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    const twin = structuredClone(rows[1]!) as Record<string, any>;
    twin.trace_id = 'other-trace';
    twin.projection_identity.trace_id = 'other-trace';
    await writeIndex(d, [...rows, twin]);
    const { human } = await check(d);
    expect(human.stdout).toContain('index.jsonl:4: duplicate case beta (target m1, attempt 0) in suite s (first on line 2)');
    // Its id no longer matches its fields either.
    expect(human.stdout).toMatch(/index\.jsonl:4: projection_identity\.id pi_\w+ does not match its fields/);
  });

  it('a row path escaping the run (../x) and an absolute path', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    rows[0]!.grading_path = '../x/grading.json';
    rows[1]!.answer_path = '/etc/passwd';
    await writeIndex(d, rows);
    const { human, json } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('index.jsonl:1: grading_path "../x/grading.json" escapes the run directory');
    expect(human.stdout).toContain('index.jsonl:2: answer_path "/etc/passwd" escapes the run directory');
    expect(json.problems.filter((p) => /escapes/.test(p.message))).toHaveLength(2);
  });

  it('a sidecar that is a symbolic link leading outside the run', async () => {
    const d = await copy();
    const [row] = await indexLines(d);
    const outside = join(tmp, `outside-${n}.json`);
    await cp(join(d, row!.timing_path as string), outside);
    await unlink(join(d, row!.timing_path as string));
    await symlink(outside, join(d, row!.timing_path as string));
    const { human } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`index.jsonl:1: timing_path ${row!.timing_path} resolves outside the run directory`);
  });

  it('a malformed index line and a line that is not an index row', async () => {
    const d = await copy();
    const text = await readFile(join(d, 'index.jsonl'), 'utf8');
    const lines = text.trim().split('\n');
    lines.splice(1, 0, '{"test_id": "broken",');
    lines.push(JSON.stringify({ test_id: 'plain', score: 1 }));
    await writeFile(join(d, 'index.jsonl'), lines.join('\n') + '\n');
    const { human, json } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/index\.jsonl:2: not valid JSON/);
    expect(human.stdout).toMatch(/index\.jsonl:5: run_id: /);
    expect(json.problems[0]).toMatchObject({ file: 'index.jsonl', line: 2 });
    // Rows after the bad line keep their real line numbers.
    expect(human.stdout).not.toMatch(/index\.jsonl:3: /);
  });

  it('result.json disagreeing with its row, and a tampered projection id', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    const result = JSON.parse(await readFile(join(d, rows[0]!.result_path as string), 'utf8'));
    result.verdict = 'fail';
    await writeFile(join(d, rows[0]!.result_path as string), JSON.stringify(result));
    (rows[2]!.projection_identity as Record<string, unknown>).id = 'pi_' + '0'.repeat(32);
    await writeIndex(d, rows);
    const { human } = await check(d);
    expect(human.stdout).toContain(`${rows[0]!.result_path}: verdict is "fail" but index.jsonl:1 says "pass"`);
    expect(human.stdout).toMatch(/index\.jsonl:3: projection_identity\.id pi_0{32} does not match its fields \(expected pi_[0-9a-f]{32}\)/);
  });

  it('benchmark.json and timing.json that do not parse or disagree', async () => {
    const d = await copy();
    await writeFile(join(d, 'benchmark.json'), '[');
    const timing = JSON.parse(await readFile(join(d, 'timing.json'), 'utf8'));
    timing.tests = 7;
    await writeFile(join(d, 'timing.json'), JSON.stringify(timing));
    const { human } = await check(d);
    expect(human.stdout).toMatch(/^benchmark\.json: not valid JSON/m);
    expect(human.stdout).toContain('timing.json: counts 7 result(s) but index.jsonl has 3');
  });

  it('summary.json that is not JSON', async () => {
    const d = await copy();
    await writeFile(join(d, 'summary.json'), '{"total": ');
    const { human } = await check(d);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^summary\.json: not valid JSON/m);
  });

  it('artifact pointers: good, bad sha256, bad size, payload absent (note, or problem with --require-payloads)', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    const answerPath = rows[0]!.answer_path as string;
    const bytes = await readFile(join(d, answerPath));
    const sha = createHash('sha256').update(bytes).digest('hex');
    const pointer = (over: Record<string, unknown>) => ({
      ref: 'agentv/artifacts/v1',
      key: `runs/val/2026-03-01/x/${answerPath}`,
      path: answerPath,
      sha256: sha,
      size: bytes.length,
      media_type: 'text/markdown',
      family: 'output',
      ...over,
    });

    rows[0]!.artifact_pointers = [pointer({})];
    await writeIndex(d, rows);
    let res = await check(d);
    expect(res.human.code, res.human.stdout).toBe(0);

    rows[0]!.artifact_pointers = [pointer({ sha256: 'f'.repeat(64), size: bytes.length + 1 })];
    await writeIndex(d, rows);
    res = await check(d);
    expect(res.human.code).toBe(1);
    expect(res.human.stdout).toContain(`index.jsonl:1: artifact pointer ${answerPath}: sha256 ${'f'.repeat(64)} does not match the local payload (${sha})`);
    expect(res.human.stdout).toContain(
      `index.jsonl:1: artifact pointer ${answerPath}: size is ${bytes.length + 1} but the local payload has ${bytes.length} bytes`,
    );

    // Detached: the payload lives only on the artifacts branch.
    rows[0]!.artifact_pointers = [pointer({})];
    await writeIndex(d, rows);
    await unlink(join(d, answerPath));
    res = await check(d);
    expect(res.human.code, res.human.stdout).toBe(0);
    expect(res.human.stdout).toContain(`note: index.jsonl:1: artifact pointer ${answerPath}: payload not present locally`);
    expect(res.json.notes).toHaveLength(1);
    res = await check(d, '--require-payloads');
    expect(res.human.code).toBe(1);
    expect(res.json.problems[0]!.message).toMatch(/payload not present locally .* --require-payloads/);
  });

  it('one row wrong in every way: its problems in the order a reader meets the row', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    const row = rows[0]!;
    const answer = row.answer_path as string;
    const grading = row.grading_path as string;
    await unlink(join(d, row.metrics_path as string));
    await writeFile(join(d, grading), '{ not json');
    row.stdout_path = `${row.result_dir as string}/stdout.txt`;
    row.result_dir = answer;
    row.duration_ms = -5;
    (row.projection_identity as Record<string, unknown>).test_id = 'other';
    row.artifact_pointers = [
      { ref: 'agentv/artifacts/v1', key: 'elsewhere', path: answer, sha256: 'f'.repeat(64), size: 1, media_type: 'text/markdown', family: 'output' },
    ];
    await writeIndex(d, rows);
    const r = await validateRun({ run: d });
    const messages = (file: string) => r.problems.filter((p) => p.file === file).map((p) => p.message.replace(/pi_[0-9a-f]{32}/g, 'pi_…'));
    const sha = createHash('sha256')
      .update(await readFile(join(d, answer)))
      .digest('hex');
    expect(messages('index.jsonl')).toEqual([
      `result_dir ${answer} is not a directory`,
      `metrics_path ${row.metrics_path as string} does not exist — the metrics sidecar is missing`,
      `stdout_path ${row.stdout_path} does not exist`,
      `projection_identity.test_id is "other" but the row's test_id is "alpha"`,
      'projection_identity.id pi_… does not match its fields (expected pi_…)',
      'duration_ms -5 is negative',
      `artifact pointer ${answer}: key elsewhere does not end with its path`,
      `artifact pointer ${answer}: size is 1 but the local payload has 2 bytes`,
      `artifact pointer ${answer}: sha256 ${'f'.repeat(64)} does not match the local payload (${sha})`,
    ]);
    expect(messages(grading)).toEqual([expect.stringMatching(/^not valid JSON \(.+\) — referenced by index\.jsonl:1$/)]);
    expect(r.problems.every((p) => p.file === 'index.jsonl' || p.file === grading)).toBe(true);
  });

  it('reports every problem at once, index.jsonl first in line order', async () => {
    const d = await copy();
    const rows = await indexLines(d);
    await unlink(join(d, rows[2]!.metrics_path as string));
    await unlink(join(d, rows[0]!.timing_path as string));
    await writeFile(join(d, 'summary.json'), JSON.stringify({ ...JSON.parse(await readFile(join(d, 'summary.json'), 'utf8')), errors: 2 }));
    const { json } = await check(d);
    expect(json.problems.map((p) => `${p.file}:${p.line ?? ''}`)).toEqual(['index.jsonl:1', 'index.jsonl:3', 'summary.json:']);
  });
});

// The CLI's export and validate are driven above and in export-e2e on these same files; the sweep
// goes through the library (the same verbs, in-process) so it costs no process per fixture.
describeWithFixtures('validate: every real fixture exports to a valid run', () => {
  it.each(fixtureFiles().map((f) => [f.split('/').pop()!, f]))('%s', async (_name, file) => {
    const out = join(tmp, `fx-${n++}`);
    await exportRun({ source: file, out });
    expect(await validateRun({ run: out })).toMatchObject({ valid: true, problems: [] });
  });

  it("a grading.json whose graders are not the row's scores (one renamed) is caught", async () => {
    const out = join(tmp, `fx-${n++}`);
    await exportRun({ source: fixtureFiles().find((f) => f.includes('/weighted-graders--'))!, out });
    const [row] = await indexLines(out);
    const at = join(out, row!.grading_path as string);
    const grading = JSON.parse(await readFile(at, 'utf8'));
    grading.component_results[0].assertion.name = 'renamed';
    await writeFile(at, JSON.stringify(grading));
    const r = await validateRun({ run: out });
    expect(r.valid).toBe(false);
    expect(r.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      expect.stringMatching(new RegExp(`^${row!.grading_path}: component_results \\(graders\\) is \\["renamed",`)),
    ]);
  });
});
