/**
 * What AgentV's stable release (4.42.4) writes, our commands read: a real run of its offline
 * sample project (`.agentv/results/runs/<experiment>/<timestamp>/`, per-test `<suite>/<test>/`,
 * JSONL transcripts) goes through summary, failures, show, validate, export, report and publish's
 * input preparation, the daemon's discovery finds it and knows when it is finished, and the
 * counts are those the client's own `results summary` gives. The matrix part runs the same case
 * against both clients.
 *
 * One `eval` per client for the file: the stable suite below reads the run the matrix's stable case
 * made (an agentv-stable eval is the costliest process here), and AgentV's `results failures` of
 * it is asked once.
 */
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { AGENTV_CLIENTS, type AgentVClientCase, askAgentVOnce, describeEachClient, describeWithAgentVStable } from '../helpers/agentv-client.js';
import { runCli } from '../helpers/cli.js';
import { git, isolateGitForSuite } from '../helpers/git-fixtures.js';
import { deriveScratchCopy, loadRun } from '../../src/runs/read/run-reader.js';
import { runManifestOf } from '../../src/runs/export/source.js';
import { findRunDirs, inspectRun } from '../../src/runs/read/run-dir-state.js';

/** The JSON document a client printed (after any banner line). */
const jsonOf = (stdout: string): unknown => JSON.parse(stdout.slice(stdout.search(/[[{]/)));

/** The sample project with one run of experiment `conf`, made once per client for the whole file. */
const evals = new Map<string, Promise<{ project: string; runDir: string }>>();
function sampleRun(client: AgentVClientCase): Promise<{ project: string; runDir: string }> {
  let made = evals.get(client.name);
  if (!made) {
    made = (async () => {
      const project = await client.makeProject();
      return { project, runDir: await client.evalRun(project, { experiment: 'conf' }) };
    })();
    evals.set(client.name, made);
  }
  return made;
}
const STABLE = AGENTV_CLIENTS.find((c) => c.name === 'agentv-stable')!;

describeEachClient('summary counts what the client’s own `results summary` counts', (client) => {
  isolateGitForSuite();
  let project = '';
  let runDir = '';
  beforeAll(async () => {
    ({ project, runDir } = await sampleRun(client));
  }, 180_000);

  it('total, passed, failed and mean score agree', async () => {
    const r = await client.run(['results', 'summary', runDir], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const theirs = jsonOf(r.stdout) as { total: number; passed: number; failed: number; pass_rate: { mean: number } };
    const ours = await runCli(['summary', runDir, '--json'], { cwd: project });
    expect(ours.code, ours.stderr).toBe(0);
    const mine = JSON.parse(ours.stdout) as {
      experiment: string;
      summary: { total: number; passed: number; failed: number; errors: number; mean_score: number };
    };
    expect(mine.experiment).toBe('conf');
    expect(mine.summary.total).toBe(theirs.total);
    expect(mine.summary.total).toBe(6);
    expect(mine.summary.passed).toBe(theirs.passed);
    expect(mine.summary.failed + mine.summary.errors).toBe(theirs.failed);
    expect(mine.summary.mean_score).toBeCloseTo(theirs.pass_rate.mean, 2);
  });

  it('failures lists the tests the client’s `results failures` lists; validate accepts the run as the client does', async () => {
    const r = await askAgentVOnce(['results', 'failures', runDir], { cwd: project, bin: client.bin });
    expect(r.code, r.stderr).toBe(0);
    const theirs = jsonOf(r.stdout) as { test_id: string }[];
    const mine = JSON.parse((await runCli(['failures', runDir, '--json'], { cwd: project })).stdout) as { failures: { test_id: string }[] };
    expect(mine.failures.map((f) => f.test_id).sort()).toEqual(theirs.map((t) => t.test_id).sort());
    const v = await client.run(['results', 'validate', runDir], { cwd: project });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const ours = await runCli(['validate', runDir, '--json'], { cwd: project });
    expect(ours.code, ours.stderr).toBe(0);
    expect(JSON.parse(ours.stdout).valid).toBe(true);
  });
});

describeWithAgentVStable('our commands on a run agentv-stable eval just wrote', () => {
  isolateGitForSuite();
  let project = '';
  let runDir = '';
  let timestamp = '';
  const ours = async (args: string[]) => {
    const r = await runCli(args, { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    return r;
  };

  beforeAll(async () => {
    ({ project, runDir } = await sampleRun(STABLE));
    timestamp = runDir.split('/').pop()!;
  }, 180_000);

  it('is recognised as AgentV 4.42 layout, its transcripts read as JSONL', async () => {
    expect((await runManifestOf(runDir))?.layout).toBe('agentv-stable');
    const transcripts = (await readdir(join(runDir, 'demo'), { recursive: true })).filter((p) => String(p).endsWith('transcript.jsonl'));
    expect(transcripts.length).toBeGreaterThan(0);
    const run = await loadRun(runDir, { cwd: project });
    expect(run.runId).toBe(timestamp);
    expect(run.experiment).toBe('conf');
    expect(run.problems).toEqual([]);
    expect(run.rows.length).toBe(6);
  });

  it('failures lists the tests agentv-stable results failures lists, each with its own failed assertions', async () => {
    const r = await askAgentVOnce(['results', 'failures', runDir], { cwd: project, bin: STABLE.bin });
    expect(r.code, r.stderr).toBe(0);
    const theirs = jsonOf(r.stdout) as { test_id: string }[];
    const mine = JSON.parse((await ours(['failures', runDir, '--json'])).stdout) as {
      failures: { test_id: string; target: string; failed_assertions: { text: string }[] }[];
    };
    expect(mine.failures.map((f) => f.test_id).sort()).toEqual(theirs.map((t) => t.test_id).sort());
    // 4.42's own command reads the assertions from the test's folder, which the last target
    // overwrote; the row's own line (its scores) is the record: ours follow it.
    const rows = (await readFile(join(runDir, 'index.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { test_id: string; target: string; scores: { assertions: { text: string; passed: boolean }[] }[] });
    for (const f of mine.failures) {
      const row = rows.find((x) => x.test_id === f.test_id && x.target === f.target)!;
      const failed = row.scores.flatMap((sc) => sc.assertions.filter((a) => !a.passed).map((a) => a.text));
      expect(f.failed_assertions.map((a) => a.text).sort(), `${f.test_id}/${f.target}`).toEqual(failed.sort());
    }
    expect(mine.failures.length).toBeGreaterThan(0);
  });

  it('a row never takes the files of another target sharing its <suite>/<test>/ folder', async () => {
    // 4.42 writes one folder per test whatever the target: the last target's files win there.
    // A copy whose never-passes folder belongs to a third target, with a grading that passes.
    const copy = join(project, 'foreign-folder');
    await cp(runDir, copy, { recursive: true });
    const folder = join(copy, 'demo', 'never-passes');
    const transcript = (await readFile(join(folder, 'outputs', 'transcript.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.stringify({ ...JSON.parse(l), target: 'third-agent' }))
      .join('\n');
    await writeFile(join(folder, 'outputs', 'transcript.jsonl'), `${transcript}\n`);
    await writeFile(join(folder, 'grading.json'), JSON.stringify({ assertions: [{ text: 'FOREIGN', passed: true, evidence: '' }] }));
    const mine = JSON.parse((await ours(['failures', copy, '--json'])).stdout) as { failures: { test_id: string; failed_assertions: { text: string }[] }[] };
    const never = mine.failures.filter((f) => f.test_id === 'never-passes');
    expect(never.length).toBe(2);
    for (const f of never) expect(f.failed_assertions.map((a) => a.text)).toEqual(['Output does not contain "this text is never produced"']);
  });

  it('validate, show, export and report read it; the run directory is never written', async () => {
    const before = (await readdir(runDir, { recursive: true })).map(String).sort();
    const v = JSON.parse((await ours(['validate', runDir, '--json'])).stdout);
    expect(v.valid).toBe(true);
    const show = JSON.parse((await ours(['show', runDir, '--json'])).stdout) as { cases: { test_id: string }[] };
    expect(new Set(show.cases.map((c) => c.test_id))).toEqual(new Set(['says-42', 'greets', 'never-passes']));
    const out = join(project, 'exported');
    await ours(['export', runDir, '--out', out]);
    expect((await loadRun(out)).rows.length).toBe(6);
    const html = join(project, 'report.html');
    await ours(['report', runDir, '--out', html]);
    expect(await readFile(html, 'utf8')).toContain('says-42');
    // export never lands on the run itself.
    const refused = await runCli(['export', runDir, '--out', runDir], { cwd: project });
    expect(refused.code).toBe(2);
    expect((await readdir(runDir, { recursive: true })).map(String).sort()).toEqual(before);
  });

  it('publish input: a derived copy; the run itself untouched', async () => {
    const index = await readFile(join(runDir, 'index.jsonl'), 'utf8');
    const copy = await deriveScratchCopy(runDir, { carryRunnerFiles: true });
    const run = await loadRun(copy);
    expect(run.layout).toBe('bundle');
    expect(run.runId).toBe(timestamp);
    expect(await readFile(join(runDir, 'index.jsonl'), 'utf8')).toBe(index);
  });

  it('the daemon publishes it once, in its own layout on an empty branch; a second pass finds it published', async () => {
    const published: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      const r = await runCli(['daemon', '--once', '--no-push', '--dir', project, '--log-format', 'json'], { cwd: project });
      expect(r.code, r.stderr).toBe(0);
      const stopped = r.stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string; published?: number })
        .find((e) => e.msg === 'daemon stopped');
      published.push(stopped?.published ?? -1);
    }
    // The second pass sees the run on the branch (no catalog line of ours: its runs/<exp>/<ts>/) and publishes nothing.
    expect(published).toEqual([1, 0]);
    const listed = JSON.parse((await ours(['list', '--json'])).stdout) as { runs: { run_id: string; path: string }[] };
    expect(listed.runs.map((x) => x.path)).toEqual([`runs/conf/${timestamp}`]);
    const log = await git(project, ['log', '--format=%s', 'refs/heads/agentv/results/v1']);
    expect(log.split('\n').filter((l) => l.startsWith('feat(results): conf')).length).toBe(1);
  });

  it('the daemon finds it under runs/<experiment>/ and knows it finished; a stub benchmark is a run in progress', async () => {
    const found = await findRunDirs(join(project, '.agentv', 'results'));
    expect(found).toContain(runDir);
    const state = await inspectRun(runDir);
    expect(state?.layout).toBe('agentv-stable');
    expect(state?.summaryComplete).toBe(true);
    // What 4.42 writes before the first test: a stub benchmark (planned count, no tests run).
    const bench = JSON.parse(await readFile(join(runDir, 'benchmark.json'), 'utf8'));
    const stub = join(dirname(runDir), 'in-progress');
    await mkdir(stub, { recursive: true });
    await copyFile(join(runDir, 'index.jsonl'), join(stub, 'index.jsonl'));
    await writeFile(join(stub, 'benchmark.json'), JSON.stringify({ ...bench, metadata: { ...bench.metadata, tests_run: [] } }));
    expect((await inspectRun(stub))?.summaryComplete).toBe(false);
    expect(existsSync(join(stub, 'summary.json'))).toBe(false);
  });
});
