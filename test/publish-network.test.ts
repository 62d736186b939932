/**
 * Real transports: a `git daemon` on 127.0.0.1 (started and stopped here, receive-pack enabled,
 * serving a bare remote with receive.denyNonFastForwards=true), an HTTP server that demands
 * credentials, and a blob-less managed clone whose payload blobs git fetches on demand.
 */
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, freePort, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { publish } from '../src/publish/publish.js';
import { PublishError } from '../src/index.js';
import {
  ARTIFACTS_REF,
  RESULTS_REF,
  cli,
  commitCount,
  expectFsckClean,
  expectPointersResolve,
  expectUntouched,
  makeRunWorkspace,
  makeUserRepo,
  readTree,
  startDaemonOn,
  tip,
  type Daemon,
} from './publish-helpers.js';

let restore: () => void;
const daemons: Daemon[] = [];
beforeAll(() => {
  restore = useIsolatedGitEnv();
});
afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  restore();
  await cleanupTempDirs();
});

async function daemonFor(root: string, port?: number): Promise<Daemon> {
  const d = await startDaemonOn(root, port ?? (await freePort()));
  daemons.push(d);
  return d;
}

describe('push over git://', () => {
  it('pushes; with the daemon stopped commits locally and reports pending; pushes the pending commits once it is back', async () => {
    const port = await freePort();
    const user = await makeUserRepo('remote-url', `git://127.0.0.1:${port}/remote.git`);
    const daemon = await daemonFor(user.root, port);

    const first = await makeRunWorkspace({ rows: 3 });
    const ok = await expectUntouched(user.work, () => cli(['publish', first.dir, '--push'], user.work));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/pushed to origin/);
    expect(await git(user.remote, ['rev-parse', RESULTS_REF])).toBe(await tip(user.work, RESULTS_REF));
    expect(await git(user.remote, ['rev-parse', ARTIFACTS_REF])).toBe(await tip(user.work, ARTIFACTS_REF));

    await daemon.stop();
    const second = await makeRunWorkspace({ rows: 3, minute: 4, seed: 9 });
    const down = await expectUntouched(user.work, () => cli(['publish', second.dir, '--push'], user.work));
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toMatch(/not pushed: origin is unreachable.*committed locally and pending/);
    const required = await cli(['publish', second.dir, '--require-push'], user.work);
    expect(required.code).toBe(3);
    expect(required.stderr).toMatch(/origin is unreachable; the run is committed locally and pending/);
    let s = JSON.parse((await cli(['status', '--json'], user.work)).stdout) as { pending: boolean; branches: { state: string; ahead: number }[] };
    expect(s.pending).toBe(true);
    expect(s.branches.map((b) => [b.state, b.ahead])).toEqual([
      ['ahead', 1],
      ['ahead', 1],
    ]);
    const list = JSON.parse((await cli(['list', '--json'], user.work)).stdout) as { runs: { run_id: string; where: string }[] };
    expect(list.runs.find((r) => r.run_id === second.runId)?.where).toBe('local');

    await daemonFor(user.root, port);
    const back = await expectUntouched(user.work, () => cli(['publish', second.dir, '--push'], user.work));
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/already published \(no new commit\)/);
    expect(back.stdout).toMatch(/pushed to origin/);
    expect(await git(user.remote, ['rev-parse', RESULTS_REF])).toBe(await tip(user.work, RESULTS_REF));
    s = JSON.parse((await cli(['status', '--json', '--fetch'], user.work)).stdout) as typeof s;
    expect(s.pending).toBe(false);
    expect(s.branches.map((b) => b.state)).toEqual(['in-sync', 'in-sync']);
    await expectFsckClean(user.work);
    await expectFsckClean(user.remote);
    expect(await expectPointersResolve(user.remote)).toBeGreaterThan(0);
    expect(await commitCount(user.remote, RESULTS_REF)).toBe(3);
  });
});

describe('authentication failure', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="agentv-test"' });
      res.end('auth required');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const addr = server.address();
    port = typeof addr === 'object' && addr ? addr.port : 0;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('says the remote refused our credentials, keeps the run committed, exits 3 with --require-push', async () => {
    const user = await makeUserRepo('remote-url', `http://127.0.0.1:${port}/remote.git`);
    const run = await makeRunWorkspace({ rows: 2 });
    const soft = await expectUntouched(user.work, () => cli(['publish', run.dir, '--push'], user.work));
    expect(soft.code, soft.stderr).toBe(0);
    expect(soft.stdout).toMatch(/not pushed: origin refused our credentials/);
    const hard = await cli(['publish', run.dir, '--require-push'], user.work);
    expect(hard.code).toBe(3);
    expect(hard.stderr).toMatch(/origin refused our credentials; the run is committed locally and pending/);
    expect(await commitCount(user.work, RESULTS_REF)).toBe(2);
    const s = await cli(['status', '--fetch'], user.work);
    expect(s.code).toBe(3);
    expect(s.stdout).toMatch(/fetch failed: origin refused our credentials/);
    const l = await cli(['list', '--fetch'], user.work);
    expect(l.code).toBe(3);
    expect(l.stderr).toMatch(/origin refused our credentials .* run again without --fetch/);
    await expectFsckClean(user.work);
  });
  it('decides the push once: results.require_push pushes unasked and fails with its data; push: false never pushes, whatever the configuration', async () => {
    const user = await makeUserRepo('remote-url', `http://127.0.0.1:${port}/remote.git`);
    const run = await makeRunWorkspace({ rows: 2 });
    const overrides = { require_push: true };
    const err = await publish({ run: run.dir, cwd: user.work, overrides }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishError);
    const data = (err as PublishError).data;
    expect(data.runId).toBe(run.runId);
    expect(data.commits?.results).toBe(await tip(user.work, RESULTS_REF));
    expect(data.push?.classification).not.toBe('conflict');
    expect((err as PublishError).message).toMatch(/the run is committed locally and pending/);
    // --no-push: no push and no fetch, the required push does not apply; the run is already there.
    const again = await publish({ run: run.dir, cwd: user.work, overrides, push: false });
    expect(again.push).toBeNull();
    expect(again.status).toBe('already-published');
  });
});

describe('a blob-less managed clone (results.repo is a URL, no checkout)', () => {
  it('lists and pulls a run; git fetches the payload blobs on demand; sha256 verified', async () => {
    const user = await makeUserRepo();
    const daemon = await daemonFor(user.root);
    // The server must allow filters for a partial clone (otherwise git silently clones everything).
    await git(user.remote, ['config', 'uploadpack.allowFilter', 'true']);
    const run = await makeRunWorkspace({ rows: 3 });
    expect((await cli(['publish', run.dir, '--push'], user.work)).code).toBe(0);

    const elsewhere = await makeTempDir('agentv-nogit');
    await mkdir(join(elsewhere, '.agentv'));
    await writeFile(join(elsewhere, '.agentv/config.yaml'), `results:\n  repo: ${daemon.url('remote.git')}\n`);
    const env = { AGENTV_RESULTS_CACHE: join(elsewhere, 'cache') };
    const listed = await cli(['list', '--json'], elsewhere, { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).runs.map((r: { run_id: string }) => r.run_id)).toEqual([run.runId]);

    const [clone] = (await import('node:fs')).readdirSync(join(elsewhere, 'cache/repos'));
    const cloneDir = join(elsewhere, 'cache/repos', clone!);
    expect(await git(cloneDir, ['config', 'remote.origin.promisor'])).toBe('true');
    // --missing=print lists absent objects without fetching them: the payloads are not here yet.
    const missing = async () =>
      new Set(
        (await git(cloneDir, ['rev-list', '--objects', '--missing=print', ARTIFACTS_REF]))
          .split('\n')
          .filter((l) => l.startsWith('?'))
          .map((l) => l.slice(1)),
      );
    // Payloads sit under the run's directory at the artifacts branch root (its bare AgentV run id).
    const payloadBlobs = (await git(cloneDir, ['ls-tree', '-r', '--object-only', ARTIFACTS_REF, '--', `${run.runId}/`])).split('\n').filter(Boolean);
    expect(payloadBlobs.length).toBeGreaterThan(0);
    const before = await missing();
    for (const b of payloadBlobs) expect(before.has(b)).toBe(true);

    const out = join(elsewhere, 'pulled');
    const r = await cli(['pull', run.runId, '--with-artifacts', '--out', out, '--json'], elsewhere, { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).payloads.written).toBeGreaterThan(0);
    const published = await readTree(run.dir);
    const pulled = await readTree(out);
    for (const [path, bytes] of published) if (path !== 'index.jsonl') expect(pulled.get(path)?.equals(bytes), path).toBe(true);
    const after = await missing();
    for (const b of payloadBlobs) expect(after.has(b)).toBe(false);
    expect(existsSync(join(elsewhere, '.git'))).toBe(false);
  });
});
