/**
 * Issue 37, "where the server cannot serve a partial fetch, fall back to a full one and say so
 * once": a depth-1 CI clone whose remote is a dumb HTTP server (static files on 127.0.0.1, which
 * cannot serve a shallow fetch) still reads the team's runs, and the command says once on stderr
 * that it fetched the whole history instead.
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { cli } from './publish-helpers.js';
import { makeClone, makeRemote, makeRun } from './sync-helpers.js';

isolateGitForSuite();
let server: Server | null = null;
afterEach(async () => {
  const s = server;
  server = null;
  if (s) await new Promise<void>((done) => s.close(() => done()));
});

/** Serves `root`'s files as they are: git's dumb HTTP protocol, no shallow capability. */
async function serveStatic(root: string): Promise<string> {
  const s = createServer((req, res) => {
    const rel = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^(\.\.[/\\])+/, '');
    const path = join(root, rel);
    let size = -1;
    try {
      const st = statSync(path);
      if (st.isFile()) size = st.size;
    } catch {
      // absent: answered 404 below
    }
    if (size < 0) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
    createReadStream(path).pipe(res);
  });
  server = s;
  await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

it('a depth-1 clone of a dumb HTTP remote fetches in full, reads the runs, and says so once', async () => {
  const bare = await makeRemote();
  const writer = await makeClone(bare, 'writer');
  await git(writer, ['commit', '-q', '--no-gpg-sign', '--allow-empty', '-m', 'second']);
  await git(writer, ['push', '-q', 'origin', 'HEAD:main']);
  const published = await cli(['publish', await makeRun({ experiment: 'nightly', rows: 2 }), '--push', '--json'], writer);
  expect(published.code, published.stderr).toBe(0);
  const runId = (JSON.parse(published.stdout) as { run_id: string }).run_id;
  await git(bare, ['update-server-info']);

  const ci = join(await makeTempDir('agentv-dumb-http'), 'ci');
  await git(writer, ['clone', '-q', '--depth', '1', '-b', 'main', `file://${bare}`, ci]);
  expect(await git(ci, ['rev-parse', '--is-shallow-repository'])).toBe('true');
  await git(ci, ['remote', 'set-url', 'origin', `${await serveStatic(bare)}/`]);

  const listed = await cli(['list', '--fetch', '--json'], ci);
  expect(listed.code, listed.stderr).toBe(0);
  expect((JSON.parse(listed.stdout) as { runs: { run_id: string }[] }).runs.map((r) => r.run_id)).toEqual([runId]);
  const said = listed.stderr.split('\n').filter((l) => /cannot serve a shallow fetch/.test(l));
  expect(said).toHaveLength(1);
  expect(said[0]).toMatch(/^agentv-results: origin cannot serve a shallow fetch .*fetching the whole history instead$/);
}, 120_000);
