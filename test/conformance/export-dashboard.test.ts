/**
 * Runs we export from results JSONL, published and read back through AgentV's Dashboard: its run
 * list shows our pass rate (AgentV averages summary.json's per-target `run_summary.<t>.pass_rate.mean`
 * and falls back to the mean score when that is not an object), for every real result file; an
 * eval's graders carry the names, types and weights of our rows (read from grading.json); a run
 * whose rows carry AgentV's `category` is grouped by it; an eval's transcript is served in the
 * schema its pointer names and parses the way the Dashboard's Transcript tab parses it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithAgentV, makeSampleProject, startAgentVServe, type AgentVServer } from '../helpers/agentv-client.js';
import { fixtureFiles, HAS_FIXTURES, describeWithFixtures } from '../helpers/fixtures.js';
import { git, isolateGitForSuite, makeTempDir } from '../helpers/git-fixtures.js';
import { cli } from '../publish-helpers.js';
import { transcriptMessages } from '../../src/model/transcript.js';

const BRANCH = 'agentv/results/v1';

(HAS_FIXTURES ? describeWithAgentV : describeWithFixtures)("AgentV's Dashboard reads our exports in its own shapes: pass rate, graders, categories", () => {
  isolateGitForSuite();
  let server: AgentVServer | null = null;
  let viewerDir = '';
  const published = new Map<string, { pass_rate: number; run_summary: Record<string, { passed: number; total: number }> }>();
  const runDirs = new Map<string, string>();
  const runOfFixture = new Map<string, string>();
  let categorizedRun = '';

  beforeAll(async () => {
    const project = await makeSampleProject();
    const remote = join(await makeTempDir('agentv-remote'), 'results.git');
    await git(project, ['init', '-q', '--bare', remote]);
    await git(project, ['remote', 'add', 'origin', remote]);
    for (const file of fixtureFiles()) {
      const r = await cli(['publish', file, '--push', '--json'], project);
      expect(r.code, `${file}\n${r.stderr}`).toBe(0);
      const out = JSON.parse(r.stdout) as { location: { path: string }; run_dir: string };
      published.set(out.location.path, JSON.parse(await readFile(join(out.run_dir, 'summary.json'), 'utf8')));
      runDirs.set(out.location.path, out.run_dir);
      runOfFixture.set(file, out.location.path);
    }
    // A results file whose rows carry AgentV's `category` (the fixtures' rows carry none).
    const lines = (await readFile(fixtureFiles().find((f) => f.includes('weighted-graders'))!, 'utf8')).trim().split('\n');
    const categorized = join(await makeTempDir('agentv-categorized'), 'categorized.jsonl');
    await writeFile(
      categorized,
      lines.map((l) => JSON.stringify({ ...JSON.parse(l.replaceAll('2026-02-20T', '2026-02-22T')), category: 'reasoning/rl' })).join('\n') + '\n',
    );
    const cat = await cli(['publish', categorized, '--push', '--json'], project);
    expect(cat.code, cat.stderr).toBe(0);
    categorizedRun = (JSON.parse(cat.stdout) as { location: { path: string } }).location.path;
    viewerDir = await makeSampleProject();
    const cfg = join(viewerDir, '.agentv', 'config.yaml');
    await writeFile(cfg, `${(await readFile(cfg, 'utf8')).trimEnd()}\nresults:\n  path: .\n  branch: ${BRANCH}\n  auto_push: false\n`);
    await git(viewerDir, ['remote', 'add', 'origin', remote]);
    await git(viewerDir, ['fetch', '-q', 'origin']);
    server = await startAgentVServe(viewerDir, [], { home: await makeTempDir('agentv-viewer-home') });
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('shows, for every published export, the mean of our per-target pass rates — our pass rate when the run has one target', async () => {
    const body = (await (await fetch(`${server!.url}/api/runs`)).json()) as { runs: { filename: string; pass_rate: number }[] };
    const listed = new Map(body.runs.map((r) => [r.filename.replace(/^remote::/, ''), r.pass_rate]));
    expect(published.size).toBeGreaterThan(10);
    for (const [path, summary] of published) {
      const shown = listed.get(path);
      expect(shown, `${path} in ${[...listed.keys()].join(', ')}`).toBeTypeOf('number');
      // Our per-target pass rate: the target's passed rows over its rows.
      const means = Object.values(summary.run_summary).map((t) => t.passed / t.total);
      expect(shown!, path).toBeCloseTo(means.reduce((a, b) => a + b, 0) / means.length, 3);
      if (means.length === 1) expect(shown!, path).toBeCloseTo(summary.pass_rate, 4);
    }
  });

  it("shows each test's graders by name, type and weight, as our index rows carry them", async () => {
    let grouped = 0;
    for (const [path, dir] of runDirs) {
      const rows = (await readFile(join(dir, 'index.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { test_id: string; result_dir: string; grading_path: string; scores: { name: string; type: string; weight?: number }[] });
      const row = rows[0]!;
      const grading = JSON.parse(await readFile(join(dir, row.grading_path), 'utf8')) as { component_results: { assertion: { name?: string } }[] };
      // Rows whose expectations are not their graders' assertions one to one keep the flat tree.
      if (grading.component_results[0]?.assertion.name === undefined) continue;
      grouped++;
      const url = `${server!.url}/api/runs/${encodeURIComponent(`remote::${path}`)}/evals/${encodeURIComponent(row.test_id)}?result_dir=${encodeURIComponent(row.result_dir)}`;
      const detail = (await (await fetch(url)).json()) as { eval: { scores: { name: string; type: string; weight?: number }[] } };
      expect(
        detail.eval.scores.map((s) => ({ name: s.name, type: s.type, weight: s.weight })),
        path,
      ).toEqual(row.scores.map((s) => ({ name: s.name, type: s.type, weight: s.weight })));
    }
    expect(grouped).toBeGreaterThanOrEqual(5);
  });

  it("groups a run by the categories its rows carry, as AgentV's categories view does", async () => {
    const body = (await (await fetch(`${server!.url}/api/runs/${encodeURIComponent(`remote::${categorizedRun}`)}/categories`)).json()) as {
      categories: { name: string; total: number }[];
    };
    expect(body.categories.map((c) => c.name)).not.toContain('Uncategorized');
    expect(body.categories.map((c) => c.name).join(' ')).toContain('reasoning');
  });

  it("serves a transcript the Dashboard parses: AgentV's normalized turns, the messages we wrote", async () => {
    let checked = 0;
    for (const name of ['benchmark-tooling', 'trace-analysis']) {
      const file = [...runOfFixture.keys()].find((f) => f.includes(name))!;
      const path = runOfFixture.get(file)!;
      const dir = runDirs.get(path)!;
      // The row as published (its artifact pointer is added on the way to the branch).
      const row = (await git(viewerDir, ['show', `origin/${BRANCH}:${path}/index.jsonl`]))
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              test_id: string;
              result_dir: string;
              transcript_path?: string | null;
              artifact_pointers?: { transcript?: { schema_version: string } };
            },
        )
        .find((r) => typeof r.transcript_path === 'string')!;
      expect(row, name).toBeDefined();
      expect(row.artifact_pointers?.transcript?.schema_version, name).toBe('agentv.normalized_transcript.v1');
      const url = `${server!.url}/api/runs/${encodeURIComponent(`remote::${path}`)}/evals/${encodeURIComponent(row.test_id)}/transcript?result_dir=${encodeURIComponent(row.result_dir)}`;
      const body = (await (await fetch(url)).json()) as { status: string; content?: string; message?: string };
      expect(body.status, `${name}: ${body.message}`).toBe('ok');
      // The Transcript tab's parse: one JSON document with `turns`, each a `{v: 1, agent, type, content[]}` line.
      const doc = JSON.parse(body.content!) as { schema_version: string; turns: Record<string, unknown>[] };
      expect(doc.schema_version).toBe(row.artifact_pointers!.transcript!.schema_version);
      expect(doc.turns.length, name).toBeGreaterThan(0);
      for (const t of doc.turns) {
        expect(t.v).toBe(1);
        expect(typeof t.agent).toBe('string');
        expect(['system', 'user', 'assistant']).toContain(t.type);
        expect(Array.isArray(t.content)).toBe(true);
      }
      // What AgentV served reads back to the messages of the transcript we wrote.
      const local = JSON.parse(await readFile(join(dir, row.transcript_path!.replace(`${path}/`, '')), 'utf8'));
      const messages = transcriptMessages(doc);
      expect(messages).toEqual(transcriptMessages(local));
      expect(
        messages.some((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content.length > 0),
        name,
      ).toBe(true);
      checked++;
    }
    expect(checked).toBe(2);
  });
});
