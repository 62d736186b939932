/**
 * Nothing hangs on a silent peer (docs/configuration.md, "Network limits"): a remote over http
 * that accepts the connection and never answers, or sends headers and stops, and one over git://
 * that never answers, end `publish --push --require-push`, `sync` and `list --fetch` with exit 3
 * and a message naming the remote and what was waited for. The limits are set small through their
 * environment variables so each case takes seconds; the defaults are generous (a minute of silence).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { startSilentServer, type SilentServer } from './helpers/silent-server.js';
import { runCli } from './helpers/cli.js';
import { isSshUrl } from '../src/git/network.js';
import { networkLimits } from '../src/util/network-limits.js';
import { cli, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
const servers: SilentServer[] = [];
let run: RunWorkspace;
beforeAll(async () => {
  restore = useIsolatedGitEnv();
  run = await makeRunWorkspace({ rows: 2 });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  restore();
  await cleanupTempDirs();
});

/** One second of silence ends a transfer; the deadline is a backstop far beyond it. */
const FAST = { AGENTV_RESULTS_NET_LOW_SPEED_TIME: '1', AGENTV_RESULTS_NET_TIMEOUT: '60' };

async function repoWithRemote(url: string): Promise<string> {
  const user = await makeUserRepo();
  await git(user.work, ['remote', 'set-url', 'origin', url]);
  return user.work;
}

const COMMANDS: [string, string[]][] = [
  ['publish --push --require-push', ['publish', '<run>', '--push', '--require-push']],
  ['sync', ['sync']],
  ['list --fetch', ['list', '--fetch']],
];

for (const mode of ['silent', 'headers'] as const) {
  describe(`an http remote that ${mode === 'silent' ? 'accepts and never answers' : 'sends headers and stops'}`, () => {
    let server: SilentServer;
    let work: string;
    let url: string;
    beforeAll(async () => {
      server = await startSilentServer(mode);
      servers.push(server);
      url = `http://127.0.0.1:${server.port}/remote.git`;
      work = await repoWithRemote(url);
    });
    for (const [name, argv] of COMMANDS) {
      it(`${name} ends with exit 3 naming the remote and what it waited for`, async () => {
        const before = server.accepted;
        const r = await cli(
          argv.map((a) => (a === '<run>' ? run.dir : a)),
          work,
          { env: FAST, timeoutMs: 60_000 },
        );
        expect(server.accepted, 'the command reached the server').toBeGreaterThan(before);
        // sync reports its outcome on stdout (its summary), the others on stderr.
        const said = `${r.stdout}\n${r.stderr}`;
        expect(r.code, said).toBe(3);
        expect(said).toContain(`origin (${url}) stopped answering while `);
        expect(said).toMatch(/stopped answering while (fetching|pushing): less than 1000 bytes\/s for 1 s/);
        expect(said).toContain('AGENTV_RESULTS_NET_LOW_SPEED_TIME');
      });
    }
  });
}

describe('a git:// remote that never answers', () => {
  it('list --fetch ends at the deadline with exit 3, naming the remote and the deadline', async () => {
    const server = await startSilentServer('silent');
    servers.push(server);
    const url = `git://127.0.0.1:${server.port}/remote.git`;
    const work = await repoWithRemote(url);
    const r = await cli(['list', '--fetch'], work, { env: { AGENTV_RESULTS_NET_TIMEOUT: '2' }, timeoutMs: 60_000 });
    expect(server.accepted).toBeGreaterThan(0);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`origin (${url}) did not finish fetching within 2 s`);
    expect(r.stderr).toContain('AGENTV_RESULTS_NET_TIMEOUT');
  });
});

describe('the settings', () => {
  it('which URLs git reaches over ssh; the limits from the environment, a bad value refused naming the variable', () => {
    for (const url of ['git@example.invalid:org/r.git', 'ssh://example.invalid/r.git', 'git+ssh://h/r', 'host:r.git']) expect(isSshUrl(url), url).toBe(true);
    for (const url of [
      'https://example.invalid/r.git',
      'http://127.0.0.1:9/r.git',
      'git://h/r',
      'file:///tmp/r.git',
      '/abs/remote.git',
      '../rel.git',
      'origin',
      'C:\\repo',
    ])
      expect(isSshUrl(url), url).toBe(false);
    expect(networkLimits({})).toEqual({ lowSpeedLimit: 1000, lowSpeedTimeS: 60, deadlineMs: 1_800_000, connectTimeoutMs: 30_000, webhookTimeoutMs: 10_000 });
    expect(networkLimits({ AGENTV_RESULTS_NET_TIMEOUT: '2.5', AGENTV_RESULTS_NET_LOW_SPEED_TIME: '5' })).toMatchObject({ deadlineMs: 2500, lowSpeedTimeS: 5 });
    for (const bad of ['0', '-1', 'soon', '1.5'])
      expect(() => networkLimits({ AGENTV_RESULTS_NET_LOW_SPEED_TIME: bad })).toThrow(
        /AGENTV_RESULTS_NET_LOW_SPEED_TIME=.*expected a whole number greater than 0/,
      );
  });
});

describe('a remote over ssh', () => {
  // A stand-in `ssh` first on PATH records the arguments git gives it and fails: no ssh server is
  // needed to see which keep-alives the command asked for.
  async function fakeSsh(dir: string, name: string): Promise<{ path: string; log: string }> {
    const log = join(dir, `${name}.log`);
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\necho "$@" >> '${log}'\necho 'ssh: connect to host fakehost port 22: Connection refused' >&2\nexit 255\n`);
    await chmod(path, 0o755);
    return { path, log };
  }

  it('gets keep-alives and a connect timeout unless the user chose an ssh command (GIT_SSH_COMMAND or core.sshCommand)', async () => {
    const bin = await makeTempDir('agentv-fake-ssh');
    const ssh = await fakeSsh(bin, 'ssh');
    const work = await repoWithRemote('fakehost:remote.git');
    const env = { ...FAST, PATH: `${bin}:${process.env.PATH ?? ''}` };

    const ours = await cli(['list', '--fetch'], work, { env, timeoutMs: 60_000 });
    expect(ours.code, ours.stderr).toBe(3);
    expect(await readFile(ssh.log, 'utf8')).toMatch(/-o ServerAliveInterval=1 -o ServerAliveCountMax=4 -o ConnectTimeout=30 .*fakehost/);

    // The user's own command, in their config: used as it is, nothing added.
    const theirs = await fakeSsh(bin, 'their-ssh');
    await git(work, ['config', 'core.sshCommand', theirs.path]);
    const configured = await cli(['list', '--fetch'], work, { env, timeoutMs: 60_000 });
    expect(configured.code, configured.stderr).toBe(3);
    const theirArgs = await readFile(theirs.log, 'utf8');
    expect(theirArgs).toContain('fakehost');
    expect(theirArgs).not.toContain('ServerAlive');

    // ... and in the environment.
    await git(work, ['config', '--unset', 'core.sshCommand']);
    const envSsh = await fakeSsh(bin, 'env-ssh');
    const fromEnv = await cli(['list', '--fetch'], work, { env: { ...env, GIT_SSH_COMMAND: envSsh.path }, timeoutMs: 60_000 });
    expect(fromEnv.code, fromEnv.stderr).toBe(3);
    const envArgs = await readFile(envSsh.log, 'utf8');
    expect(envArgs).toContain('fakehost');
    expect(envArgs).not.toContain('ServerAlive');
  });
});

describe('an S3 server that accepts and never answers (storage_mode hybrid)', () => {
  let server: SilentServer;
  let endpoint: string;
  const creds = { AWS_ACCESS_KEY_ID: 'AGENTVTESTKEY0000001', AWS_SECRET_ACCESS_KEY: 'sEcReT-silent-s3-0123456789' };
  beforeAll(async () => {
    server = await startSilentServer('silent');
    servers.push(server);
    endpoint = `http://127.0.0.1:${server.port}`;
  });
  async function hybrid(work: string): Promise<void> {
    await mkdir(join(work, '.agentv'), { recursive: true });
    const block = [
      'results:',
      '  storage_mode: hybrid',
      '  object_store:',
      `    endpoint: ${endpoint}`,
      '    region: us-east-1',
      '    bucket: frozen',
      '    prefix: agentv',
      '    force_path_style: true',
    ];
    await writeFile(join(work, '.agentv', 'config.yaml'), `${block.join('\n')}\n`);
  }

  it('a hybrid publish ends with exit 3 once the server was silent for the low-speed time, naming the bucket and its endpoint', async () => {
    const user = await makeUserRepo();
    await hybrid(user.work);
    const before = server.accepted;
    const r = await cli(['publish', run.dir, '--push', '--require-push'], user.work, {
      env: { ...creds, AGENTV_RESULTS_NET_LOW_SPEED_TIME: '1', AGENTV_RESULTS_S3_RETRY_SECONDS: '1', AGENTV_RESULTS_NET_TIMEOUT: '60' },
      timeoutMs: 60_000,
    });
    expect(server.accepted).toBeGreaterThan(before);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`bucket frozen at ${endpoint}`);
    expect(r.stderr).toContain('the server stopped answering: nothing sent or received for 1 s');
    expect(r.stderr).not.toContain(creds.AWS_SECRET_ACCESS_KEY);
  });

  it('storage migrate --push ends with exit 3 at the call deadline, naming the bucket and its endpoint', async () => {
    const user = await makeUserRepo();
    // Published git-native first: migrate then has payloads to copy to the (frozen) bucket.
    const p = await cli(['publish', run.dir, '--push'], user.work);
    expect(p.code, p.stderr).toBe(0);
    await hybrid(user.work);
    const before = server.accepted;
    const r = await cli(['storage', 'migrate', '--push'], user.work, {
      env: { ...creds, AGENTV_RESULTS_NET_TIMEOUT: '2' },
      timeoutMs: 60_000,
    });
    expect(server.accepted).toBeGreaterThan(before);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`bucket frozen at ${endpoint}`);
    expect(r.stderr).toContain('the server did not finish within 2 s');
    expect(r.stderr).toContain('AGENTV_RESULTS_NET_TIMEOUT');
  });
});

describe('the webhook', () => {
  // A failing gate (b regressed) notifies; delivery is best effort, so the gate's own exit code (1) stays.
  let base: string;
  let cand: string;
  let hooks: Server;
  let hookPort: number;
  const received: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    const dir = await makeTempDir('agentv-webhook');
    base = join(dir, 'base.jsonl');
    cand = join(dir, 'cand.jsonl');
    await writeFile(base, '{"test_id":"a","target":"m","score":1}\n{"test_id":"b","target":"m","score":1}\n');
    await writeFile(cand, '{"test_id":"a","target":"m","score":1}\n{"test_id":"b","target":"m","score":0.2}\n');
    hooks = createServer((req, res) => {
      received.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', r));
    hookPort = (hooks.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => hooks.close(() => r())));

  it('with user:secret@ in its URL says why it is not sent and what to use, never the secret; the header setting delivers', async () => {
    const secret = 's3cr3t-hook-password';
    const before = received.length;
    const r = await runCli(['gate', base, cand, '--webhook', `http://hookuser:${secret}@127.0.0.1:${hookPort}/hook`]);
    expect(r.code, r.stderr).toBe(1);
    expect(received.length).toBe(before);
    expect(r.stderr).toContain(`the webhook URL for 127.0.0.1:${hookPort} has credentials in it (user:password@), which fetch does not send`);
    expect(r.stderr).toContain('AGENTV_RESULTS_WEBHOOK_AUTHORIZATION');
    expect(r.stderr).not.toContain('TypeError');
    expect(r.stdout + r.stderr).not.toContain(secret);

    const token = 'Bearer tok-0123456789-secret';
    const sent = await runCli(['gate', base, cand, '--webhook', `http://127.0.0.1:${hookPort}/hook`], { env: { AGENTV_RESULTS_WEBHOOK_AUTHORIZATION: token } });
    expect(sent.code, sent.stderr).toBe(1);
    expect(received.length).toBe(before + 1);
    expect(received.at(-1)!.authorization).toBe(token);
    expect(sent.stdout + sent.stderr).not.toContain('tok-0123456789');
  });

  it('that accepts and never answers ends at its deadline: a warning naming the host and the setting, the gate exit code kept', async () => {
    const server = await startSilentServer('silent');
    servers.push(server);
    const r = await runCli(['gate', base, cand, '--webhook', `http://127.0.0.1:${server.port}/hook/secret-path`], {
      env: { AGENTV_RESULTS_WEBHOOK_TIMEOUT: '1' },
    });
    expect(server.accepted).toBeGreaterThan(0);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`the webhook at 127.0.0.1:${server.port} did not answer within 1 s (AGENTV_RESULTS_WEBHOOK_TIMEOUT`);
    expect(r.stderr).not.toContain('secret-path');
  });
});
