/**
 * Hostile inputs, round three (issue 40, items 1, 2, 4, 7): nothing hangs. Every verb is pointed at
 * each kind of file that could block or never end — a named pipe nothing writes to, a link to
 * /dev/zero, a socket, a file over its kind's bound — in each slot it reads (the config file,
 * `--config`, a run's index, a results file, the merge driver's arguments, the autoresearch log,
 * `report --out`): each must exit 2 with a message naming the file.
 *
 * Where a case could block — a named pipe (an open without O_NONBLOCK waits for a writer forever),
 * a link to /dev/zero (a read never ends), `report --out` onto a pipe, a server — the CLI runs as a
 * real process killed (by pid) after a bound, so a hang fails the case instead of the suite. A
 * socket (open(2) fails with ENXIO whatever the flags) and a sparse file over its bound (a read
 * ends) cannot block an open or a read, so those kinds run each verb in the test process (runCli,
 * the same built commands; 0.85 CPU-s a process saved) — except `serve`, which would keep
 * listening in the test process if it stopped refusing. The ref-name cases read no hostile file.
 * Where every verb reaches the refusal through one function whose open cannot block (O_NONBLOCK,
 * then fstat before a byte is read: util/safe-open.ts), one verb per blocking kind runs as a
 * process and the others run here:
 *   - the config file: every verb reads it only through loadResultsConfig (repo/config.ts, via
 *     resolveTarget), first thing — `list` is the process (and `serve`, which stays one);
 *   - the merge driver: both kinds read base, ours and theirs through runMergeDriver's one
 *     Promise.all before the kind matters — `jsonl` is the process per slot, `json` runs here.
 * The other slots (a run's index, a results file, the autoresearch log, report --out) are read by
 * a different function per verb: every verb stays a process for the kinds that could block.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branchNameProblem } from '../src/git/ref-format.js';
import { CLI_PATH, startServing } from './helpers/cli.js';
import { gitEnvForTests, isolateGitForSuite, makeTempDir, type UserRepoFixture } from './helpers/git-fixtures.js';
import { cli, cliProcess, makeRunWorkspace, makeUserRepo, RESULTS_REF, tip, type RunWorkspace } from './publish-helpers.js';

isolateGitForSuite();

/** Killed after this long: a case that blocks comes back with a signal's code, never 2. */
const BOUND = 30_000;
const run = (args: string[], cwd: string, env: Record<string, string | undefined> = {}) => cliProcess(args, cwd, { timeoutMs: BOUND, env });
/** The same command in the test process: for inputs no open or read can block on (see above). */
const runHere = (args: string[], cwd: string, env: Record<string, string | undefined> = {}) => cli(args, cwd, { env });
/** Kinds an open or a read could block on: their cases run the CLI as a process. */
const CAN_BLOCK = new Set(['a named pipe', 'a link to /dev/zero']);
const runFor = (kind: string) => (CAN_BLOCK.has(kind) ? run : runHere);

const sockets: Server[] = [];
afterAll(async () => {
  for (const s of sockets) await new Promise((r) => s.close(r));
});

/** Makes `path` one hostile kind of file; returns what the message must say of it. */
const KINDS: Record<string, (path: string, huge: number) => Promise<RegExp>> = {
  'a named pipe': async (path) => {
    execFileSync('mkfifo', [path]);
    return /is a named pipe, not a regular file/;
  },
  'a link to /dev/zero': async (path) => {
    await symlink('/dev/zero', path);
    return /is a character device, not a regular file/;
  },
  'a socket': async (path) => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(path, r));
    sockets.push(server);
    return /is a socket( or device)?, not a regular file/;
  },
  'a file over its bound': async (path, huge) => {
    await writeFile(path, '');
    await truncate(path, huge); // sparse: no disk used
    return /over the \d+-byte limit/;
  },
};

const MiB = 1024 * 1024;
let user: UserRepoFixture;
let ws: RunWorkspace;

beforeAll(async () => {
  user = await makeUserRepo();
  ws = await makeRunWorkspace({ rows: 2, experiment: 'round3' });
});

describe('the config file (item 1): .agentv/config.yaml and --config', () => {
  const verbs: [string, () => string[]][] = [
    ['list', () => ['list']],
    ['status', () => ['status']],
    ['publish', () => ['publish', ws.dir]],
    ['sync', () => ['sync']],
    ['pull', () => ['pull', ws.runId, '--out', join(user.work, '..', 'pulled')]],
    ['wip list', () => ['wip', 'list']],
    ['daemon --once', () => ['daemon', '--once']],
    ['serve', () => ['serve', '--port', '0']],
  ];
  for (const [kind, make] of Object.entries(KINDS)) {
    it(`${kind} at .agentv/config.yaml: every verb exits 2 naming it, nothing blocks`, async () => {
      const repo = join(await makeTempDir('agentv-r3-config'), 'repo');
      execFileSync('git', ['clone', '-q', user.work, repo], { env: { ...process.env, ...gitEnvForTests() } });
      await mkdir(join(repo, '.agentv'), { recursive: true });
      const file = join(repo, '.agentv', 'config.yaml');
      const says = await make(file, 2 * MiB);
      const before = await tip(repo, RESULTS_REF);
      for (const [name, args] of verbs) {
        const r = await (name === 'serve' || (name === 'list' && CAN_BLOCK.has(kind)) ? run : runHere)(args(), repo);
        expect(r.code, `${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr, name).toContain(file);
        expect(r.stderr, name).toMatch(says);
      }
      expect(await tip(repo, RESULTS_REF)).toBe(before);
    });

    it(`${kind} given as --config exits 2 naming it`, async () => {
      const d = await makeTempDir('agentv-r3-flag');
      const file = join(d, 'config.yaml');
      const says = await make(file, 2 * MiB);
      const r = await runFor(kind)(['list', '--config', file], user.work);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--config ${file}`);
      expect(r.stderr).toMatch(says);
    });
  }

  it('--config /dev/zero itself is refused before a byte is read', async () => {
    const r = await run(['status', '--config', '/dev/zero'], user.work);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--config \/dev\/zero is a character device/);
  });
});

describe("a run's index and a results file (item 1)", () => {
  const readers: [string, (dir: string, out: string) => string[]][] = [
    ['show', (d) => ['show', d]],
    ['report', (d, o) => ['report', d, '--out', join(o, 'r.html')]],
    ['validate', (d) => ['validate', d]],
    ['summary', (d) => ['summary', d]],
    ['failures', (d) => ['failures', d]],
    ['compare', (d) => ['compare', d, d]],
    ['trend', (d) => ['trend', d]],
  ];
  for (const [kind, make] of Object.entries(KINDS)) {
    it(`${kind} as the run's index.jsonl: every reader exits 2 naming it`, async () => {
      const root = await makeTempDir('agentv-r3-index');
      const dir = join(root, 'run');
      execFileSync('cp', ['-r', ws.dir, dir]);
      await rm(join(dir, 'index.jsonl'));
      const says = await make(join(dir, 'index.jsonl'), 1100 * MiB);
      expect(says).toBeInstanceOf(RegExp);
      for (const [name, args] of readers) {
        const r = await runFor(kind)(args(dir, root), root);
        expect(r.code, `${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr, name).toContain('index.jsonl');
        // The run's own path check words it (a link to /dev/zero leads out of the run); the opener
        // catches what changes after that check.
        expect(r.stderr, name).toMatch(kind === 'a file over its bound' ? says : /named pipe|socket|device|outside the run/);
      }
    });
  }

  for (const kind of ['a named pipe', 'a link to /dev/zero', 'a socket']) {
    it(`${kind} given as the results file: export, validate, compare and trend exit 2 naming it`, async () => {
      const root = await makeTempDir('agentv-r3-input');
      const file = join(root, 'results.jsonl');
      await KINDS[kind]!(file, 0);
      for (const args of [
        ['export', file, '--out', join(root, 'o')],
        ['validate', file],
        ['compare', file, file],
        ['trend', file],
      ]) {
        const r = await runFor(kind)(args, root);
        expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2);
        expect(r.stderr, args[0]).toContain('results.jsonl');
      }
    });
  }
});

describe('merge driver arguments, the autoresearch log, report --out (item 1)', () => {
  for (const [kind, make] of Object.entries(KINDS)) {
    it(`merge-driver jsonl|json with ${kind} as base, ours or theirs exits 2 naming it`, async () => {
      const d = await makeTempDir('agentv-r3-merge');
      const files = { base: join(d, 'base'), ours: join(d, 'ours'), theirs: join(d, 'theirs') };
      for (const slot of ['base', 'ours', 'theirs'] as const) {
        for (const f of Object.values(files)) await rm(f, { force: true });
        for (const f of Object.values(files)) await writeFile(f, '');
        await rm(files[slot]);
        const says = await make(files[slot], 600 * MiB);
        for (const driver of ['jsonl', 'json']) {
          const r = await (driver === 'jsonl' ? runFor(kind) : runHere)(['merge-driver', driver, files.base, files.ours, files.theirs, 'x'], d);
          expect(r.code, `${driver} ${slot}: ${r.stderr}`).toBe(2);
          expect(r.stderr).toContain(files[slot]);
          // The merge driver follows no link at all (round four): a link is refused as a link.
          expect(r.stderr).toMatch(kind === 'a link to /dev/zero' ? /is a symbolic link, not a regular file/ : says);
        }
      }
    });

    it(`autoresearch trajectory and record refuse ${kind} as iterations.jsonl (exit 2 naming it)`, async () => {
      const d = await makeTempDir('agentv-r3-auto');
      const exp = join(d, 'exp');
      await mkdir(join(exp, '_autoresearch'), { recursive: true });
      const log = join(exp, '_autoresearch', 'iterations.jsonl');
      const says = await make(log, 100 * MiB);
      const t = await runFor(kind)(['autoresearch', 'trajectory', '--experiment', 'x', '--experiment-dir', exp], d);
      expect(t.code, t.stderr).toBe(2);
      expect(t.stderr).toContain(log);
      expect(t.stderr).toMatch(says);
      const r = await runFor(kind)(['autoresearch', 'record', ws.dir, '--experiment', 'x', '--experiment-dir', exp], d);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(log);
    });
  }

  it('report --out onto a named pipe nothing reads exits 2 naming it, instead of blocking', async () => {
    const d = await makeTempDir('agentv-r3-out');
    const fifo = join(d, 'page.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await run(['report', ws.dir, '--out', fifo], d);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--out ${fifo} is a FIFO (named pipe) with no reader`);
  });
});

describe('ref-name settings are checked where they are read (item 2)', () => {
  it("git's rules: what check-ref-format refuses, and what it takes", () => {
    for (const bad of [
      'agentv/results/v1.lock',
      'agentv/.hidden',
      'agentv/x.',
      'agentv/x?*',
      'a..b',
      'a//b',
      '/a',
      'a/',
      'a b',
      'a~1',
      'a^',
      'a:b',
      'a[b',
      'a\\b',
      '@',
      'a@{1}',
      '-a',
      '',
    ])
      expect(branchNameProblem(bad), bad).not.toBeNull();
    for (const good of ['agentv/results/v1', 'agentv/results-v2', 'agentv/a.b/c_d', 'agentv/x@y', 'agentv/lock.x'])
      expect(branchNameProblem(good), good).toBeNull();
  });

  for (const name of ['agentv/results/v1.lock', 'agentv/.hidden', 'agentv/x.']) {
    it(`${name}: exit 2 naming the setting and where it came from, for the file, a project and the environment`, async () => {
      const repo = join(await makeTempDir('agentv-r3-ref'), 'repo');
      execFileSync('git', ['clone', '-q', user.work, repo], { env: { ...process.env, ...gitEnvForTests() } });
      await mkdir(join(repo, '.agentv'), { recursive: true });
      const file = join(repo, '.agentv', 'config.yaml');
      const before = await tip(repo, RESULTS_REF);
      await writeFile(file, `results:\n  branch: ${name}\n`);
      let r = await runHere(['publish', ws.dir], repo);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}: results.branch: ${JSON.stringify(name)} is not a git branch name`);
      expect(r.stderr).not.toMatch(/fatal:/);
      await writeFile(file, `results:\n  artifacts_branch: ${name}\n`);
      r = await runHere(['publish', ws.dir], repo);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}: results.artifacts_branch: ${JSON.stringify(name)} is not a git branch name`);
      await writeFile(file, `projects:\n  - id: web\n    path: .\n    results:\n      branch: ${name}\n`);
      r = await runHere(['list', '--project', 'web'], repo);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}: projects[id=web].results.branch: ${JSON.stringify(name)} is not`);
      await rm(file);
      r = await runHere(['publish', ws.dir], repo, { AGENTV_RESULTS_BRANCH: name });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`results.branch from the environment variable AGENTV_RESULTS_BRANCH: ${JSON.stringify(name)} is not`);
      expect(await tip(repo, RESULTS_REF)).toBe(before);
    });
  }
});

describe('the server never waits on one file (item 4)', () => {
  it('six requests on a named-pipe log are each answered; /api/runs answers; SIGTERM stops the server', async () => {
    const repo = join(await makeTempDir('agentv-r3-serve'), 'repo');
    execFileSync('git', ['clone', '-q', user.work, repo], { env: { ...process.env, ...gitEnvForTests() } });
    expect((await cli(['publish', ws.dir], repo)).code).toBe(0);
    const logDir = join(repo, '.agentv', 'results', 'runs', 'exp', '_autoresearch');
    await mkdir(logDir, { recursive: true });
    execFileSync('mkfifo', [join(logDir, 'iterations.jsonl')]);
    const server = await startServing([process.execPath, CLI_PATH, 'serve', '--port', '0'], {
      cwd: repo,
      env: { ...process.env, ...gitEnvForTests(), NO_COLOR: '1' },
    });
    let stopped = false;
    try {
      const held = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fetch(`${server.url}/api/autoresearch/${i % 2 ? 'exp' : 'exp/trajectory.html'}`, { signal: AbortSignal.timeout(BOUND) }),
        ),
      );
      for (const res of held) {
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: string }).error).toMatch(/iterations\.jsonl is a named pipe/);
      }
      const runs = await fetch(`${server.url}/api/runs`, { signal: AbortSignal.timeout(BOUND) });
      expect(runs.status).toBe(200);
      const body = (await runs.json()) as { runs: { run_id: string }[] };
      expect(body.runs.map((r) => r.run_id)).toContain(ws.runId);
      const list = await fetch(`${server.url}/api/autoresearch`, { signal: AbortSignal.timeout(BOUND) });
      expect(list.status).toBe(200);
      // SIGTERM: the server stops (a bounded wait for its exit, not a timing assertion).
      const code = await Promise.race([server.stop(), new Promise<'still running'>((r) => setTimeout(() => r('still running'), BOUND).unref())]);
      stopped = code !== 'still running';
      expect(code).not.toBe('still running');
    } finally {
      if (!stopped) await server.stop();
    }
  });
});

describe('one key style, one exit code (item 7)', () => {
  it("the HTTP API's push object and /api/runs are snake_case, as the CLI's --json", async () => {
    const repo = join(await makeTempDir('agentv-r3-keys'), 'repo');
    execFileSync('git', ['clone', '-q', user.work, repo], { env: { ...process.env, ...gitEnvForTests() } });
    expect((await cli(['publish', ws.dir], repo)).code).toBe(0);
    const server = await startServing([process.execPath, CLI_PATH, 'serve', '--port', '0'], {
      cwd: repo,
      env: { ...process.env, ...gitEnvForTests(), NO_COLOR: '1' },
    });
    try {
      const camel = (text: string) => [...text.matchAll(/"([a-z]+[A-Z][A-Za-z]*)":/g)].map((m) => m[1]);
      const runs = await (await fetch(`${server.url}/api/runs`)).text();
      expect(runs).toContain('"remote_seen_at"');
      expect(camel(runs)).toEqual([]);
      const token = /x-agentv-results-token: (\S+)/.exec(server.stderr())![1]!;
      const detail = (await (await fetch(`${server.url}/api/runs/${encodeURIComponent(ws.runId)}`)).json()) as { tags: { tag_revision: string } };
      const res = await fetch(`${server.url}/api/runs/${encodeURIComponent(ws.runId)}/tags`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agentv-results-token': token, origin: server.url },
        body: JSON.stringify({ add: ['round3'], expect_revision: detail.tags.tag_revision }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const answer = JSON.parse(text) as { push: Record<string, unknown> | null };
      expect(answer.push).not.toBeNull();
      expect(Object.keys(answer.push!)).toContain('elapsed_ms');
      expect(camel(JSON.stringify(answer.push))).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
