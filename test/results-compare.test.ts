/**
 * `compare`: checked against hand-computed expectations on the real compare fixtures, the
 * multi-target benchmark fixture against a modified copy, and hand-written runs for unmatched
 * tests, repeated attempts, floating noise, seed 004's decision rules and the exit codes.
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
  summary: { wins: number; losses: number; ties: number; mean_delta: number };
  matched: number;
  match_by: string;
  threshold: number;
  unmatched: { baseline_only: { test_id: string; target?: string }[]; candidate_only: { test_id: string; target?: string }[] };
  tests: { test_id: string; target?: string; baseline: number; candidate: number; delta: number; outcome: string; attempts?: { baseline: number; candidate: number } }[];
  decision?: { decision: string; rationale: string; rule: string; artifacts?: unknown };
}

async function results(rows: Record<string, unknown>[]): Promise<string> {
  const f = join(tmp, `r-${n++}.jsonl`);
  await writeFile(f, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return f;
}

/** score rows for one target: `{ a: 0.5, b: 1 }` */
const scores = (target: string, s: Record<string, number>) => Object.entries(s).map(([test_id, score]) => ({ test_id, target, score }));

async function compare(args: string[]): Promise<{ code: number; json: CompareJson; stderr: string }> {
  const r = await runCli(['compare', ...args, '--json']);
  return { code: r.code, json: r.code === 2 ? (undefined as never) : (JSON.parse(r.stdout) as CompareJson), stderr: r.stderr };
}

describeWithFixtures('compare: the real compare fixtures', () => {
  const base = fixture('compare--baseline-results.jsonl');
  const cand = fixture('compare--candidate-results.jsonl');

  it('matches by test_id (one target per side) and gets the hand-computed summary', async () => {
    const { code, json } = await compare([base, cand]);
    expect(code).toBe(0);
    expect(json.match_by).toBe('test_id');
    // code-review-001 0.72 -> 0.88 = +0.16 win
    // code-review-002 0.85 -> 0.82 = -0.03 loss
    // code-review-003 0.68 -> 0.75 = +0.07 win
    // code-gen-001    0.90 -> 0.92 = +0.02 win
    // code-gen-002    0.75 -> 0.80 = +0.05 win
    // mean_delta = (0.16 - 0.03 + 0.07 + 0.02 + 0.05) / 5 = 0.27 / 5 = 0.054
    expect(json.summary).toEqual({ wins: 4, losses: 1, ties: 0, mean_delta: 0.054 });
    expect(Object.keys(json.summary)).toEqual(['wins', 'losses', 'ties', 'mean_delta']);
    expect(json.matched).toBe(5);
    expect(json.unmatched).toEqual({ baseline_only: [], candidate_only: [] });
    expect(json.tests.map((t) => [t.test_id, t.delta, t.outcome])).toEqual([
      ['code-review-001', 0.16, 'win'],
      ['code-review-002', -0.03, 'loss'],
      ['code-review-003', 0.07, 'win'],
      ['code-gen-001', 0.02, 'win'],
      ['code-gen-002', 0.05, 'win'],
    ]);
    expect(json.tests[0]).not.toHaveProperty('target');
  });

  it('--threshold 0.1 makes |delta| <= 0.1 a tie', async () => {
    const { json } = await compare([base, cand, '--threshold', '0.1']);
    // Only +0.16 exceeds the band; mean_delta does not depend on the band.
    expect(json.summary).toEqual({ wins: 1, losses: 0, ties: 4, mean_delta: 0.054 });
    expect(json.threshold).toBe(0.1);
  });

  it('swapped, the candidate regresses: mean_delta -0.054, exit 1', async () => {
    const { code, json } = await compare([cand, base]);
    expect(json.summary).toEqual({ wins: 1, losses: 4, ties: 0, mean_delta: -0.054 });
    expect(code).toBe(1);
    const human = await runCli(['compare', cand, base]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('wins=1, losses=4, ties=0, mean_delta=-0.0540 (5 matched)');
  });

  it('gives the same answer on exported run workspaces and their index.jsonl', async () => {
    const a = join(tmp, 'ws-base');
    const b = join(tmp, 'ws-cand');
    expect((await runCli(['export', base, '--out', a])).code).toBe(0);
    expect((await runCli(['export', cand, '--out', b])).code).toBe(0);
    const dirs = await compare([a, b]);
    const idx = await compare([join(a, 'index.jsonl'), join(b, 'index.jsonl')]);
    expect(dirs.json.summary).toEqual({ wins: 4, losses: 1, ties: 0, mean_delta: 0.054 });
    expect(idx.json.summary).toEqual(dirs.json.summary);
  });

  it('--decide keeps the fixture candidate (4 wins > 1 loss)', async () => {
    const { json } = await compare([base, cand, '--decide']);
    expect(json.decision).toEqual({ decision: 'keep', rule: 'wins_over_losses', rationale: 'candidate wins outweigh losses (4 > 1)' });
    const human = await runCli(['compare', base, cand, '--decide']);
    expect(human.stdout).toMatch(/Decision: KEEP\n {2}Rationale: candidate wins outweigh losses \(4 > 1\)/);
  });
});

describeWithFixtures('compare: several targets (benchmark-tooling fixture against a modified copy)', () => {
  const original = fixture('benchmark-tooling--combined-results.jsonl');
  let modified: string;

  it('matches by (test_id, target) and lists unmatched tests on each side', async () => {
    const rows = (await readFile(original, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { test_id: string; target: string; score: number });
    const find = (t: string, m: string) => rows.find((r) => r.test_id === t && r.target === m)!;
    find('greeting', 'gpt-4.1').score = 0.95; // 0.85 -> 0.95: +0.10
    find('greeting', 'gpt-5-mini').score = 1.0; // 0.95 -> 1.00: +0.05
    find('code-generation', 'gemini-3-flash-preview').score = 0.6; // 0.70 -> 0.60: -0.10
    const kept = rows.filter((r) => !(r.test_id === 'summarization' && r.target === 'gemini-3-flash-preview'));
    kept.push({ test_id: 'translation', target: 'gpt-4.1', score: 0.7 });
    modified = join(tmp, 'benchmark-modified.jsonl');
    await writeFile(modified, kept.map((r) => JSON.stringify(r)).join('\n') + '\n');

    const { code, json } = await compare([original, modified]);
    expect(code).toBe(0);
    expect(json.match_by).toBe('test_id+target');
    // 8 matched: +0.10, +0.05, -0.10 and five 0.00 -> mean = 0.05 / 8 = 0.00625
    expect(json.summary).toEqual({ wins: 2, losses: 1, ties: 5, mean_delta: 0.00625 });
    expect(json.matched).toBe(8);
    expect(json.unmatched).toEqual({
      baseline_only: [{ test_id: 'summarization', target: 'gemini-3-flash-preview' }],
      candidate_only: [{ test_id: 'translation', target: 'gpt-4.1' }],
    });
    expect(json.tests.find((t) => t.test_id === 'greeting' && t.target === 'gpt-4.1')).toMatchObject({ baseline: 0.85, candidate: 0.95, delta: 0.1, outcome: 'win' });
  });

  it('--target narrows both sides to one target, matching by test_id', async () => {
    const { json } = await compare([original, modified, '--target', 'gpt-4.1']);
    expect(json.match_by).toBe('test_id');
    // greeting +0.10, code-generation 0, summarization 0 -> mean 0.1 / 3 = 0.033333333 (9 decimals)
    expect(json.summary).toEqual({ wins: 1, losses: 0, ties: 2, mean_delta: 0.033333333 });
    expect(json.unmatched.candidate_only).toEqual([{ test_id: 'translation' }]);
  });

  it('--baseline-target/--candidate-target compare two providers; an exact 0 mean survives floating noise', async () => {
    const { code, json } = await compare([original, modified, '--baseline-target', 'gpt-4.1', '--candidate-target', 'gpt-5-mini']);
    expect(code).toBe(0);
    // greeting 0.85 -> 1.00 = +0.15, code-generation 0.80 -> 0.75 = -0.05, summarization 0.90 -> 0.80 = -0.10
    // mean = (0.15 - 0.05 - 0.10) / 3 = 0 (in binary floating point the sum is not exactly 0)
    expect(json.summary).toEqual({ wins: 1, losses: 2, ties: 0, mean_delta: 0 });
  });

  it('refuses an ambiguous shape (several targets against one) with the flags that resolve it', async () => {
    const r = await runCli(['compare', original, fixture('compare--candidate-results.jsonl')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot tell which rows to compare: .* --target, or --baseline-target and --candidate-target/);
  });

  it('a --target no side has is an input error naming the targets', async () => {
    const r = await runCli(['compare', original, modified, '--target', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/has no rows for target nope \(targets: gemini-3-flash-preview, gpt-4\.1, gpt-5-mini\)/);
  });
});

describe('compare: hand-written runs', () => {
  it('unmatched tests on each side are listed and do not count', async () => {
    const b = await results(scores('m', { a: 0.5, b: 0.5, only_base: 1 }));
    const c = await results(scores('m', { a: 0.75, b: 0.25, only_cand: 0 }));
    const { json } = await compare([b, c]);
    // a +0.25 win, b -0.25 loss -> mean 0
    expect(json.summary).toEqual({ wins: 1, losses: 1, ties: 0, mean_delta: 0 });
    expect(json.unmatched).toEqual({ baseline_only: [{ test_id: 'only_base' }], candidate_only: [{ test_id: 'only_cand' }] });
    const human = await runCli(['compare', b, c]);
    expect(human.stdout).toContain('only in baseline:  only_base');
    expect(human.stdout).toContain('only in candidate: only_cand');
  });

  it('repeated attempts compare by their mean score', async () => {
    const b = await results([
      { test_id: 'a', target: 'm', attempt: 0, score: 0.5 },
      { test_id: 'a', target: 'm', attempt: 1, score: 1.0 },
    ]);
    const c = await results([{ test_id: 'a', target: 'm', score: 0.75 }]);
    const { json } = await compare([b, c]);
    // baseline mean (0.5 + 1.0) / 2 = 0.75 = candidate -> tie
    expect(json.tests).toEqual([{ test_id: 'a', baseline: 0.75, candidate: 0.75, delta: 0, outcome: 'tie', attempts: { baseline: 2, candidate: 1 } }]);
  });

  it('floating noise is rounded away: 0.1 + 0.2 against 0.3 is a tie', async () => {
    const b = await results(scores('m', { a: 0.3 }));
    const c = await results(scores('m', { a: 0.1 + 0.2 }));
    const { json } = await compare([b, c]);
    expect(json.summary).toEqual({ wins: 0, losses: 0, ties: 1, mean_delta: 0 });
  });

  it('no test in common is an input error (exit 2)', async () => {
    const r = await runCli(['compare', await results(scores('m', { a: 1 })), await results(scores('m', { b: 1 }))]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no test matched');
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
    // +0.1, +0.1, -0.5 -> wins 2 > losses 1, mean (0.1 + 0.1 - 0.5) / 3 = -0.1
    const b = await results(scores('m', { a: 0.5, b: 0.5, c: 1 }));
    const c = await results(scores('m', { a: 0.6, b: 0.6, c: 0.5 }));
    const { code, json } = await compare([b, c, '--decide']);
    expect(json.summary).toEqual({ wins: 2, losses: 1, ties: 0, mean_delta: -0.1 });
    expect(json.decision).toMatchObject({ decision: 'keep', rule: 'wins_over_losses' });
    expect(code).toBe(1);
  });

  it('wins <= losses with a non-zero mean -> discard, naming the counts', async () => {
    const b = await results(scores('m', { a: 0.5, b: 0.5 }));
    const c = await results(scores('m', { a: 0.4, b: 0.4 }));
    const { code, json } = await compare([b, c, '--decide']);
    expect(json.decision).toMatchObject({ decision: 'discard', rationale: 'candidate losses outweigh wins (2 > 0)' });
    expect(code).toBe(1);
    const human = await runCli(['compare', b, c, '--decide']);
    expect(human.stdout).toMatch(/Decision: DISCARD\n {2}Rationale: candidate losses outweigh wins \(2 > 0\)/);
  });

  const equal = async () => [await results(scores('m', { a: 0.5, b: 0.5 })), await results(scores('m', { a: 0.5, b: 0.5 }))];

  it('rule 2: mean_delta == 0 and the candidate file has fewer lines -> keep', async () => {
    const [b, c] = await equal();
    const { code, json } = await compare([b!, c!, '--decide', '--baseline-artifact', await file('old.md', 12), '--candidate-artifact', await file('new.md', 9)]);
    expect(code).toBe(0);
    expect(json.decision).toMatchObject({ decision: 'keep', rule: 'simpler_at_equal_score', rationale: 'equal performance (mean_delta 0) and the candidate is simpler (9 < 12 lines)' });
  });

  it('mean_delta == 0 and the candidate file is not shorter -> discard', async () => {
    const [b, c] = await equal();
    const { json } = await compare([b!, c!, '--decide', '--baseline-artifact', await file('same1.md', 10), '--candidate-artifact', await file('same2.md', 10)]);
    expect(json.decision).toMatchObject({ decision: 'discard', rationale: 'equal performance (mean_delta 0) but the candidate is not simpler (10 >= 10 lines)' });
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
