/**
 * A request for one run reads that run (issue 53, item 4): `GET /api/runs/:id` finds the run where
 * its id says it is (branch-read/find-run.ts), and its answer is the listing's, for every kind of
 * run a results branch holds. The branch, with a bare remote: runs we published (pushed: on both
 * tips; one only on the remote-tracking tip, newer than the local one; one only local, so the two
 * diverged), one archived by rollover (its catalog line says so) and one removed by retention,
 * runs in AgentV's own layout with no catalog line (one of them described by the line an
 * `archive` wrote for its tree, with counts of its own), AgentV 4.42's `runs/<exp>/<ts>` (a named
 * experiment and the bare-timestamp `default` one) and the older layout's `runs/<exp>/<day>/<ts>`
 * with its `catalog/<day>.jsonl` line. For each listed run: the direct find equals `listRuns`'s
 * row, the API's `run` equals the `/api/runs` entry, and its `summary` equals `summary` of the run
 * `pull` brings down; unknown, expired and malformed ids answer 404 as the listing words them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireRuns } from '../src/archive/retention.js';
import { rollover } from '../src/archive/rollover.js';
import { findListedRun } from '../src/branch-read/find-run.js';
import { listRuns, type ListedRun } from '../src/branch-read/list.js';
import { pull } from '../src/branch-read/pull.js';
import { openRepo, writeCommit, type FileChange } from '../src/git/index.js';
import { editTags, readFeedback, readTags, setFeedback } from '../src/overlay-write/write.js';
import { publish } from '../src/publish/publish.js';
import { summarizeRun } from '../src/runs/summary.js';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { cleanupTempDirs, git, makeTempDir, traceGitProcesses, subcommand, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, makeRunWorkspace, makeUserRepo, tip, type RunWorkspace } from './publish-helpers.js';

const NOW = new Date('2026-03-20T12:00:00Z');
const AUTHOR = { name: 'Test', email: 'test@example.invalid', date: NOW };
const enc = encodeURIComponent;

let restore: () => void;
let user: UserRepoFixture;
let server: RunningServer;
const ours: RunWorkspace[] = [];
let remoteOnly: RunWorkspace;
let localOnly: RunWorkspace;
let listed: ListedRun[];

/** An AgentV 5 run as its auto_push lays it out at the branch root (no catalog line of ours). */
function agentvRun(runId: string, iso: string, passed: number): FileChange[] {
  const targets = ['agent-a', 'agent-b'];
  const summary = {
    index_path: '.internal/index.jsonl',
    run_id: runId,
    counts: { total_tests: 4, passed_tests: passed, failed_tests: 4 - passed, total_samples: 4, errored_samples: 0 },
    metadata: { eval_file: 'evals/demo.eval.yaml', timestamp: iso, targets, experiment: 'theirs' },
  };
  const rows = Array.from({ length: 4 }, (_, i) => ({ timestamp: iso, test_id: `t-${i}`, target: targets[i % 2], score: i < passed ? 1 : 0 }));
  return [
    { path: `${runId}/summary.json`, data: `${JSON.stringify(summary, null, 2)}\n` },
    { path: `${runId}/.internal/index.jsonl`, data: `${rows.map((r) => JSON.stringify(r)).join('\n')}\n` },
  ];
}

/** A run of its index and benchmark.json alone, no summary: AgentV 4.42's under runs/<experiment>/<timestamp>/ (and, here, the older layout's). */
function stableRun(dir: string, iso: string): FileChange[] {
  const rows = [
    { test_id: 'greets', target: 'x', score: 1, timestamp: iso },
    { test_id: 'counts', target: 'x', score: 0 },
  ];
  return [
    { path: `${dir}/index.jsonl`, data: `${rows.map((r) => JSON.stringify(r)).join('\n')}\n` },
    { path: `${dir}/benchmark.json`, data: '{}\n' },
  ];
}

/** The test ids of a run workspace (its index's rows). */
async function testIdsOf(dir: string): Promise<string[]> {
  const index = await readFile(join(dir, 'index.jsonl'), 'utf8');
  return index
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { test_id: string }).test_id);
}

async function api(path: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(server.url + path);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  // Five of ours, pushed (2026-03-14 … 18); rollover then moves the two oldest to the month's
  // archive and retention removes the oldest of them.
  for (let d = 0; d < 5; d++) ours.push(await makeRunWorkspace({ experiment: 'nightly', day: d, minute: d, rows: 3, seed: 40 + d }));
  for (const r of ours) await publish({ run: r.dir, cwd: user.work, push: true });
  await rollover({ cwd: user.work, keepDays: 100_000, keepRuns: 3, now: NOW, author: AUTHOR });
  await expireRuns({ cwd: user.work, keepDays: 5, now: NOW, author: AUTHOR });
  // One more, pushed; the local branches then go back: that run is only on the remote-tracking tip.
  const before = { results: (await tip(user.work, RESULTS_REF))!, artifacts: (await tip(user.work, ARTIFACTS_REF))! };
  remoteOnly = await makeRunWorkspace({ experiment: 'nightly', day: 5, minute: 5, rows: 3, seed: 50 });
  await publish({ run: remoteOnly.dir, cwd: user.work, push: true });
  await git(user.work, ['update-ref', RESULTS_REF, before.results]);
  await git(user.work, ['update-ref', ARTIFACTS_REF, before.artifacts]);
  // One only here (the tips have diverged now).
  localOnly = await makeRunWorkspace({ experiment: 'nightly', day: 4, minute: 30, rows: 3, seed: 60 });
  await publish({ run: localOnly.dir, cwd: user.work, push: false });
  // Overlays: tags and a reviewer's note on one of ours, here only (the answer reads them from the tip).
  await editTags({ cwd: user.work, runId: ours[3]!.runId, add: ['baseline', 'nightly'], push: false });
  const firstTest = (await testIdsOf(ours[3]!.dir))[0]!;
  await setFeedback({ cwd: user.work, runId: ours[3]!.runId, testId: firstTest, text: 'looks right', reviewer: 'ana', push: false });
  // Other writers' runs, committed on the local branch: AgentV 5's at the root, 4.42's under
  // runs/, and the older layout's with its catalog/ line.
  const repo = await openRepo(user.work);
  const parent = (await tip(user.work, RESULTS_REF))!;
  const legacyTs = '2026-03-10T09-00-00-000Z';
  const legacyPath = `runs/old/2026-03-10/${legacyTs}`;
  const legacyLine = {
    run_id: `old/${legacyTs}`,
    experiment: 'old',
    timestamp: '2026-03-10T09:00:00.000Z',
    path: legacyPath,
    targets: ['x'],
    total: 2,
    passed: 1,
    failed: 1,
    pass_rate: 0.5,
  };
  const files: FileChange[] = [
    ...agentvRun('2026-03-11T07-00-00-000Z', '2026-03-11T07:00:00.000Z', 3),
    ...agentvRun('2026-03-11T08-00-00-000Z', '2026-03-11T08:00:00.000Z', 1),
    ...stableRun('runs/exp42/2026-03-12T08-00-00-000Z', '2026-03-12T08:00:00.000Z'),
    ...stableRun('runs/default/2026-03-12T09-00-00-000Z', '2026-03-12T09:00:00.000Z'),
    { path: 'metadata/runs/exp42/2026-03-12T08-00-00-000Z/tags.json', data: `${JSON.stringify({ tags: ['stable-tag'] })}\n` },
    ...stableRun(legacyPath, '2026-03-10T09:00:00.000Z'),
    { path: 'catalog/2026-03-10.jsonl', data: `${JSON.stringify(legacyLine)}\n` },
  ];
  const first = await writeCommit(repo, { parent, files, message: 'other writers', author: AUTHOR });
  // The line an archive writes for an AgentV run's tree: the listing shows its counts, and so must one run's answer.
  await git(user.work, ['update-ref', RESULTS_REF, first.commit, parent]);
  const tree = (await git(user.work, ['rev-parse', `${first.commit}:2026-03-11T08-00-00-000Z`])).trim();
  const foreignLine = {
    tree,
    run_id: '2026-03-11T08-00-00-000Z',
    experiment: 'theirs',
    timestamp: '2026-03-11T08:00:00.000Z',
    path: '2026-03-11T08-00-00-000Z',
    targets: ['agent-a', 'agent-b'],
    total: 4,
    passed: 2,
    failed: 2,
    pass_rate: 0.5,
  };
  await writeCommit(repo, {
    parent: first.commit,
    files: [{ path: '.indexes/agentv-results-foreign.2026-03-11.jsonl', data: `${JSON.stringify(foreignLine)}\n` }],
    message: 'foreign catalog',
    author: AUTHOR,
  }).then((w) => git(user.work, ['update-ref', RESULTS_REF, w.commit, first.commit]));
  listed = (await listRuns({ cwd: user.work })).runs;
  server = await startServer({ cwd: user.work });
}, 240_000);

afterAll(async () => {
  await server?.close();
  restore?.();
  await cleanupTempDirs();
});

describe('one run read where its id says it is', () => {
  it('the branch holds every kind of run the test means to cover', () => {
    const ids = listed.map((r) => r.run_id);
    expect(ids).toContain(ours[1]!.runId); // archived
    expect(listed.find((r) => r.run_id === ours[1]!.runId)?.archived).toBe('2026-03');
    expect(ids).not.toContain(ours[0]!.runId); // expired
    expect(new Set(listed.map((r) => r.where))).toEqual(new Set(['local', 'remote', 'both']));
    expect(listed.find((r) => r.run_id === remoteOnly.runId)?.where).toBe('remote');
    expect(listed.find((r) => r.run_id === localOnly.runId)?.where).toBe('local');
    expect(listed.filter((r) => r.writer === 'agentv').map((r) => r.run_id)).toEqual(
      expect.arrayContaining(['2026-03-11T07-00-00-000Z', '2026-03-11T08-00-00-000Z', 'exp42::2026-03-12T08-00-00-000Z', '2026-03-12T09-00-00-000Z']),
    );
    expect(ids).toContain('old/2026-03-10T09-00-00-000Z');
    // The archive's line for that tree is what the listing shows (2 of 4 passed), not the files (1 of 4).
    expect(listed.find((r) => r.run_id === '2026-03-11T08-00-00-000Z')?.passed).toBe(2);
  });

  it('for every listed run, the direct find is the listing row, and reads no listing (ls-tree of exact paths only)', async () => {
    expect(listed.length).toBe(11);
    for (const r of listed) {
      const { result, argvs } = await traceGitProcesses(() => findListedRun({ cwd: user.work, runId: r.run_id }));
      expect(result, r.run_id).not.toBeNull();
      expect(result!.run, r.run_id).toStrictEqual(r);
      expect(JSON.stringify(result!.run)).toBe(JSON.stringify(r));
      // An ls-tree names exact places (the run's, its day's catalog files): never the root's or a
      // folder's every entry, as the listing reads them (`ls-tree <tip>`, `ls-tree <tip> -- .indexes/`).
      const lsTrees = argvs.filter((a) => subcommand(a) === 'ls-tree');
      expect(lsTrees.length, r.run_id).toBeGreaterThan(0);
      for (const a of lsTrees) {
        const paths = a.slice(a.indexOf('--') + 1);
        expect(a.includes('--') && paths.length > 0 && paths.every((p) => !p.endsWith('/')), `${r.run_id}: ${a.join(' ')}`).toBe(true);
      }
    }
  });

  it('GET /api/runs/:id answers each listed run as /api/runs lists it, with the summary of the run pull brings down', async () => {
    const page = (await api('/api/runs?limit=500')).body;
    expect(page.runs.length).toBe(listed.length);
    const out = await makeTempDir('one-run-pull');
    for (const entry of page.runs as Record<string, any>[]) {
      const id = entry.run_id as string;
      const { status, body } = await api(`/api/runs/${enc(id)}`);
      expect(status, `${id}: ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
      const { tags: _tags, feedback_notes: _notes, ...row } = entry;
      expect(body.run, id).toStrictEqual(row);
      const dir = join(out, String(page.runs.indexOf(entry)));
      await pull({ cwd: user.work, runId: id, out: dir });
      const { summary } = await summarizeRun({ run: dir });
      // The id is the listed one (run-cache.ts load); a 4.42 run's files name no experiment, so the
      // reader takes its folder's name (the older layout's copy here too): the server's private copy's and this pull's differ.
      const same = (s: Record<string, any>) =>
        entry.path.startsWith('runs/') ? { ...s, run_id: null, experiment: null, metadata: { ...s.metadata, experiment: null } } : { ...s, run_id: null };
      expect(same(body.summary), id).toStrictEqual(same(summary));
      expect(body.tests.length, id).toBe(summary.total);
      // Tags and feedback as the library reads them from the branch.
      const tags = await readTags({ cwd: user.work, runId: id }).catch(() => null);
      const fb = await readFeedback({ cwd: user.work, runId: id }).catch(() => null);
      expect([body.tags, body.feedback, body.notes], id).toStrictEqual(JSON.parse(JSON.stringify([tags, fb?.document ?? null, fb?.notes ?? []])));
    }
  });

  it('the overlays shown are the tip’s: the first answer carries them, and an edit that moves the tip is seen on the next request', async () => {
    const id = ours[3]!.runId;
    const before = (await api(`/api/runs/${enc(id)}`)).body;
    expect(before.tags.tags).toEqual(['baseline', 'nightly']);
    expect(before.notes.map((n: { reviewer: string }) => n.reviewer)).toEqual(['ana']);
    expect((await api(`/api/runs/${enc('exp42::2026-03-12T08-00-00-000Z')}`)).body.tags.tags).toEqual(['stable-tag']);
    await editTags({ cwd: user.work, runId: id, remove: ['nightly'], add: ['release'], push: false });
    expect((await api(`/api/runs/${enc(id)}`)).body.tags.tags).toEqual(['baseline', 'release']);
  });

  it('unknown, expired and malformed ids answer 404 worded as the listing words them (the direct find leaves them to it)', async () => {
    for (const id of ['nope-2', ours[0]!.runId, '..', 'a/b/c', ours[4]!.runId.replace('2026-03-18', '2026-03-28')])
      expect(await findListedRun({ cwd: user.work, runId: id }), id).toBeNull();
    const unknown = await api(`/api/runs/${enc('nope-2')}`);
    expect([unknown.status, unknown.body.run_state]).toEqual([404, 'unknown']);
    expect(unknown.body.error).toContain('no run nope-2 on agentv/results/v1');
    const expired = await api(`/api/runs/${enc(ours[0]!.runId)}`);
    expect([expired.status, expired.body.run_state, expired.body.expired_at]).toEqual([404, 'expired', '2026-03-20']);
    const malformed = await api(`/api/runs/${enc('a/b/c')}`);
    expect([malformed.status, malformed.body.run_state]).toEqual([404, 'unknown']);
    expect(malformed.body.error).toContain('(not a run id)');
  });
});
