/**
 * Hostile inputs and faults, round two (issue 30): the holes an independent trial found after
 * round one. Each case runs the built CLI on real files, real repositories and real bare remotes.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyPush, parsePushPorcelain } from '../src/git/push.js';
import { git, isolateGitForSuite, makeTempDir, startGitDaemon } from './helpers/git-fixtures.js';
import { HOSTILE_ATTEMPT, HOSTILE_ROW, hostileRuns } from './helpers/hostile-run.js';
import { RESULTS_REF, cli, makeRunWorkspace, makeUserRepo, tip } from './publish-helpers.js';

isolateGitForSuite();

const CANARY = 'CANARY-round-two-41c7';
const ATTEMPT = HOSTILE_ATTEMPT;
let outside = '';

/** A fresh exported run in its own folder, and files outside it holding the canary. */
const runs = hostileRuns('agentv-round2', async (root) => {
  outside = root;
  await writeFile(join(root, 'passwd'), `root:x:0:0:${CANARY}:/root:/bin/sh\ndaemon:x:1:1:${CANARY}\n`);
  // Valid result rows outside the run: exporting them through a link must not succeed either.
  await writeFile(join(root, 'valid.jsonl'), JSON.stringify({ ...HOSTILE_ROW, answer: CANARY }) + '\n');
});
const freshRun = () => runs.fresh();

const leaked = (r: { stdout: string; stderr: string }) => (r.stdout + r.stderr).includes(CANARY);

describe('a symbolic link as the run index (item 2)', () => {
  for (const target of ['passwd', 'valid.jsonl']) {
    const cases: [string, (dir: string, out: string) => string[]][] = [
      ['export --skip-invalid', (dir, out) => ['export', dir, '--out', out, '--skip-invalid']],
      ['export', (dir, out) => ['export', dir, '--out', out]],
      ['export of index.jsonl', (dir, out) => ['export', join(dir, 'index.jsonl'), '--out', out]],
      ['export --dry-run', (dir, out) => ['export', dir, '--out', out, '--dry-run']],
      ['compare', (dir) => ['compare', dir, dir]],
      ['trend', (dir) => ['trend', dir]],
      ['show', (dir) => ['show', dir]],
      ['validate', (dir) => ['validate', dir]],
    ];
    for (const [name, args] of cases) {
      it(`${name} refuses an index.jsonl linked to ${target} outside the run (exit 2), quoting none of its bytes`, async () => {
        const dir = await freshRun();
        await unlink(join(dir, 'index.jsonl'));
        await symlink(join(outside, target), join(dir, 'index.jsonl'));
        const out = join(dir, '..', `o-${Math.random().toString(36).slice(2, 8)}`);
        const r = await cli(args(dir, out), dir);
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.stderr).toMatch(/index\.jsonl resolves outside the run directory/);
        expect(leaked(r)).toBe(false);
      });
    }
  }

  it("AgentV's .internal/index.jsonl linked out of the run is refused the same way", async () => {
    const dir = await freshRun();
    execFileSync('mkdir', ['-p', join(dir, '.internal')]);
    await unlink(join(dir, 'index.jsonl'));
    await symlink(join(outside, 'valid.jsonl'), join(dir, '.internal', 'index.jsonl'));
    const r = await cli(['export', dir, '--out', join(dir, '..', 'oi'), '--skip-invalid'], dir);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/\.internal\/index\.jsonl resolves outside the run directory/);
    expect(leaked(r)).toBe(false);
  });

  it('a summary.json linked out of the run does not lend the export its run id', async () => {
    const dir = await freshRun();
    await writeFile(join(outside, 'summary.json'), JSON.stringify({ run_id: CANARY, experiment: CANARY }));
    await unlink(join(dir, 'summary.json'));
    await symlink(join(outside, 'summary.json'), join(dir, 'summary.json'));
    const r = await cli(['export', dir, '--out', join(dir, '..', 'os'), '--dry-run', '--json'], dir);
    expect(leaked(r)).toBe(false);
  });
});

describe('a named pipe or device as input never blocks (item 6)', () => {
  for (const [name, args] of [
    ['export', (f: string, d: string) => ['export', f, '--out', join(d, 'o')]],
    ['compare', (f: string) => ['compare', f, f]],
    ['trend', (f: string) => ['trend', f]],
  ] as const) {
    it(`${name} refuses a FIFO nothing writes to, up front (exit 2)`, async () => {
      const d = await makeTempDir('agentv-fifo');
      const fifo = join(d, 'results.jsonl');
      execFileSync('mkfifo', [fifo]);
      const r = await cli(args(fifo, d), d, { timeoutMs: 20_000 });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.stderr).toMatch(/is a named pipe, not a regular file/);
    });
  }

  it('a device is refused before it is read', async () => {
    const d = await makeTempDir('agentv-dev');
    const r = await cli(['export', '/dev/zero', '--out', join(d, 'o')], d, { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\/dev\/zero: is a device/);
    const c = await cli(['compare', '/dev/zero', '/dev/null'], d, { timeoutMs: 20_000 });
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/is a device/);
  });
});

describe('a ref lock left on the remote (item 3)', () => {
  it('classifies git\'s "Unable to create ....lock: File exists" as ref-locked, not a lost race', () => {
    const stdout = [
      'To ../remote.git',
      '!\trefs/heads/agentv/artifacts/v1:refs/heads/agentv/artifacts/v1\t[remote rejected] (atomic transaction failed)',
      '!\trefs/heads/agentv/results/v1:refs/heads/agentv/results/v1\t[remote rejected] (atomic transaction failed)',
      'Done',
    ].join('\n');
    const stderr =
      "remote: error: cannot lock ref 'refs/heads/agentv/results/v1': Unable to create '/srv/r.git/./refs/heads/agentv/results/v1.lock': File exists.\n";
    const refs = [...parsePushPorcelain(stdout).values()];
    expect(classifyPush(1, true, refs, stderr)).toBe('ref-locked');
    // A genuine race still reads as one.
    const race = "remote: error: cannot lock ref 'refs/heads/agentv/results/v1': is at 1111 but expected 2222\n";
    expect(classifyPush(1, true, refs, race)).toBe('non-fast-forward');
  });

  for (const transport of ['path', 'git daemon'] as const) {
    it(`publish --push over ${transport} names the lock and what to do, without 16 race retries; sync lands once it is gone`, async () => {
      const user = await makeUserRepo();
      let daemon: Awaited<ReturnType<typeof startGitDaemon>> | null = null;
      try {
        if (transport === 'git daemon') {
          daemon = await startGitDaemon(join(user.remote, '..'));
          await git(user.work, ['remote', 'set-url', 'origin', daemon.url('remote.git')]);
        }
        const first = await makeRunWorkspace({ minute: 1 });
        const p1 = await cli(['publish', first.dir, '--push'], user.work);
        expect(p1.code, p1.stderr).toBe(0);
        const lock = join(user.remote, 'refs/heads/agentv/results/v1.lock');
        await mkdir(join(lock, '..'), { recursive: true });
        await writeFile(lock, '');
        const second = await makeRunWorkspace({ minute: 2, seed: 9 });
        const p2 = await cli(['publish', second.dir, '--push', '--json'], user.work);
        expect(p2.code, p2.stderr).toBe(0);
        const push = (JSON.parse(p2.stdout) as { push: { classification: string; attempts: number; landed: boolean; message: string } }).push;
        expect(push.classification).toBe('ref-locked');
        expect(push.landed).toBe(false);
        expect(push.attempts).toBeLessThanOrEqual(3);
        expect(push.message).toMatch(/stale ref lock .*refs\/heads\/agentv\/results\/v1\.lock/);
        expect(push.message).not.toMatch(/lost races/);
        const req = await cli(['publish', second.dir, '--require-push'], user.work);
        expect(req.code).toBe(3);
        expect(req.stderr).toMatch(/stale ref lock/);
        await rm(lock);
        const s = await cli(['sync'], user.work);
        expect(s.code, s.stdout + s.stderr).toBe(0);
        expect(await git(user.remote, ['rev-parse', RESULTS_REF])).toBe(await tip(user.work, RESULTS_REF));
      } finally {
        await daemon?.stop();
      }
    }, 120_000);
  }
});

describe('publish runs the validation validate runs (item 4; issue 24 item 3)', () => {
  const editRow = async (dir: string, edit: (row: Record<string, unknown>) => void) => {
    const idx = join(dir, 'index.jsonl');
    const row = JSON.parse((await readFile(idx, 'utf8')).trim()) as Record<string, unknown>;
    edit(row);
    await writeFile(idx, JSON.stringify(row) + '\n');
  };

  it('refuses a row whose answer_path names a missing file (exit 2, nothing committed); --allow-invalid publishes it', async () => {
    const user = await makeUserRepo();
    const dir = await freshRun();
    await unlink(join(dir, `${ATTEMPT}/outputs/answer.md`));
    const v = await cli(['validate', dir], dir);
    expect(v.code).toBe(1);
    const r = await cli(['publish', dir], user.work);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/refusing to publish a run `validate` rejects: .*answer_path .*answer\.md does not exist/);
    expect(r.stderr).toMatch(/--allow-invalid/);
    expect(await tip(user.work, RESULTS_REF)).toBeNull();
    const forced = await cli(['publish', dir, '--allow-invalid'], user.work);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await tip(user.work, RESULTS_REF)).not.toBeNull();
  });

  for (const [field, value] of [
    ['summary_path', '../../../../etc/passwd'],
    ['summary_path', '/etc/passwd'],
    ['stdout_path', '../outside.txt'],
    ['test_dir', 's/.git'],
  ] as const) {
    it(`refuses ${field}=${JSON.stringify(value)} even with --allow-invalid, committing nothing`, async () => {
      const user = await makeUserRepo();
      const dir = await freshRun();
      await editRow(dir, (row) => {
        row[field] = value;
      });
      for (const args of [
        ['publish', dir],
        ['publish', dir, '--allow-invalid'],
      ]) {
        const r = await cli(args, user.work);
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.stderr).toContain(field);
        expect(r.stderr).toMatch(/escapes the run directory/);
        expect(await tip(user.work, RESULTS_REF)).toBeNull();
      }
      const v = await cli(['validate', dir], dir);
      expect(v.code).toBe(1);
      expect(v.stdout + v.stderr).toContain(field);
    });
  }

  it("validate reports a deleted test summary.json (the file its row's summary_path names)", async () => {
    const dir = await freshRun();
    await unlink(join(dir, `${ATTEMPT}/summary.json`));
    const v = await cli(['validate', dir], dir);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toMatch(/summary_path .*summary\.json does not exist/);
  });
});

describe('our branches are ours alone (item 1)', () => {
  const setup = async (config: string | null) => {
    const user = await makeUserRepo();
    // Another branch checked out, as in the trial: main is not protected by being checked out.
    await git(user.work, ['checkout', '-q', '-b', 'feature']);
    await git(user.work, ['branch', '-f', 'release', 'main']);
    await git(user.work, ['push', '-q', 'origin', 'main', 'release']);
    if (config !== null) {
      await mkdir(join(user.work, '.agentv'), { recursive: true });
      await writeFile(join(user.work, '.agentv', 'config.yaml'), config);
    }
    const heads = async () => [
      await git(user.work, ['for-each-ref', '--format=%(refname) %(objectname)']),
      await git(user.remote, ['for-each-ref', '--format=%(refname) %(objectname)']),
    ];
    return { user, heads };
  };

  for (const [name, config, env, setting] of [
    ['AGENTV_RESULTS_BRANCH=main', null, { AGENTV_RESULTS_BRANCH: 'main' }, 'results.branch'],
    ['results.branch: main', 'results:\n  branch: main\n', {}, 'results.branch'],
    ['results.artifacts_branch: main', 'results:\n  artifacts_branch: main\n', {}, 'results.artifacts_branch'],
    ['results.branch: release, allowed outside agentv/', 'results:\n  branch: release\n  allow_branch_outside_agentv: true\n', {}, 'results.branch'],
    ['results.branch: main, allowed outside agentv/', 'results:\n  branch: main\n  allow_branch_outside_agentv: true\n', {}, 'results.branch'],
    ['results.branch: agentv/mine, a user branch in our namespace', 'results:\n  branch: agentv/mine\n', {}, 'results.branch'],
  ] as const) {
    it(`${name}: publish --push refuses (exit 2, naming the setting); no ref moves here or on the remote`, async () => {
      const { user, heads } = await setup(config);
      await git(user.work, ['branch', 'agentv/mine', 'main']);
      const before = await heads();
      const run = await makeRunWorkspace();
      for (const args of [['publish', run.dir, '--push'], ['list'], ['sync']]) {
        const r = await cli(args, user.work, { env });
        expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(setting);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
      expect(await heads()).toEqual(before);
    });
  }

  it("a branch known only as the remote's tracking ref, with a history of its own, is refused too", async () => {
    const { user, heads } = await setup('results:\n  branch: agentv/shared\n');
    await git(user.work, ['push', '-q', 'origin', 'main:refs/heads/agentv/shared']);
    await git(user.work, ['fetch', '-q', 'origin']);
    const before = await heads();
    const r = await cli(['publish', (await makeRunWorkspace()).dir, '--push'], user.work);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/origin\/agentv\/shared starts at .* not at AgentV's results genesis/);
    expect(await heads()).toEqual(before);
  });

  it('a new name outside agentv/, allowed in config, is published to (and then stays ours)', async () => {
    const { user } = await setup('results:\n  branch: results-only\n  artifacts_branch: results-payloads\n  allow_branch_outside_agentv: true\n');
    const run = await makeRunWorkspace();
    const r = await cli(['publish', run.dir, '--push'], user.work);
    expect(r.code, r.stderr).toBe(0);
    const again = await cli(['publish', (await makeRunWorkspace({ minute: 3, seed: 5 })).dir, '--push'], user.work);
    expect(again.code, again.stderr).toBe(0);
    expect(await git(user.remote, ['rev-parse', 'refs/heads/results-only'])).toBe(await tip(user.work, 'refs/heads/results-only'));
  });
});

describe('hostile run directories make report, show and export exit non-zero (item 5)', () => {
  const editRow = async (dir: string, field: string, value: string) => {
    const idx = join(dir, 'index.jsonl');
    const row = JSON.parse((await readFile(idx, 'utf8')).trim()) as Record<string, unknown>;
    row[field] = value;
    await writeFile(idx, JSON.stringify(row) + '\n');
  };
  const setups: [string, (dir: string) => Promise<void>][] = [
    ['answer_path ../../x', (d) => editRow(d, 'answer_path', '../../passwd')],
    ['answer_path /etc/passwd', (d) => editRow(d, 'answer_path', '/etc/passwd')],
    ['grading_path into .git', (d) => editRow(d, 'grading_path', 's/.git/config')],
    ['transcript_path with a control character', (d) => editRow(d, 'transcript_path', 's/a\u0001b.json')],
    [
      'answer.md linked out of the run',
      async (d) => {
        await unlink(join(d, `${ATTEMPT}/outputs/answer.md`));
        await symlink(join(outside, 'passwd'), join(d, `${ATTEMPT}/outputs/answer.md`));
      },
    ],
    [
      'outputs/ linked to a folder outside',
      async (d) => {
        await rm(join(d, `${ATTEMPT}/outputs`), { recursive: true });
        await symlink(outside, join(d, `${ATTEMPT}/outputs`));
      },
    ],
    [
      'a FIFO as answer.md',
      async (d) => {
        await unlink(join(d, `${ATTEMPT}/outputs/answer.md`));
        execFileSync('mkfifo', [join(d, `${ATTEMPT}/outputs/answer.md`)]);
      },
    ],
  ];
  for (const [name, setup] of setups) {
    it(`${name}: report, show and export refuse it (exit 2), one line per problem, none of its bytes`, async () => {
      const dir = await freshRun();
      await setup(dir);
      const base = join(dir, '..', `out-${Math.random().toString(36).slice(2, 8)}`);
      for (const args of [
        ['report', dir, '--out', `${base}.html`],
        ['show', dir],
        ['export', dir, '--out', base],
      ]) {
        const r = await cli(args, dir, { timeoutMs: 20_000 });
        expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
        expect(leaked(r), args[0]).toBe(false);
        expect(r.stdout, args[0]).not.toMatch(/etc\/passwd/);
      }
      // --skip-unsafe reads the rest: a warning per problem, and nothing shown as the run's content.
      const s = await cli(['show', dir, '--skip-unsafe'], dir, { timeoutMs: 20_000 });
      expect(s.code, s.stderr).toBe(0);
      expect(s.stderr).toMatch(/warning: unsafe, not read: /);
      expect(s.stdout).not.toMatch(/passwd|\.git\/config/);
      expect(leaked(s)).toBe(false);
      const r = await cli(['report', dir, '--out', `${base}-skip.html`, '--skip-unsafe'], dir, { timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(await readFile(`${base}-skip.html`, 'utf8')).not.toContain(CANARY);
    });
  }
});
