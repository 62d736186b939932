/**
 * The user keeps working in the same checkout: every command leaves HEAD, the index bytes, the
 * worktree, `git status`, the stash, their branches and their config exactly as they were, and
 * `git fsck --strict` stays clean. Then each bad situation of the issue, through the CLI, with a
 * clear message, the right exit code and nothing lost.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runGit } from '../src/git/index.js';
import { git, makeTempDir, isolateGitForSuite } from './helpers/git-fixtures.js';
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
  tip,
} from './publish-helpers.js';

isolateGitForSuite();

describe('every command leaves the checkout alone', () => {
  it('publish, republish, list, status, pull — with a dirty worktree, a staged index and a stash', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 4 });
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const commands: string[][] = [
      ['publish', run.dir, '--push'],
      ['publish', run.dir, '--push'],
      ['list'],
      ['list', '--json', '--fetch'],
      ['status'],
      ['status', '--fetch', '--json'],
      ['pull', run.runId, '--with-artifacts', '--out', out],
    ];
    for (const args of commands) {
      const r = await expectUntouched(user.work, () => cli(args, user.work));
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      await expectFsckClean(user.work);
    }
    // The republish made no commit; the remote has exactly what we have; pointers resolve.
    expect(await commitCount(user.work, RESULTS_REF)).toBe(2);
    expect(await commitCount(user.work, ARTIFACTS_REF)).toBe(2);
    expect(await git(user.remote, ['rev-parse', RESULTS_REF])).toBe(await tip(user.work, RESULTS_REF));
    expect(await expectPointersResolve(user.work)).toBeGreaterThan(0);
    await expectFsckClean(user.remote);
    const again = await cli(['publish', run.dir], user.work);
    expect(again.stdout).toMatch(/already published \(no new commit\)/);
  });
});

describe('bad situations', () => {
  it('not a git repository: every command says so and exits 2', async () => {
    const plain = await makeTempDir('agentv-plain');
    const run = await makeRunWorkspace({ rows: 2 });
    for (const args of [['publish', run.dir], ['list'], ['status'], ['pull', run.runId]]) {
      const r = await cli(args, plain);
      expect(r.code, args[0]).toBe(2);
      expect(r.stderr).toMatch(/^agentv-results: not a git repository: .* — run agentv-results inside a git checkout, or set results\.path/);
    }
  });

  it('a refused publish ends the git processes it started early, writes no object and moves no ref, and the next publish lands', async () => {
    const user = await makeUserRepo();
    // Big enough that git is handed files before validation is done with the rows.
    const run = await makeRunWorkspace({ rows: 300 });
    // A row's sidecar gone: validate rejects the run after publish has started packing its files.
    const grading = (await lsTreeOfWorkspace(run.dir)).find((p) => p.endsWith('/grading.json'))!;
    await rm(join(run.dir, grading));
    const objects = await git(user.work, ['count-objects', '-v']);
    const r = await cli(['publish', run.dir], user.work);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/refusing to publish a run `validate` rejects/);
    expect(await tip(user.work, RESULTS_REF)).toBeNull();
    expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
    // Linux: no git process of ours is left running (publish's fast-imports were ended, not leaked).
    expect(ourGitChildren()).toEqual([]);
    expect((await readdir(join(user.work, '.git'))).filter((f) => f.startsWith('fast_import_crash'))).toEqual([]);
    // The files git was handed before the refusal were written where they are thrown away with it.
    expect(await git(user.work, ['count-objects', '-v'])).toBe(objects);
    const fixed = await makeRunWorkspace({ rows: 3, minute: 5 });
    expect((await cli(['publish', fixed.dir], user.work)).code).toBe(0);
    expect(await tip(user.work, RESULTS_REF)).not.toBeNull();
  });

  it('detached HEAD: publishing works and HEAD stays detached where it was', async () => {
    const user = await makeUserRepo('detached');
    expect(await git(user.work, ['symbolic-ref', '-q', 'HEAD'], { okCodes: [1] })).toBe('');
    const run = await makeRunWorkspace({ rows: 2 });
    const r = await expectUntouched(user.work, () => cli(['publish', run.dir, '--push'], user.work));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/pushed to origin/);
    const l = await expectUntouched(user.work, () => cli(['list'], user.work));
    expect(l.stdout).toContain(run.runId);
    await expectFsckClean(user.work);
  });

  it("the results branch checked out in the user's worktree: refused, exit 3, nothing moved", async () => {
    const user = await makeUserRepo('results-checked-out');
    const before = await tip(user.work, RESULTS_REF);
    const run = await makeRunWorkspace({ rows: 2 });
    for (const args of [['publish', run.dir, '--push'], ['list'], ['status'], ['pull', run.runId]]) {
      const r = await expectUntouched(user.work, () => cli(args, user.work));
      expect(r.code, args[0]).toBe(3);
      expect(r.stderr).toMatch(/agentv\/results\/v1 is checked out in a worktree of .* — switch that worktree to another branch first/);
    }
    expect(await tip(user.work, RESULTS_REF)).toBe(before);
    expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
  });

  it('the results branch checked out in a linked worktree: refused the same way', async () => {
    const user = await makeUserRepo('results-in-worktree');
    const run = await makeRunWorkspace({ rows: 2 });
    const r = await expectUntouched(user.work, () => cli(['publish', run.dir], user.work));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/is checked out in a worktree/);
    expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
  });

  it('no remote: the run is committed locally and the message says why it was not pushed; --require-push exits 3', async () => {
    const user = await makeUserRepo('no-remote');
    const run = await makeRunWorkspace({ rows: 2 });
    const r = await expectUntouched(user.work, () => cli(['publish', run.dir, '--push'], user.work));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/not pushed: no remote to push to/);
    expect(await tip(user.work, RESULTS_REF)).not.toBeNull();
    const second = await makeRunWorkspace({ rows: 2, minute: 3, seed: 4 });
    const req = await cli(['publish', second.dir, '--require-push'], user.work);
    expect(req.code).toBe(3);
    expect(req.stderr).toMatch(/no remote to push to.*committed locally and pending/);
    expect((await cli(['list', '--json'], user.work)).stdout).toContain(second.runId);
    await expectFsckClean(user.work);
    expect(await expectPointersResolve(user.work)).toBeGreaterThan(0);
  });

  it('remote unreachable: committed locally, reported pending; --require-push exits 3', async () => {
    const user = await makeUserRepo('remote-url', 'git://127.0.0.1:1/remote.git');
    const run = await makeRunWorkspace({ rows: 2 });
    const r = await expectUntouched(user.work, () => cli(['publish', run.dir, '--push'], user.work));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/not pushed: .*unreachable.*committed locally and pending/);
    const s = JSON.parse((await cli(['status', '--json'], user.work)).stdout) as { pending: boolean };
    expect(s.pending).toBe(true);
    const req = await cli(['publish', run.dir, '--require-push'], user.work);
    expect(req.code).toBe(3);
    expect(req.stderr).toMatch(/unreachable/);
    expect(await commitCount(user.work, RESULTS_REF)).toBe(2);
  });

  it('a run id that would escape the branch root is refused before anything is written (exit 2)', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    const summaryPath = join(run.dir, 'summary.json');
    const { readFile } = await import('node:fs/promises');
    const summary = JSON.parse(await readFile(summaryPath, 'utf8')) as Record<string, unknown>;
    for (const bad of ['../../../outside/2026-01-01T00-00-00-000Z', '../2026-01-01T00-00-00-000Z', 'nightly/..']) {
      await writeFile(summaryPath, JSON.stringify({ ...summary, run_id: bad }));
      const r = await expectUntouched(user.work, () => cli(['publish', run.dir], user.work));
      expect(r.code, bad).toBe(2);
      // validate's check (the summary's run_id disagrees with the rows') refuses it first; with
      // --allow-invalid, the layout check still does.
      expect(r.stderr).toMatch(/refusing to publish a run `validate` rejects: summary\.json: run_id .* differs from the rows'/);
      const forced = await expectUntouched(user.work, () => cli(['publish', run.dir, '--allow-invalid'], user.work));
      expect(forced.code, bad).toBe(2);
      expect(forced.stderr).toMatch(/run id .* (is neither <run_id> nor <experiment>\/<timestamp>|has an unsafe segment).*fix the run id there/);
      expect(await tip(user.work, RESULTS_REF)).toBeNull();
      expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
    }
  });

  it('a payload that is a symlink out of the run is never published', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    const secretDir = await makeTempDir('agentv-secret');
    await writeFile(join(secretDir, 'secret.txt'), 'TOP-SECRET-BYTES\n');
    const attempt = (await lsTreeOfWorkspace(run.dir)).find((p) => p.endsWith('/result.json'))!.replace(/result\.json$/, '');
    await symlink(join(secretDir, 'secret.txt'), join(run.dir, attempt, 'transcript-raw.jsonl'));
    // publish refuses a run holding a link (runs/read/run-files: rather than drop the entry silently),
    // naming the file, before writing anything.
    const r = await expectUntouched(user.work, () => cli(['publish', run.dir], user.work));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`refusing to publish: ${attempt}transcript-raw.jsonl is a symbolic link`);
    expect(await tip(user.work, RESULTS_REF)).toBeNull();
    expect(await tip(user.work, ARTIFACTS_REF)).toBeNull();
    // Not even a loose blob of the secret was written.
    const all = await runGit(['cat-file', '--batch-all-objects', '--batch'], { cwd: user.work });
    expect(all.stdout.toString('latin1')).not.toContain('TOP-SECRET');
  });
});

async function lsTreeOfWorkspace(dir: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else out.push(p);
    }
  };
  await walk('');
  return out.sort();
}

/** The git processes this test process started that still run (Linux /proc; elsewhere none can be seen). */
function ourGitChildren(): string[] {
  if (!existsSync('/proc/self/status')) return [];
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (Number(/^PPid:\s*(\d+)$/m.exec(status)?.[1]) !== process.pid || !/^Name:\s*git/m.test(status)) continue;
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '));
    } catch {
      // gone meanwhile: not running
    }
  }
  return out;
}
