/**
 * Round four, group "adoption takes runs, never branches" (issue 48 item 1, issue 50 item 3).
 * One remote with two published runs; side branches built with git plumbing on it (mktree,
 * `hash-object -t tree --literally`, commit-tree), then ONE `sync` from another clone:
 * - refused (held when: kept on the remote, named in `sync --json`'s kept with a reason, `status`
 *   names it, nothing of it on the results branch): a tree without a published run, an unrelated
 *   root, a second root merged in, duplicate entries, an entry named `..`, one named `.git`, entries
 *   out of order, a symbolic link in a run, a submodule in a run, a changed published file, a file
 *   outside the run layout, a root directory that holds no run, an unfinished AgentV checkpoint;
 * - adopted (held when: its run on the results branch, the branch deleted on the remote): a 5.x
 *   run at the root, a 4.42 run with its overlay, a finished AgentV 5.x checkpoint;
 * - after it all (one case each): every published run still listed and pullable, a fresh clone
 *   of the results branch passes `git fsck --full`, the branch has a single root.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, TRIAL_ENV } from '../lib.mjs';

export const group = 'adoption takes runs, never branches';

const BOUND = 120_000;
const ENV = { ...TRIAL_ENV };
const cli = (args, cwd) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: ENV, encoding: 'utf8', timeout: BOUND, killSignal: 'SIGKILL' });
  return { code: r.status ?? 128, out: r.stdout ?? '', err: r.stderr ?? '' };
};
const git = (cwd, args, input) =>
  execFileSync('git', args, { cwd, env: ENV, input, encoding: input instanceof Buffer ? undefined : 'utf8' })
    .toString()
    .trim();

const SYNC = 'agentv/results-sync/';
const RESULTS = 'refs/heads/agentv/results/v1';

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'agentv-hostile-adopt-'));
  const cases = { tried: 0, held: 0 };
  const failures = [];
  const tally = (held, what) => {
    cases.tried++;
    if (held) cases.held++;
    else failures.push(what);
  };
  try {
    const remote = join(root, 'remote.git');
    git(root, ['init', '-q', '--bare', remote]);
    git(remote, ['config', 'receive.denyNonFastForwards', 'true']);
    const clone = (name) => {
      const d = join(root, name);
      mkdirSync(d);
      git(d, ['init', '-q', '-b', 'main']);
      git(d, ['remote', 'add', 'origin', remote]);
      git(d, ['commit', '-q', '--allow-empty', '-m', 'init']);
      return d;
    };
    // Two published runs.
    const a = clone('a');
    const published = [];
    for (const [i, test] of ['alpha', 'beta'].entries()) {
      const src = join(root, `r${i}.jsonl`);
      writeFileSync(
        src,
        `${JSON.stringify({ test_id: test, suite: 's', target: 'm', score: 1, timestamp: `2026-03-0${i + 1}T10:00:00Z`, assertions: [{ text: 'ok', passed: true }] })}\n`,
      );
      const runDir = join(root, `run${i}`);
      cli(['export', src, '--out', runDir, '--experiment', test], root);
      const p = cli(['publish', runDir, '--push', '--json'], a);
      if (p.code !== 0) throw new Error(`publish: ${p.err}`);
      published.push(JSON.parse(p.out).run_id);
    }

    // The side branches, with plumbing, in another clone.
    const m = clone('m');
    git(m, ['fetch', '-q', 'origin', `+${RESULTS}:refs/remotes/origin/agentv/results/v1`]);
    const tip = git(m, ['rev-parse', 'refs/remotes/origin/agentv/results/v1']);
    const tipTree = git(m, ['rev-parse', `${tip}^{tree}`]);
    const blob = (text) => git(m, ['hash-object', '-w', '--stdin'], text);
    const ls = (treeish) =>
      git(m, ['ls-tree', '-z', treeish])
        .split('\0')
        .filter(Boolean)
        .map((rec) => {
          const [meta, name] = rec.split('\t');
          const [mode, type, sha] = meta.split(' ');
          return { mode, type, sha, name };
        });
    const mktree = (entries) => git(m, ['mktree', '-z'], entries.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.name}\0`).join(''));
    const raw = (entries) =>
      git(
        m,
        ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'],
        Buffer.concat(entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')]))),
      );
    const treeWith = (base, path, entry) => {
      const [head, ...rest] = path.split('/');
      const entries = ls(base);
      const at = entries.find((e) => e.name === head);
      const others = entries.filter((e) => e.name !== head);
      if (rest.length === 0) return mktree(entry ? [...others, { ...entry, name: head }] : others);
      const sub = at?.type === 'tree' ? at.sha : mktree([]);
      return mktree([...others, { mode: '040000', type: 'tree', sha: treeWith(sub, rest.join('/'), entry), name: head }]);
    };
    const commit = (tree, parents, msg) => git(m, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', msg]);
    const rootEntries = ls(tipTree);
    const runDirs = rootEntries.filter((e) => e.type === 'tree' && !e.name.startsWith('.'));
    const victim = runDirs[0].name;
    const victimFile = ls(runDirs[0].sha).find((e) => e.type === 'blob').name;
    const f1 = blob('{"a":1}\n');
    const f2 = blob('{"b":2}\n');
    const summary = blob('{"counts":{"total_tests":1},"metadata":{"planned_test_count":1}}\n');
    const newRun = (name, entries) => commit(treeWith(tipTree, name, { mode: '040000', type: 'tree', sha: entries }), [tip], name);
    const orphan = commit(mktree([{ mode: '100644', type: 'blob', sha: blob('# hi\n'), name: 'README' }]), [], 'orphan');
    const refused = {
      'a tree without a published run': commit(mktree(rootEntries.filter((e) => e.name !== victim)), [tip], 'drop'),
      'an unrelated root': orphan,
      'a second root merged in': commit(
        treeWith(tipTree, '2026-04-01T10-00-00-000Z/summary.json', { mode: '100644', type: 'blob', sha: summary }),
        [tip, orphan],
        'graft',
      ),
      'duplicate entries': newRun(
        '2026-04-02T10-00-00-000Z',
        raw([
          { mode: '100644', name: 'summary.json', sha: f1 },
          { mode: '100644', name: 'summary.json', sha: f2 },
        ]),
      ),
      'an entry named ..': newRun(
        '2026-04-03T10-00-00-000Z',
        raw([
          { mode: '100644', name: '..', sha: f1 },
          { mode: '100644', name: 'summary.json', sha: summary },
        ]),
      ),
      'an entry named .git': newRun(
        '2026-04-04T10-00-00-000Z',
        raw([
          { mode: '100644', name: '.git', sha: f1 },
          { mode: '100644', name: 'summary.json', sha: summary },
        ]),
      ),
      'entries out of order': newRun(
        '2026-04-05T10-00-00-000Z',
        raw([
          { mode: '100644', name: 'summary.json', sha: summary },
          { mode: '100644', name: 'a.json', sha: f1 },
        ]),
      ),
      'a symbolic link in a run': newRun(
        '2026-04-06T10-00-00-000Z',
        mktree([
          { mode: '120000', type: 'blob', sha: blob('/etc/passwd'), name: 'answer.md' },
          { mode: '100644', type: 'blob', sha: summary, name: 'summary.json' },
        ]),
      ),
      'a submodule in a run': newRun(
        '2026-04-07T10-00-00-000Z',
        raw([
          { mode: '160000', name: 'sub', sha: tip },
          { mode: '100644', name: 'summary.json', sha: summary },
        ]),
      ),
      'a changed published file': commit(treeWith(tipTree, `${victim}/${victimFile}`, { mode: '100644', type: 'blob', sha: f1 }), [tip], 'change'),
      'a file outside the run layout': commit(treeWith(tipTree, '.github/workflows/x.yml', { mode: '100644', type: 'blob', sha: f1 }), [tip], 'outside'),
      'a root directory that holds no run': commit(treeWith(tipTree, 'tools/run.sh', { mode: '100755', type: 'blob', sha: f1 }), [tip], 'tools'),
    };
    let t = treeWith(tipTree, 'runs/demo/2026-04-09T10-00-00-000Z/benchmark.json', { mode: '100644', type: 'blob', sha: f2 });
    t = treeWith(t, 'runs/demo/2026-04-09T10-00-00-000Z/index.jsonl', { mode: '100644', type: 'blob', sha: blob('{"test_id":"t1","score":1}\n') });
    t = treeWith(t, 'metadata/runs/demo/2026-04-09T10-00-00-000Z/tags.json', { mode: '100644', type: 'blob', sha: f1 });
    const good = {
      'a 5.x run at the root': [
        newRun('2026-04-08T10-00-00-000Z', mktree([{ mode: '100644', type: 'blob', sha: summary, name: 'summary.json' }])),
        '2026-04-08T10-00-00-000Z/summary.json',
      ],
      'a 4.42 run with its overlay': [commit(t, [tip], '4.42'), 'runs/demo/2026-04-09T10-00-00-000Z/benchmark.json'],
    };
    const names = {};
    let i = 0;
    for (const k of [...Object.keys(refused), ...Object.keys(good)]) names[k] = `${SYNC}20260401T100000Z-bench-${String(i++).padStart(2, '0')}`;
    // AgentV checkpoints (an amend of the results tip holding the run): one finished, one not.
    const stub = blob('{"counts":{"total_tests":0},"metadata":{"planned_test_count":1}}\n');
    const parent = git(m, ['rev-parse', `${tip}^`]);
    const cpDone = commit(
      treeWith(tipTree, '2026-04-10T10-00-00-000Z', {
        mode: '040000',
        type: 'tree',
        sha: mktree([{ mode: '100644', type: 'blob', sha: summary, name: 'summary.json' }]),
      }),
      [parent],
      'wip',
    );
    const cpOpen = commit(
      treeWith(tipTree, '2026-04-11T10-00-00-000Z', {
        mode: '040000',
        type: 'tree',
        sha: mktree([{ mode: '100644', type: 'blob', sha: stub, name: 'summary.json' }]),
      }),
      [parent],
      'wip',
    );
    const wipDone = 'agentv/wip/bench-host/2026-04-10T10-00-00-000Z';
    const wipOpen = 'agentv/wip/bench-host/2026-04-11T10-00-00-000Z';
    const refspecs = [
      ...Object.entries(refused).map(([k, sha]) => `${sha}:refs/heads/${names[k]}`),
      ...Object.entries(good).map(([k, [sha]]) => `${sha}:refs/heads/${names[k]}`),
      `${cpDone}:refs/heads/${wipDone}`,
      `${cpOpen}:refs/heads/${wipOpen}`,
    ];
    git(m, ['push', '-q', 'origin', ...refspecs]);

    // One sync, from a fresh clone.
    const d = clone('d');
    const s = cli(['sync', '--json'], d);
    const out = s.code === 0 ? JSON.parse(s.out) : { sync_branches: { adopted: [], kept: [] }, checkpoints: { adopted: [], kept: [] } };
    if (s.code !== 0) failures.push(`sync exited ${s.code}: ${s.err.slice(0, 300)}`);
    const status = JSON.parse(cli(['status', '--json'], d).out || '{}');
    const named = new Map((status.extra?.['sync-branches']?.open ?? []).map((o) => [o.branch, o.first_conflict]));
    const onRemote = new Set(git(remote, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/agentv/']).split('\n'));
    const files = git(remote, ['ls-tree', '-r', '--name-only', RESULTS]);
    const kept = new Map(out.sync_branches.kept.map((k) => [k.branch, k.reason]));
    for (const k of Object.keys(refused)) {
      const reason = kept.get(names[k]);
      const held = Boolean(reason) && onRemote.has(names[k]) && named.get(names[k]) === reason;
      tally(held, `${k}: ${reason ? `kept (${reason})` : 'not kept'}, on remote ${onRemote.has(names[k])}, status ${named.get(names[k]) ?? 'silent'}`);
    }
    const adopted = new Set(out.sync_branches.adopted.filter((x) => x.deleted_remote).map((x) => x.branch));
    for (const [k, [, path]] of Object.entries(good)) tally(adopted.has(names[k]) && !onRemote.has(names[k]) && files.includes(path), `${k}: not adopted`);
    const cpAdopted = new Set(out.checkpoints.adopted.filter((x) => x.deleted_remote).map((x) => x.branch));
    tally(
      cpAdopted.has(wipDone) && !onRemote.has(wipDone) && files.includes('2026-04-10T10-00-00-000Z/summary.json'),
      'a finished AgentV checkpoint: not adopted',
    );
    tally(
      out.checkpoints.kept.some((k) => k.branch === wipOpen && /not finished/.test(k.reason)) &&
        onRemote.has(wipOpen) &&
        !files.includes('2026-04-11T10-00-00-000Z'),
      'an unfinished AgentV checkpoint: not left',
    );

    const list = JSON.parse(cli(['list', '--json'], d).out || '{"runs":[]}');
    const listed = new Set(list.runs.map((r) => r.run_id));
    const pullable = published.every((id) => cli(['pull', id, '--out', join(root, `pull-${id.replace(/\W/g, '_')}`)], d).code === 0);
    tally(published.every((id) => listed.has(id)) && pullable, 'a published run no longer listed or pullable');
    const fresh = join(root, 'fresh.git');
    git(root, ['clone', '-q', '--no-local', '--bare', '--single-branch', '--branch', 'agentv/results/v1', remote, fresh]);
    const fsck = spawnSync('git', ['fsck', '--full', '--no-progress'], { cwd: fresh, env: ENV, encoding: 'utf8' });
    tally(fsck.status === 0, `fsck of a fresh clone: ${fsck.stderr.slice(0, 300)}`);
    tally(git(fresh, ['rev-list', '--max-parents=0', 'agentv/results/v1']).split('\n').length === 1, 'the results branch has more than one root');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return {
    cases,
    failures,
    notes: [
      'Adoption (bench/hostile-round4/adoption.mjs): 12 malicious side branches built with git plumbing, 2 good ones and 2 AgentV',
      'checkpoints, one `sync`. Held: a malicious one kept on the remote and named by `sync` and `status` with its reason, a good one',
      'adopted and deleted, the finished checkpoint adopted, the unfinished one left; then every run listed and pullable, a fresh',
      'clone passes `git fsck --full`, one root. Before this change (the trial of issue 48) a branch lacking a run, an unrelated root and',
      'duplicate entries were each merged, pushed and deleted.',
    ],
  };
}
