/**
 * `serve`'s API over a real repository with a real bare remote: the remote status/sync of the
 * seeds with AgentV's field names (side by side with the real `agentv serve` when it is present),
 * the run listing with filters, one run, compare, trend series, tag/feedback writes that need the
 * revision they replace, and the request checks (token, Origin, Host, loopback-only bind).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { publish } from '../src/publish/publish.js';
import { compareRuns } from '../src/compare/compare.js';
import { trend } from '../src/trend/index.js';
import { startServer, TOKEN_HEADER, type RunningServer } from '../src/serve/index.js';
import { agentvMissing, HAS_AGENTV, startAgentVServe } from './helpers/agentv-client.js';
import { CLI_PATH, startServing } from './helpers/cli.js';
import { gitEnvForTests } from './helpers/git-fixtures.js';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
let server: RunningServer;
const runs: RunWorkspace[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  await mkdir(join(user.work, '.agentv'), { recursive: true });
  await writeFile(
    join(user.work, '.agentv', 'config.yaml'),
    'results:\n  path: .\n  branch: agentv/results/v1\n  auto_push: false\nprojects:\n  - id: web\n    path: .\n',
  );
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 0, minute: 0, rows: 6, seed: 1 }));
  runs.push(await makeRunWorkspace({ experiment: 'nightly', day: 1, minute: 5, rows: 6, seed: 3 }));
  runs.push(await makeRunWorkspace({ experiment: 'smoke', day: 2, minute: 9, rows: 2, seed: 5 }));
  for (const r of runs.slice(0, 2)) await publish({ run: r.dir, cwd: user.work, push: true });
  // The third is committed here only: the remote is one run behind until someone syncs.
  await publish({ run: runs[2]!.dir, cwd: user.work, push: false });
  server = await startServer({ cwd: user.work });
}, 120_000);

afterAll(async () => {
  await server?.close();
  restore();
  await cleanupTempDirs();
});

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(server.url + path, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const post = async (path: string, body: unknown, headers: Record<string, string> = { [TOKEN_HEADER]: server.token }) => {
  const res = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

// The fields AgentV's `serve` returned for a configured results branch (checked live below).
const AGENTV_STATUS_FIELDS = [
  'configured',
  'available',
  'repo',
  'repo_path',
  'path',
  'auto_push',
  'require_push',
  'push_conflict_policy',
  'local_dir',
  'sync_status',
  'branch',
  'upstream',
  'ahead',
  'behind',
  'dirty_paths',
  'conflicted_paths',
  'run_count',
];

describe('remote status and sync', () => {
  it('answers GET /api/remote/status with AgentV field names plus our own section', async () => {
    const { status, body } = await get('/api/remote/status');
    expect(status).toBe(200);
    for (const f of AGENTV_STATUS_FIELDS) expect(body, f).toHaveProperty(f);
    expect(body.configured).toBe(true);
    expect(body.repo).toBe('.');
    expect(body.branch).toBe('agentv/results/v1');
    expect(body.upstream).toBe('origin/agentv/results/v1');
    expect(body.sync_status).toBe('ahead');
    expect(body.ahead).toBeGreaterThan(0);
    expect(body.behind).toBe(0);
    expect(body.run_count).toBe(3);
    expect(body.agentv_results.outbox).toEqual({ depth: 0, failed: 0, daemon: null });
    expect(body.agentv_results.results.state).toBe('ahead');
  });

  it('has the same top-level fields as the real agentv serve for this repository', async (ctx) => {
    // The peer is optional in a fresh clone (skipped, saying why); when CI is set its absence fails.
    if (!HAS_AGENTV) ctx.skip(agentvMissing());
    const peer = await startAgentVServe(user.work);
    try {
      const theirs = (await (await fetch(`${peer.url}/api/remote/status`)).json()) as Record<string, unknown>;
      const ours = (await get('/api/remote/status')).body;
      const missing = Object.keys(theirs).filter((k) => !(k in ours) && k !== 'last_synced_at' && k !== 'last_error');
      expect(missing).toEqual([]);
      for (const k of ['configured', 'available', 'branch', 'upstream', 'ahead', 'behind', 'push_conflict_policy'] as const)
        expect(typeof ours[k], k).toBe(typeof theirs[k]);
      expect(ours.branch).toBe(theirs.branch);
      expect(ours.upstream).toBe(theirs.upstream);
    } finally {
      await peer.stop();
    }
  }, 60_000);

  it('serves the project-scoped routes for projects[] and 404s an unknown project', async () => {
    expect((await get('/api/projects')).body.projects).toEqual([{ id: 'web', path: '.' }]);
    const scoped = await get('/api/projects/web/remote/status');
    expect(scoped.status).toBe(200);
    expect(scoped.body.agentv_results.project).toBe('web');
    expect((await get('/api/projects/nope/remote/status')).status).toBe(404);
    expect((await get('/api/projects/nope/runs')).status).toBe(404);
  });

  it('POST /api/remote/sync pushes the unpushed run to the bare remote', async () => {
    const before = await git(user.remote, ['rev-parse', 'refs/heads/agentv/results/v1']);
    const { status, body } = await post('/api/projects/web/remote/sync', {});
    expect(status).toBe(200);
    expect(body.push_performed).toBe(true);
    expect(body.blocked).toBe(false);
    expect(body.sync_status).toBe('clean');
    const after = await git(user.remote, ['rev-parse', 'refs/heads/agentv/results/v1']);
    expect(after).not.toBe(before);
    expect(after.trim()).toBe((await git(user.work, ['rev-parse', 'refs/heads/agentv/results/v1'])).trim());
    expect(body.agentv_results.last_push.results).toBe(after.trim());
  });
});

describe('runs, run, compare, trend', () => {
  it('lists runs from the catalog with experiment, target and date filters', async () => {
    const all = (await get('/api/runs')).body;
    expect(all.total).toBe(3);
    expect(all.runs.map((r: any) => r.run_id)).toEqual([runs[2]!.runId, runs[1]!.runId, runs[0]!.runId]);
    expect(all.facets.experiments).toEqual(['nightly', 'smoke']);
    expect((await get('/api/runs?experiment=smoke')).body.runs.map((r: any) => r.run_id)).toEqual([runs[2]!.runId]);
    expect((await get('/api/runs?until=2026-03-14')).body.runs.map((r: any) => r.run_id)).toEqual([runs[0]!.runId]);
    expect((await get('/api/runs?since=2026-03-15&until=2026-03-15')).body.runs.map((r: any) => r.run_id)).toEqual([runs[1]!.runId]);
    expect((await get('/api/runs?target=model-b')).body.matched).toBe(3);
    expect((await get('/api/runs?target=nobody')).body.matched).toBe(0);
    expect((await get('/api/runs?since=yesterday')).status).toBe(400);
    const paged = (await get('/api/runs?limit=1&offset=1')).body;
    expect(paged.runs.map((r: any) => r.run_id)).toEqual([runs[1]!.runId]);
    expect(paged.matched).toBe(3);
  });

  it('shows one run with its summary figures and tests', async () => {
    const id = runs[1]!.runId;
    const { status, body } = await get(`/api/runs/${encodeURIComponent(id)}`);
    expect(status).toBe(200);
    expect(body.run.run_id).toBe(id);
    expect(body.tests).toHaveLength(6);
    expect(body.run.passed).toBe(body.tests.filter((t: any) => t.verdict === 'pass').length);
    expect(body.summary.total).toBe(6);
    expect(body.tags.tags).toEqual([]);
    expect((await get(`/api/runs/${encodeURIComponent('nightly/2020-01-01T00-00-00-000Z')}`)).status).toBe(404);
  });

  it('compares two runs exactly as compareRuns does on the same workspaces', async () => {
    const [a, b] = [runs[0]!, runs[1]!];
    const { status, body } = await get(`/api/compare?baseline=${encodeURIComponent(a.runId)}&candidate=${encodeURIComponent(b.runId)}`);
    expect(status).toBe(200);
    const direct = await compareRuns({ baseline: a.dir, candidate: b.dir, allTargets: 'auto' });
    expect(body.summary).toEqual(direct.summary);
    expect(body.matched).toEqual(direct.matched);
    // 6 rows: 3 test ids x 2 targets, matched per (test id, target): no target dropped.
    expect(body.match).toBe('test+target');
    expect(body.matched.length).toBe(6);
    expect(new Set(body.matched.map((m: any) => m.target))).toEqual(new Set(['model-a', 'model-b']));
    expect(body.sources.baseline.source).toBe(a.runId);
    expect(body.sources.candidate.path).toBe(b.runId);
    // agentv compare's matching on request, and one target only.
    const byId = (await get(`/api/compare?baseline=${encodeURIComponent(a.runId)}&candidate=${encodeURIComponent(b.runId)}&all_targets=0`)).body;
    expect(byId.matched).toEqual((await compareRuns({ baseline: a.dir, candidate: b.dir })).matched);
    // Which rule, in the library's words: per target by default; by test id, what pooling hid and the flag.
    expect(body.match_note).toMatch(/^Matched per \(test id, target\)/);
    expect(byId.pooled).toEqual({ collapsed_rows: 6, targets: ['model-a', 'model-b'], flag: '--all-targets' });
    expect(byId.match_note).toMatch(/6 row\(s\) of targets model-a, model-b were not compared/);
    const one = (await get(`/api/compare?baseline=${encodeURIComponent(a.runId)}&candidate=${encodeURIComponent(b.runId)}&target=model-b`)).body;
    expect(one.matched.length).toBe(3);
    expect(one.sources.baseline.targets).toEqual(['model-b']);
  });

  it('takes the older run as the baseline when given two runs in either order', async () => {
    const [a, b] = [runs[0]!, runs[1]!];
    const fwd = (await get(`/api/compare?runs=${encodeURIComponent(a.runId)},${encodeURIComponent(b.runId)}`)).body;
    const rev = (await get(`/api/compare?runs=${encodeURIComponent(b.runId)},${encodeURIComponent(a.runId)}`)).body;
    expect(fwd.order).toEqual({ rule: 'older-first', swapped: false });
    expect(rev.order).toEqual({ rule: 'older-first', swapped: true });
    for (const r of [fwd, rev]) {
      expect(r.sources.baseline.source).toBe(a.runId);
      expect(r.sources.candidate.source).toBe(b.runId);
    }
    expect(rev.matched).toEqual(fwd.matched);
    expect(rev.summary).toEqual(fwd.summary);
    expect((await get(`/api/compare?runs=${encodeURIComponent(a.runId)}`)).status).toBe(400);
  });

  it('answers trend as the library does on the published runs: pooled by default, split on request', async () => {
    const pooled = (await get('/api/trend?experiment=nightly')).body;
    expect(pooled.series).toHaveLength(1);
    expect(pooled.series[0]).toMatchObject({ experiment: 'nightly', target: null, targets: ['model-a', 'model-b'] });
    expect(pooled.series[0].runs.map((p: any) => p.run_id)).toEqual([runs[0]!.runId, runs[1]!.runId]);
    const lib = await trend({ cwd: user.work, published: true, experiment: 'nightly' });
    expect(pooled.series).toEqual(lib.series);
    const split = (await get('/api/trend?experiment=nightly&by=target')).body;
    expect(split.series.map((s: any) => `${s.experiment}/${s.target}`).sort()).toEqual(['nightly/model-a', 'nightly/model-b']);
    expect(split.series).toEqual((await trend({ cwd: user.work, published: true, experiment: 'nightly', byTarget: true })).series);
    expect(split.experiments).toEqual(['nightly', 'smoke']);
    expect((await get('/api/trend?experiment=nobody')).body.series).toEqual([]);
    expect((await get('/api/trend?by=suite')).status).toBe(400);
  });
});

describe('writes', () => {
  it('edits tags only against the revision they replace, and filters by tag', async () => {
    const id = runs[0]!.runId;
    const path = `/api/runs/${encodeURIComponent(id)}/tags`;
    expect((await post(path, { add: ['baseline'] })).status).toBe(428);
    expect((await post(path, { add: ['baseline'], expect_revision: 'not-the-revision' })).status).toBe(409);
    const rev = (await get(`/api/runs/${encodeURIComponent(id)}`)).body.tags.tag_revision;
    const ok = await post(path, { add: ['baseline'], expect_revision: rev });
    expect(ok.status).toBe(200);
    expect(ok.body.tags.tags).toEqual(['baseline']);
    expect((await git(user.work, ['log', '-1', '--format=%s', 'refs/heads/agentv/results/v1'])).trim()).toBe(`agentv: tags of ${id}`);
    // The old revision is now stale.
    expect((await post(path, { add: ['other'], expect_revision: rev })).status).toBe(409);
    expect((await get('/api/runs?tag=baseline')).body.runs.map((r: any) => r.run_id)).toEqual([id]);
    expect((await get('/api/runs')).body.runs.find((r: any) => r.run_id === id).tags).toEqual(['baseline']);
  });

  it('sets feedback only against the revision it replaces', async () => {
    const id = runs[1]!.runId;
    const detail = (await get(`/api/runs/${encodeURIComponent(id)}`)).body;
    const testId = detail.tests[0].test_id;
    const path = `/api/runs/${encodeURIComponent(id)}/feedback`;
    expect((await post(path, { test_id: testId, text: 'x', reviewer: 'ana' })).status).toBe(428);
    const first = await post(path, { test_id: testId, text: 'looks right', reviewer: 'ana', expect_revision: '' });
    expect(first.status).toBe(200);
    expect(first.body.feedback.entries[testId].ana.feedback).toBe('looks right');
    const rev = first.body.entry.revision;
    // Someone who read before ana wrote cannot overwrite her note; with her revision they can.
    expect((await post(path, { test_id: testId, text: 'again', reviewer: 'ana', expect_revision: '' })).status).toBe(409);
    expect((await post(path, { test_id: testId, text: 'again', reviewer: 'ana', expect_revision: rev })).status).toBe(200);
    // Another reviewer's note on the same test is separate.
    expect((await post(path, { test_id: testId, text: 'agree', reviewer: 'bo', expect_revision: '' })).status).toBe(200);
    const after = (await get(`/api/runs/${encodeURIComponent(id)}`)).body;
    expect(Object.keys(after.feedback.entries[testId]).sort()).toEqual(['ana', 'bo']);
    expect(after.feedback.entries[testId].ana.feedback).toBe('again');
    expect((await post(path, { test_id: 'no-such-test', text: 'x', reviewer: 'ana', expect_revision: '' })).status).toBe(404);
  });
});

describe('request checks', () => {
  it('refuses writes without the token or from another origin', async () => {
    expect((await post('/api/remote/sync', {}, {})).status).toBe(403);
    expect((await post('/api/remote/sync', {}, { [TOKEN_HEADER]: 'wrong' })).status).toBe(403);
    const cross = await post('/api/remote/sync', {}, { [TOKEN_HEADER]: server.token, origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect(cross.body.error).toMatch(/origin/);
  });

  it('without an Origin, a cross-site Referer refuses a token-bearing write; our own Referer is fine (issue 30 item 7)', async () => {
    const { request } = await import('node:http');
    // fetch() always adds an Origin to a POST; a raw request sends exactly the headers given.
    const raw = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: server.port, path: '/api/remote/status', method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
    const cross = await raw({ [TOKEN_HEADER]: server.token, referer: 'https://evil.example/page?secret=1' });
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body).error).toMatch(/referer origin "https:\/\/evil\.example"/);
    expect(cross.body).not.toContain('secret=1');
    expect((await raw({ [TOKEN_HEADER]: server.token, referer: 'not a url' })).status).toBe(403);
    const own = await raw({ [TOKEN_HEADER]: server.token, referer: `http://127.0.0.1:${server.port}/` });
    expect(own.status).not.toBe(403);
  });

  it('refuses a Host that is not this server (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/api/runs', headers: { host: `evil.example:${server.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  it('binds loopback only unless told otherwise', async () => {
    await expect(startServer({ cwd: user.work, host: '0.0.0.0' })).rejects.toThrow(/--allow-remote/);
    expect(server.host).toBe('127.0.0.1');
  });

  it('a read-only server refuses writes', async () => {
    const ro = await startServer({ cwd: user.work, readOnly: true });
    try {
      const res = await fetch(`${ro.url}/api/remote/sync`, { method: 'POST', headers: { [TOKEN_HEADER]: ro.token } });
      expect(res.status).toBe(403);
    } finally {
      await ro.close();
    }
  });
});

describe('the CLI', () => {
  /** Starts the built CLI, waits for the "Dashboard: <url>" line, returns the url and the child. */
  const startCli = (args: string[]) => startServing([process.execPath, CLI_PATH, ...args], { cwd: user.work, env: { ...process.env, ...gitEnvForTests() } });

  it('serve and daemon --http listen on loopback and answer the API', async () => {
    for (const args of [
      ['serve', '--port', '0'],
      ['daemon', '--http', '--port', '0', '--poll', '--no-push'],
    ]) {
      const s = await startCli(args);
      try {
        const res = await fetch(`${s.url}/api/remote/status`);
        expect(res.status, args.join(' ')).toBe(200);
        expect(((await res.json()) as { branch: string }).branch).toBe('agentv/results/v1');
        expect(s.stderr()).toMatch(/x-agentv-results-token: \S+/);
      } finally {
        expect(await s.stop()).toBe(0);
      }
    }
  }, 120_000);

  it('refuses a non-loopback bind without --allow-remote (exit 2)', async () => {
    const { runCli } = await import('./helpers/cli.js');
    const r = await runCli(['serve', '--host', '0.0.0.0'], { cwd: user.work, env: gitEnvForTests() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--allow-remote/);
  });
});
