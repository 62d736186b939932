/**
 * Retention racing publishes and another retention over git:// (a git daemon on 127.0.0.1 whose
 * bare remote refuses non-fast-forward pushes): every publish lands, every expired run is gone
 * exactly once, nothing is forced (each remote tip descends from the one before), no sync branch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { expireAndPush } from '../src/archive/push-archive.js';
import { publish } from '../src/publish/publish.js';
import { cleanupTempDirs, freePort, git, makeTempDir, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { ARTIFACTS_REF, RESULTS_REF, expectFsckClean, makeRunWorkspace, makeUserRepo, startDaemonOn, type Daemon } from './publish-helpers.js';

let restore: () => void;
let daemon: Daemon | null = null;
const NOW = new Date('2026-03-20T12:00:00Z');

beforeAll(() => {
  restore = useIsolatedGitEnv();
});
afterAll(async () => {
  await daemon?.stop();
  restore();
  await cleanupTempDirs();
});

async function catalogIds(dir: string, ref: string): Promise<string[]> {
  const files = (await git(dir, ['ls-tree', '--name-only', `${ref}:.indexes`])).split('\n').filter((f) => /^agentv-results\.\d/.test(f));
  const ids: string[] = [];
  for (const f of files)
    for (const l of (await git(dir, ['cat-file', 'blob', `${ref}:.indexes/${f}`])).split('\n').filter(Boolean))
      ids.push((JSON.parse(l) as { run_id: string }).run_id);
  return ids.sort();
}
const rootDirs = async (dir: string, ref: string) => (await git(dir, ['ls-tree', '-d', '--name-only', ref])).split('\n').filter((d) => d && !d.startsWith('.'));
const tipOf = async (dir: string, ref: string) => (await git(dir, ['rev-parse', ref])).trim();

describe('retention over git:// against a remote that refuses non-fast-forward pushes', () => {
  it('a retention on one clone and publishes plus a retention on another merge without loss', async () => {
    const port = await freePort();
    const a = await makeUserRepo('remote-url', `git://127.0.0.1:${port}/remote.git`);
    daemon = await startDaemonOn(a.root, port);
    expect(await git(a.remote, ['config', 'receive.denyNonFastForwards'])).toBe('true');

    // 03-14 and 03-15 are past a 3-day window on 03-20; 03-18 is not.
    const old = [
      await makeRunWorkspace({ day: 0, minute: 0, rows: 2, seed: 1 }),
      await makeRunWorkspace({ day: 0, minute: 9, rows: 2, seed: 2 }),
      await makeRunWorkspace({ day: 1, minute: 3, rows: 2, seed: 3 }),
    ];
    const recent = await makeRunWorkspace({ day: 4, minute: 1, rows: 2, seed: 4 });
    for (const r of [...old, recent]) await publish({ run: r.dir, cwd: a.work, push: true });
    const remoteBefore = { results: await tipOf(a.remote, RESULTS_REF), artifacts: await tipOf(a.remote, ARTIFACTS_REF) };

    const bRoot = await makeTempDir('retention-b-');
    const b = join(bRoot, 'work');
    await git(bRoot, ['clone', '--quiet', `git://127.0.0.1:${port}/remote.git`, b]);
    await git(b, ['fetch', '--quiet', 'origin', 'refs/heads/agentv/*:refs/heads/agentv/*']);
    const fresh = await makeRunWorkspace({ day: 5, minute: 2, rows: 2, seed: 5 });
    const recent2 = await makeRunWorkspace({ day: 4, minute: 30, rows: 2, seed: 7 });
    const sameDay = await makeRunWorkspace({ day: 1, minute: 40, rows: 2, seed: 6 });

    // 1. Diverged for sure: A's retention is committed but not pushed when B's publish lands; A's
    //    push then has to merge (remote tip first) and still lands, without force.
    const expired = await expireAndPush({ cwd: a.work, keepDays: 3, now: NOW, push: false });
    expect(expired.expired.map((e) => e.run_id).sort()).toEqual(old.map((r) => r.runId).sort());
    const retentionCommit = expired.refs.find((r) => r.ref === RESULTS_REF)!.after;
    const p1 = await publish({ run: fresh.dir, cwd: b, push: true });
    expect(p1.push?.landed, p1.push?.message).toBe(true);
    const pushed = await expireAndPush({ cwd: a.work, keepDays: 3, now: NOW, push: true });
    expect(pushed.push?.live?.landed, pushed.push?.live?.message).toBe(true);
    await git(a.remote, ['merge-base', '--is-ancestor', retentionCommit, RESULTS_REF]);
    expect(Number(await git(a.remote, ['rev-list', '--merges', '--count', `${remoteBefore.results}..${RESULTS_REF}`]))).toBeGreaterThan(0);

    // 2. Racing: B's retention (B still holds its own view) against A's publish, then B publishes
    //    a run on the day whose catalog file A's retention emptied, while A runs retention again.
    const [bExpired, p2] = await Promise.all([
      expireAndPush({ cwd: b, keepDays: 3, now: NOW, push: true }),
      publish({ run: recent2.dir, cwd: a.work, push: true }),
    ]);
    expect(bExpired.push?.live?.landed, bExpired.push?.live?.message).toBe(true);
    expect(p2.push?.landed, p2.push?.message).toBe(true);
    const [p3, again] = await Promise.all([
      publish({ run: sameDay.dir, cwd: b, push: true }),
      expireAndPush({ cwd: a.work, keepDays: 3, now: NOW, push: true }),
    ]);
    expect(p3.push?.landed, p3.push?.message).toBe(true);
    expect(again.push?.live?.landed, again.push?.live?.message).toBe(true);

    const remote = a.remote;
    // Nothing forced: the remote's tips descend from what it had before the retention.
    await git(remote, ['merge-base', '--is-ancestor', remoteBefore.results, RESULTS_REF]);
    await git(remote, ['merge-base', '--is-ancestor', remoteBefore.artifacts, ARTIFACTS_REF]);
    // The old runs are gone from both branches, every publish is there exactly once.
    // No loss: what is on the remote is exactly what was published minus what a retention that
    // landed says it removed (B's 03-15 run is past the window too: whether A's last retention
    // saw it depends on which push landed first), in the catalog and on both branches alike. The old runs are gone; the runs inside the window are all there.
    const removed = new Set([...expired.expired, ...pushed.expired, ...bExpired.expired, ...again.expired].map((e) => e.run_id));
    for (const r of old) expect(removed.has(r.runId)).toBe(true);
    expect([recent, fresh, recent2].some((r) => removed.has(r.runId))).toBe(false);
    const expected = [...old, recent, fresh, recent2, sameDay]
      .map((r) => r.runId)
      .filter((id) => !removed.has(id))
      .sort();
    expect(expected).toEqual(expect.arrayContaining([recent.runId, fresh.runId, recent2.runId]));
    expect((await rootDirs(remote, RESULTS_REF)).sort()).toEqual(expected);
    expect((await rootDirs(remote, ARTIFACTS_REF)).sort()).toEqual(expected);
    expect(await catalogIds(remote, RESULTS_REF)).toEqual(expected);
    // Both retentions' log lines survive the merges (a union of lines).
    const log = (await git(remote, ['cat-file', 'blob', `${RESULTS_REF}:.indexes/agentv-results-retention.jsonl`])).split('\n').filter(Boolean);
    const logIds = log.map((l) => (JSON.parse(l) as { id: string }).id);
    expect(logIds).toContain(expired.id);
    for (const e of [bExpired, again]) if (e.id) expect(logIds).toContain(e.id);
    expect(new Set(logIds).size).toBe(logIds.length);
    // No genuine conflict anywhere: no sync branch was created.
    expect(await git(remote, ['for-each-ref', '--format=%(refname)', 'refs/heads/agentv/results-sync/'])).toBe('');
    await expectFsckClean(remote);
  }, 180_000);
});
