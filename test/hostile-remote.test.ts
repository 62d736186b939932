/**
 * Remote faults (issue 13, holes 2 and 6): a results repository given as a URL with credentials
 * never has them printed — errors, `--json`, logs — and when it is unreachable the run is still
 * committed locally (in the managed clone) and pending. Remote errors name the remote and the cause.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { cli, makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

isolateGitForSuite();

const TOKEN = 'ghp_SECRETtoken1234567890';

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('a results repository URL with credentials, unreachable', () => {
  it('publish commits locally and stays pending; no command prints the token', async () => {
    const home = await makeTempDir('agentv-cred');
    const url = `http://user:${TOKEN}@127.0.0.1:${await deadPort()}/r.git`;
    const env = { AGENTV_RESULTS_REPO: url, AGENTV_RESULTS_CACHE: `${home}/cache` };
    const run = await makeRunWorkspace({ rows: 2 });
    const outputs: string[] = [];
    const pub = await cli(['publish', run.dir, '--push'], home, { env, timeoutMs: 60_000 });
    outputs.push(pub.stdout + pub.stderr);
    expect(pub.code, pub.stdout + pub.stderr).toBe(0);
    expect(pub.stdout).toMatch(/Published/);
    expect(pub.stdout + pub.stderr).toMatch(/unreachable/);
    for (const args of [
      ['publish', run.dir, '--push', '--json'],
      ['publish', run.dir, '--require-push'],
      ['list', '--fetch'],
      ['list', '--fetch', '--json'],
      ['status', '--fetch'],
      ['status', '--fetch', '--json'],
      ['sync'],
      ['sync', '--json'],
    ]) {
      const r = await cli(args, home, { env, timeoutMs: 60_000 });
      outputs.push(`${args.join(' ')}\n${r.stdout}${r.stderr}`);
    }
    for (const o of outputs) expect(o).not.toContain(TOKEN);
    const st = await cli(['status', '--json'], home, { env });
    const report = JSON.parse(st.stdout) as { pending: boolean; managed: boolean; remote_url: string };
    expect(report.managed).toBe(true);
    expect(report.pending).toBe(true);
    expect(report.remote_url).not.toContain(TOKEN);
    const list = await cli(['list', '--json'], home, { env });
    expect(list.stdout).toContain(run.runId);
  }, 180_000);
});

describe('remote errors name the remote and the cause', () => {
  it('a path remote that does not exist', async () => {
    const user = await makeUserRepo();
    await git(user.work, ['remote', 'set-url', 'origin', `${user.root}/gone.git`]);
    const run = await makeRunWorkspace({ rows: 2 });
    const r = await cli(['publish', run.dir, '--push'], user.work);
    const text = r.stdout + r.stderr;
    expect(text).toMatch(/origin/);
    expect(text).toMatch(/gone\.git' does not appear to be a git repository/);
    expect(text).not.toMatch(/failed: and the repository exists/);
  }, 180_000);
});

describe('the daemon log and free text', () => {
  it('strips credentials from every URL in a log line, text and JSON', async () => {
    const { createLogger } = await import('../src/daemon/log.js');
    for (const format of ['text', 'json'] as const) {
      const lines: string[] = [];
      const log = createLogger({ format, write: (l) => lines.push(l) });
      log.error(`push to https://bot:${TOKEN}@example.invalid/r.git failed`, { url: `ssh://git:${TOKEN}@host/x`, err: new Error(`fatal: http://${TOKEN}@h/`) });
      expect(lines.join('')).not.toContain(TOKEN);
      expect(lines.join('')).toContain('https://example.invalid/r.git');
    }
  }, 180_000);
});
