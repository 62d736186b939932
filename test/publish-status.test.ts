/**
 * `status`: every state of our two branches against the remote-tracking refs, "pending" exactly
 * when something local has not reached the remote, sections other features register, and the
 * failure of --fetch reported without hiding what this machine knows.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRepo, resolveRef, updateRef } from '../src/git/index.js';
import { publish } from '../src/publish/publish.js';
import { branchState, redactUrl, registerStatusSection, status, type StatusReport } from '../src/history/status.js';
import { renderStatus, renderValue } from '../src/cli/status.js';
import { git, makeTempDir, isolateGitForSuite } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, cli, expectUntouched, makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

isolateGitForSuite();

async function statusJson(cwd: string, args: string[] = []): Promise<{ code: number; report: StatusReport; stderr: string }> {
  const r = await cli(['status', '--json', ...args], cwd);
  return { code: r.code, report: JSON.parse(r.stdout) as StatusReport, stderr: r.stderr };
}

const states = (report: StatusReport) => report.branches.map((b) => [b.name, b.state, b.ahead, b.behind]);

describe('branchState', () => {
  it('covers every combination', () => {
    expect(branchState(null, null, 0, 0)).toBe('missing');
    expect(branchState('a', null, 0, 0)).toBe('local-only');
    expect(branchState(null, 'b', 0, 0)).toBe('remote-only');
    expect(branchState('a', 'a', 0, 0)).toBe('in-sync');
    expect(branchState('a', 'b', 2, 0)).toBe('ahead');
    expect(branchState('a', 'b', 0, 3)).toBe('behind');
    expect(branchState('a', 'b', 1, 1)).toBe('diverged');
  });

  it('never prints credentials embedded in a remote URL', () => {
    expect(redactUrl('https://user:tok3n@example.com/r.git')).toBe('https://example.com/r.git');
    expect(redactUrl('git@github.com:o/r.git')).toBe('git@github.com:o/r.git');
  });
});

describe('status through a publish, a push and a teammate', () => {
  it('walks missing -> local-only (pending) -> in-sync -> ahead -> diverged -> behind', async () => {
    const user = await makeUserRepo();
    let s = await expectUntouched(user.work, () => statusJson(user.work));
    expect(s.code).toBe(0);
    expect(states(s.report)).toEqual([
      ['agentv/results/v1', 'missing', 0, 0],
      ['agentv/artifacts/v1', 'missing', 0, 0],
    ]);
    expect(s.report.pending).toBe(false);
    expect(s.report.remote).toBe('origin');

    const first = await makeRunWorkspace({ rows: 2 });
    await publish({ run: first.dir, cwd: user.work, push: false });
    s = await statusJson(user.work);
    expect(s.report.branches.map((b) => b.state)).toEqual(['local-only', 'local-only']);
    expect(s.report.pending).toBe(true);
    const human = await cli(['status'], user.work);
    expect(human.stdout).toMatch(/agentv\/results\/v1\s+local only/);
    expect(human.stdout).toMatch(/pending: branches that are not on the remote yet/);

    await publish({ run: first.dir, cwd: user.work, push: true });
    s = await statusJson(user.work);
    expect(s.report.branches.map((b) => b.state)).toEqual(['in-sync', 'in-sync']);
    expect(s.report.pending).toBe(false);
    expect((await cli(['status'], user.work)).stdout).toMatch(/nothing pending/);

    const second = await makeRunWorkspace({ rows: 2, minute: 5, seed: 2 });
    await publish({ run: second.dir, cwd: user.work, push: false });
    s = await statusJson(user.work);
    expect(states(s.report)).toEqual([
      ['agentv/results/v1', 'ahead', 1, 0],
      ['agentv/artifacts/v1', 'ahead', 1, 0],
    ]);
    expect(s.report.pending).toBe(true);
    expect((await cli(['status'], user.work)).stdout).toMatch(/pending: 2 commits waiting to be pushed/);

    // A teammate pushes their own run meanwhile.
    const mate = join(await makeTempDir('agentv-mate'), 'clone');
    await git(user.root, ['clone', '-q', user.remote, mate]);
    await git(mate, ['branch', '-q', 'agentv/results/v1', 'origin/agentv/results/v1']);
    await git(mate, ['branch', '-q', 'agentv/artifacts/v1', 'origin/agentv/artifacts/v1']);
    const theirs = await makeRunWorkspace({ rows: 2, minute: 9, seed: 3, experiment: 'smoke' });
    expect((await publish({ run: theirs.dir, cwd: mate, push: true })).push?.landed).toBe(true);

    // Without --fetch nothing has changed here; with it the branches have diverged.
    expect((await statusJson(user.work)).report.branches[0]!.state).toBe('ahead');
    s = await expectUntouched(user.work, () => statusJson(user.work, ['--fetch']));
    expect(s.code).toBe(0);
    expect(states(s.report)).toEqual([
      ['agentv/results/v1', 'diverged', 1, 1],
      ['agentv/artifacts/v1', 'diverged', 1, 1],
    ]);
    expect(s.report.pending).toBe(true);
    expect(s.report.fetch).toEqual({ ok: true, missing: [] });
    expect((await cli(['status'], user.work)).stdout).toMatch(/diverged \(ahead 1, behind 1\)/);

    // Drop our unpushed commit (test only): now we are simply behind, nothing pending.
    const repo = await openRepo(user.work);
    for (const ref of [RESULTS_REF, ARTIFACTS_REF]) {
      const parent = (await resolveRef(repo, `${ref}^`))!;
      await updateRef(repo, ref, parent, (await resolveRef(repo, ref))!);
    }
    s = await statusJson(user.work);
    expect(states(s.report)).toEqual([
      ['agentv/results/v1', 'behind', 0, 1],
      ['agentv/artifacts/v1', 'behind', 0, 1],
    ]);
    expect(s.report.pending).toBe(false);
  });

  it('remote-only: a clone that only fetched; and a branch the remote dropped loses its stale tracking ref on --fetch', async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    await publish({ run: run.dir, cwd: user.work, push: true });
    const mate = join(await makeTempDir('agentv-mate'), 'clone');
    await git(user.root, ['clone', '-q', user.remote, mate]);
    let s = await statusJson(mate);
    expect(s.report.branches.map((b) => b.state)).toEqual(['remote-only', 'remote-only']);
    expect(s.report.pending).toBe(false);

    // A remote without our branches: the tracking refs left from earlier go away on --fetch.
    const empty = await makeTempDir('agentv-empty');
    await git(empty, ['init', '-q', '--bare', 'r.git']);
    await git(user.work, ['remote', 'set-url', 'origin', join(empty, 'r.git')]);
    s = await statusJson(user.work, ['--fetch']);
    expect(s.code).toBe(0);
    expect(s.report.fetch).toEqual({ ok: true, missing: ['agentv/results/v1', 'agentv/artifacts/v1'] });
    expect(s.report.branches.map((b) => [b.state, b.remote])).toEqual([
      ['local-only', null],
      ['local-only', null],
    ]);
    expect(s.report.pending).toBe(true);
  });

  it('no remote: local-only is not "pending" (there is nowhere to push), and the output says so', async () => {
    const user = await makeUserRepo('no-remote');
    const run = await makeRunWorkspace({ rows: 2 });
    await publish({ run: run.dir, cwd: user.work, push: false });
    const s = await statusJson(user.work);
    expect(s.report.remote).toBeNull();
    expect(s.report.branches.map((b) => b.state)).toEqual(['local-only', 'local-only']);
    expect(s.report.pending).toBe(false);
    expect((await cli(['status'], user.work)).stdout).toMatch(/remote\s+none — runs are committed locally only/);
    const f = await cli(['status', '--fetch'], user.work);
    expect(f.code).toBe(3);
    expect(f.stdout + f.stderr).toMatch(/has no remote to fetch from/);
  });

  it('--fetch from an unreachable remote still shows the local state, then exits 3', async () => {
    const user = await makeUserRepo('remote-url', 'git://127.0.0.1:1/nothing.git');
    const run = await makeRunWorkspace({ rows: 2 });
    await publish({ run: run.dir, cwd: user.work, push: false });
    const r = await expectUntouched(user.work, () => cli(['status', '--fetch'], user.work));
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/agentv\/results\/v1\s+local only/);
    expect(r.stdout).toMatch(/fetch failed: origin is unreachable/);
    const j = await statusJson(user.work, ['--fetch']);
    expect(j.code).toBe(3);
    expect(j.report.fetch).toMatchObject({ ok: false });
    expect(j.report.pending).toBe(true);
  });
});

describe('status sections registered by other features', () => {
  it('puts each section under extra, keeps going when one throws, and lets one mark the report pending', async () => {
    const user = await makeUserRepo();
    const offA = registerStatusSection('outbox', (ctx) => ({ pending: true, queued: [{ run: 'nightly/x', attempts: 2 }], remote: ctx.report.remote }));
    const offB = registerStatusSection('wip', () => {
      throw new Error('wip scan failed');
    });
    const offC = registerStatusSection('quiet', () => undefined);
    try {
      const report = await status({ cwd: user.work });
      expect(report.pending).toBe(true);
      expect(report.extra).toEqual({
        outbox: { pending: true, queued: [{ run: 'nightly/x', attempts: 2 }], remote: 'origin' },
        wip: { error: 'wip scan failed' },
      });
      const text = renderStatus(report);
      expect(text).toContain('outbox\n  pending: true\n  queued:\n    - run: nightly/x\n      attempts: 2\n  remote: origin\n');
      expect(text).toContain('wip\n  error: wip scan failed\n');
    } finally {
      offA();
      offB();
      offC();
    }
    expect((await status({ cwd: user.work })).extra).toEqual({});
    expect(() => registerStatusSection('Bad Name', () => 1)).toThrow(/lowercase/);
  });

  it('renders any JSON-like value generically', () => {
    expect(renderValue({ a: 1, b: [], c: { d: null }, e: ['x', 'y'] })).toEqual(['  a: 1', '  b: (none)', '  c:', '    d: —', '  e:', '    - x', '    - y']);
    expect(renderValue('plain')).toEqual(['  plain']);
  });
});
