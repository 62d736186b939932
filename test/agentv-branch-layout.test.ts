/**
 * The results-branch contract we share with AgentV (results-repo.ts of AgentV 5.3): its genesis
 * commit, its .gitattributes lines, runs at the branch root, AgentV-shaped artifact pointers, our
 * catalog in `.indexes/`, merges that keep AgentV's files, and AgentV's WIP branches.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openRepo, readBlobs, updateRef, writeCommit } from '../src/git/index.js';
import { resolveConflictedPath } from '../src/merge/index.js';
import { ownedMergeKind } from '../src/merge/owned-paths.js';
import { GENESIS_COMMIT, rootCommit } from '../src/publish/commit-run.js';
import { AGENTV_GITATTRIBUTES, gitattributesUpdate, RESULTS_GITATTRIBUTES, runLocation } from '../src/layout/branch-layout.js';
import { runFilesRow as foreignRow } from '../src/layout/run-index.js';
import { splitRun } from '../src/publish/split.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo, RESULTS_REF } from './publish-helpers.js';

isolateGitForSuite();

describe('AgentV branch layout', () => {
  it("mints exactly AgentV's genesis commit (empty tree, fixed message, identity and dates)", async () => {
    const dir = await makeTempDir('agentv-genesis');
    await git(dir, ['init', '-q']);
    const repo = await openRepo(dir);
    expect(await rootCommit(repo)).toBe('ad59c1e92bfd55877f9b51251d51cde0bb97dfa9');
    expect(GENESIS_COMMIT).toBe('ad59c1e92bfd55877f9b51251d51cde0bb97dfa9');
    const raw = await git(dir, ['cat-file', '-p', GENESIS_COMMIT]);
    expect(raw).toContain('author AgentV Results <agentv@results-repo> 0 +0000');
    expect(raw).toContain('tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904');
  });

  it("keeps AgentV's .gitattributes lines first and never re-adds ours after AgentV rewrote the file", () => {
    expect(RESULTS_GITATTRIBUTES.startsWith(AGENTV_GITATTRIBUTES)).toBe(true);
    expect(gitattributesUpdate(null)).toBe(RESULTS_GITATTRIBUTES);
    expect(gitattributesUpdate(AGENTV_GITATTRIBUTES)).toBeNull(); // AgentV's own file: left alone (no churn)
    expect(gitattributesUpdate(RESULTS_GITATTRIBUTES)).toBeNull();
    const mine = gitattributesUpdate('*.bin binary\n')!;
    expect(mine.startsWith(AGENTV_GITATTRIBUTES)).toBe(true);
    expect(mine).toContain('*.bin binary');
  });

  it('puts a run at the branch root and refuses ids that would land on reserved paths', () => {
    expect(runLocation('2026-11-24T07-27-55-252Z', { experiment: 'demo' })).toMatchObject({
      path: '2026-11-24T07-27-55-252Z',
      experiment: 'demo',
      day: '2026-11-24',
      catalogPath: '.indexes/agentv-results.2026-11-24.jsonl',
    });
    expect(runLocation('nightly/2026-03-14T10-00-00-000Z').path).toBe('nightly--2026-03-14T10-00-00-000Z');
    for (const bad of ['.indexes', '.cache', 'runs', 'catalog', '../x', 'a/b/c']) expect(() => runLocation(bad), bad).toThrow();
  });

  it("splits as AgentV's publish does: only the transcript moves, with AgentV's pointer; a file over the threshold moves too", async () => {
    const dir = join(await makeTempDir('agentv-split'), 'run');
    const t = 'greets--873d71f0141c';
    await mkdir(join(dir, '.internal'), { recursive: true });
    await mkdir(join(dir, t, 'sample-1', 'outputs'), { recursive: true });
    await writeFile(join(dir, 'summary.json'), '{"run_id":"r"}\n');
    const line = { test_id: 'greets', score: 1, result_dir: t, transcript_path: `${t}/sample-1/transcript.json` };
    await writeFile(join(dir, '.internal', 'index.jsonl'), JSON.stringify(line) + '\n');
    await writeFile(join(dir, t, 'summary.json'), '{}');
    for (const f of ['grading.json', 'metrics.json', 'result.json']) await writeFile(join(dir, t, 'sample-1', f), '{}');
    for (const f of ['transcript.json', 'transcript-raw.jsonl', 'stdout.txt', 'outputs/answer.md']) await writeFile(join(dir, t, 'sample-1', f), 'x');
    const split = await splitRun(dir, [], { runPath: 'r', artifactsRef: 'refs/heads/agentv/artifacts/v1', threshold: 1 << 20 });
    expect(split.manifest).toBe('.internal/index.jsonl');
    expect(split.metadata.map((f) => f.path).sort()).toEqual([
      '.internal/index.jsonl',
      `${t}/sample-1/grading.json`,
      `${t}/sample-1/metrics.json`,
      `${t}/sample-1/outputs/answer.md`,
      `${t}/sample-1/result.json`,
      `${t}/sample-1/stdout.txt`,
      `${t}/sample-1/transcript-raw.jsonl`,
      `${t}/summary.json`,
      'summary.json',
    ]);
    expect(split.payloads.map((f) => f.path)).toEqual([`${t}/sample-1/transcript.json`]);
    const row = JSON.parse(split.metadata.find((f) => f.path === '.internal/index.jsonl')!.data.toString('utf8')) as {
      artifact_pointers: Record<string, Record<string, unknown>>;
    };
    expect(row.artifact_pointers.transcript).toMatchObject({
      ref: 'agentv/artifacts/v1',
      key: `r/${t}/sample-1/transcript.json`,
      path: `${t}/sample-1/transcript.json`,
      schema_version: 'agentv.normalized_transcript.v1',
      media_type: 'application/vnd.agentv.normalized-transcript.v1+json',
      family: 'transcripts',
      size: 1,
    });
    expect(row.artifact_pointers.transcript!.object_version).toBe(`sha256:${row.artifact_pointers.transcript!.sha256}`);
    expect(Object.keys(row.artifact_pointers)).toEqual(['transcript']);
    // A file over heavy_threshold_bytes moves too (kept out of the branch every clone fetches): here the 2-byte records.
    const small = await splitRun(dir, [], { runPath: 'r', artifactsRef: 'refs/heads/agentv/artifacts/v1', threshold: 1 });
    expect(small.payloads.map((f) => f.path).sort()).toEqual(
      [`${t}/summary.json`, ...['grading.json', 'metrics.json', 'result.json', 'transcript.json'].map((f) => `${t}/sample-1/${f}`)].sort(),
    );
  });

  it("merges the root layout's files and never drops a line AgentV wrote", () => {
    expect(ownedMergeKind('2026-11-24T07-27-55-252Z/.internal/index.jsonl')).toBe('jsonl');
    expect(ownedMergeKind('nightly--2026-03-14T10-00-00-000Z/index.jsonl')).toBe('jsonl');
    expect(ownedMergeKind('nightly--2026-03-14T10-00-00-000Z/tags.json')).toBe('json');
    expect(ownedMergeKind('.indexes/agentv-results.2026-03-14.jsonl')).toBe('jsonl');
    expect(ownedMergeKind('2026-11-24T07-27-55-252Z/summary.json')).toBeNull();
    const b = (s: string) => Buffer.from(s);
    const attrs = resolveConflictedPath({
      path: '.gitattributes',
      base: b(AGENTV_GITATTRIBUTES),
      ours: b(RESULTS_GITATTRIBUTES),
      theirs: b(`${AGENTV_GITATTRIBUTES}x merge=union\n`),
    });
    expect(attrs.action).toBe('write');
    const text = (attrs as { data: Buffer }).data.toString('utf8');
    expect(text.startsWith(AGENTV_GITATTRIBUTES)).toBe(true);
    expect(text).toContain('x merge=union');
    expect(text).toContain('merge=agentv-jsonl');
    const cat = resolveConflictedPath({ path: '.indexes/runs.jsonl', base: b('a\n'), ours: b('a\nb\n'), theirs: b('a\nc\n') });
    expect((cat as { data: Buffer }).data.toString('utf8')).toBe('a\nb\nc\n');
    const catalog = resolveConflictedPath({
      path: '.indexes/agentv-results.2026-03-14.jsonl',
      base: b(''),
      ours: b('{"run_id":"a"}\n'),
      theirs: b('{"run_id":"b"}\n'),
    });
    expect((catalog as { data: Buffer }).data.toString('utf8')).toBe('{"run_id":"a"}\n{"run_id":"b"}\n');
  });

  it("lists a run without a catalog line from AgentV's summary.json and index", () => {
    const summary = JSON.stringify({
      run_id: 'x',
      counts: { total_tests: 6, passed_tests: 3 },
      metadata: { experiment: 'demo', timestamp: '2026-11-24T07:27:55.549Z' },
    });
    const index = [
      { test_id: 'a', target: 't1', score: 1 },
      { test_id: 'b', target: 't2', score: 0 },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');
    expect(foreignRow('2026-11-24T07-27-55-252Z', summary, index)).toMatchObject({
      run_id: '2026-11-24T07-27-55-252Z',
      experiment: 'demo',
      total: 6,
      passed: 3,
      failed: 3,
      targets: ['t1', 't2'],
      day: '2026-11-24',
      writer: 'agentv',
    });
    // No summary counts: a row without a verdict passes at score >= 1 (AgentV's rule).
    expect(foreignRow('r', undefined, index)).toMatchObject({ total: 2, passed: 1, experiment: 'default' });
    expect(foreignRow('r', '{not json', undefined)).toBeNull();
  });
});

describe('AgentV WIP branches', () => {
  let work = '';
  beforeAll(async () => {
    work = (await makeUserRepo()).work;
  });

  it("are listed as AgentV's and recovered as the run directory they checkpoint", async () => {
    const repo = await openRepo(work);
    const run = '2026-11-24T07-27-55-252Z';
    const { commit } = await writeCommit(repo, {
      parent: null,
      files: [
        { path: `${run}/summary.json`, data: '{"run_id":"2026-11-24T07-27-55-252Z"}\n' },
        { path: `${run}/.internal/index.jsonl`, data: '{"test_id":"a","score":1}\n{"test_id":"b","score":0}\n' },
        { path: `${run}/a--0123/sample-1/result.json`, data: '{}' },
      ],
      message: `wip(results): checkpoint agentv/wip/pod-7/${run} 2026-11-24T07:28:00.000Z`,
      author: { name: 'AgentV Results', email: 'agentv@results-repo', date: '2026-11-24T07:28:00Z' },
    });
    await updateRef(repo, `refs/heads/agentv/wip/pod-7/${run}`, commit, null);
    const listed = await cli(['wip', 'list', '--json'], work);
    expect(listed.code, listed.stderr).toBe(0);
    const entry = (JSON.parse(listed.stdout) as { branches: { branch: string; writer: string; run_id: string; host: string }[] }).branches.find(
      (b) => b.branch === `agentv/wip/pod-7/${run}`,
    );
    // Rows from the index AgentV checkpointed, the time from its commit message.
    expect(entry).toMatchObject({ writer: 'agentv', run_id: run, host: 'pod-7', rows: 2, updated_at: '2026-11-24T07:28:00.000Z' });
    const human = await cli(['wip', 'list'], work);
    expect(human.stdout).toContain('AgentV checkpoint');

    const out = join(await makeTempDir('agentv-wip-out'), 'run');
    const rec = await cli(['wip', 'recover', run, '--out', out, '--json'], work);
    expect(rec.code, rec.stderr).toBe(0);
    expect(JSON.parse(rec.stdout)).toMatchObject({ writer: 'agentv', rows: 2, files: 3 });
    const got = await readBlobs(repo, [`${commit}:${run}/summary.json`]);
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(join(out, 'summary.json'))).toEqual(got.get(`${commit}:${run}/summary.json`));
    expect(await readFile(join(out, '.internal', 'index.jsonl'), 'utf8')).toContain('"test_id":"b"');
  });
});

describe('publish onto the root layout', () => {
  it("writes the run at the root, the catalog in .indexes/, AgentV's title and trailer; republishing is a no-op", async () => {
    const { work } = await makeUserRepo();
    const run = await makeRunWorkspace({ experiment: 'nightly', rows: 3 });
    // export writes AgentV's bare run id; the experiment lives in summary.json's metadata.
    expect(run.runId).toBe('2026-03-14T10-00-00-000Z');
    const dir = run.runId;
    const r = await cli(['publish', run.dir, '--json'], work);
    expect(r.code, r.stderr).toBe(0);
    const files = (await git(work, ['ls-tree', '-r', '--name-only', RESULTS_REF])).split('\n');
    expect(files).toContain('.gitattributes');
    expect(files).toContain('.indexes/agentv-results.2026-03-14.jsonl');
    expect(files).toContain(`${dir}/index.jsonl`);
    expect(files.every((f) => f === '.gitattributes' || f.startsWith('.indexes/') || f.startsWith(`${dir}/`))).toBe(true);
    expect(await git(work, ['log', '-1', '--format=%s', RESULTS_REF])).toMatch(/^feat\(results\): nightly - \d+\/\d+ PASS \(\d\.\d{3}\)$/);
    expect((await git(work, ['log', '-1', '--format=%(trailers:key=AgentV-Run,valueonly)', RESULTS_REF])).trim()).toBe(dir);
    expect(await git(work, ['log', '-1', '--format=%s', 'refs/heads/agentv/artifacts/v1'])).toBe(`chore(results): publish artifact sidecars for ${dir}`);
    expect(await git(work, ['rev-list', '--max-parents=0', 'refs/heads/agentv/artifacts/v1'])).toBe(GENESIS_COMMIT);
    const again = await cli(['publish', run.dir, '--json'], work);
    expect(JSON.parse(again.stdout).status).toBe('already-published');
  });
});
