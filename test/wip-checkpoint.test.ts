/**
 * WIP checkpoints in-process against real repositories: branch layout, incremental content (one
 * index segment per checkpoint, only new sidecars), half-written lines, rewritten indexes, races
 * between two checkpointers, the session policy (start / every N rows / interval / flush), and the
 * user's checkout left untouched.
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lsTree, openRepo, readBlobs, resolveRef, type Repo } from '../src/git/index.js';
import { Checkpointer, WipSession, parseWipMeta, runIdSlug, wipBranch, wipHost, type WipEvent } from '../src/wip/index.js';
import { refComponent } from '../src/wip/checkpoint-layout.js';
import { countRows, readIndexDelta } from '../src/wip/scan.js';
import { git, makeTempDir, makeUserRepoWithRemote, snapshotCheckout, isolateGitForSuite } from './helpers/git-fixtures.js';
import { appendRows, row, testIds, waitFor } from './helpers/wip-fixtures.js';

isolateGitForSuite();

const AUTHOR = { name: 'WIP Test', email: 'wip@example.invalid' };

async function setup(): Promise<{ work: string; repo: Repo; runDir: string }> {
  const fx = await makeUserRepoWithRemote();
  const repo = await openRepo(fx.work);
  // The workspace lives outside the checkout, so the snapshot compares git state only.
  const runDir = join(await makeTempDir('wip-runs'), 'exp/2026-03-01T10-00-00-000Z');
  mkdirSync(runDir, { recursive: true });
  return { work: fx.work, repo, runDir };
}

async function blob(repo: Repo, spec: string): Promise<string | null> {
  return (await readBlobs(repo, [spec])).get(spec)?.toString('utf8') ?? null;
}

async function capturedIndex(repo: Repo, commit: string): Promise<string> {
  const segs = (await lsTree(repo, commit, { path: 'index/', recursive: true })).sort((a, b) => (a.path < b.path ? -1 : 1));
  const blobs = await readBlobs(
    repo,
    segs.map((s) => s.sha),
  );
  return segs.map((s) => blobs.get(s.sha)!.toString('utf8')).join('');
}

describe('branch names', () => {
  it('names the branch agentv/wip/<host>/<run-id-slug>, safe for git whatever the input', () => {
    expect(wipBranch('ci-box-7', 'nightly/2026-03-01T10-00-00-000Z')).toBe('agentv/wip/ci-box-7/nightly--2026-03-01T10-00-00-000Z');
    expect(wipHost({ AGENTV_RESULTS_HOST: 'My Laptop.local' } as NodeJS.ProcessEnv)).toMatch(/^my_laptop\.local-[0-9a-f]{8}$/);
    for (const bad of ['..', '.hidden', 'x.lock', 'a b', 'a:b', 'ü', '-lead', '']) {
      const c = refComponent(bad);
      expect(c).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
      expect(c.endsWith('.lock')).toBe(false);
      expect(c.includes('..')).toBe(false);
    }
    // Distinct run ids never share a branch, even when sanitizing would make them equal.
    expect(runIdSlug('a--b/c')).not.toBe(runIdSlug('a/b--c'));
    expect(runIdSlug('exp/t s')).not.toBe(runIdSlug('exp/t_s'));
  });
});

describe('reading index.jsonl incrementally', () => {
  it('captures complete lines only, and notices a rewritten file', async () => {
    const dir = await makeTempDir('wip-scan');
    const file = join(dir, 'index.jsonl');
    writeFileSync(file, '{"a":1}\n{"a":2}\n{"a":');
    const d1 = await readIndexDelta(file, null);
    expect(d1.complete.toString()).toBe('{"a":1}\n{"a":2}\n');
    expect(d1.rows).toBe(2);
    expect(d1.end).toBe(16);
    appendFileSync(file, '3}\n\n{"a":4}\n');
    const d2 = await readIndexDelta(file, { bytes: d1.end, tailSha256: d1.tailSha256 });
    expect(d2.rewrite).toBe(false);
    expect(d2.complete.toString()).toBe('{"a":3}\n\n{"a":4}\n');
    expect(d2.rows).toBe(2);
    writeFileSync(file, '{"b":1}\n{"b":2}\n{"b":3}\n{"b":4}\n');
    const d3 = await readIndexDelta(file, { bytes: d2.end, tailSha256: d2.tailSha256 });
    expect(d3.rewrite).toBe(true);
    expect(d3.start).toBe(0);
    expect(d3.rows).toBe(4);
    expect(countRows(Buffer.from('x\n \n\ty\nz'))).toBe(2);
  });
});

describe('Checkpointer', () => {
  it('commits only what changed, as a fast-forward chain, and leaves the checkout alone', async () => {
    const { work, repo, runDir } = await setup();
    const before = await snapshotCheckout(work);
    appendRows(runDir, 0, 3, { sidecars: true });
    writeFileSync(join(runDir, 'benchmark.json'), '{"v":1}\n');
    const cp = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'hosta' });
    expect(cp.branch).toBe('agentv/wip/hosta/exp--2026-03-01T10-00-00-000Z');

    const c1 = await cp.checkpoint();
    expect(c1).toMatchObject({ status: 'created', checkpoint: 1, rows: 3, addedRows: 3, previous: null });
    expect(c1.files).toBe(4); // three sidecars + benchmark.json
    expect(await git(work, ['rev-list', '--count', c1.commit])).toBe('1'); // an orphan root

    // Nothing new: no commit.
    const same = await cp.checkpoint();
    expect(same.status).toBe('unchanged');
    expect(same.commit).toBe(c1.commit);

    appendRows(runDir, 3, 5, { sidecars: true });
    appendFileSync(join(runDir, 'index.jsonl'), JSON.stringify(row(5)).slice(0, 30)); // half-written
    const c2 = await cp.checkpoint();
    expect(c2).toMatchObject({ status: 'checkpointed', checkpoint: 2, rows: 5, addedRows: 2, files: 2, previous: c1.commit });
    expect(await git(work, ['rev-parse', `${c2.commit}^`])).toBe(c1.commit);
    // Exactly two files changed in the second commit (plus wip.json and the new segment).
    const changed = (await git(work, ['diff-tree', '--no-commit-id', '--name-only', '-r', c1.commit, c2.commit])).split('\n').sort();
    expect(changed).toEqual(['index/00000002.jsonl', 'run/raw/t-0003/log.txt', 'run/raw/t-0004/log.txt', 'wip.json']);

    const meta = parseWipMeta(await blob(repo, `${c2.commit}:wip.json`));
    expect(meta).toMatchObject({ run_id: 'exp/2026-03-01T10-00-00-000Z', host: 'hosta', rows: 5, checkpoint: 2, segments: 2, finished: false });
    const onDisk = readFileSync(join(runDir, 'index.jsonl'), 'utf8');
    expect(await capturedIndex(repo, c2.commit)).toBe(onDisk.slice(0, meta!.index_bytes));
    expect(testIds(await capturedIndex(repo, c2.commit))).toEqual(['t-0000', 't-0001', 't-0002', 't-0003', 't-0004']);

    // The half line completes: captured once, as a row.
    appendFileSync(join(runDir, 'index.jsonl'), JSON.stringify(row(5)).slice(30) + '\n');
    writeFileSync(join(runDir, 'summary.json'), '{"done":true}\n');
    const c3 = await cp.checkpoint();
    expect(c3).toMatchObject({ rows: 6, addedRows: 1, finished: true });
    expect(testIds(await capturedIndex(repo, c3.commit))).toHaveLength(6);
    expect(await blob(repo, `${c3.commit}:run/summary.json`)).toBe('{"done":true}\n');

    // A top-level file removed is removed from the checkpoint too.
    rmSync(join(runDir, 'benchmark.json'));
    const c4 = await cp.checkpoint();
    expect(await blob(repo, `${c4.commit}:run/benchmark.json`)).toBeNull();

    expect(await snapshotCheckout(work)).toEqual(before);
    expect(await git(work, ['fsck', '--no-dangling'])).toBe('');
  });

  it('a new process continues from the branch state: no row twice, none skipped', async () => {
    const { repo, runDir } = await setup();
    appendRows(runDir, 0, 4);
    await (await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' })).checkpoint();
    appendRows(runDir, 4, 7);
    const again = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    expect(again.state.meta?.rows).toBe(4);
    expect(await again.pendingRows()).toBe(3);
    const r = await again.checkpoint();
    expect(r).toMatchObject({ checkpoint: 2, rows: 7, addedRows: 3 });
    expect(testIds(await capturedIndex(repo, r.commit))).toEqual(['t-0000', 't-0001', 't-0002', 't-0003', 't-0004', 't-0005', 't-0006']);
  });

  it('captures a rewritten index.jsonl again from the start', async () => {
    const { repo, runDir } = await setup();
    appendRows(runDir, 0, 5);
    const cp = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    await cp.checkpoint();
    // The runner rewrote its index (e.g. dropped a retried row): shorter, different bytes.
    writeFileSync(join(runDir, 'index.jsonl'), '');
    appendRows(runDir, 1, 4);
    const r = await cp.checkpoint();
    expect(r).toMatchObject({ rewrote: true, rows: 3 });
    expect(testIds(await capturedIndex(repo, r.commit))).toEqual(['t-0001', 't-0002', 't-0003']);
  });

  it('two checkpointers racing on one run never lose or duplicate rows (compare-and-swap)', async () => {
    const { work, repo, runDir } = await setup();
    appendRows(runDir, 0, 2);
    const a = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    const b = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    for (let i = 0; i < 6; i++) {
      appendRows(runDir, 2 + i * 3, 5 + i * 3);
      await Promise.all([a.checkpoint(), b.checkpoint()]);
    }
    const tip = (await resolveRef(repo, a.ref))!;
    expect(testIds(await capturedIndex(repo, tip))).toEqual(Array.from({ length: 20 }, (_, i) => `t-${String(i).padStart(4, '0')}`));
    // Linear: every commit has at most one parent.
    expect(await git(work, ['rev-list', '--min-parents=2', tip])).toBe('');
    expect(parseWipMeta(await blob(repo, `${tip}:wip.json`))?.rows).toBe(20);
  });

  it('a full checkpoint also captures files no row points at, and deletions', async () => {
    const { repo, runDir } = await setup();
    appendRows(runDir, 0, 2);
    mkdirSync(join(runDir, 'logs'), { recursive: true });
    writeFileSync(join(runDir, 'logs/run.log'), 'hello\n');
    const cp = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    const inc = await cp.checkpoint();
    expect(await blob(repo, `${inc.commit}:run/logs/run.log`)).toBeNull();
    const full = await cp.checkpoint({ full: true });
    expect(await blob(repo, `${full.commit}:run/logs/run.log`)).toBe('hello\n');
    rmSync(join(runDir, 'logs'), { recursive: true });
    const full2 = await cp.checkpoint({ full: true });
    expect(await blob(repo, `${full2.commit}:run/logs/run.log`)).toBeNull();
  });

  it('refuses a workspace without index.jsonl and a branch that is not a WIP branch', async () => {
    const { work, repo } = await setup();
    const empty = join(await makeTempDir('wip-empty'), 'exp/empty');
    mkdirSync(empty, { recursive: true });
    const cp = await Checkpointer.open({ repo, runDir: empty, author: AUTHOR, host: 'h' });
    await expect(cp.checkpoint()).rejects.toThrow(/no index\.jsonl/);
    await git(work, ['update-ref', 'refs/heads/agentv/wip/h/exp--x', 'HEAD']);
    await expect(Checkpointer.open({ repo, runDir: join(await makeTempDir('wip-x'), 'exp/x'), author: AUTHOR, host: 'h' })).rejects.toThrow(
      /not a WIP checkpoint branch/,
    );
  });
});

describe('WipSession (the policy an eval runner embeds)', () => {
  it('checkpoints at start, after every N rows, on the interval, and flushes on stop', async () => {
    const { repo, runDir } = await setup();
    appendRows(runDir, 0, 1);
    const events: WipEvent[] = [];
    const session = await WipSession.start({
      repo,
      remoteName: null,
      runDir,
      host: 'h',
      everyRows: 5,
      intervalMs: 60_000,
      pollMs: 20,
      onEvent: (e) => events.push(e),
    });
    const checkpoints = () => events.filter((e) => e.type === 'checkpoint' && e.result.status !== 'unchanged');
    expect(checkpoints()).toHaveLength(1); // at start
    // A positive signal instead of a pause: record the pending-row count each finished poll saw.
    const inside = session as unknown as { poll: () => Promise<void>; checkpointer: { pendingRows: () => Promise<number> } };
    const polled: number[] = [];
    let seen = -1;
    const pendingRows = inside.checkpointer.pendingRows.bind(inside.checkpointer);
    inside.checkpointer.pendingRows = async () => (seen = await pendingRows());
    const poll = inside.poll.bind(session);
    inside.poll = async () => {
      await poll();
      polled.push(seen);
    };

    appendRows(runDir, 1, 4); // 3 rows: below the row trigger, interval far away
    await waitFor('a poll that saw the 3 pending rows', () => polled.includes(3), 30_000);
    expect(checkpoints()).toHaveLength(1);
    appendRows(runDir, 4, 7); // 6 pending now
    await waitFor('row-triggered checkpoint', () => checkpoints().length === 2, 30_000);

    appendRows(runDir, 7, 8);
    const last = await session.stop();
    expect(last?.rows).toBe(8);
    expect(events.some((e) => e.type === 'error')).toBe(false);

    // Interval trigger on its own.
    const ev2: WipEvent[] = [];
    const s2 = await WipSession.start({ repo, remoteName: null, runDir, host: 'h', everyRows: 0, intervalMs: 100, pollMs: 20, onEvent: (e) => ev2.push(e) });
    appendRows(runDir, 8, 9);
    await waitFor('interval checkpoint', () => ev2.some((e) => e.type === 'checkpoint' && e.result.rows === 9), 30_000);
    await s2.stop({ flush: false });
  });
});
