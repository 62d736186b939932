import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitCodeFor } from '../src/errors/errors.js';
import { assertGitVersion, buildGitEnv, checkGitVersion, gitVersion, parseGitVersion, runGit, spawnGit } from '../src/git/index.js';
import { GitError, GitVersionError } from '../src/errors/git-errors.js';
import { commitFiles, git, initRepo, isolateGitForSuite } from './helpers/git-fixtures.js';

isolateGitForSuite();

const gitBlobId = (data: Buffer): string =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${data.length}\0`), data]))
    .digest('hex');

describe('runGit', () => {
  it('returns stdout as bytes and the exit code', async () => {
    const r = await runGit(['version']);
    expect(r.code).toBe(0);
    expect(Buffer.isBuffer(r.stdout)).toBe(true);
    expect(r.stdout.toString()).toMatch(/^git version \d+\.\d+/);
  });

  it('throws GitError with argv, exit code and stderr on an unexpected exit code', async () => {
    const repo = await initRepo();
    const err = await runGit(['rev-parse', '--verify', 'refs/heads/does-not-exist'], { cwd: repo }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    const ge = err as GitError;
    expect(ge.exitCode).toBe(128);
    expect(ge.argv).toEqual(['git', 'rev-parse', '--verify', 'refs/heads/does-not-exist']);
    expect(ge.stderr).toMatch(/Needed a single revision/);
    expect(ge.message).toMatch(/exited with code 128: fatal: Needed a single revision/);
  });

  it('accepts exit codes listed in okCodes', async () => {
    const repo = await initRepo();
    const r = await runGit(['rev-parse', '-q', '--verify', 'refs/heads/nope'], { cwd: repo, okCodes: [0, 1] });
    expect(r.code).toBe(1);
    expect(r.stdout.length).toBe(0);
  });

  it('feeds string, Buffer and stream input byte-exactly', async () => {
    const repo = await initRepo();
    const binary = Buffer.from([0, 1, 2, 255, 10, 13, 0, 0x80]);
    const fromBuffer = await runGit(['hash-object', '--stdin'], { cwd: repo, input: binary });
    expect(fromBuffer.stdout.toString().trim()).toBe(gitBlobId(binary));
    const fromString = await runGit(['hash-object', '--stdin'], { cwd: repo, input: 'héllo\n' });
    expect(fromString.stdout.toString().trim()).toBe(gitBlobId(Buffer.from('héllo\n')));
    const fromStream = await runGit(['hash-object', '--stdin'], { cwd: repo, input: Readable.from([binary, binary]) });
    expect(fromStream.stdout.toString().trim()).toBe(gitBlobId(Buffer.concat([binary, binary])));
  });

  it('uses --git-dir and never needs the worktree', async () => {
    const repo = await initRepo({ bare: true });
    const r = await runGit(['rev-parse', '--absolute-git-dir'], { gitDir: repo });
    expect(r.stdout.toString().trim()).toBe(repo);
  });

  it('passes one-shot config with -c without writing any config file', async () => {
    const repo = await initRepo();
    const r = await runGit(['config', '--get', 'agentv.probe'], { cwd: repo, config: { 'agentv.probe': 'yes' } });
    expect(r.stdout.toString().trim()).toBe('yes');
    const after = await runGit(['config', '--get', 'agentv.probe'], { cwd: repo, okCodes: [1] });
    expect(after.code).toBe(1);
  });

  it('rejects with GitError when aborted, and the process is gone', async () => {
    const repo = await initRepo();
    // cat-file --batch waits for stdin forever; only the abort can end it.
    const proc = spawnGit(['cat-file', '--batch'], { cwd: repo, signal: AbortSignal.timeout(200) });
    proc.stdout.resume();
    const err = await proc.exited.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as Error).message).toMatch(/aborted/);
    expect(() => process.kill(proc.pid as number, 0)).toThrow();
  });

  it('a git that dies mid-stream is a GitError (exit 3, with argv, cwd and how), before a write and while one waits to drain', async () => {
    const repo = await initRepo();
    // Nobody reads cat-file's answers: its stdout fills, it stops reading stdin, and a large write waits to drain.
    const proc = spawnGit(['cat-file', '--batch'], { cwd: repo });
    const pending = proc.write(Buffer.from('0'.repeat(40).concat('\n').repeat(200_000)));
    const waiting = pending.catch((e: unknown) => e);
    proc.kill('SIGKILL');
    const exited = await proc.exited.catch((e: unknown) => e);
    expect(exited).toBeInstanceOf(GitError);
    for (const err of [await waiting, await proc.write('more\n').catch((e: unknown) => e)]) {
      expect(err).toBeInstanceOf(GitError);
      const ge = err as GitError;
      expect(exitCodeFor(ge)).toBe(3);
      expect(ge.message).toMatch(/^git cat-file --batch stopped reading its input (before this write|before the data was consumed) \(the git process/);
      expect(ge.data).toMatchObject({ argv: ['git', 'cat-file', '--batch'], cwd: repo, how: 'died' });
    }
  });

  it('keeps where git ran and how it failed in the data of every runner failure', async () => {
    const repo = await initRepo();
    const failed = (await runGit(['rev-parse', '--verify', 'refs/heads/nope'], { cwd: repo }).catch((e: unknown) => e)) as GitError;
    expect(failed.data).toMatchObject({ exitCode: 128, cwd: repo, how: 'exit' });
    const missing = (await runGit(['version'], { cwd: '/nonexistent/agentv/dir' }).catch((e: unknown) => e)) as GitError;
    expect(missing.data).toMatchObject({ exitCode: null, cwd: '/nonexistent/agentv/dir', how: 'spawn' });
  });

  it('reports a missing working directory clearly', async () => {
    const err = await runGit(['version'], { cwd: '/nonexistent/agentv/dir' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as Error).message).toMatch(/could not run git/);
  });
});

describe('environment policy', () => {
  it('ignores GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE inherited from the parent', async () => {
    const target = await initRepo();
    const decoy = await initRepo();
    await commitFiles(decoy, { 'decoy.txt': 'decoy\n' });
    const saved = { ...process.env };
    process.env.GIT_DIR = `${decoy}/.git`;
    process.env.GIT_WORK_TREE = decoy;
    process.env.GIT_INDEX_FILE = `${decoy}/.git/index`;
    process.env.GIT_OBJECT_DIRECTORY = `${decoy}/.git/objects`;
    try {
      const r = await runGit(['rev-parse', '--absolute-git-dir', '--show-toplevel'], { cwd: target });
      expect(r.stdout.toString().trim().split('\n')).toEqual([`${target}/.git`, target]);
      const files = await runGit(['ls-files'], { cwd: target });
      expect(files.stdout.toString()).toBe('');
    } finally {
      for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY']) delete process.env[k];
      Object.assign(process.env, saved);
    }
    expect(process.env.GIT_DIR).toBeUndefined();
  });

  it('keeps credential, ssh and GIT_CONFIG_* variables and sets GIT_TERMINAL_PROMPT=0, LC_ALL=C', async () => {
    const repo = await initRepo();
    const saved = { ...process.env };
    Object.assign(process.env, {
      GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
      SSH_AUTH_SOCK: '/tmp/agent.sock',
      GIT_ASKPASS: '/bin/false',
      GIT_TERMINAL_PROMPT: '1',
      LC_ALL: 'de_DE.UTF-8',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'agentv.fromenv',
      GIT_CONFIG_VALUE_0: 'kept',
    });
    try {
      const env = buildGitEnv();
      expect(env.GIT_SSH_COMMAND).toBe('ssh -o BatchMode=yes');
      expect(env.SSH_AUTH_SOCK).toBe('/tmp/agent.sock');
      expect(env.GIT_ASKPASS).toBe('/bin/false');
      expect(env.GIT_TERMINAL_PROMPT).toBe('0');
      expect(env.LC_ALL).toBe('C');
      // Seen by a real git process:
      const cfg = await git(repo, ['config', '--get', 'agentv.fromenv']);
      expect(cfg).toBe('kept');
      const printed = await git(repo, ['-c', 'alias.penv=!printenv GIT_TERMINAL_PROMPT LC_ALL GIT_SSH_COMMAND', 'penv']);
      expect(printed.split('\n')).toEqual(['0', 'C', 'ssh -o BatchMode=yes']);
    } finally {
      for (const k of [
        'GIT_SSH_COMMAND',
        'SSH_AUTH_SOCK',
        'GIT_ASKPASS',
        'GIT_CONFIG_COUNT',
        'GIT_CONFIG_KEY_0',
        'GIT_CONFIG_VALUE_0',
        'GIT_TERMINAL_PROMPT',
        'LC_ALL',
      ]) {
        delete process.env[k];
      }
      Object.assign(process.env, saved);
    }
  });

  it('lets the caller set GIT_INDEX_FILE on purpose', async () => {
    const repo = await initRepo();
    const env = buildGitEnv({ GIT_INDEX_FILE: '/tmp/x-index' });
    expect(env.GIT_INDEX_FILE).toBe('/tmp/x-index');
    const r = await runGit(['rev-parse', '--git-path', 'index'], { cwd: repo, env: { GIT_INDEX_FILE: '/tmp/x-index' } });
    expect(r.stdout.toString().trim()).toBe('/tmp/x-index');
  });
});

describe('spawnGit (streaming)', () => {
  it('talks to a long-lived process through stdin/stdout', async () => {
    const repo = await initRepo();
    const head = await commitFiles(repo, { 'a.txt': 'A\n' });
    const proc = spawnGit(['cat-file', '--batch-check'], { cwd: repo });
    const lines: string[] = [];
    let buf = '';
    const gotTwo = new Promise<void>((resolvePromise) => {
      proc.stdout.on('data', (c: Buffer) => {
        buf += c.toString();
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        lines.push(...parts);
        if (lines.length >= 2) resolvePromise();
      });
    });
    await proc.write(`${head}\n`);
    await proc.write('HEAD:missing.txt\n');
    await gotTwo;
    proc.stdin.end();
    const { code } = await proc.exited;
    expect(code).toBe(0);
    expect(lines[0]).toMatch(new RegExp(`^${head} commit \\d+$`));
    expect(lines[1]).toBe('HEAD:missing.txt missing');
  });

  it('rejects `exited` with GitError when the process fails, and write() fails after exit', async () => {
    const repo = await initRepo();
    const proc = spawnGit(['fast-import', '--quiet', '--done'], { cwd: repo });
    proc.stdout.resume();
    await proc.write('this is not a fast-import command\n');
    const err = await proc.exited.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).exitCode).not.toBe(0);
    // A git failure (exit 3) with what git said, not a plain Error (exit 70).
    await expect(proc.write('more\n')).rejects.toThrow(GitError);
    await expect(proc.write('more\n')).rejects.toThrow(/stopped reading its input before this write .*Unsupported command/);
  });
});

describe('git version', () => {
  it('parses the installed version and accepts it (>= 2.38)', async () => {
    const v = await gitVersion();
    expect(v.major).toBeGreaterThanOrEqual(2);
    expect(v.major > 2 || v.minor >= 38).toBe(true);
    await expect(assertGitVersion()).resolves.toEqual(v);
    expect(await gitVersion()).toBe(v); // cached
  });

  it('parses vendor suffixes', () => {
    expect(parseGitVersion('git version 2.39.3 (Apple Git-145)\n')).toMatchObject({ major: 2, minor: 39, patch: 3 });
    expect(parseGitVersion('git version 2.41.0.windows.1')).toMatchObject({ major: 2, minor: 41, patch: 0 });
    expect(() => parseGitVersion('hello')).toThrow(/cannot parse/);
  });

  it('refuses a git older than 2.38 with a clear message', () => {
    let err: unknown;
    try {
      checkGitVersion(parseGitVersion('git version 2.30.1'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GitVersionError);
    expect((err as Error).message).toMatch(/^agentv-results needs git >= 2\.38 \(found 2\.30\.1\): merge-tree --write-tree/);
    expect(() => checkGitVersion(parseGitVersion('git version 2.38.0'))).not.toThrow();
    expect(() => checkGitVersion(parseGitVersion('git version 3.0.0'))).not.toThrow();
  });
});
