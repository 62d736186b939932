/**
 * The CI kit's check: `gate` (per-test regressions, tolerance, max regressions, new/removed test
 * policies, exit codes) checked against `compare` on the same runs (the deltas must agree; only
 * the rule differs), runs by name (published run ids, @<tag>, @latest) read from a real results
 * branch, `--update-baseline` moving the tag with ordinary pushes, `--format markdown` (escaped,
 * capped), and the webhook posted to a real HTTP server on 127.0.0.1 without printing its secret.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, freePort, git, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { appendRows } from './helpers/wip-fixtures.js';
import { makeClone, makeRemote, publishRun, RESULTS_REF, showFile } from './sync-helpers.js';
import { resolveTarget } from '../src/repo/target.js';
import { silentLogger } from '../src/daemon/log.js';
import { Outbox } from '../src/daemon/outbox.js';
import { OutboxWorker } from '../src/daemon/outbox-worker.js';
import type { WebhookEvent } from '../src/util/webhook.js';
import { cli, makeUserRepo } from './publish-helpers.js';
import { describeWithFixtures, fixture } from './helpers/fixtures.js';
import { fitMarkdown, gateMarkdown, mdText, MARKDOWN_LIMIT } from '../src/report/markdown.js';
import { treeUrl } from '../src/sync/compare-link.js';
import type { GateReport } from '../src/gate/gate.js';
import { gateCheck } from '../src/gate/gate-check.js';

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await makeTempDir('agentv-gate');
});
afterAll(() => cleanupTempDirs());

type Row = { test_id: string; score: number; verdict?: string; target?: string };

async function results(rows: Row[]): Promise<string> {
  const f = join(tmp, `r-${n++}.jsonl`);
  await writeFile(f, rows.map((r) => JSON.stringify({ target: 'm', ...r })).join('\n') + '\n');
  return f;
}
const scores = (s: Record<string, number>): Row[] => Object.entries(s).map(([test_id, score]) => ({ test_id, score }));

async function gate(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const r = await runCli(['gate', ...args, '--json'], { cwd: opts.cwd, env: opts.env });
  return { ...r, json: r.code === 0 || r.code === 1 ? (JSON.parse(r.stdout) as GateReport) : (undefined as never) };
}

describe('gate: the per-test rule', () => {
  it('a -0.001 mean with every test tied fails compare (AgentV) and passes the gate', async () => {
    const base = await results(scores({ a: 0.9, b: 0.8, c: 0.7 }));
    const cand = await results(scores({ a: 0.9, b: 0.8, c: 0.697 }));
    const c = await runCli(['compare', base, cand, '--json']);
    expect(c.code).toBe(1);
    expect(JSON.parse(c.stdout).summary.mean_delta).toBe(-0.001);
    const g = await gate([base, cand]);
    expect(g.code, g.stderr).toBe(0);
    expect(g.json.passed).toBe(true);
    expect(g.json.summary).toMatchObject({ matched: 3, regressions: 0, improvements: 0, unchanged: 3, mean_delta: -0.001 });
  });

  it('one test dropping past the tolerance fails, named, even when the mean rises', async () => {
    const base = await results(scores({ a: 0.5, b: 0.5, c: 0.9 }));
    const cand = await results(scores({ a: 1, b: 1, c: 0.75 }));
    const c = await runCli(['compare', base, cand, '--json']);
    expect(c.code).toBe(0); // mean +0.283: AgentV's rule passes it
    const g = await gate([base, cand]);
    expect(g.code).toBe(1);
    expect(g.json.regressions.map((t) => t.test_id)).toEqual(['c']);
    expect(g.json.improvements.map((t) => t.test_id)).toEqual(['a', 'b']);
    expect(g.json.failures[0]).toMatch(/1 test regressed \(allowed: 0\): c/);
    const text = await runCli(['gate', base, cand]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/FAIL: 1 regressed, 2 improved/);
    // A wider tolerance or one allowed regression passes it.
    expect((await gate([base, cand, '--tolerance', '0.2'])).code).toBe(0);
    expect((await gate([base, cand, '--max-regressions', '1'])).code).toBe(0);
  });

  it('the tolerance edge: a drop of exactly the tolerance is not a regression (0.85 -> 0.75 at 0.1), a hair more is', async () => {
    const base = await results(scores({ a: 0.85, b: 0.85 }));
    const cand = await results(scores({ a: 0.75, b: 0.7499 }));
    const g = await gate([base, cand]);
    expect(g.json.regressions.map((t) => t.test_id)).toEqual(['b']);
  });

  it('the tolerance governs scores: a verdict flip the score explains counts only past the tolerance; one it does not explain always counts', async () => {
    // a, b: the verdict restates a score that crossed the pass threshold by 0.02 (within 0.1).
    // c: same score, the grader says fail now; d: an execution error; e: fail -> pass at the same score.
    const base = await results([
      { test_id: 'a', score: 0.81, verdict: 'pass' },
      { test_id: 'b', score: 0.79, verdict: 'fail' },
      { test_id: 'c', score: 0.9, verdict: 'pass' },
      { test_id: 'd', score: 0.9, verdict: 'pass' },
      { test_id: 'e', score: 0.5, verdict: 'fail' },
    ]);
    const cand = await results([
      { test_id: 'a', score: 0.79, verdict: 'fail' },
      { test_id: 'b', score: 0.81, verdict: 'pass' },
      { test_id: 'c', score: 0.9, verdict: 'fail' },
      { test_id: 'd', score: 0.85, verdict: 'error' },
      { test_id: 'e', score: 0.5, verdict: 'pass' },
    ]);
    const g = await gate([base, cand]);
    expect(g.code).toBe(1);
    expect(g.json.regressions.map((t) => [t.test_id, t.reason, t.baseline_verdict, t.candidate_verdict])).toEqual([
      ['d', 'verdict', 'pass', 'error'],
      ['c', 'verdict', 'pass', 'fail'],
    ]);
    expect(g.json.improvements.map((t) => [t.test_id, t.reason])).toEqual([['e', 'verdict']]);
    expect(g.json.summary.unchanged).toBe(2);
    // Past the tolerance, the same kind of flip is a score regression.
    const tight = await gate([base, cand, '--tolerance', '0.01']);
    expect(tight.json.regressions.map((t) => [t.test_id, t.reason])).toEqual([
      ['d', 'verdict'],
      ['a', 'score'],
      ['c', 'verdict'],
    ]);
    expect(tight.json.improvements.map((t) => t.test_id)).toEqual(['b', 'e']);
  });

  it("the issue's wobble: baseline 0.80 on five tests, candidate 0.79/0.80 with verdicts derived at 0.8, --tolerance 0.05 passes", async () => {
    const v = (score: number) => (score >= 0.8 ? 'pass' : 'fail');
    const base = await results(['t1', 't2', 't3', 't4', 't5'].map((test_id) => ({ test_id, score: 0.8, verdict: 'pass' })));
    const cand = await results([0.79, 0.79, 0.8, 0.79, 0.8].map((score, i) => ({ test_id: `t${i + 1}`, score, verdict: v(score) })));
    const g = await gate([base, cand, '--tolerance', '0.05']);
    expect(g.code, g.stdout).toBe(0);
    expect(g.json.summary).toMatchObject({ regressions: 0, unchanged: 5 });
    // With no tolerance left, the three drops are regressions.
    expect((await gate([base, cand, '--tolerance', '0'])).json.summary.regressions).toBe(3);
  });

  it('per (test id, target) by default: a regression of one target among two fails, named with its target; compare pools and says so', async () => {
    // steady-agent falls from 2/3 to 0/3; flaky-agent's rows come last for each test id.
    const rows = (steady: [number, number]): Row[] => [
      { test_id: 'says-42', score: steady[0], target: 'steady-agent' },
      { test_id: 'greets', score: steady[1], target: 'steady-agent' },
      { test_id: 'counts', score: 0, target: 'steady-agent' },
      { test_id: 'says-42', score: 1, target: 'flaky-agent' },
      { test_id: 'greets', score: 0, target: 'flaky-agent' },
      { test_id: 'counts', score: 1, target: 'flaky-agent' },
    ];
    const base = await results(rows([1, 1]));
    const cand = await results(rows([0, 0]));
    const g = await gate([base, cand]);
    expect(g.code).toBe(1);
    expect(g.json.match).toBe('test+target');
    expect(g.json.regressions.map((t) => [t.test_id, t.target])).toEqual([
      ['greets', 'steady-agent'],
      ['says-42', 'steady-agent'],
    ]);
    expect(g.json.failures[0]).toMatch(/2 tests regressed \(allowed: 0\): greets \(steady-agent\), says-42 \(steady-agent\)/);
    const md = await runCli(['gate', base, cand, '--format', 'markdown']);
    expect(md.stdout).toMatch(/\| greets \(steady-agent\) \| 1\.000 \| 0\.000 \|/);
    expect(md.stdout).toContain('Matched per (test id, target): each target is compared');
    // compare keeps agentv compare's pooled rule (the last row of each id: all ties), and says so in its report and Markdown.
    const c = await runCli(['compare', base, cand, '--json']);
    expect(c.code).toBe(0);
    const report = JSON.parse(c.stdout);
    expect(report.match).toBe('test');
    expect(report.summary.losses).toBe(0);
    expect(report.pooled).toEqual({ collapsed_rows: 6, targets: ['flaky-agent', 'steady-agent'], flag: '--all-targets' });
    expect(report.match_note).toMatch(/6 row\(s\) of targets flaky-agent, steady-agent were not compared .* --all-targets compares per \(test id, target\)/);
    const cmd = await runCli(['compare', base, cand, '--format', 'markdown']);
    expect(cmd.stdout).toMatch(/⚠️ Matched by test id .*--all-targets compares per/);
    const perTarget = JSON.parse((await runCli(['compare', base, cand, '--json', '--all-targets'])).stdout);
    expect([perTarget.match, perTarget.pooled, perTarget.summary.losses]).toEqual(['test+target', null, 2]);
    // One target's runs: nothing pooled, nothing said.
    const one = JSON.parse((await runCli(['compare', base, cand, '--json', '--target', 'steady-agent'])).stdout);
    expect([one.match, one.pooled]).toEqual(['test', null]);
  });

  it('removed tests fail by default, new tests pass by default; both policies selectable', async () => {
    const base = await results(scores({ a: 1, b: 1 }));
    const cand = await results(scores({ a: 1, c: 1 }));
    const g = await gate([base, cand]);
    expect(g.code).toBe(1);
    expect(g.json).toMatchObject({ removed_tests: ['b'], new_tests: ['c'], policy: { new_tests: 'allow', removed_tests: 'fail' } });
    expect((await gate([base, cand, '--removed-tests', 'allow'])).code).toBe(0);
    expect((await gate([base, cand, '--removed-tests', 'allow', '--new-tests', 'fail'])).code).toBe(1);
  });

  it('bad input exits 2: a negative tolerance, an unknown policy, a path that is neither a file nor a published run', async () => {
    const base = await results(scores({ a: 1 }));
    expect((await runCli(['gate', base, base, '--tolerance', '-1'])).code).toBe(2);
    expect((await runCli(['gate', base, base, '--new-tests', 'maybe'])).code).toBe(2);
    const missing = await runCli(['gate', base, join(tmp, 'nope.jsonl')], { cwd: tmp });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.jsonl: no such file or directory, and not a published run/);
  });

  describeWithFixtures('on the real compare fixtures', () => {
    it("gate's regressions are exactly compare's tests with delta < -tolerance, at three tolerances (one matching, differential)", async () => {
      const base = fixture('compare--baseline-results.jsonl');
      const cand = fixture('compare--candidate-results.jsonl');
      const c = JSON.parse((await runCli(['compare', cand, base, '--json'])).stdout) as { matched: { test_id: string; delta: number }[] };
      for (const tol of [0, 0.05, 0.1]) {
        const g = await gate([cand, base, '--tolerance', String(tol)]);
        const expected = c.matched.filter((m) => m.delta < -tol - 1e-9).map((m) => m.test_id);
        expect(g.json.regressions.map((t) => t.test_id).sort()).toEqual(expected.sort());
        expect(g.code).toBe(expected.length > 0 ? 1 : 0);
        expect(g.json.summary.mean_delta).toBe(JSON.parse((await runCli(['compare', cand, base, '--json'])).stdout).summary.mean_delta);
      }
    });
  });
});

describe('--format markdown', () => {
  const hostile = 'evil|cell <img src=x onerror=alert(1)> @octocat #1 [link](https://x.invalid) **b** `c`\nnext';

  it('escapes what a run carries: no table break, no HTML, no mention, no link, no emphasis', async () => {
    const base = await results(scores({ [hostile]: 1, ok: 1 }));
    const cand = await results(scores({ [hostile]: 0, ok: 1 }));
    const r = await runCli(['gate', base, cand, '--format', 'markdown']);
    expect(r.code).toBe(1);
    const md = r.stdout;
    expect(md.startsWith('<!-- agentv-results:gate -->\n### ❌ Eval gate failed: 1 regression')).toBe(true);
    const row = md.split('\n').find((l) => l.startsWith('| evil'))!;
    // Exactly the table's own pipes, unescaped: 6 for 5 columns.
    expect(row.match(/(?<!\\)\|/g)).toHaveLength(6);
    for (const bad of ['<img', '@octocat', '#1', '](', '**', '`c`', '\nnext']) expect(md).not.toContain(bad);
    expect(mdText('a_b')).toBe('a\\_b');
  });

  it('regressions come first and a large report stays under the comment limit, saying how many rows it left out', async () => {
    const ids = Array.from({ length: 3000 }, (_, i) => `suite/${'x'.repeat(40)}-${String(i).padStart(4, '0')}`);
    const base = await results(ids.map((id) => ({ test_id: id, score: 0.5 })));
    const cand = await results(ids.map((id, i) => ({ test_id: id, score: i % 3 === 0 ? 0.1 : 0.9 })));
    const r = await runCli(['gate', base, cand, '--format', 'markdown']);
    expect(r.code).toBe(1);
    expect(r.stdout.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    expect(r.stdout).toMatch(/_[\d,]+ more rows not shown: the comment limit is 65,536 characters/);
    expect(r.stdout.indexOf('#### Regressions (1000)')).toBeGreaterThan(0);
    expect(r.stdout.indexOf('#### Regressions')).toBeLessThan(r.stdout.indexOf('#### Improvements') === -1 ? Infinity : r.stdout.indexOf('#### Improvements'));
    // compare's Markdown: losses first, capped the same way.
    const c = await runCli(['compare', base, cand, '--format', 'markdown']);
    expect(c.stdout.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    const firstRow = c.stdout.split('\n').find((l) => l.startsWith('| suite'))!;
    expect(firstRow).toMatch(/\| loss \|$/);
  });

  it('fitMarkdown keeps whole rows and never exceeds the limit (every budget from tight to loose)', () => {
    const rows = Array.from({ length: 50 }, (_, i) => `| row ${i} | ${'y'.repeat(i % 7)} |`);
    for (let limit = 400; limit < 1200; limit += 37) {
      const out = fitMarkdown(['head'], rows, ['tail'], limit);
      expect(out.length).toBeLessThanOrEqual(limit + 1);
      const kept = out.split('\n').filter((l) => l.startsWith('| row'));
      expect(kept).toEqual(rows.slice(0, kept.length));
      if (kept.length < rows.length) expect(out).toContain(`${rows.length - kept.length} more row`);
    }
  });

  it('links a run on GitHub and GitLab remotes, never with credentials; none for other hosts', () => {
    expect(treeUrl('https://user:tok@github.com/acme/evals.git', 'agentv/results/v1', '2026-11-24T07-27-55-252Z')).toBe(
      'https://github.com/acme/evals/tree/agentv/results/v1/2026-11-24T07-27-55-252Z',
    );
    expect(treeUrl('git@gitlab.example.com:g/sub/evals.git', 'agentv/results/v1', 'r1')).toBe(
      'https://gitlab.example.com/g/sub/evals/-/tree/agentv/results/v1/r1',
    );
    expect(treeUrl('/srv/git/evals.git', 'agentv/results/v1', 'r1')).toBeNull();
    const report = {
      passed: true,
      failures: [],
      regressions: [],
      improvements: [],
      noisy: [],
      history: { requested: 0, runs: [], applied: false, confidence: 0.95, threshold: null, judged: 0, tarone_k: null, note: 'no history asked for' },
      new_tests: [],
      removed_tests: [],
      new: [],
      removed: [],
      match: 'test',
      pooled: null,
      match_note: "Matched by test id (agentv compare's rule).",
      summary: {
        matched: 1,
        regressions: 0,
        improvements: 0,
        unchanged: 1,
        new_tests: 0,
        removed_tests: 0,
        noisy: 0,
        baseline_mean: 1,
        candidate_mean: 1,
        mean_delta: 0,
      },
      tolerance: 0.1,
      max_regressions: 0,
      policy: { new_tests: 'allow', removed_tests: 'fail' },
    } as unknown as GateReport;
    const md = gateMarkdown(report, {
      baseline: { label: 'r0', url: 'https://github.com/a/b/tree/x/r0' },
      candidate: { label: 'r1', url: 'javascript:alert(1)' },
    });
    expect(md).toContain('[r0](https://github.com/a/b/tree/x/r0)');
    expect(md).not.toContain('javascript:');
  });
});

describe('runs by name on a results branch', () => {
  let restore: () => void;
  let user: UserRepoFixture;
  let baseId: string;
  let goodId: string;
  let badId: string;

  async function publish(rows: Row[], experiment: string): Promise<string> {
    const f = await results(rows);
    const r = await cli(['publish', f, '--experiment', experiment, '--push', '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { location: { run_id: string } }).location.run_id;
  }
  const rowsAt = (minute: number, s: Record<string, number>): Row[] =>
    Object.entries(s).map(([test_id, score], i) => ({ test_id, score, timestamp: `2026-03-14T10:${String(minute).padStart(2, '0')}:0${i}.000Z` }) as Row);

  beforeAll(async () => {
    restore = useIsolatedGitEnv();
    user = await makeUserRepo();
    baseId = await publish(rowsAt(1, { a: 0.9, b: 0.9, c: 0.9 }), 'nightly');
    goodId = await publish(rowsAt(2, { a: 0.95, b: 0.9, c: 0.9 }), 'nightly');
    badId = await publish(rowsAt(3, { a: 0.9, b: 0.4, c: 0.9 }), 'pr');
    const t = await cli(['tag', baseId, '+baseline'], user.work);
    expect(t.code, t.stderr).toBe(0);
  }, 120_000);
  afterAll(() => restore?.());

  it('@baseline, @latest, @latest:experiment= and a run id resolve to the published runs', async () => {
    const g = await gate(['@baseline', goodId], { cwd: user.work });
    expect(g.code, g.stderr).toBe(0);
    expect(g.json.sources.baseline.source).toBe(baseId);
    expect(g.json.sources.candidate.source).toBe(goodId);
    const bad = await gate(['@baseline', '@latest'], { cwd: user.work });
    expect(bad.code).toBe(1);
    expect(bad.json.sources.candidate.source).toBe(badId);
    expect(bad.json.regressions.map((t) => t.test_id)).toEqual(['b']);
    const nightly = await gate(['@baseline', '@latest:experiment=nightly'], { cwd: user.work });
    expect(nightly.json.sources.candidate.source).toBe(goodId);
    const s = await runCli(['summary', '@latest:experiment=pr', '--json'], { cwd: user.work });
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout).summary.total).toBe(3);
    const t = await runCli(['trend', '@baseline', goodId, '--by-experiment', '--json'], { cwd: user.work });
    expect(t.code, t.stderr).toBe(0);
    const series = (JSON.parse(t.stdout) as { series: { experiment: string; runs: { run_id?: string; path: string }[] }[] }).series;
    expect(series.map((x) => [x.experiment, x.runs.map((r) => r.run_id)])).toEqual([['nightly', [baseId, goodId]]]);
    expect(series[0]!.runs.every((r) => r.path.startsWith(`${r.run_id}/`))).toBe(true);
    const md = await runCli(['summary', badId, '--format', 'markdown'], { cwd: user.work });
    expect(md.stdout).toMatch(/^### Eval run .*: \d\/3 passed/);
  });

  it('a selector nothing matches, an unknown filter and branch= exit 2 with what to do', async () => {
    const none = await runCli(['gate', '@nosuchtag', goodId], { cwd: user.work });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/@nosuchtag: no published run tagged nosuchtag/);
    const branch = await runCli(['compare', '@latest:branch=main', goodId], { cwd: user.work });
    expect(branch.code).toBe(2);
    expect(branch.stderr).toMatch(/does not record the git branch/);
    expect((await runCli(['summary', '@latest:colour=red'], { cwd: user.work })).code).toBe(2);
    // An error about a published run names the run, not the temporary copy it was read from.
    const target = await runCli(['compare', baseId, goodId, '--target', 'nosuch'], { cwd: user.work });
    expect(target.code).toBe(2);
    expect(target.stderr).toContain(`baseline ${baseId} has no rows for target nosuch`);
    expect(target.stderr).not.toContain('agentv-run-names');
  });

  it('a fresh clone that has never fetched the results branch finds the runs (fetched when missing)', async () => {
    const clone = join(await makeTempDir('agentv-gate-clone'), 'c');
    await git(user.root, ['clone', '-q', '--depth', '1', user.remote, clone]);
    const g = await gate(['@baseline', goodId], { cwd: clone });
    expect(g.code, g.stderr).toBe(0);
    expect(g.json.sources.baseline.source).toBe(baseId);
  });

  it('gateCheck is the command as a call: the verdict reaches onVerdict first, runs named by id; a missing baseline may pass', async () => {
    const seen: string[] = [];
    const r = await gateCheck({ baseline: '@baseline', candidate: badId, cwd: user.work, updateBaseline: true, onVerdict: (v) => void seen.push(v.kind) });
    expect(seen).toEqual(['gated']);
    expect(r.passed).toBe(false);
    expect(r.moved).toBeNull();
    if (r.verdict.kind !== 'gated') throw new Error('expected a gated verdict');
    expect([r.verdict.report.sources.baseline.source, r.verdict.report.sources.candidate.source]).toEqual([baseId, badId]);
    expect(r.verdict.report.regressions.map((t) => t.test_id)).toEqual(['b']);
    const first = await gateCheck({ baseline: '@nosuchtag', candidate: goodId, cwd: user.work, missingBaseline: 'pass' });
    expect(first.passed).toBe(true);
    expect(first.verdict.kind === 'no-baseline' && first.verdict.note).toMatch(/^no baseline yet \(@nosuchtag names no published run\)/);
    await expect(gateCheck({ baseline: '@nosuchtag', candidate: goodId, cwd: user.work })).rejects.toMatchObject({ code: 'not-found' });
  });

  it('--update-baseline moves the tag on success only, with ordinary pushes; --missing-baseline pass lets a first run through', async () => {
    const failed = await runCli(['gate', '@baseline', badId, '--update-baseline'], { cwd: user.work });
    expect(failed.code).toBe(1);
    const listed = async () =>
      (JSON.parse((await runCli(['list', '--tag', 'baseline', '--json', '--fetch'], { cwd: user.work })).stdout) as { runs: { run_id: string }[] }).runs.map(
        (r) => r.run_id,
      );
    expect(await listed()).toEqual([baseId]);
    const before = await git(user.remote, ['rev-parse', 'refs/heads/agentv/results/v1']);
    const ok = await runCli(['gate', '@baseline', goodId, '--update-baseline'], { cwd: user.work });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`baseline -> ${goodId} (was ${baseId})`);
    expect(await listed()).toEqual([goodId]);
    // The remote moved by fast-forward: the old tip is an ancestor of the new one.
    const after = await git(user.remote, ['rev-parse', 'refs/heads/agentv/results/v1']);
    expect(after).not.toBe(before);
    await git(user.remote, ['merge-base', '--is-ancestor', before.trim(), after.trim()]);
    // A selector with no run: exit 2, unless --missing-baseline pass (which then tags the candidate).
    expect((await runCli(['gate', '@release', goodId], { cwd: user.work })).code).toBe(2);
    const first = await runCli(['gate', '@release', goodId, '--missing-baseline', 'pass'], { cwd: user.work });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/no baseline/);
    // A local path cannot be tagged.
    const local = await results(scores({ a: 1, b: 1, c: 1 }));
    const l = await runCli(['gate', '@baseline', local, '--update-baseline'], { cwd: user.work });
    expect(l.code).toBe(2);
    expect(l.stderr).toMatch(/is a local path; publish it/);
  });
});

describe('webhook', () => {
  let server: Server;
  let port: number;
  const received: { url: string; body: unknown; type: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let data = '';
      req.on('data', (d) => (data += d));
      req.on('end', () => {
        received.push({ url: req.url ?? '', body: JSON.parse(data), type: req.headers['content-type'] });
        res.writeHead(req.url?.includes('broken') ? 500 : 204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('a failing gate POSTs a regression event; the URL secret is never printed, even when delivery fails', async () => {
    const base = await results(scores({ a: 1, b: 1 }));
    const cand = await results(scores({ a: 1, b: 0.2 }));
    const secret = 'T000/B000/s3cr3tTOKENvalue';
    const r = await runCli(['gate', base, cand, '--webhook', `http://127.0.0.1:${port}/hooks/${secret}?token=${secret}`]);
    expect(r.code).toBe(1);
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe(`/hooks/${secret}?token=${secret}`);
    expect(received[0]!.type).toBe('application/json');
    expect(received[0]!.body).toMatchObject({ source: 'agentv-results', event: 'regression', regressions: [{ test_id: 'b', reason: 'score' }] });
    expect(r.stdout + r.stderr).not.toContain('s3cr3t');
    // From the environment, to an endpoint that answers 500: a warning, the gate's own exit code, no secret.
    const broken = await runCli(['gate', base, cand], { env: { AGENTV_RESULTS_WEBHOOK_URL: `http://127.0.0.1:${port}/broken/${secret}` } });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/webhook not delivered: the webhook at 127\.0\.0\.1:\d+ answered HTTP 500/);
    expect(broken.stdout + broken.stderr).not.toContain('s3cr3t');
    // A passing gate sends nothing.
    const before = received.length;
    expect((await runCli(['gate', base, base, '--webhook', `http://127.0.0.1:${port}/hooks/${secret}`])).code).toBe(0);
    expect(received).toHaveLength(before);
  });

  it('the event says where (CI variables of both systems), which runs, and per row test, target, scores, delta, why; event names what failed', async () => {
    const base = await results([
      { test_id: 'a', score: 1, target: 'steady-agent' },
      { test_id: 'a', score: 1, target: 'flaky-agent' },
      { test_id: 'b', score: 1, target: 'flaky-agent' },
    ]);
    const cand = await results([
      { test_id: 'a', score: 0.25, target: 'steady-agent' },
      { test_id: 'a', score: 1, target: 'flaky-agent' },
    ]);
    const hook = `http://127.0.0.1:${port}/hooks/ci`;
    const github = {
      GITHUB_ACTIONS: 'true',
      GITHUB_REPOSITORY: 'acme/evals',
      GITHUB_SHA: 'a'.repeat(40),
      GITHUB_REF: 'refs/pull/17/merge',
      GITHUB_HEAD_REF: 'feature/x',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_RUN_ID: '991',
    };
    const before = received.length;
    const r = await runCli(['gate', base, cand, '--webhook', hook], { env: github });
    expect(r.code).toBe(1);
    const body = received[before]!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      event: 'regression',
      provider: 'github',
      repository: 'acme/evals',
      commit: 'a'.repeat(40),
      ref: 'feature/x',
      pull_request: 17,
      link: 'https://github.com/acme/evals/actions/runs/991',
      baseline: { run_id: null },
      candidate: { run_id: null },
      match: 'test+target',
      regressions: [{ test_id: 'a', target: 'steady-agent', baseline: 1, candidate: 0.25, delta: -0.75, why: 'score' }],
      removed: [{ test_id: 'b', target: 'flaky-agent' }],
    });
    // Only a removed test: `tests-removed`, with GitLab's variables.
    const gitlab = {
      GITLAB_CI: 'true',
      CI_PROJECT_PATH: 'group/evals',
      CI_COMMIT_SHA: 'b'.repeat(40),
      CI_COMMIT_REF_NAME: 'feature/y',
      CI_MERGE_REQUEST_IID: '5',
      CI_PIPELINE_URL: 'https://gitlab.example.com/group/evals/-/pipelines/12',
    };
    const removedOnly = await results([
      { test_id: 'a', score: 1, target: 'steady-agent' },
      { test_id: 'a', score: 1, target: 'flaky-agent' },
    ]);
    expect((await runCli(['gate', base, removedOnly, '--webhook', hook], { env: gitlab })).code).toBe(1);
    expect(received[before + 1]!.body).toMatchObject({
      event: 'tests-removed',
      provider: 'gitlab',
      repository: 'group/evals',
      commit: 'b'.repeat(40),
      ref: 'feature/y',
      pull_request: 5,
      link: 'https://gitlab.example.com/group/evals/-/pipelines/12',
      regressions: [],
      removed: [{ test_id: 'b', target: 'flaky-agent' }],
    });
    // A gate that could not decide (the candidate is not there): `gate-error` with the exit code.
    const broken = await runCli(['gate', base, join(tmp, 'missing.jsonl'), '--webhook', hook, '--format', 'markdown'], { env: github });
    expect(broken.code).toBe(2);
    expect(broken.stdout).toMatch(/^<!-- agentv-results:gate -->\n### ⚠️ Eval gate could not decide \(exit 2\)/);
    expect(received[before + 2]!.body).toMatchObject({ event: 'gate-error', repository: 'acme/evals', pull_request: 17, error: { exit_code: 2 } });
  });

  it('the outbox worker notifies once per outage, and again after the remote came back and went away', async () => {
    const restore = useIsolatedGitEnv();
    try {
      const user = await makeUserRepo();
      const port0 = await freePort();
      await git(user.work, ['remote', 'set-url', 'origin', `git://127.0.0.1:${port0}/remote.git`]);
      const publishLocal = async (minute: number) => {
        const f = await results([{ test_id: 'a', score: 1, timestamp: `2026-03-14T10:${minute}:00.000Z` } as Row]);
        const r = await cli(['publish', f, '--experiment', 'outage', '--no-push'], user.work);
        expect(r.code, r.stderr).toBe(0);
      };
      await publishLocal(10);
      const target = await resolveTarget({ cwd: user.work });
      const outbox = new Outbox(join(await makeTempDir('agentv-outbox'), 'outbox.jsonl'));
      const events: WebhookEvent[] = [];
      const worker = new OutboxWorker({
        target,
        targetOptions: { cwd: user.work },
        outbox,
        logger: silentLogger,
        push: true,
        backoff: { baseMs: 1, capMs: 2 },
        networkTimeoutMs: 5_000,
        notify: async (e) => void events.push(e),
        notifyAfterMs: 60_000,
      });
      await outbox.put({ kind: 'push-results' });
      const t0 = Date.now();
      await worker.round({ now: t0, force: true }); // down, for 0 s
      expect(events).toEqual([]);
      await worker.round({ now: t0 + 61_000, force: true }); // down for a minute: notified
      await worker.round({ now: t0 + 120_000, force: true }); // still the same outage: not again
      expect(events.map((e) => [e.event, e.minutes])).toEqual([['publish-failing', 1]]);
      // The remote comes back (its real URL): the push lands, the outage is over; a new one notifies again.
      await git(user.work, ['remote', 'set-url', 'origin', user.remote]);
      await outbox.put({ kind: 'push-results' });
      expect((await worker.round({ now: t0 + 130_000, force: true })).remoteDown).toBe(false);
      await git(user.work, ['remote', 'set-url', 'origin', `git://127.0.0.1:${port0}/remote.git`]);
      await outbox.put({ kind: 'push-results' });
      await publishLocal(11);
      await worker.round({ now: t0 + 140_000, force: true });
      await worker.round({ now: t0 + 210_000, force: true });
      expect(events.map((e) => e.event)).toEqual(['publish-failing', 'publish-failing']);
    } finally {
      restore();
    }
  });

  it('the outbox worker notifies when a push sets results aside on a sync branch', async () => {
    const restore = useIsolatedGitEnv();
    try {
      // One reviewer's divergent edits from two clones: a genuine conflict (as in feedback.test.ts).
      const remote = await makeRemote();
      const a = await makeClone(remote, 'a');
      const b = await makeClone(remote, 'b');
      const res = await publishRun(a, { experiment: 'shared', rows: 3 });
      const index = (await showFile(remote, RESULTS_REF, `${res.location.path}/index.jsonl`))!;
      const testId = (JSON.parse(index.split('\n')[0]!) as { test_id: string }).test_id;
      expect((await runCli(['feedback', res.runId, testId, 'first', '--reviewer', 'ana'], { cwd: a })).code).toBe(0);
      expect((await runCli(['feedback', res.runId, testId, 'seen', '--reviewer', 'bo'], { cwd: b })).code).toBe(0);
      await runCli(['feedback', res.runId, testId, 'version from a', '--reviewer', 'ana', '--no-push'], { cwd: a });
      await runCli(['feedback', res.runId, testId, 'version from b', '--reviewer', 'ana', '--no-push'], { cwd: b });
      expect((await runCli(['sync'], { cwd: a })).code).toBe(0);
      const events: WebhookEvent[] = [];
      const outbox = new Outbox(join(await makeTempDir('agentv-outbox'), 'outbox.jsonl'));
      const worker = new OutboxWorker({
        target: await resolveTarget({ cwd: b }),
        targetOptions: { cwd: b },
        outbox,
        logger: silentLogger,
        push: true,
        notify: async (e) => void events.push(e),
      });
      await outbox.put({ kind: 'push-results' });
      await worker.round({ force: true });
      const branches = (await git(remote, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/agentv/results-sync/'])).trim().split('\n').filter(Boolean);
      expect(branches).toHaveLength(1);
      expect(events).toEqual([expect.objectContaining({ event: 'sync-branch-created', remote: 'origin', sync_branch: branches[0] })]);
    } finally {
      restore();
    }
  });

  it('the daemon reports pushes failing for --webhook-after (not before), without the secret', async () => {
    const restore = useIsolatedGitEnv();
    try {
      const user = await makeUserRepo();
      // Nothing listens there: the remote is down.
      await git(user.work, ['remote', 'set-url', 'origin', `git://127.0.0.1:${await freePort()}/remote.git`]);
      const dir = join(user.work, '.agentv/results/exp/2026-03-06T10-00-00-000Z');
      appendRows(dir, 0, 2);
      await writeFile(join(dir, 'summary.json'), '{}\n');
      const secret = 'daemon-s3cr3t';
      const before = received.length;
      const args = ['daemon', '--once', '--push', '--retry-max', '0.2', '--dir', user.work, '--webhook', `http://127.0.0.1:${port}/hooks/${secret}`];
      // Failing for less than --webhook-after: nothing sent.
      const quiet = await runCli(args, { env: { AGENTV_RESULTS_HOST: 'hosta' } });
      expect(quiet.code).toBe(3);
      expect(received).toHaveLength(before);
      const once = await runCli([...args, '--webhook-after', '0s'], { env: { AGENTV_RESULTS_HOST: 'hosta' } });
      expect(once.code).toBe(3);
      expect(received.slice(before)).toEqual([
        expect.objectContaining({ url: `/hooks/${secret}`, body: expect.objectContaining({ event: 'publish-failing', remote: 'origin', queued: 1 }) }),
      ]);
      expect(once.stdout + once.stderr).not.toContain(secret);
      expect(once.stderr).toMatch(/webhook notified/);
    } finally {
      restore();
    }
  });
});
