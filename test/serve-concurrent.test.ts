/**
 * Concurrent readers never collide in the Dashboard's server: many requests opening one test of a
 * run the server has not read yet (two tabs, a reload while loading) all answer 200 with the same
 * body — the run is pulled once, each payload written once (one promise per key, unique temp names
 * per write), and an error answer never shows a path of the server's machine.
 */
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/publish/publish.js';
import { hideLocalPaths } from '../src/errors/redact.js';
import { startServer, type RunningServer } from '../src/serve/index.js';
import { cleanupTempDirs, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
let run: RunWorkspace;
let rows: { test_id: string; target: string }[];
const servers: RunningServer[] = [];

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  run = await makeRunWorkspace({ experiment: 'concurrent', rows: 3, seed: 11, transcriptChars: 40_000 });
  await publish({ run: run.dir, cwd: user.work, push: false });
  // The test ids from the run's own files: asking the server would make it read the run first.
  const index = ['.internal/index.jsonl', 'index.jsonl'];
  const text = await readFile(join(run.dir, index[0]!), 'utf8').catch(() => readFile(join(run.dir, index[1]!), 'utf8'));
  rows = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { test_id: string; target: string });
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  restore();
  await cleanupTempDirs();
});

async function freshServer(): Promise<RunningServer> {
  const s = await startServer({ cwd: user.work });
  servers.push(s);
  return s;
}

const enc = encodeURIComponent;

describe('20 concurrent first opens of one test', () => {
  it('all answer 200, and every request for the same endpoint gets the same body', async () => {
    const server = await freshServer();
    const t = rows[0]!;
    const base = `/api/runs/${enc(run.runId)}/tests/${enc(t.test_id)}`;
    // What the page asks when a test opens (its Grading, Answer and Transcript tabs share one
    // answer, paged by `from`), and the run's report, which reads every payload of the run.
    const paths = [`${base}?target=${enc(t.target)}`, base, `${base}?target=${enc(t.target)}&from=0`, `/api/runs/${enc(run.runId)}/report`];
    const asked = Array.from({ length: 20 }, (_, i) => paths[i % paths.length]!);
    const answers = await Promise.all(
      asked.map(async (path) => {
        const r = await fetch(`${server.url}${path}`);
        return { path, status: r.status, body: await r.text() };
      }),
    );
    for (const a of answers) expect(a.status, `${a.path}: ${a.body.slice(0, 300)}`).toBe(200);
    for (const path of paths) {
      const bodies = new Set(answers.filter((a) => a.path === path).map((a) => a.body));
      expect(bodies.size, path).toBe(1);
    }
    // The answer holds the test's transcript: the payload really was read, not skipped.
    const detail = JSON.parse(answers[0]!.body) as { missing: unknown[]; message_count: number };
    expect(detail.missing).toEqual([]);
    expect(detail.message_count).toBeGreaterThan(0);

    // Then every test of the run at once, on the same (now warm) run: still no collision.
    const all = await Promise.all(
      rows.flatMap((row) =>
        [0, 1, 2].map(async () => {
          const r = await fetch(`${server.url}/api/runs/${enc(run.runId)}/tests/${enc(row.test_id)}?target=${enc(row.target)}`);
          return { status: r.status, body: await r.text() };
        }),
      ),
    );
    for (const a of all) expect(a.status, a.body.slice(0, 300)).toBe(200);
  });
});

describe('error answers', () => {
  it('name no path of the server machine', async () => {
    const server = await freshServer();
    const bad = [
      `/api/runs/${enc('no-such-run')}/tests/x`,
      `/api/runs/${enc(run.runId)}/tests/${enc('no-such-test')}`,
      `/api/runs/${enc(run.runId)}/tests/${enc(rows[0]!.test_id)}?from=-1`,
      `/api/runs/${enc('../../etc/passwd')}`,
      '/api/compare?runs=a,b',
    ];
    for (const path of bad) {
      const r = await fetch(`${server.url}${path}`);
      const body = await r.text();
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      for (const local of [tmpdir(), user.root, user.work, process.cwd()]) expect(body, `${path}: ${body}`).not.toContain(local);
    }
  });
});

describe('hideLocalPaths (what every error answer goes through)', () => {
  it("hides this machine's paths and leaves routes, URLs and branch names", () => {
    const scratch = join(tmpdir(), 'agentv-results-serve-AbC', 'run', 'transcript.json');
    const shown = hideLocalPaths(`ENOENT: no such file or directory, rename '${scratch}.1.tmp' -> '${scratch}'`);
    expect(shown).toBe("ENOENT: no such file or directory, rename '<server path>/transcript.json.1.tmp' -> '<server path>/transcript.json'");
    // A directory's name (a home directory's is its user's) goes with the rest of the path.
    expect(hideLocalPaths(`cannot read ${join(tmpdir(), 'alice')}`)).toBe('cannot read <server path>');
    expect(hideLocalPaths(`not a git repository: ${process.cwd()} (no such directory)`)).toBe('not a git repository: <server path> (no such directory)');
    for (const kept of [
      'GET /api/runs/x/tests/y timed out',
      'fetching https://example.invalid/org/repo.git failed',
      'run 2026-03-14 is not on agentv/results/v1',
      'a made-up /nowhere-on-this-machine/file',
    ])
      expect(hideLocalPaths(kept)).toBe(kept);
  });
});
