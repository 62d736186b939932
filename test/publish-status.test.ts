/**
 * `status`: every state of our two branches against the remote-tracking refs, "pending" exactly
 * when something local has not reached the remote, sections other features register, and the
 * failure of --fetch reported without hiding what this machine knows.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRepo, resolveRef, updateRef } from '../src/git/index.js';
import { publish } from '../src/publish/publish.js';
import { branchState, redactUrl, statusWithSections } from '../src/status/status.js';
import { status, type StatusReport } from '../src/index.js';
import { Outbox } from '../src/daemon/outbox.js';
import { jsonKeys } from '../src/util/json-keys.js';
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

describe('status sections', () => {
  it('puts each section passed under extra, keeps going when one throws, and lets one mark the report pending', async () => {
    const user = await makeUserRepo();
    const report = await statusWithSections(
      { cwd: user.work },
      {
        outbox: (ctx) => ({ pending: true, queued: [{ run: 'nightly/x', attempts: 2 }], remote: ctx.report.remote }),
        wip: () => {
          throw new Error('wip scan failed');
        },
        quiet: () => undefined,
      },
    );
    expect(report.pending).toBe(true);
    expect(report.extra).toEqual({
      outbox: { pending: true, queued: [{ run: 'nightly/x', attempts: 2 }], remote: 'origin' },
      wip: { error: 'wip scan failed' },
    });
    const text = renderStatus(report);
    expect(text).toContain('outbox\n  pending: true\n  queued:\n    - run: nightly/x\n      attempts: 2\n  remote: origin\n');
    expect(text).toContain('wip\n  error: wip scan failed\n');
    expect((await statusWithSections({ cwd: user.work })).extra).toEqual({});
  });

  it("the library's status() returns exactly what `status --json` prints, every section included", async () => {
    const user = await makeUserRepo();
    const run = await makeRunWorkspace({ rows: 2 });
    await publish({ run: run.dir, cwd: user.work, push: false });
    // An interrupted update (a ref lock left behind) and a queued outbox job: two sections beyond the branches.
    await writeFile(join(user.work, '.git', `${RESULTS_REF}.lock`), '');
    await Outbox.forCommonDir(join(user.work, '.git')).put({ kind: 'push-results' });
    const lib = await status({ cwd: user.work });
    const printed = await statusJson(user.work);
    expect(printed.code).toBe(0);
    expect(Object.keys(lib.extra).sort()).toEqual(['interrupted-update', 'outbox']);
    expect(lib.extra.outbox).toMatchObject({ pending: true, queued: [{ kind: 'push-results' }] });
    // The CLI's JSON is the library's report, every section alike, in the printed key style
    // (jsonKeys: snake_case); the lock's age in seconds is read at each call, so it is masked.
    const masked = (v: unknown) => JSON.parse(JSON.stringify(v).replace(/\(\d+s old/g, '(Ns old'));
    expect(masked(printed.report)).toEqual(masked(jsonKeys(lib)));
  });

  it('renders any JSON-like value generically', () => {
    expect(renderValue({ a: 1, b: [], c: { d: null }, e: ['x', 'y'] })).toEqual(['  a: 1', '  b: (none)', '  c:', '    d: —', '  e:', '    - x', '    - y']);
    expect(renderValue('plain')).toEqual(['  plain']);
  });
});
