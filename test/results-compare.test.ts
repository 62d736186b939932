/**
 * `compare`: checked against hand-computed expectations on the real compare fixtures (AgentV's
 * default threshold 0.1 and its JSON fields), the multi-target benchmark fixture against a
 * modified copy (last row of a repeated id wins, as in AgentV), hand-written runs for unmatched
 * tests, the threshold edge, normalized gain, seed 004's decision rules and the exit codes.
 * Side by side with the real `agentv compare`: test/conformance/compare.test.ts.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { describeWithFixtures, fixture } from './helpers/fixtures.js';

const tmp = await mkdtemp(join(tmpdir(), 'agentv-compare-'));
afterAll(() => rm(tmp, { recursive: true, force: true }));
let n = 0;

interface CompareJson {
  matched: { test_id: string; target?: string; score1: number; score2: number; delta: number; normalized_gain: number | null; outcome: string }[];
  unmatched: { file1: number; file2: number; baseline_only: string[]; candidate_only: string[] };
  summary: { total: number; matched: number; wins: number; losses: number; ties: number; mean_delta: number; mean_normalized_gain: number | null };
  threshold: number;
  sources: { baseline: { targets: string[]; rows: number }; candidate: { targets: string[]; rows: number } };
  warnings: string[];
  decision?: { decision: string; rationale: string; rule: string; artifacts?: unknown };
}

async function results(rows: Record<string, unknown>[]): Promise<string> {
  const f = join(tmp, `r-${n++}.jsonl`);
  await writeFile(f, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return f;
}

/** score rows for one target: `{ a: 0.5, b: 1 }` */
const scores = (target: string, s: Record<string, number>) => Object.entries(s).map(([test_id, score]) => ({ test_id, target, score }));
const counts = (j: CompareJson) => ({ wins: j.summary.wins, losses: j.summary.losses, ties: j.summary.ties, mean_delta: j.summary.mean_delta });

async function compare(args: string[]): Promise<{ code: number; json: CompareJson; stderr: string }> {
  const r = await runCli(['compare', ...args, '--json']);
  return { code: r.code, json: r.code === 2 ? (undefined as never) : (JSON.parse(r.stdout) as CompareJson), stderr: r.stderr };
}

describeWithFixtures('compare: the real compare fixtures', () => {
  const base = fixture('compare--baseline-results.jsonl');
  const cand = fixture('compare--candidate-results.jsonl');

  it("default threshold 0.1: only +0.16 is a win; AgentV's fields and rounding", async () => {
    const { code, json } = await compare([base, cand]);
    expect(code).toBe(0);
    // code-review-001 0.72 -> 0.88 = +0.16 win (>= 0.1)
    // code-review-002 0.85 -> 0.82 = -0.03 tie
    // code-review-003 0.68 -> 0.75 = +0.07 tie
    // code-gen-001    0.90 -> 0.92 = +0.02 tie
    // code-gen-002    0.75 -> 0.80 = +0.05 tie
    // mean_delta = 0.27 / 5 = 0.054; gains 0.16/0.28, -0.03/0.15, 0.07/0.32, 0.02/0.1, 0.05/0.25 -> mean 0.198
    expect(json.summary).toEqual({ total: 10, matched: 5, wins: 1, losses: 0, ties: 4, mean_delta: 0.054, mean_normalized_gain: 0.198 });
    expect(Object.keys(json.summary)).toEqual(['total', 'matched', 'wins', 'losses', 'ties', 'mean_delta', 'mean_normalized_gain']);
    expect(json.threshold).toBe(0.1);
    expect(json.unmatched).toEqual({ file1: 0, file2: 0, baseline_only: [], candidate_only: [] });
    expect(json.matched.map((t) => [t.test_id, t.score1, t.score2, Number(t.delta.toFixed(9)), t.outcome])).toEqual([
      ['code-review-001', 0.72, 0.88, 0.16, 'win'],
      ['code-review-002', 0.85, 0.82, -0.03, 'tie'],
      ['code-review-003', 0.68, 0.75, 0.07, 'tie'],
      ['code-gen-001', 0.9, 0.92, 0.02, 'tie'],
      ['code-gen-002', 0.75, 0.8, 0.05, 'tie'],
    ]);
    expect(json.matched[0]!.normalized_gain).toBeCloseTo(0.16 / 0.28, 12);
  });

  it('--threshold 0: every change counts (4 wins, 1 loss)', async () => {
    const { json } = await compare([base, cand, '--threshold', '0']);
    expect(counts(json)).toEqual({ wins: 4, losses: 1, ties: 0, mean_delta: 0.054 });
    expect(json.threshold).toBe(0);
  });

  it('swapped, the candidate regresses: mean_delta -0.054, exit 1', async () => {
    const { code, json } = await compare([cand, base]);
    expect(counts(json)).toEqual({ wins: 0, losses: 1, ties: 4, mean_delta: -0.054 });
    expect(code).toBe(1);
    const human = await runCli(['compare', cand, base]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('wins=0, losses=1, ties=4, mean_delta=-0.054');
  });

  it('gives the same answer on exported run workspaces and their index.jsonl', async () => {
    const a = join(tmp, 'ws-base');
    const b = join(tmp, 'ws-cand');
    expect((await runCli(['export', base, '--out', a])).code).toBe(0);
    expect((await runCli(['export', cand, '--out', b])).code).toBe(0);
    const dirs = await compare([a, b]);
    const idx = await compare([join(a, 'index.jsonl'), join(b, 'index.jsonl')]);
    const raw = await compare([base, cand]);
    expect(dirs.json.summary).toEqual(raw.json.summary);
    expect(idx.json.summary).toEqual(dirs.json.summary);
  });

  it('--decide at the default threshold keeps the fixture candidate (1 win > 0 losses)', async () => {
    const { json } = await compare([base, cand, '--decide']);
    expect(json.decision).toEqual({ decision: 'keep', rule: 'wins_over_losses', rationale: 'candidate wins outweigh losses (1 > 0)' });
    const human = await runCli(['compare', base, cand, '--decide']);
    expect(human.stdout).toMatch(/Decision: KEEP\n {2}Rationale: candidate wins outweigh losses \(1 > 0\)/);
  });
});

describeWithFixtures('compare: several targets in one file (benchmark-tooling fixture)', () => {
  const original = fixture('benchmark-tooling--combined-results.jsonl');
  let modified: string;

  it('matches by test_id, the last row of a repeated id counts, and a warning says so', async () => {
    const rows = (await readFile(original, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { test_id: string; target: string; score: number });
    const find = (t: string, m: string) => rows.find((r) => r.test_id === t && r.target === m)!;
    find('greeting', 'gpt-4.1').score = 0.95;
    find('greeting', 'gpt-5-mini').score = 1.0;
    find('code-generation', 'gemini-3-flash-preview').score = 0.6;
    rows.push({ test_id: 'translation', target: 'gpt-4.1', score: 0.7 });
    modified = join(tmp, 'benchmark-modified.jsonl');
    await writeFile(modified, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { json } = await compare([original, modified]);
    const last = (list: { test_id: string; score: number }[], id: string) => list.filter((r) => r.test_id === id).at(-1)!.score;
    const orig = (await readFile(original, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { test_id: string; score: number });
    for (const m of json.matched) {
      expect(m.score1).toBe(last(orig, m.test_id));
      expect(m.score2).toBe(last(rows, m.test_id));
    }
    expect(json.summary.matched).toBe(new Set(orig.map((r) => r.test_id)).size);
    expect(json.summary.total).toBe(orig.length + rows.length);
    expect(json.unmatched.candidate_only).toEqual(['translation']);
    expect(json.unmatched.file2).toBe(1);
    expect(json.warnings.join('\n')).toMatch(
      /the last row of each is compared, as agentv compare does — it holds targets .*gpt-4\.1.*: pick one with --target/,
    );
  });

  it('--target narrows both sides to one target first', async () => {
    const { json } = await compare([original, modified, '--target', 'gpt-4.1']);
    // greeting 0.85 -> 0.95 = +0.1 (0.0999… in binary: a tie, as AgentV has it), code-generation 0, summarization 0
    expect(json.matched.find((m) => m.test_id === 'greeting')).toMatchObject({ score1: 0.85, score2: 0.95, outcome: 'tie' });
    expect(counts(json)).toEqual({ wins: 0, losses: 0, ties: 3, mean_delta: 0.033 });
    expect(json.unmatched.candidate_only).toEqual(['translation']);
    expect(json.warnings).toEqual([]);
  });

  it('--baseline-target/--candidate-target compare two providers', async () => {
    const { code, json } = await compare([original, modified, '--baseline-target', 'gpt-4.1', '--candidate-target', 'gpt-5-mini']);
    expect(code).toBe(0);
    // greeting 0.85 -> 1.00 = +0.15 win, code-generation 0.80 -> 0.75 = -0.05 tie, summarization 0.90 -> 0.80 = -0.10 (-0.0999…98 in binary: a tie, as AgentV has it)
    expect(counts(json)).toEqual({ wins: 1, losses: 0, ties: 2, mean_delta: 0 });
    expect(json.sources.baseline.targets).toEqual(['gpt-4.1']);
    expect(json.sources.candidate.targets).toEqual(['gpt-5-mini']);
  });

  it('a --target no side has is an input error naming the targets', async () => {
    const r = await runCli(['compare', original, modified, '--target', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/has no rows for target nope \(targets: .*gpt-4\.1.*\)/);
  });
});

describe('compare: hand-written runs', () => {
  it('unmatched tests on each side are listed, counted as rows, and do not count in the means', async () => {
    const b = await results(scores('m', { a: 0.5, b: 0.5, only_base: 1 }));
    const c = await results(scores('m', { a: 0.75, b: 0.25, only_cand: 0 }));
    const { json } = await compare([b, c]);
    // a +0.25 win, b -0.25 loss -> mean 0
    expect(counts(json)).toEqual({ wins: 1, losses: 1, ties: 0, mean_delta: 0 });
    expect(json.unmatched).toEqual({ file1: 1, file2: 1, baseline_only: ['only_base'], candidate_only: ['only_cand'] });
    const human = await runCli(['compare', b, c]);
    expect(human.stdout).toContain('only in baseline:  only_base');
    expect(human.stdout).toContain('only in candidate: only_cand');
  });

  it('a delta of exactly the threshold is a win; normalized gain is null at a perfect baseline', async () => {
    const b = await results(scores('m', { a: 0.5, p: 1 }));
    const c = await results(scores('m', { a: 0.75, p: 0.5 }));
    const { json } = await compare([b, c, '--threshold', '0.25']);
    expect(json.matched).toEqual([
      { test_id: 'a', score1: 0.5, score2: 0.75, delta: 0.25, normalized_gain: 0.5, outcome: 'win' },
      { test_id: 'p', score1: 1, score2: 0.5, delta: -0.5, normalized_gain: null, outcome: 'loss' },
    ]);
    expect(json.summary.mean_normalized_gain).toBe(0.5);
  });

  it('a malformed line is skipped with a warning, not fatal', async () => {
    const f = join(tmp, `bad-${n++}.jsonl`);
    await writeFile(f, '{"test_id":"a","score":0.5}\n{oops\n{"test_id":"b","score":1}\n');
    const c = await results([
      { test_id: 'a', score: 0.5 },
      { test_id: 'b', score: 1 },
    ]);
    const { code, json, stderr } = await compare([f, c]);
    expect(code).toBe(0);
    expect(json.summary.matched).toBe(2);
    expect(stderr).toMatch(/:2: not valid JSON, line skipped/);
  });

  it('no test in common is an input error (exit 2)', async () => {
    const r = await runCli(['compare', await results(scores('m', { a: 1 })), await results(scores('m', { b: 1 }))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no test id matched');
  });

  it('bad flags are usage errors', async () => {
    const f = await results(scores('m', { a: 1 }));
    expect((await runCli(['compare', f, f, '--threshold', 'abc'])).code).toBe(2);
    expect((await runCli(['compare', f, f, '--threshold', '-1'])).code).toBe(2);
    const r = await runCli(['compare', f, f, '--baseline-artifact', f, '--candidate-artifact', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('add --decide');
  });
});

describe('compare --all-targets and --older-baseline (what the Dashboard compares)', () => {
  const at = (day: number, rows: Record<string, unknown>[]) => rows.map((r) => ({ ...r, timestamp: `2026-03-0${day}T10:00:00.000Z` }));

  it('--all-targets matches per (test, target): no target dropped, a pair only one side has is listed', async () => {
    const base = await results(at(1, [...scores('gpt', { a: 0.5, b: 0.5 }), ...scores('claude', { a: 0.9, b: 0.9 })]));
    const cand = await results(at(2, [...scores('gpt', { a: 0.9, b: 0.5 }), ...scores('claude', { a: 0.5 })]));
    // By test id (AgentV's), claude's rows are the last of each id: one of the two targets is all that counts.
    const byId = await compare([base, cand]);
    expect(byId.json.matched.map((m) => [m.test_id, m.score1, m.score2])).toEqual([
      ['a', 0.9, 0.5],
      ['b', 0.9, 0.5],
    ]);
    const all = await compare([base, cand, '--all-targets']);
    const json = all.json as CompareJson & { match: string; unmatched: { baseline_only_pairs: unknown[] } };
    expect(json.match).toBe('test+target');
    expect(json.matched.map((m) => [m.test_id, m.target, m.outcome])).toEqual([
      ['a', 'gpt', 'win'],
      ['b', 'gpt', 'tie'],
      ['a', 'claude', 'loss'],
    ]);
    expect(json.unmatched.baseline_only_pairs).toEqual([{ test_id: 'b', target: 'claude' }]);
    expect(json.unmatched.file1).toBe(1);
    expect(json.summary).toMatchObject({ matched: 3, wins: 1, losses: 1, ties: 1 });
    // The Markdown names each pair's target (escaped like every value from a run).
    const md = await runCli(['compare', base, cand, '--all-targets', '--format', 'markdown']);
    expect(md.stdout).toContain('| a (claude) |');
    // The gate counts the same pairs.
    const gate = await runCli(['gate', base, cand, '--all-targets', '--removed-tests', 'allow', '--json']);
    const g = JSON.parse(gate.stdout) as { regressions: { test_id: string; target?: string }[]; summary: { matched: number } };
    expect(g.summary.matched).toBe(3);
    expect(g.regressions.map((r) => [r.test_id, r.target])).toEqual([['a', 'claude']]);
  });

  it('--older-baseline takes the older run as the baseline in either order, and says it swapped', async () => {
    const older = await results(at(1, scores('m', { a: 0.9, b: 0.9 })));
    const newer = await results(at(2, scores('m', { a: 0.5, b: 0.6 })));
    const given = await compare([newer, older]);
    expect(counts(given.json)).toMatchObject({ wins: 2, losses: 0 });
    for (const args of [
      [older, newer],
      [newer, older],
    ]) {
      const r = await compare([...args, '--older-baseline']);
      expect(r.code).toBe(1);
      expect(counts(r.json)).toMatchObject({ wins: 0, losses: 2, mean_delta: -0.35 });
      expect((r.json as CompareJson & { order: unknown }).order).toEqual({ rule: 'older-first', swapped: args[0] === newer });
    }
    // No timestamps: the order given stands, with a warning.
    const undated = await compare([await results(scores('m', { a: 0.5 })), await results(scores('m', { a: 0.9 })), '--older-baseline']);
    expect(undated.json.warnings.join('\n')).toMatch(/cannot tell which run is older/);
  });
});

describe('compare <one run>: its targets against each other', () => {
  it('pairwise with --baseline-target/--candidate-target, matrix without; errors name what to pass', async () => {
    const f = await results([...scores('a', { t1: 0.5, t2: 1 }), ...scores('b', { t1: 0.75, t2: 0.5 })]);
    const pair = await runCli(['compare', f, '--baseline-target', 'a', '--candidate-target', 'b', '--json']);
    expect(pair.code).toBe(1); // mean_delta (0.25 - 0.5) / 2 = -0.125
    const pj = JSON.parse(pair.stdout) as CompareJson & { mode: string };
    expect(pj.mode).toBe('pairwise');
    expect(counts(pj)).toEqual({ wins: 1, losses: 1, ties: 0, mean_delta: -0.125 });
    const matrix = await runCli(['compare', f, '--json']);
    expect(matrix.code).toBe(0);
    expect(JSON.parse(matrix.stdout)).toMatchObject({
      mode: 'matrix',
      targets: ['a', 'b'],
      matrix: [
        { test_id: 't1', scores: { a: 0.5, b: 0.75 } },
        { test_id: 't2', scores: { a: 1, b: 0.5 } },
      ],
    });
    expect((await runCli(['compare', f, '--baseline', 'a'])).code).toBe(1); // b is lower than baseline a on average
    expect((await runCli(['compare', f, '--baseline', 'b'])).code).toBe(0);
    let r = await runCli(['compare', f, '--candidate', 'b']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('needs a baseline target');
    r = await runCli(['compare', await results([{ test_id: 't1', score: 1 }])]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('without a target');
    r = await runCli(['compare', f, f, '--baseline', 'a']);
    expect(r.code).toBe(2);
  });
});

describe('compare --decide: seed 004 rules', () => {
  const artifacts = join(tmp, 'artifacts');
  const file = async (name: string, lines: number) => {
    await mkdir(artifacts, { recursive: true });
    const p = join(artifacts, name);
    await writeFile(p, Array.from({ length: lines }, (_, i) => `line ${i}`).join('\n') + '\n');
    return p;
  };
  const dir = async (name: string, bytes: number[]) => {
    const d = join(artifacts, name);
    await mkdir(join(d, 'refs'), { recursive: true });
    await Promise.all(bytes.map((b, i) => writeFile(join(d, i === 0 ? 'SKILL.md' : `refs/r${i}.md`), 'x'.repeat(b))));
    return d;
  };

  it('rule 1: wins > losses -> keep (even at mean_delta < 0, which still exits 1)', async () => {
    // +0.25, +0.25, -1 -> wins 2 > losses 1, mean (0.25 + 0.25 - 1) / 3 = -0.167
    const b = await results(scores('m', { a: 0.5, b: 0.5, c: 1 }));
    const c = await results(scores('m', { a: 0.75, b: 0.75, c: 0 }));
    const { code, json } = await compare([b, c, '--decide']);
    expect(counts(json)).toEqual({ wins: 2, losses: 1, ties: 0, mean_delta: -0.167 });
    expect(json.decision).toMatchObject({ decision: 'keep', rule: 'wins_over_losses' });
    expect(code).toBe(1);
  });

  it('wins <= losses with a non-zero mean -> discard, naming the counts', async () => {
    const b = await results(scores('m', { a: 0.5, b: 0.5 }));
    const c = await results(scores('m', { a: 0.25, b: 0.25 }));
    const { code, json } = await compare([b, c, '--decide']);
    expect(json.decision).toMatchObject({ decision: 'discard', rationale: 'candidate losses outweigh wins (2 > 0)' });
    expect(code).toBe(1);
    const human = await runCli(['compare', b, c, '--decide']);
    expect(human.stdout).toMatch(/Decision: DISCARD\n {2}Rationale: candidate losses outweigh wins \(2 > 0\)/);
  });

  const equal = async () => [await results(scores('m', { a: 0.5, b: 0.5 })), await results(scores('m', { a: 0.5, b: 0.5 }))];

  it('rule 2: mean_delta == 0 and the candidate file has fewer lines -> keep', async () => {
    const [b, c] = await equal();
    const { code, json } = await compare([
      b!,
      c!,
      '--decide',
      '--baseline-artifact',
      await file('old.md', 12),
      '--candidate-artifact',
      await file('new.md', 9),
    ]);
    expect(code).toBe(0);
    expect(json.decision).toMatchObject({
      decision: 'keep',
      rule: 'simpler_at_equal_score',
      rationale: 'equal performance (mean_delta 0) and the candidate is simpler (9 < 12 lines)',
    });
  });

  it('mean_delta == 0 and the candidate file is not shorter -> discard', async () => {
    const [b, c] = await equal();
    const { json } = await compare([b!, c!, '--decide', '--baseline-artifact', await file('same1.md', 10), '--candidate-artifact', await file('same2.md', 10)]);
    expect(json.decision).toMatchObject({
      decision: 'discard',
      rationale: 'equal performance (mean_delta 0) but the candidate is not simpler (10 >= 10 lines)',
    });
  });

  it('mean_delta == 0 without artifacts -> discard, saying what to pass', async () => {
    const [b, c] = await equal();
    const { json } = await compare([b!, c!, '--decide']);
    expect(json.decision!.decision).toBe('discard');
    expect(json.decision!.rationale).toContain('--baseline-artifact');
  });

  it('a last line without a newline counts as a line', async () => {
    const [b, c] = await equal();
    await mkdir(artifacts, { recursive: true });
    await writeFile(join(artifacts, 'nl-a.md'), 'a\nb\nc\n'); // 3 lines
    await writeFile(join(artifacts, 'nl-b.md'), 'a\nb\nc'); // 3 lines, no final newline
    const { json } = await compare([b!, c!, '--decide', '--baseline-artifact', join(artifacts, 'nl-a.md'), '--candidate-artifact', join(artifacts, 'nl-b.md')]);
    expect(json.decision).toMatchObject({ decision: 'discard', rationale: expect.stringContaining('(3 >= 3 lines)') });
  });

  it('directories compare by total bytes of their files', async () => {
    const [b, c] = await equal();
    const big = await dir('skill-old', [300, 200]); // 500 bytes
    const small = await dir('skill-new', [250, 200]); // 450 bytes
    const { json } = await compare([b!, c!, '--decide', '--baseline-artifact', big, '--candidate-artifact', small]);
    expect(json.decision).toMatchObject({ decision: 'keep', rationale: 'equal performance (mean_delta 0) and the candidate is simpler (450 < 500 bytes)' });
    const reverse = await compare([b!, c!, '--decide', '--baseline-artifact', small, '--candidate-artifact', big]);
    expect(reverse.json.decision).toMatchObject({ decision: 'discard' });
  });

  it('artifact errors: one side only, mixed kinds, missing path -> exit 2', async () => {
    const [b, c] = await equal();
    const f = await file('one.md', 3);
    const d = await dir('onedir', [10]);
    let r = await runCli(['compare', b!, c!, '--decide', '--candidate-artifact', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pass both --baseline-artifact and --candidate-artifact');
    r = await runCli(['compare', b!, c!, '--decide', '--baseline-artifact', d, '--candidate-artifact', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('must both be files or both directories');
    r = await runCli(['compare', b!, c!, '--decide', '--baseline-artifact', f, '--candidate-artifact', join(artifacts, 'missing.md')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no such file or directory');
  });
});

describe('gate and compare read a run where it is: nothing is written to disk', () => {
  // Every temporary directory the commands could make goes under `scratch` (TMPDIR), and the runs
  // sit in `work`: after each command both must hold exactly what they held before.
  const listing = async (root: string): Promise<string[]> => {
    const { readdir } = await import('node:fs/promises');
    return (await readdir(root, { recursive: true })).map(String).sort();
  };

  it('a results .jsonl on each side: the verdict, and no bundle exported anywhere', async () => {
    const work = await mkdtemp(join(tmp, 'in-place-'));
    const scratch = await mkdtemp(join(tmp, 'scratch-'));
    const rows = (s: Record<string, number>) =>
      scores('gpt', s)
        .map((r) => `${JSON.stringify({ ...r, timestamp: '2026-01-01T00:00:00Z' })}\n`)
        .join('');
    await writeFile(join(work, 'base.jsonl'), rows({ a: 0.9, b: 0.8, c: 0.7 }));
    await writeFile(join(work, 'cand.jsonl'), rows({ a: 0.9, b: 0.5, c: 0.7 }));
    const before = await listing(work);
    const env = { TMPDIR: scratch };
    const gate = await runCli(['gate', 'base.jsonl', 'cand.jsonl', '--json'], { cwd: work, env });
    expect(gate.code, gate.stderr).toBe(1);
    expect((JSON.parse(gate.stdout) as { regressions: { test_id: string }[] }).regressions.map((t) => t.test_id)).toEqual(['b']);
    const cmp = await runCli(['compare', 'base.jsonl', 'cand.jsonl', '--json'], { cwd: work, env });
    expect(cmp.code, cmp.stderr).toBe(1);
    expect((JSON.parse(cmp.stdout) as CompareJson).summary.losses).toBe(1);
    expect(await listing(work)).toEqual(before);
    expect(await listing(scratch)).toEqual([]);
  });

  it('rows that must be derived (not AgentV-shaped) are read in memory: refused, with no scratch bundle left behind', async () => {
    const work = await mkdtemp(join(tmp, 'in-place-'));
    const scratch = await mkdtemp(join(tmp, 'scratch-'));
    const run = join(work, 'run');
    await mkdir(run);
    // A manifest whose rows carry no numeric score: the light reader hands them to export's derivation.
    await writeFile(join(run, 'index.jsonl'), `${JSON.stringify({ test_id: 'a', result: { score: 0.5 } })}\n`);
    await writeFile(join(work, 'ok.jsonl'), `${JSON.stringify({ test_id: 'a', score: 0.5 })}\n`);
    const before = await listing(work);
    const r = await runCli(['compare', 'run', 'ok.jsonl'], { cwd: work, env: { TMPDIR: scratch } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('no result rows');
    expect(await listing(work)).toEqual(before);
    expect(await listing(scratch)).toEqual([]);
  });
});
