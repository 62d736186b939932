/**
 * A published run is named by its run id in every message about it, from the start (issue 53, item
 * 2). A command reads a published run from a scratch copy (branch-read/run-names.ts); the reader is
 * given the run id beside the path (`shownAs`, util/run-shown.ts), so its errors — their message and
 * their `data` — and its warnings name the run, and nothing rewrites a message afterwards.
 *
 * One repository, four runs published to a bare remote and then damaged on the branch as a bad push
 * would leave them: a row that is not JSON (a warning), a run whose only line is not JSON (no result
 * rows: an error), a run whose index.jsonl is gone (not a run workspace: an error), and a removed
 * sidecar. Every verb that reads runs by name is asked about them, through the CLI (in-process) and
 * the library, and the Dashboard about the same runs read from its cache; no answer may hold the
 * scratch directory (or any temporary path).
 */
import { cp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../src/serve/index.js';
import { compareRuns, gateCheck, InputError, resolveRunNames, RunReadError, showCases, SourceError, summarizeRun, trend } from '../src/index.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
/** Published as made. */
let base: RunWorkspace;
/** Its index.jsonl gains a line that is not JSON; a sidecar is removed. */
let cand: RunWorkspace;
/** Its index.jsonl holds only a line that is not JSON. */
let empty: RunWorkspace;
/** Its index.jsonl is gone. */
let noindex: RunWorkspace;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // The same tests (one seed), four runs a minute apart.
  const runs = await Promise.all([0, 1, 2, 3].map((minute) => makeRunWorkspace({ experiment: 'nightly', minute, rows: 3, seed: 11 })));
  [base, cand, empty, noindex] = runs as [RunWorkspace, RunWorkspace, RunWorkspace, RunWorkspace];
  for (const run of [base, cand, empty, noindex]) {
    const r = await cli(['publish', run.dir, '--json'], user.work);
    expect(r.code, r.stderr).toBe(0);
  }
  await damage(user.work, {
    [`${cand.runId}/index.jsonl`]: (text) => `${text}{not json\n`,
    [`${cand.runId}/suite-0/test-0/model-a/attempt-0/grading.json`]: null,
    [`${empty.runId}/index.jsonl`]: () => '{not json\n',
    [`${noindex.runId}/index.jsonl`]: null,
  });
}, 120_000);

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

/**
 * Commit `edits` (a file's new text from its old, or null: removed) onto the results branch, as a
 * damaged push would leave it, and push that to the remote.
 */
async function damage(work: string, edits: Record<string, ((text: string) => string) | null>): Promise<void> {
  const ref = 'refs/heads/agentv/results/v1';
  const tip = (await git(work, ['rev-parse', ref])).trim();
  const scratch = await makeTempDir('names-damage');
  const env = { GIT_INDEX_FILE: join(scratch, 'index') };
  await git(work, ['read-tree', tip], { env });
  for (const [path, edit] of Object.entries(edits)) {
    if (edit === null) {
      await git(work, ['update-index', '--force-remove', path], { env });
      continue;
    }
    const file = join(scratch, 'blob');
    await writeFile(file, edit(await git(work, ['show', `${tip}:${path}`])));
    const blob = (await git(work, ['hash-object', '-w', file])).trim();
    await git(work, ['update-index', '--cacheinfo', `100644,${blob},${path}`], { env });
  }
  const tree = (await git(work, ['write-tree'], { env })).trim();
  const commit = (await git(work, ['commit-tree', tree, '-p', tip, '-m', 'damaged'])).trim();
  await git(work, ['update-ref', ref, commit, tip]);
  await git(work, ['push', '-q', 'origin', `${ref}:${ref}`]);
}

/** No temporary directory in `text`: not the scratch copy a published run is read from, not any other. */
function expectNoScratch(text: string): void {
  expect(text).not.toContain(tmpdir());
  expect(text).not.toMatch(/agentv-(run-names|results-read|trend|flaky)-/);
}

const run = async (args: string[]) => {
  const r = await cli(args, user.work);
  expectNoScratch(r.stderr);
  expectNoScratch(r.stdout);
  return r;
};

describe('the CLI names a published run by its id in its warnings and errors', () => {
  it('compare: a bad line warns, an empty run and a run with no manifest fail, each named by run id', async () => {
    const two = await run(['compare', base.runId, cand.runId]);
    expect(two.code, two.stderr).toBe(0);
    expect(two.stderr).toContain(`warning: ${cand.runId}:3: not valid JSON, line skipped`);
    expect(two.stderr).toContain(`warning: baseline ${base.runId}: 1 test id(s) appear in more than one row`);
    const json = await run(['compare', base.runId, cand.runId, '--json']);
    const sources = (JSON.parse(json.stdout) as { sources: Record<string, { source: string; path: string }> }).sources;
    expect(sources.candidate).toMatchObject({ source: cand.runId, path: `${cand.runId}/index.jsonl` });
    const one = await run(['compare', cand.runId]);
    expect(one.stderr).toContain(`warning: ${cand.runId}:3: not valid JSON, line skipped`);
    const none = await run(['compare', base.runId, empty.runId]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`${empty.runId}: no result rows in ${empty.runId}/index.jsonl`);
    // The reader derives a run with no manifest through export: its refusal names the run too.
    const gone = await run(['compare', base.runId, noindex.runId]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`${noindex.runId}: not a run workspace`);
  });

  it('gate: the warning, the JSON answer and a gate that cannot decide (also its Markdown) name the runs', async () => {
    const g = await run(['gate', base.runId, cand.runId, '--json']);
    expect(g.code, g.stderr).toBe(1);
    expect(g.stderr).toContain(`warning: ${cand.runId}:3: not valid JSON, line skipped`);
    const report = JSON.parse(g.stdout) as { sources: Record<string, { source: string; path: string }>; warnings: string[] };
    expect(report.sources.baseline).toMatchObject({ source: base.runId, path: `${base.runId}/index.jsonl` });
    expect(report.warnings).toContain(`${cand.runId}:3: not valid JSON, line skipped (${report.warnings[0]!.split(' (')[1]}`);
    const none = await run(['gate', base.runId, empty.runId, '--format', 'markdown']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`${empty.runId}: no result rows in ${empty.runId}/index.jsonl`);
    expect(none.stdout).toContain(`${empty.runId}/index.jsonl`);
  });

  it('trend and flaky: warnings and errors name the runs', async () => {
    const t = await run(['trend', base.runId, cand.runId]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toContain(`warning: ${cand.runId}:3: not valid JSON, line skipped`);
    const bad = await run(['trend', base.runId, empty.runId]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${empty.runId}: no result rows in ${empty.runId}/index.jsonl`);
    const f = await run(['flaky', base.runId, cand.runId]);
    expect(f.code, f.stderr).toBe(0);
    expect(f.stderr).toContain(`warning: ${cand.runId}:3: not valid JSON, line skipped`);
  });

  it('show, summary, failures, report, validate and combine: errors and JSON answers name the run', async () => {
    for (const verb of ['show', 'summary', 'failures', 'report', 'validate']) {
      const r = await run([verb, noindex.runId]);
      expect(r.code, `${verb}: ${r.stderr}`).toBe(2);
      expect(r.stderr, verb).toContain(`agentv-results: ${noindex.runId}: not a run workspace`);
    }
    const s = await run(['summary', cand.runId]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stderr).toContain('warning: index.jsonl:3: not valid JSON');
    for (const verb of ['show', 'failures', 'validate']) {
      const r = await run([verb, cand.runId, '--json']);
      expect((JSON.parse(r.stdout) as { dir: string }).dir, verb).toBe(cand.runId);
    }
    const c = await run(['combine', base.runId, cand.runId, '--out', 'combined']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain(`agentv-results: ${cand.runId}: index.jsonl:3: not valid JSON`);
  });

  it('a local run is still named by its path as given', async () => {
    const dir = await makeTempDir('names-local');
    await cp(cand.dir, join(dir, 'run'), { recursive: true });
    await writeFile(join(dir, 'run', 'index.jsonl'), '{not json\n', { flag: 'a' });
    const r = await cli(['compare', base.dir, 'run'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: run:4: not valid JSON, line skipped');
    expect(r.stderr).toContain('warning: candidate run: 1 test id(s)');
    const none = await cli(['compare', base.dir, join('run', 'missing.jsonl')], dir);
    expect(none.stderr).toContain(`run/missing.jsonl: no such file or directory`);
  });
});

describe('the library: the reader is given the run id beside the path', () => {
  it('gateCheck: warnings, sources, and an error with its data name the runs', async () => {
    const r = await gateCheck({ baseline: base.runId, candidate: cand.runId, cwd: user.work });
    if (r.verdict.kind !== 'gated') throw new Error('expected a gated verdict');
    expect(r.verdict.warnings[0]).toMatch(new RegExp(`^${cand.runId}:3: not valid JSON, line skipped`));
    expect(r.verdict.report.sources.candidate).toMatchObject({ source: cand.runId, path: `${cand.runId}/index.jsonl` });
    expectNoScratch(JSON.stringify(r.verdict.report));
    const err = await gateCheck({ baseline: base.runId, candidate: empty.runId, cwd: user.work }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toBe(`${empty.runId}: no result rows in ${empty.runId}/index.jsonl`);
    expect((err as InputError).data).toEqual({ path: `${empty.runId}/index.jsonl` });
  });

  it('compareRuns, summarizeRun, showCases and trend take `shownAs`; without it they name the path as given', async () => {
    const named = await resolveRunNames([base.runId, cand.runId, empty.runId, noindex.runId], { cwd: user.work });
    try {
      const [b, c, e, n] = named.runs.map((r) => ({ path: r.path, id: r.runId! }));
      const report = await compareRuns({ baseline: b!.path, candidate: c!.path, shownAs: { baseline: b!.id, candidate: c!.id } });
      expect(report.warnings[0]).toMatch(new RegExp(`^${c!.id}:3: not valid JSON`));
      expectNoScratch(JSON.stringify(report));
      const none = await compareRuns({ baseline: b!.path, candidate: e!.path, shownAs: { candidate: e!.id } }).catch((x: unknown) => x);
      expect((none as InputError).data).toEqual({ path: `${e!.id}/index.jsonl` });
      expectNoScratch((none as Error).message);
      // No manifest: compare derives the run through export, whose refusal (a SourceError) names it too.
      const underived = await compareRuns({ baseline: b!.path, candidate: n!.path, shownAs: { candidate: n!.id } }).catch((x: unknown) => x);
      expect(underived).toBeInstanceOf(SourceError);
      expect((underived as SourceError).message).toMatch(new RegExp(`^${n!.id}: not a run workspace`));
      expect((underived as SourceError).data).toEqual({ path: n!.id });
      for (const read of [() => summarizeRun({ run: n!.path, shownAs: n!.id }), () => showCases({ run: n!.path, shownAs: n!.id })]) {
        const gone = await read().catch((x: unknown) => x);
        expect(gone).toBeInstanceOf(RunReadError);
        expect((gone as RunReadError).message).toMatch(new RegExp(`^${n!.id}: not a run workspace`));
        expect((gone as RunReadError).data).toEqual({ path: n!.id });
      }
      const t = await trend({ sources: [b!.path, { path: c!.path, runId: c!.id }] });
      expect(t.warnings[0]).toMatch(new RegExp(`^${c!.id}:3: not valid JSON`));
      // The default is the path as given: the reader does not guess a name.
      const plain = await compareRuns({ baseline: b!.path, candidate: e!.path }).catch((x: unknown) => x);
      expect((plain as Error).message).toBe(`${e!.path}: no result rows in ${join(e!.path, 'index.jsonl')}`);
    } finally {
      await named.dispose();
    }
  });
});

describe("the Dashboard names a run it reads from its cache by the run's id", () => {
  it('compare, one run, its report, trend and flaky: warnings and errors', async () => {
    const server = await startServer({ cwd: user.work, port: 0 });
    try {
      const get = async (path: string) => {
        const res = await fetch(`${server.url}${path}`);
        const text = await res.text();
        expectNoScratch(text);
        return { status: res.status, body: JSON.parse(text) as { error?: string; warnings?: string[] } };
      };
      const two = await get(`/api/compare?runs=${base.runId},${cand.runId}`);
      expect(two.status).toBe(200);
      expect(two.body.warnings![0]).toMatch(new RegExp(`^${cand.runId}:3: not valid JSON`));
      expect((await get(`/api/compare?runs=${base.runId},${empty.runId}`)).body.error).toBe(`${empty.runId}: no result rows in ${empty.runId}/index.jsonl`);
      for (const path of [
        `/api/compare?runs=${base.runId},${noindex.runId}`,
        `/api/runs/${noindex.runId}`,
        `/api/runs/${noindex.runId}/report`,
        '/api/trend',
      ]) {
        const r = await get(path);
        expect(r.status, path).toBe(400);
        expect(r.body.error, path).toMatch(new RegExp(`^${noindex.runId}: not a run workspace`));
      }
      expect((await get('/api/flaky')).body.error).toBe(`${empty.runId}: no result rows in ${empty.runId}/index.jsonl`);
    } finally {
      await server.close();
    }
  });
});
