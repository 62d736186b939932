/**
 * Adoption takes runs, never branches (issue 48 item 1). Sync branches built with git plumbing
 * (`mktree`, `hash-object -t tree --literally`, `commit-tree`), pushed to a real bare remote: one
 * whose tree lacks a published run, an unrelated root holding a README, a tree with duplicate
 * entries, one with an entry named `..`, one with a symbolic link in a run, one that changes a
 * published run's file, one with a file outside the run layout — each refused (kept on the remote,
 * named by `status` with its reason, nothing of it on the results branch) — beside the good ones
 * (a 5.x run at the root, a 4.42 run under `runs/` with its overlay), adopted and deleted. After
 * one `sync`: every published run still listed and pullable, a fresh clone of the results branch
 * passes `git fsck --full`, and the branch has a single root.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { git, isolateGitForSuite, makeTempDir } from './helpers/git-fixtures.js';
import { makeClone, makeRemote, publishRun, RESULTS_REF } from './sync-helpers.js';
import { AGENTV_GITATTRIBUTES } from '../src/layout/branch-layout.js';

isolateGitForSuite();

const SYNC = 'agentv/results-sync/';

interface Entry {
  mode: string;
  type: 'blob' | 'tree';
  sha: string;
  name: string;
}

async function blob(dir: string, text: string): Promise<string> {
  return git(dir, ['hash-object', '-w', '--stdin'], { input: text });
}
async function lsTree(dir: string, treeish: string): Promise<Entry[]> {
  const out = await git(dir, ['ls-tree', '-z', treeish]);
  return out
    .split('\0')
    .filter(Boolean)
    .map((rec) => {
      const [meta, name] = rec.split('\t') as [string, string];
      const [mode, type, sha] = meta.split(' ') as [string, Entry['type'], string];
      return { mode, type, sha, name };
    });
}
async function mktree(dir: string, entries: Entry[]): Promise<string> {
  return git(dir, ['mktree', '-z'], { input: entries.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.name}\0`).join('') });
}
/** A tree object written byte for byte as given (git's own checks skipped): order, duplicates and names as they come. */
async function rawTree(dir: string, entries: { mode: string; name: string; sha: string }[]): Promise<string> {
  const bytes = Buffer.concat(entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')])));
  return git(dir, ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], { input: bytes });
}
/** `base` with `path` set to `entry` (or removed when null), every tree on the way rewritten by mktree. */
async function treeWith(dir: string, base: string, path: string, entry: Omit<Entry, 'name'> | null): Promise<string> {
  const [head, ...rest] = path.split('/') as [string, ...string[]];
  const entries = await lsTree(dir, base);
  const at = entries.find((e) => e.name === head);
  const others = entries.filter((e) => e.name !== head);
  if (rest.length === 0) return mktree(dir, entry ? [...others, { ...entry, name: head }] : others);
  const sub = at?.type === 'tree' ? at.sha : await mktree(dir, []);
  return mktree(dir, [...others, { mode: '040000', type: 'tree', sha: await treeWith(dir, sub, rest.join('/'), entry), name: head }]);
}
async function commit(dir: string, tree: string, parents: string[], message: string): Promise<string> {
  return git(dir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message]);
}

describe('adoption takes runs, never branches', () => {
  let remote: string;
  let d: string;
  const published: string[] = [];
  const names: Record<string, string> = {};
  let firstRunDir = '';

  beforeAll(async () => {
    remote = await makeRemote();
    const a = await makeClone(remote, 'a');
    for (const [i, experiment] of ['alpha', 'beta'].entries()) {
      const r = await publishRun(a, { experiment, rows: 2, minute: i });
      expect(r.push).toMatchObject({ landed: true });
      published.push(r.runId);
    }
    // The branches are built on the remote's results tip in another clone, with plumbing only.
    const m = await makeClone(remote, 'm');
    await git(m, ['fetch', '-q', 'origin', `+${RESULTS_REF}:refs/remotes/origin/agentv/results/v1`]);
    const tip = await git(m, ['rev-parse', 'refs/remotes/origin/agentv/results/v1']);
    const tipTree = await git(m, ['rev-parse', `${tip}^{tree}`]);
    const root = await lsTree(m, tipTree);
    const runDirs = root.filter((e) => e.type === 'tree' && !e.name.startsWith('.'));
    expect(runDirs.length).toBe(2);
    firstRunDir = runDirs[0]!.name;
    const runFiles = await lsTree(m, runDirs[0]!.sha);
    const summary = runFiles.find((e) => e.name === 'summary.json' || e.name === 'benchmark.json' || e.name === 'timing.json');
    expect(summary, JSON.stringify(runFiles.map((e) => e.name))).toBeTruthy();
    const fileA = await blob(m, '{"a":1}\n');
    const fileB = await blob(m, '{"b":2}\n');

    const branches: Record<string, string> = {};
    // 1. On the results tip, without a published run.
    branches['lacks-run'] = await commit(
      m,
      await mktree(
        m,
        root.filter((e) => e.name !== firstRunDir),
      ),
      [tip],
      'drop a run',
    );
    // 2. An unrelated root commit holding a README.
    branches.orphan = await commit(m, await mktree(m, [{ mode: '100644', type: 'blob', sha: await blob(m, '# hi\n'), name: 'README' }]), [], 'orphan');
    // 3. A new run whose tree holds one file twice.
    const dup = await rawTree(m, [
      { mode: '100644', name: 'summary.json', sha: fileA },
      { mode: '100644', name: 'summary.json', sha: fileB },
    ]);
    branches.duplicate = await commit(m, await treeWith(m, tipTree, '2026-03-20T10-00-00-000Z', { mode: '040000', type: 'tree', sha: dup }), [tip], 'dup');
    // 4. A new run with an entry named `..`.
    const dots = await rawTree(m, [
      { mode: '100644', name: '..', sha: fileA },
      { mode: '100644', name: 'summary.json', sha: fileB },
    ]);
    branches.dotdot = await commit(m, await treeWith(m, tipTree, '2026-03-21T10-00-00-000Z', { mode: '040000', type: 'tree', sha: dots }), [tip], 'dots');
    // 5. A new run holding a symbolic link.
    const link = await mktree(m, [
      { mode: '120000', type: 'blob', sha: await blob(m, '/etc/passwd'), name: 'answer.md' },
      { mode: '100644', type: 'blob', sha: fileB, name: 'summary.json' },
    ]);
    branches.link = await commit(m, await treeWith(m, tipTree, '2026-03-22T10-00-00-000Z', { mode: '040000', type: 'tree', sha: link }), [tip], 'link');
    // 6. A published run's file changed.
    branches.changed = await commit(
      m,
      await treeWith(m, tipTree, `${firstRunDir}/${summary!.name}`, { mode: '100644', type: 'blob', sha: fileA }),
      [tip],
      'changed',
    );
    // 7. A file outside the run layout.
    branches.outside = await commit(m, await treeWith(m, tipTree, 'tools/run.sh', { mode: '100755', type: 'blob', sha: fileA }), [tip], 'outside');
    // Good: a 5.x run at the root, and a 4.42 run under runs/ with its tag overlay.
    const good5 = await mktree(m, [{ mode: '100644', type: 'blob', sha: await blob(m, '{"run_id":"2026-03-23T10-00-00-000Z"}\n'), name: 'summary.json' }]);
    // (AgentV 5.x rewrites .gitattributes to its own lines in every commit: never a reason to refuse, never taken.)
    const good5Tree = await treeWith(m, tipTree, '2026-03-23T10-00-00-000Z', { mode: '040000', type: 'tree', sha: good5 });
    branches['good-next'] = await commit(
      m,
      await treeWith(m, good5Tree, '.gitattributes', { mode: '100644', type: 'blob', sha: await blob(m, AGENTV_GITATTRIBUTES) }),
      [tip],
      'good 5.x',
    );
    let t = await treeWith(m, tipTree, 'runs/demo/2026-03-24T10-00-00-000Z/benchmark.json', { mode: '100644', type: 'blob', sha: fileB });
    t = await treeWith(m, t, 'runs/demo/2026-03-24T10-00-00-000Z/index.jsonl', {
      mode: '100644',
      type: 'blob',
      sha: await blob(m, '{"test_id":"t1","score":1}\n'),
    });
    t = await treeWith(m, t, 'metadata/runs/demo/2026-03-24T10-00-00-000Z/tags.json', { mode: '100644', type: 'blob', sha: fileA });
    branches['good-stable'] = await commit(m, t, [tip], 'good 4.42');
    for (const k of Object.keys(branches)) names[k] = `${SYNC}20260320T100000Z-evil-${k}`;
    await git(m, ['push', '-q', 'origin', ...Object.entries(branches).map(([k, sha]) => `${sha}:refs/heads/${names[k]}`)]);
    d = await makeClone(remote, 'd');
  });

  it('refuses every branch that holds more than runs, keeps it named with its reason, and adopts the good ones', async () => {
    const r = await runCli(['sync', '--json'], { cwd: d });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      sync_branches: { adopted: { branch: string; deleted_remote: boolean }[]; kept: { branch: string; reason: string }[] };
    };
    expect(out.sync_branches.adopted.map((x) => x.branch).sort()).toEqual([names['good-next'], names['good-stable']].sort());
    expect(out.sync_branches.adopted.every((x) => x.deleted_remote)).toBe(true);
    const why = new Map(out.sync_branches.kept.map((k) => [k.branch, k.reason]));
    expect(why.get(names['lacks-run']!)).toContain(`deletes the published run ${firstRunDir}`);
    expect(why.get(names.orphan!)).toContain('foreign root');
    expect(why.get(names.duplicate!)).toContain('twice (duplicate entries)');
    expect(why.get(names.dotdot!)).toContain('".."');
    expect(why.get(names.link!)).toContain('symbolic link');
    expect(why.get(names.changed!)).toContain(`of the published run ${firstRunDir}`);
    expect(why.get(names.outside!)).toContain('tools/run.sh is outside the run layout');
    expect(why.size).toBe(7);

    // Kept on the remote, never deleted; the good ones are gone.
    const left = (await git(remote, ['for-each-ref', '--format=%(refname:short)', `refs/heads/${SYNC}`])).split('\n').filter(Boolean).sort();
    expect(left).toEqual([...why.keys()].sort());

    // status names each with its reason.
    const status = JSON.parse((await runCli(['status', '--json'], { cwd: d })).stdout) as {
      extra: { 'sync-branches': { open: { branch: string; first_conflict: string | null }[] } };
    };
    const named = new Map(status.extra['sync-branches'].open.map((o) => [o.branch, o.first_conflict]));
    for (const [branch, reason] of why) expect(named.get(branch)).toBe(reason);

    // Every published run is still listed and pullable; the good runs arrived.
    const list = JSON.parse((await runCli(['list', '--json'], { cwd: d })).stdout) as { runs: { run_id: string }[] };
    for (const id of published) expect(list.runs.map((x) => x.run_id)).toContain(id);
    for (const id of published) {
      const pulled = await runCli(['pull', id, '--out', join(await makeTempDir('pull'), 'run')], { cwd: d });
      expect(pulled.code, pulled.stderr).toBe(0);
    }
    const top = await git(remote, ['ls-tree', '-r', '--name-only', RESULTS_REF]);
    expect(top).toContain('2026-03-23T10-00-00-000Z/summary.json');
    expect(top).toContain('runs/demo/2026-03-24T10-00-00-000Z/benchmark.json');
    expect(top).toContain('metadata/runs/demo/2026-03-24T10-00-00-000Z/tags.json');
    expect(await git(remote, ['show', `${RESULTS_REF}:.gitattributes`])).not.toBe(AGENTV_GITATTRIBUTES.trimEnd());
    expect(await git(remote, ['show', `${RESULTS_REF}:.gitattributes`])).toBe(await git(remote, ['show', `${RESULTS_REF}~2:.gitattributes`]));
    for (const bad of ['README', 'tools/run.sh', '2026-03-20T10-00-00-000Z', '2026-03-21T10-00-00-000Z', '2026-03-22T10-00-00-000Z'])
      expect(top).not.toContain(bad);

    // A fresh clone of the results branch (objects sent by the remote, not copied) passes fsck; one root.
    const scratch = await makeTempDir('fresh');
    const fresh = join(scratch, 'c');
    await git(scratch, ['clone', '-q', '--no-local', '--bare', '--single-branch', '--branch', 'agentv/results/v1', remote, fresh]);
    await git(fresh, ['fsck', '--full', '--no-progress']);
    expect((await git(fresh, ['rev-list', '--max-parents=0', 'agentv/results/v1'])).split('\n')).toHaveLength(1);

    // A second sync changes nothing: the refused stay, with the same reasons, and nothing moves.
    const before = await git(remote, ['rev-parse', RESULTS_REF]);
    const again = JSON.parse((await runCli(['sync', '--json'], { cwd: d })).stdout) as typeof out;
    expect(again.sync_branches.kept.map((k) => k.branch).sort()).toEqual([...why.keys()].sort());
    expect(await git(remote, ['rev-parse', RESULTS_REF])).toBe(before);
  });
});
