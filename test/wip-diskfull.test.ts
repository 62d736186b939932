/**
 * A disk that fills: clear errors and nothing half-written. Uses a real, small tmpfs (so the
 * kernel returns ENOSPC exactly as it would on a full disk); mounting needs CAP_SYS_ADMIN, and the
 * suite says plainly that it skipped when it cannot mount.
 *
 *  - recover into a full disk: exit 3, "no space left", no destination, no staging folder left,
 *    and a same-run workspace that was there stays byte-identical;
 *  - a checkpoint whose repository is on the full disk fails without moving the ref; after space
 *    is freed, fsck is clean and the next checkpoint captures every row;
 *  - the outbox cannot record: a clear error, and the journal still reads correctly afterwards.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../src/daemon/outbox.js';
import { openRepo, resolveRef, runGit } from '../src/git/index.js';
import { Checkpointer, recoverWip } from '../src/wip/index.js';
import { runCli } from './helpers/cli.js';
import { cleanupTempDirs, git, makeTempDir, makeUserRepoWithRemote, useIsolatedGitEnv } from './helpers/git-fixtures.js';
import { appendRows } from './helpers/wip-fixtures.js';
import { mountTmpfs, type Tmpfs } from './helpers/tmpfs.js';

let restore: () => void;
let fs: Tmpfs;
let mnt = '';

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  mnt = await makeTempDir('wip-tmpfs');
  fs = mountTmpfs(mnt, '4m');
});
afterAll(async () => {
  fs.unmount();
  restore();
  await cleanupTempDirs();
});

const AUTHOR = { name: 'WIP Test', email: 'wip@example.invalid' };
const RUN_ID = 'exp/2026-03-01T10-00-00-000Z';

/** Fills the tmpfs until the kernel says ENOSPC; returns the ballast directory (delete it to free). */
const fill = () => fs.fill();

function skipUnlessMounted(ctx: { skip: (note?: string) => void }): void {
  fs.require(ctx);
}

describe('a disk that fills', () => {
  it('recover: clear error, exit 3, nothing half-written, an existing workspace untouched', async (ctx) => {
    skipUnlessMounted(ctx);
    const fx = await makeUserRepoWithRemote();
    const repo = await openRepo(fx.work);
    const runDir = join(fx.work, '.agentv/results', RUN_ID);
    appendRows(runDir, 0, 40, { sidecars: true });
    writeFileSync(join(runDir, 'big.bin'), Buffer.alloc(600 * 1024, 7));
    await (await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' })).checkpoint();

    const existing = join(mnt, 'same', 'exp', '2026-03-01T10-00-00-000Z');
    appendRows(existing, 0, 2, { sidecars: true });
    const before = readFileSync(join(existing, 'index.jsonl'), 'utf8');
    const filler = fill();
    try {
      const out = join(mnt, 'fresh', 'exp', '2026-03-01T10-00-00-000Z');
      mkdirSync(join(mnt, 'fresh', 'exp'), { recursive: true });
      const err = await recoverWip({ repo, remote: null, source: RUN_ID, out, fetch: false }).then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
      expect(err?.message).toMatch(/no space left while writing .*: nothing was changed there \(the checkpoint is still on agentv\/wip\/h\//);
      expect(err?.code).toBe('no-space'); // the error model's code for a full disk (exit 3)
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(join(mnt, 'fresh', 'exp'))).toEqual([]); // no staging folder left behind

      const cli = await runCli(['wip', 'recover', RUN_ID, '--out', existing, '--no-fetch', '--dir', fx.work]);
      expect(cli.code).toBe(3);
      expect(cli.stderr).toMatch(/no space left/);
      expect(readFileSync(join(existing, 'index.jsonl'), 'utf8')).toBe(before);
      expect(readdirSync(join(mnt, 'same', 'exp'))).toEqual(['2026-03-01T10-00-00-000Z']);
    } finally {
      rmSync(filler, { recursive: true, force: true });
    }
    // With space again, the same command works.
    const ok = await recoverWip({ repo, remote: null, source: RUN_ID, out: join(mnt, 'fresh', 'exp', '2026-03-01T10-00-00-000Z'), fetch: false });
    expect(ok.rows).toBe(40);
    rmSync(join(mnt, 'fresh'), { recursive: true, force: true });
    rmSync(join(mnt, 'same'), { recursive: true, force: true });
  });

  it('checkpoint: fails without moving the ref, then captures every row once space is back', async (ctx) => {
    skipUnlessMounted(ctx);
    const work = join(mnt, 'repo');
    await runGit(['init', '-q', '-b', 'main', work]);
    const repo = await openRepo(work);
    const runDir = join(await makeTempDir('wip-full-run'), 'exp', '2026-03-02T10-00-00-000Z');
    appendRows(runDir, 0, 3);
    const cp = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    const first = await cp.checkpoint();
    // Rows with a large incompressible sidecar each, so the pack cannot fit.
    appendRows(runDir, 3, 10, { sidecars: true });
    for (let i = 3; i < 10; i++)
      writeFileSync(join(runDir, `raw/t-000${i}/blob.bin`), Buffer.from(Array.from({ length: 300 * 1024 }, () => Math.floor(Math.random() * 256))));
    const filler = fill();
    try {
      await expect(cp.checkpoint()).rejects.toThrow(/No space left|no space|fast-import/i);
      expect(await resolveRef(repo, cp.ref)).toBe(first.commit);
    } finally {
      rmSync(filler, { recursive: true, force: true });
    }
    expect(await git(work, ['fsck', '--no-dangling', '--no-progress'])).toBe('');
    // Free what the next pack needs: the big sidecars are dropped from the workspace.
    for (let i = 3; i < 10; i++) rmSync(join(runDir, `raw/t-000${i}/blob.bin`));
    const next = await cp.checkpoint();
    expect(next).toMatchObject({ rows: 10, addedRows: 7, previous: first.commit });
    const reread = await Checkpointer.open({ repo, runDir, author: AUTHOR, host: 'h' });
    expect(reread.state.meta?.rows).toBe(10);
    rmSync(work, { recursive: true, force: true });
  });

  it('outbox: a clear error when the journal cannot be written; the journal reads fine afterwards', async (ctx) => {
    skipUnlessMounted(ctx);
    const ob = new Outbox(join(mnt, 'git', 'agentv-results', 'outbox.jsonl'));
    await ob.put({ kind: 'push-results' });
    const filler = fill();
    const recorded = ['push-results'];
    try {
      // The journal's last page may still have room for a few records: write until it is full.
      let err: (Error & { code?: string }) | null = null;
      for (let i = 0; i < 200 && err === null; i++) {
        err = await ob.put({ kind: 'publish', run_dir: `/r${i}`, run_id: `e/r${i}`, wip_ref: null }).then(
          () => {
            recorded.push(`publish:/r${i}`);
            return null;
          },
          (e: Error & { code?: string }) => e,
        );
      }
      expect(err?.message).toMatch(/no space left to record in the outbox/);
      expect(err?.code).toBe('no-space'); // the error model's code for a full disk (exit 3)
    } finally {
      rmSync(filler, { recursive: true, force: true });
    }
    // Exactly the records that were acknowledged; the failed one is not half there.
    expect((await ob.pending()).map((i) => i.id).sort()).toEqual([...recorded].sort());
    await ob.put({ kind: 'publish', run_dir: '/r', run_id: 'e/r', wip_ref: null });
    expect((await ob.pending()).map((i) => i.id).sort()).toEqual([...recorded, 'publish:/r'].sort());
    rmSync(join(mnt, 'git'), { recursive: true, force: true });
  });
});
