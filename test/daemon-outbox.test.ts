/**
 * The outbox journal and the small daemon pieces around it: fold semantics (put/retry/done/dead,
 * revisions so a job re-queued mid-processing is not lost), torn lines, compaction, concurrent
 * writers, backoff, JSON logs, and the file watcher's routing.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backoffDelay } from '../src/daemon/backoff.js';
import { createLogger } from '../src/daemon/log.js';
import { Outbox, jobId } from '../src/daemon/outbox.js';
import { findRunDirs, inspectRun } from '../src/runs/read/run-dir-state.js';
import { statusOf } from '../src/daemon/child.js';
import { RunWatcher } from '../src/daemon/watcher.js';
import { silentLogger } from '../src/daemon/log.js';
import { cleanupTempDirs, makeTempDir } from './helpers/git-fixtures.js';
import { waitFor } from './helpers/wip-fixtures.js';

afterAll(async () => {
  await cleanupTempDirs();
});

async function outbox(): Promise<Outbox> {
  return new Outbox(join(await makeTempDir('outbox'), 'agentv-results', 'outbox.jsonl'));
}

describe('Outbox', () => {
  it('folds put / retry / done / dead, coalescing by id', async () => {
    const ob = await outbox();
    expect(await ob.items()).toEqual([]);
    await ob.put({ kind: 'push-results' });
    await ob.put({ kind: 'push-results' }); // coalesced
    await ob.put({ kind: 'publish', run_dir: '/r/a', run_id: 'e/a', wip_ref: null });
    expect((await ob.pending()).map((i) => i.id).sort()).toEqual(['publish:/r/a', 'push-results']);
    const push = (await ob.get('push-results'))!;
    // A clock the test sets: the retry is due at a fixed instant, read back to the millisecond.
    const now = new Date('2026-04-01T10:00:00.000Z');
    const due = now.getTime() + 5_000;
    await ob.retry(push, due, 'origin is unreachable', { now });
    const retried = (await ob.get('push-results'))!;
    expect(retried).toMatchObject({ attempts: 1, lastError: 'origin is unreachable', state: 'pending' });
    expect(retried.nextAt).toBe(due);
    await ob.done(retried);
    const pub = (await ob.get('publish:/r/a'))!;
    await ob.dead(pub, 'the run directory is gone');
    expect(await ob.pending()).toEqual([]);
    expect((await ob.items()).map((i) => [i.id, i.state])).toEqual([['publish:/r/a', 'dead']]);
  });

  it('a job queued again while it was being processed survives the first completion', async () => {
    const ob = await outbox();
    await ob.put({ kind: 'push-wip', ref: 'refs/heads/agentv/wip/h/r' });
    const seen = (await ob.get(jobId({ kind: 'push-wip', ref: 'refs/heads/agentv/wip/h/r' })))!;
    await ob.put({ kind: 'push-wip', ref: 'refs/heads/agentv/wip/h/r' }); // a new checkpoint meanwhile
    await ob.done(seen);
    expect(await ob.pending()).toHaveLength(1);
  });

  it('ignores a torn last line and keeps appending on a fresh line', async () => {
    const ob = await outbox();
    await ob.put({ kind: 'push-results' });
    appendFileSync(ob.file, '{"v":1,"op":"put","id":"publish:/x","rev":"ab'); // crash mid-write
    expect((await ob.pending()).map((i) => i.id)).toEqual(['push-results']);
    await ob.put({ kind: 'publish', run_dir: '/y', run_id: 'e/y', wip_ref: null });
    expect((await ob.pending()).map((i) => i.id).sort()).toEqual(['publish:/y', 'push-results']);
  });

  it('compacts to the live entries and survives many concurrent writers', async () => {
    const ob = await outbox();
    await Promise.all(Array.from({ length: 40 }, (_, i) => ob.put({ kind: 'publish', run_dir: `/r/${i}`, run_id: `e/${i}`, wip_ref: null })));
    // A second Outbox object on the same file (another process) sees every entry.
    const other = new Outbox(ob.file);
    expect(await other.pending()).toHaveLength(40);
    for (const item of (await ob.pending()).slice(0, 30)) await ob.done(item);
    const before = readFileSync(ob.file, 'utf8').split('\n').length;
    await ob.compact();
    const after = readFileSync(ob.file, 'utf8').trim().split('\n');
    expect(after).toHaveLength(10);
    expect(after.length).toBeLessThan(before);
    expect(await other.pending()).toHaveLength(10);
  });
});

describe('daemon helpers', () => {
  it('backs off exponentially with jitter, capped', () => {
    const policy = { baseMs: 1_000, capMs: 8_000 };
    expect(backoffDelay(1, policy, () => 0)).toBe(500);
    expect(backoffDelay(1, policy, () => 1)).toBe(1_000);
    expect(backoffDelay(3, policy, () => 1)).toBe(4_000);
    expect(backoffDelay(20, policy, () => 1)).toBe(8_000);
  });

  it('writes one JSON object per line with --log-format json', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'json', write: (l) => lines.push(l), now: () => new Date('2026-03-01T00:00:00Z') });
    log.info('published', { run: 'e/r', error: new Error('boom') });
    log.debug('hidden');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({ ts: '2026-03-01T00:00:00.000Z', level: 'info', msg: 'published', run: 'e/r', error: 'boom' });
    const text: string[] = [];
    createLogger({ write: (l) => text.push(l), now: () => new Date(0) }).warn('queued', { remote: 'origin', note: 'two words' });
    expect(text[0]).toBe('1970-01-01T00:00:00.000Z warn  queued remote=origin note="two words"\n');
  });

  it('reports a signal death shell-style', () => {
    expect(statusOf(3, null)).toBe(3);
    expect(statusOf(null, 'SIGTERM')).toBe(143);
    expect(statusOf(null, 'SIGKILL')).toBe(137);
  });

  it('finds run workspaces one or two levels down and tells their state', async () => {
    const root = await makeTempDir('root');
    mkdirSync(join(root, 'exp/ts1'), { recursive: true });
    writeFileSync(join(root, 'exp/ts1/index.jsonl'), '');
    mkdirSync(join(root, 'direct'), { recursive: true });
    writeFileSync(join(root, 'direct/index.jsonl'), '');
    writeFileSync(join(root, 'direct/summary.json'), '{"half":');
    mkdirSync(join(root, '.hidden/x'), { recursive: true });
    writeFileSync(join(root, '.hidden/x/index.jsonl'), '');
    expect(await findRunDirs(root)).toEqual([join(root, 'direct'), join(root, 'exp/ts1')]);
    expect(await inspectRun(join(root, 'direct'))).toMatchObject({ hasIndex: true, hasSummary: true, summaryComplete: false });
    expect(await inspectRun(join(root, 'nope'))).toBeNull();
    expect(await findRunDirs(join(root, 'missing'))).toEqual([]);
  });

  it('the watcher reports run-level files and ignores sidecar trees', async () => {
    const root = await makeTempDir('watch');
    const changes: (string | null)[] = [];
    const w = new RunWatcher(root, { logger: silentLogger, onChange: (d) => changes.push(d) });
    await w.start();
    try {
      expect(w.mode).toBe('events');
      mkdirSync(join(root, 'exp/ts/suite/test/attempt-1'), { recursive: true });
      writeFileSync(join(root, 'exp/ts/suite/test/attempt-1/result.json'), '{}');
      writeFileSync(join(root, 'exp/ts/index.jsonl'), '{}\n');
      await waitFor('index event', () => changes.includes(join(root, 'exp/ts')), 30_000);
      writeFileSync(join(root, 'exp/ts/summary.json'), '{}');
      await waitFor('summary event', () => changes.filter((c) => c === join(root, 'exp/ts')).length >= 2, 30_000);
      expect(changes.some((c) => c !== null && c.includes('suite'))).toBe(false);
    } finally {
      await w.close();
    }
  });
});
