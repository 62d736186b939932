/**
 * `pull`: a published run comes back byte for byte into an atomic run workspace, payloads are
 * fetched lazily and verified, and crafted branch content can never write outside the workspace.
 * Every command runs through the built CLI against real repositories.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepo, readBlobs, resolveRef, runGit, updateRef, writeCommit } from '../src/git/index.js';
import { runLocation } from '../src/layout/branch-layout.js';
import { cleanupTempDirs, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
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
  tip,
  type RunWorkspace,
} from './publish-helpers.js';
import type { UserRepoFixture } from './helpers/git-fixtures.js';

let restore: () => void;
let user: UserRepoFixture;
let run: RunWorkspace;
const AUTHOR = { name: 'Mallory', email: 'mallory@example.invalid', date: '2026-03-20T00:00:00Z' };

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  run = await makeRunWorkspace({ rows: 6, experiment: 'nightly' });
  const r = await expectUntouched(user.work, () => cli(['publish', run.dir, '--push'], user.work));
  expect(r.code, r.stderr).toBe(0);
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

/** The published index.jsonl rows with `artifact_pointers` removed, serialized like the local manifest. */
function withoutPointers(index: Buffer): string {
  return index
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const { artifact_pointers: _p, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(rest) + '\n';
    })
    .join('');
}

async function branchIndex(dir: string, runId: string): Promise<Buffer> {
  const repo = await openRepo(dir);
  const spec = `${RESULTS_REF}:${runLocation(runId).path}/index.jsonl`;
  return (await readBlobs(repo, [spec])).get(spec)!;
}

describe('pull: round trip', () => {
  it('pull --with-artifacts reproduces the published workspace byte for byte (index.jsonl = the published one)', async () => {
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await expectUntouched(user.work, () => cli(['pull', run.runId, '--with-artifacts', '--out', out, '--json'], user.work));
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { source: string; payloads: { pointed: number; written: number; fetched: boolean } };
    expect(result.source).toBe('local');
    expect(result.payloads.pointed).toBeGreaterThan(0);
    expect(result.payloads.written).toBe(result.payloads.pointed);
    expect(result.payloads.fetched).toBe(false);

    const published = await readTree(run.dir);
    const pulled = await readTree(out);
    expect([...pulled.keys()].sort()).toEqual([...published.keys()].sort());
    for (const [path, bytes] of published) {
      if (path === 'index.jsonl') continue;
      expect(pulled.get(path)!.equals(bytes), path).toBe(true);
    }
    // The pulled index is exactly the branch's, and differs from the local one only by the pointers.
    const idx = pulled.get('index.jsonl')!;
    expect(idx.equals(await branchIndex(user.work, run.runId))).toBe(true);
    expect(withoutPointers(idx)).toBe(published.get('index.jsonl')!.toString('utf8'));

    const v = await cli(['validate', out, '--json'], user.work);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, problems: [], notes: [] });
    expect((await cli(['validate', out, '--require-payloads'], user.work)).code).toBe(0);
    expect((await cli(['show', out], user.work)).code).toBe(0);
    const html = join(await makeTempDir('agentv-report'), 'r.html');
    const rep = await cli(['report', out, '--out', html], user.work);
    expect(rep.code, rep.stderr).toBe(0);
    expect(existsSync(html)).toBe(true);
  });

  it('without --with-artifacts the pointers stay; validate notes the absent payloads; republishing it makes no commit', async () => {
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await cli(['pull', run.runId, '--out', out], user.work);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/left on the artifacts branch/);
    const pulled = await readTree(out);
    expect([...pulled.keys()].some((p) => p.endsWith('transcript.json'))).toBe(false);
    const v = await cli(['validate', out, '--json'], user.work);
    expect(v.code, v.stdout).toBe(0);
    const report = JSON.parse(v.stdout) as { valid: boolean; notes: { message: string }[] };
    expect(report.valid).toBe(true);
    expect(report.notes.length).toBeGreaterThan(0);
    expect(report.notes[0]!.message).toMatch(/payload not present locally/);
    expect((await cli(['validate', out, '--require-payloads'], user.work)).code).toBe(1);

    const before = { results: await tip(user.work, RESULTS_REF), artifacts: await tip(user.work, ARTIFACTS_REF) };
    const again = await cli(['publish', out, '--json'], user.work);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).status).toBe('already-published');
    expect({ results: await tip(user.work, RESULTS_REF), artifacts: await tip(user.work, ARTIFACTS_REF) }).toEqual(before);
  });

  it('defaults to .agentv/results/<run_id> under the working directory and refuses to overwrite it without --force', async () => {
    const cwd = await makeTempDir('agentv-cwd');
    const first = await cli(['pull', run.runId, '--dir', user.work], cwd);
    // --dir sets both the repository and where relative paths resolve: the default lands in the checkout.
    expect(first.code, first.stderr).toBe(0);
    const dest = join(user.work, '.agentv/results', runLocation(run.runId).path);
    expect(existsSync(join(dest, 'index.jsonl'))).toBe(true);
    const again = await cli(['pull', run.runId, '--dir', user.work], cwd);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists — pass --force/);
    const forced = await cli(['pull', run.runId, '--dir', user.work, '--force', '--with-artifacts'], cwd);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readdirSync(join(user.work, '.agentv/results')).filter((n) => n.startsWith('.'))).toEqual([]);
    // The user's HEAD and index are untouched; only the requested workspace appeared.
    expect(await git(user.work, ['status', '--porcelain', '--', '.agentv'])).toBe('?? .agentv/');
  });

  it('an unknown run is an input error that says how to find runs', async () => {
    const r = await cli(['pull', 'nightly/2020-01-01T00-00-00-000Z'], user.work);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not on agentv\/results\/v1 .*agentv-results list/);
  });
});

describe('pull: lazily fetched payloads (a teammate)', () => {
  it('reads the remote-tracking branch after --fetch and fetches the artifacts branch only when needed', async () => {
    const mate = await makeTempDir('agentv-mate');
    await git(mate, ['clone', '-q', user.remote, 'clone']);
    const clone = join(mate, 'clone');
    // A plain clone maps the remote's branches to refs/remotes/origin/*: drop ours to start from nothing.
    for (const ref of ['refs/remotes/origin/agentv/results/v1', 'refs/remotes/origin/agentv/artifacts/v1']) {
      await git(clone, ['update-ref', '-d', ref]);
    }
    const miss = await cli(['pull', run.runId, '--with-artifacts', '--out', join(mate, 'x')], clone);
    expect(miss.code).toBe(2);
    expect(miss.stderr).toMatch(/--fetch/);

    const listed = await cli(['list', '--fetch', '--json'], clone);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).runs.map((x: { run_id: string; where: string }) => [x.run_id, x.where])).toEqual([[run.runId, 'remote']]);
    expect(await tip(clone, 'refs/remotes/origin/agentv/artifacts/v1')).toBeNull();

    const out = join(mate, 'pulled');
    const r = await expectUntouched(clone, () => cli(['pull', run.runId, '--with-artifacts', '--out', out, '--json'], clone));
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { source: string; payloads: { fetched: boolean; written: number } };
    expect(result.source).toBe('remote');
    expect(result.payloads.fetched).toBe(true);
    expect(await tip(clone, 'refs/remotes/origin/agentv/artifacts/v1')).toBe(await tip(user.work, ARTIFACTS_REF));
    // Nothing local was created: pulling never writes our branches.
    expect(await tip(clone, RESULTS_REF)).toBeNull();
    const published = await readTree(run.dir);
    const pulled = await readTree(out);
    for (const [path, bytes] of published) if (path !== 'index.jsonl') expect(pulled.get(path)?.equals(bytes), path).toBe(true);
    await expectFsckClean(clone);
  });
});

describe('pull: verification and hostile branch content', () => {
  /** A copy of the user's repository where a test may rewrite our branches. */
  async function scratchRepo(): Promise<string> {
    const dir = await makeTempDir('agentv-scratch');
    await git(dir, ['clone', '-q', '--bare', user.work, 'repo.git']);
    return join(dir, 'repo.git');
  }

  async function rewrite(repoDir: string, ref: string, files: { path: string; data: string | Buffer }[]): Promise<void> {
    const repo = await openRepo(repoDir);
    const old = await resolveRef(repo, ref);
    const { commit } = await writeCommit(repo, { parent: old, files, message: 'tamper', author: AUTHOR });
    await updateRef(repo, ref, commit, old);
  }

  async function expectNothingWritten(out: string): Promise<void> {
    expect(existsSync(out)).toBe(false);
    const parent = join(out, '..');
    if (existsSync(parent)) expect(readdirSync(parent).filter((n) => n.startsWith('.'))).toEqual([]);
  }

  it('a payload whose bytes do not match its pointer fails (exit 1) and writes nothing', async () => {
    const repoDir = await scratchRepo();
    const loc = runLocation(run.runId);
    const transcript = (await readTree(run.dir)).keys();
    const victim = [...transcript].find((p) => p.endsWith('transcript.json'))!;
    await rewrite(repoDir, ARTIFACTS_REF, [{ path: `${loc.path}/${victim}`, data: '{"tampered":true}\n' }]);
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await cli(['pull', run.runId, '--with-artifacts', '--out', out], repoDir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`payload ${victim.replace(/[.]/g, '\\.')} .*does not match its pointer.*nothing was written`));
    await expectNothingWritten(out);
  });

  it('a payload missing from the artifacts branch (and no remote has it) fails with exit 3 and writes nothing', async () => {
    const repoDir = await scratchRepo();
    const loc = runLocation(run.runId);
    const victim = [...(await readTree(run.dir)).keys()].find((p) => p.endsWith('transcript.json'))!;
    const repo = await openRepo(repoDir);
    const old = (await resolveRef(repo, ARTIFACTS_REF))!;
    const { commit } = await writeCommit(repo, { parent: old, files: [{ path: `${loc.path}/${victim}`, delete: true }], message: 'drop', author: AUTHOR });
    await updateRef(repo, ARTIFACTS_REF, commit, old);
    await git(repoDir, ['remote', 'remove', 'origin']);
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await cli(['pull', run.runId, '--with-artifacts', '--out', out], repoDir);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/1 payload of .* not found on agentv\/artifacts\/v1/);
    await expectNothingWritten(out);
  });

  it.each([
    ['a path that climbs out of the run', (p: Record<string, unknown>) => ({ ...p, path: '../../../../escaped.txt' }), /would land outside the run directory/],
    ['an absolute path', (p: Record<string, unknown>) => ({ ...p, path: '/tmp/escaped.txt' }), /would land outside the run directory/],
    ['a key of another run', (p: Record<string, unknown>) => ({ ...p, key: 'other--2026-01-01T00-00-00-000Z/x.json' }), /is not this run's/],
  ])('refuses an artifact pointer with %s (exit 2, nothing written)', async (_name, tamper, message) => {
    const repoDir = await scratchRepo();
    const loc = runLocation(run.runId);
    const index = await branchIndex(repoDir, run.runId);
    const lines = index
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { artifact_pointers?: Record<string, Record<string, unknown>> });
    // AgentV's shape: an object keyed by kind (`transcript`) or, for our other payloads, by path.
    const row = lines.find((l) => l.artifact_pointers && Object.keys(l.artifact_pointers).length > 0)!;
    const first = Object.keys(row.artifact_pointers!)[0]!;
    row.artifact_pointers![first] = tamper(row.artifact_pointers![first]!);
    await rewrite(repoDir, RESULTS_REF, [{ path: `${loc.path}/index.jsonl`, data: lines.map((l) => JSON.stringify(l)).join('\n') + '\n' }]);
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await cli(['pull', run.runId, '--with-artifacts', '--out', out], repoDir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    await expectNothingWritten(out);
  });

  it('refuses a symlink in the run tree (only regular files are materialized)', async () => {
    const repoDir = await scratchRepo();
    const loc = runLocation(run.runId);
    const repo = await openRepo(repoDir);
    const old = (await resolveRef(repo, RESULTS_REF))!;
    // Build the tampered tree with a private index: git plumbing only, nothing of the user's.
    const work = await makeTempDir('agentv-tamper');
    const env = { GIT_INDEX_FILE: join(work, 'index') };
    const blob = (await runGit(['hash-object', '-w', '--stdin'], { gitDir: repo.gitDir, input: '/etc/passwd' })).stdout.toString().trim();
    await runGit(['read-tree', old], { gitDir: repo.gitDir, env });
    await runGit(['update-index', '--add', '--cacheinfo', `120000,${blob},${loc.path}/evil-link`], { gitDir: repo.gitDir, env });
    const tree = (await runGit(['write-tree'], { gitDir: repo.gitDir, env })).stdout.toString().trim();
    const commit = (await runGit(['commit-tree', tree, '-p', old, '-m', 'link'], { gitDir: repo.gitDir })).stdout.toString().trim();
    await updateRef(repo, RESULTS_REF, commit, old);
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await cli(['pull', run.runId, '--out', out], repoDir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evil-link on the results branch is a symlink/);
    await expectNothingWritten(out);
  });

  // `nightly` is a well-formed AgentV run id (one segment) that is simply not published.
  it.each(['../../etc/passwd', 'nightly/..', 'a/b/c', '.git/x', 'nightly'])('refuses the run id %s (exit 2)', async (id) => {
    const out = join(await makeTempDir('agentv-pulled'), 'run');
    const r = await cli(['pull', id, '--out', out], user.work);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/run id .* (is neither <run_id> nor <experiment>\/<timestamp>|has an unsafe segment)|run nightly is not on/);
    expect(existsSync(out)).toBe(false);
  });

  it('leaves the repository consistent after all of the above', async () => {
    await expectFsckClean(user.work);
    expect(await expectPointersResolve(user.work)).toBeGreaterThan(0);
    expect(await commitCount(user.work, RESULTS_REF)).toBe(2);
  });
});
