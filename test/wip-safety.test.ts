/**
 * WIP checkpoints through the one run-safety check (issue 40, item 3: "one check decides for
 * validate, report, show, publish, the daemon and WIP"): what publish would refuse — a link out of
 * the run, a named pipe, a row with an unsafe run id or a path out of the run, a result file whose
 * pointers leave the run — a checkpoint does not store, and says so (stderr, `wip list`, wip.json)
 * instead of dropping it in silence. A pipe in a running eval's folder never blocks a checkpoint, and
 * a refusal is said once, not at every tick.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lsTree, openRepo, readBlobs, type Repo } from '../src/git/index.js';
import { Checkpointer, parseWipMeta } from '../src/wip/index.js';
import { runCli } from './helpers/cli.js';
import { isolateGitForSuite, makeTempDir, makeUserRepoWithRemote } from './helpers/git-fixtures.js';
import { appendRows, row } from './helpers/wip-fixtures.js';

isolateGitForSuite();

const AUTHOR = { name: 'WIP Test', email: 'wip@example.invalid' };

/** A run in progress holding one of everything publish refuses, beside rows and files it accepts. */
async function hostileWorkspace(): Promise<{ work: string; repo: Repo; runDir: string }> {
  const fx = await makeUserRepoWithRemote();
  const runDir = join(await makeTempDir('wip-safety'), 'exp/2026-03-01T10-00-00-000Z');
  appendRows(runDir, 0, 3, { sidecars: true });
  symlinkSync('/etc/passwd', join(runDir, 'notes.txt'));
  execFileSync('mkfifo', [join(runDir, 'live.pipe')]);
  execFileSync('mkfifo', [join(runDir, 'raw/t-0001/stream.pipe')]);
  mkdirSync(join(runDir, 'raw/t-0005'), { recursive: true });
  writeFileSync(join(runDir, 'raw/t-0005/result.json'), `${JSON.stringify({ output: '/etc/passwd', grading_path: './grading.json' })}\n`);
  appendFileSync(
    join(runDir, 'index.jsonl'),
    [row(3, { run_id: '../x' }), row(4, { grading_path: '/etc/passwd' }), row(5, { artifacts_dir: 'raw/t-0005' }), row(6)]
      .map((r) => `${JSON.stringify(r)}\n`)
      .join(''),
  );
  return { work: fx.work, repo: await openRepo(fx.work), runDir };
}

async function stored(repo: Repo, commit: string): Promise<{ paths: string[]; index: string }> {
  const entries = await lsTree(repo, commit, { recursive: true });
  const segs = entries.filter((e) => e.path.startsWith('index/')).sort((a, b) => (a.path < b.path ? -1 : 1));
  const blobs = await readBlobs(
    repo,
    segs.map((s) => s.sha),
  );
  return { paths: entries.map((e) => e.path).sort(), index: segs.map((s) => blobs.get(s.sha)!.toString('utf8')).join('') };
}

const REFUSED = [
  /^notes\.txt is a symbolic link leading out of the run \(to \/etc\/passwd\)/,
  /^live\.pipe is a named pipe/,
  /^raw\/t-0001\/stream\.pipe is a named pipe/,
  /^index\.jsonl:4: run_id "\.\.\/x" is not a safe path segment.* — the row is not checkpointed$/,
  /^index\.jsonl:5: grading_path .*\/etc\/passwd.* — the row is not checkpointed$/,
  /^raw\/t-0005\/result\.json: output "\/etc\/passwd" points outside the run.* — the file is not checkpointed$/,
];

describe('a checkpoint stores nothing publish would refuse, and says so', () => {
  it('library: the incremental and the full checkpoint leave out each unsafe piece, name it once, and keep the rest', async () => {
    const { repo, runDir } = await hostileWorkspace();
    const cp = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'box' });
    const first = await cp.checkpoint();
    expect(first.status).toBe('created');
    expect(first.rows).toBe(5);
    for (const re of REFUSED)
      expect(
        first.refused.some((l) => re.test(l)),
        `${re} in\n${first.refused.join('\n')}`,
      ).toBe(true);
    expect(first.refused).toHaveLength(REFUSED.length);

    const { paths, index } = await stored(repo, first.commit);
    expect(paths).toContain('run/raw/t-0001/log.txt');
    expect(paths).toContain('run/raw/t-0000/log.txt');
    for (const bad of ['run/notes.txt', 'run/live.pipe', 'run/raw/t-0001/stream.pipe', 'run/raw/t-0005/result.json']) expect(paths).not.toContain(bad);
    expect(index).not.toContain('../x');
    expect(index).not.toContain('/etc/passwd');
    expect(
      index
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { test_id: string }).test_id),
    ).toEqual(['t-0000', 't-0001', 't-0002', 't-0005', 't-0006']);
    const meta = parseWipMeta((await readBlobs(repo, [`${first.commit}:wip.json`])).get(`${first.commit}:wip.json`));
    expect(meta?.refused).toEqual(first.refused);

    // Said once: the next tick (the pipes and the link still there) commits nothing and says nothing.
    const again = await cp.checkpoint();
    expect(again.status).toBe('unchanged');
    expect(again.refused).toEqual([]);
    // A later row is numbered where it is in index.jsonl; a new process knows what was said.
    appendFileSync(join(runDir, 'index.jsonl'), `${JSON.stringify(row(7, { answer_path: '../../../secret' }))}\n`);
    const other = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'box' });
    const next = await other.checkpoint({ full: true });
    expect(next.status).toBe('checkpointed');
    expect(next.refused).toHaveLength(1);
    expect(next.refused[0]).toMatch(/^index\.jsonl:8: answer_path /);
    expect(next.rows).toBe(5);
    const full = await stored(repo, next.commit);
    for (const bad of ['run/notes.txt', 'run/live.pipe', 'run/raw/t-0001/stream.pipe', 'run/raw/t-0005/result.json']) expect(full.paths).not.toContain(bad);
    expect(full.paths).toContain('run/raw/t-0002/log.txt');
  });

  it('CLI: `wip checkpoint` warns on stderr naming each file and exits 0; `wip list` names them', async () => {
    const { work, runDir } = await hostileWorkspace();
    const r = await runCli(['wip', 'checkpoint', runDir, '--no-push', '--dir', work], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/checkpoint 1 of exp\/2026-03-01T10-00-00-000Z .*\+5 rows/);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('agentv-results: warning: not checkpointed (publish would refuse it): '));
    expect(warnings).toHaveLength(REFUSED.length);
    for (const re of REFUSED)
      expect(
        warnings.some((l) => re.test(l.slice(l.indexOf('): ') + 3))),
        String(re),
      ).toBe(true);

    const list = await runCli(['wip', 'list', '--no-fetch', '--dir', work]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/6 things not checkpointed \(publish would refuse them\)/);
    expect(list.stdout).toMatch(/raw\/t-0005\/result\.json: output "\/etc\/passwd"/);
    const json = JSON.parse((await runCli(['wip', 'list', '--no-fetch', '--json', '--dir', work])).stdout) as { branches: { refused: string[] }[] };
    expect(json.branches[0]!.refused).toHaveLength(REFUSED.length);
  });
});
