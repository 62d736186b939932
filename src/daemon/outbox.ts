/**
 * The durable outbox: work that must survive a restart (a run to publish, results to push, WIP
 * branches to push or delete) as a small append-only JSONL journal under the git directory,
 * `<git-common-dir>/agentv-results/outbox.jsonl`.
 *
 *   {"v":1,"op":"put","id":"push-results","rev":"…","job":{"kind":"push-results"},"at":"…"}
 *   {"v":1,"op":"retry","id":"push-results","rev":"…","attempts":3,"next_at":"…","error":"…","at":"…"}
 *   {"v":1,"op":"done","id":"push-results","rev":"…","at":"…","note":"…"}
 *   {"v":1,"op":"dead","id":"publish:/…","rev":"…","error":"…","at":"…"}
 *
 * State is the fold of the records: the last `put` of an id is the job; a `done`/`retry`/`dead`
 * counts only for the `rev` it names, so a job re-queued while it was being processed (another
 * process appended a new put) is not lost when the first attempt completes. Ids coalesce: putting
 * a pending id again replaces it (one "push-results" however many runs wait for it).
 *
 * Appends are one write() each, fsync'ed, under a short lock shared by every writer (daemon, exec);
 * a torn last line (crash mid-write, full disk) is ignored on read. Compaction rewrites the journal
 * to the live entries (temporary file + fsync + rename), so it stays small.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';
import { redactDeep } from '../errors/redact.js';
import { absentAs, isAbsent } from '../errors/errors.js';
import { readRegularText } from '../util/safe-open.js';
import { OutboxError } from '../errors/daemon-errors.js';

export type OutboxJob =
  | { kind: 'publish'; run_dir: string; run_id: string; wip_ref: string | null }
  | { kind: 'push-results' }
  | { kind: 'push-wip'; ref: string }
  | { kind: 'finalize-wip'; ref: string; run_id: string; run_path: string; results_commit: string | null };

type Op = 'put' | 'retry' | 'done' | 'dead';

interface JournalRecord {
  v: 1;
  op: Op;
  id: string;
  rev: string;
  at: string;
  job?: OutboxJob;
  attempts?: number;
  next_at?: string;
  error?: string;
  note?: string;
}

export interface OutboxItem {
  id: string;
  rev: string;
  job: OutboxJob;
  queuedAt: string;
  attempts: number;
  /** Epoch ms before which the job is not retried. */
  nextAt: number;
  lastError: string | null;
  state: 'pending' | 'dead';
  /** When it was declared dead. */
  deadAt: string | null;
}

export const OUTBOX_DIR = 'agentv-results';
export const OUTBOX_FILE = 'outbox.jsonl';
/** Dead entries stay visible in `status` this long, then compaction drops them. */
const DEAD_RETENTION_MS = 7 * 24 * 3600 * 1000;

export function outboxPath(commonDir: string): string {
  return join(commonDir, OUTBOX_DIR, OUTBOX_FILE);
}

export function jobId(job: OutboxJob): string {
  switch (job.kind) {
    case 'publish':
      return `publish:${job.run_dir}`;
    case 'push-results':
      return 'push-results';
    case 'push-wip':
      return `push-wip:${job.ref}`;
    case 'finalize-wip':
      return `finalize-wip:${job.ref}`;
  }
}

function fold(text: string): Map<string, OutboxItem> {
  const items = new Map<string, OutboxItem>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let r: JournalRecord;
    try {
      r = JSON.parse(line) as JournalRecord;
    } catch {
      continue; // a torn line from a crash or a full disk: it never completed, so it never happened
    }
    if (r.v !== 1 || typeof r.id !== 'string') continue;
    const item = items.get(r.id);
    if (r.op === 'put' && r.job) {
      items.set(r.id, {
        id: r.id,
        rev: r.rev,
        job: r.job,
        queuedAt: r.at,
        attempts: r.attempts ?? 0,
        nextAt: r.next_at ? Date.parse(r.next_at) : 0,
        lastError: r.error ?? null,
        state: 'pending',
        deadAt: null,
      });
      continue;
    }
    if (!item || item.rev !== r.rev) continue;
    if (r.op === 'done') items.delete(r.id);
    else if (r.op === 'retry') {
      item.attempts = r.attempts ?? item.attempts + 1;
      item.nextAt = r.next_at ? Date.parse(r.next_at) : 0;
      item.lastError = r.error ?? null;
    } else if (r.op === 'dead') {
      item.state = 'dead';
      item.lastError = r.error ?? item.lastError;
      item.deadAt = r.at;
    }
  }
  return items;
}

export class Outbox {
  readonly file: string;
  private cache: { size: number; mtimeMs: number; items: Map<string, OutboxItem> } | null = null;

  constructor(file: string) {
    this.file = file;
  }

  static forCommonDir(commonDir: string): Outbox {
    return new Outbox(outboxPath(commonDir));
  }

  /** Current state (re-read only when the journal changed on disk). */
  async items(): Promise<OutboxItem[]> {
    // absent: no journal yet is an empty outbox (only ENOENT: anything else is not an empty outbox)
    const st = await stat(this.file).catch(absentAs(null));
    if (!st) return [];
    if (this.cache && this.cache.size === st.size && this.cache.mtimeMs === st.mtimeMs) return [...this.cache.items.values()];
    // absent: removed between stat and read, an empty outbox; an unreadable journal is named, never read as empty
    const text = await readRegularText(this.file, { kind: 'log' }).catch((err: unknown) => {
      if (isAbsent(err)) return '';
      throw new OutboxError(
        `cannot read the outbox journal ${this.file}: ${(err as Error).message} — move it aside to start an empty outbox`,
        false,
        this.file,
      );
    });
    const items = fold(text);
    this.cache = { size: st.size, mtimeMs: st.mtimeMs, items };
    return [...items.values()];
  }

  async pending(): Promise<OutboxItem[]> {
    return (await this.items()).filter((i) => i.state === 'pending');
  }

  async get(id: string): Promise<OutboxItem | null> {
    return (await this.items()).find((i) => i.id === id) ?? null;
  }

  /** Queue a job (replacing a pending job of the same id); returns its id. */
  async put(job: OutboxJob, opts: { now?: Date } = {}): Promise<string> {
    const id = jobId(job);
    const rev = randomBytes(6).toString('hex');
    await this.append([{ v: 1, op: 'put', id, rev, at: (opts.now ?? new Date()).toISOString(), job }]);
    return id;
  }

  async retry(item: OutboxItem, nextAt: number, error: string, opts: { now?: Date } = {}): Promise<void> {
    await this.append([
      {
        v: 1,
        op: 'retry',
        id: item.id,
        rev: item.rev,
        attempts: item.attempts + 1,
        next_at: new Date(nextAt).toISOString(),
        error,
        at: (opts.now ?? new Date()).toISOString(),
      },
    ]);
  }

  async done(item: OutboxItem, note?: string, opts: { now?: Date } = {}): Promise<void> {
    await this.append([{ v: 1, op: 'done', id: item.id, rev: item.rev, at: (opts.now ?? new Date()).toISOString(), ...(note ? { note } : {}) }]);
  }

  async dead(item: OutboxItem, error: string, opts: { now?: Date } = {}): Promise<void> {
    await this.append([{ v: 1, op: 'dead', id: item.id, rev: item.rev, error, at: (opts.now ?? new Date()).toISOString() }]);
  }

  /** Rewrite the journal to its live entries (pending, and dead ones still worth showing). */
  async compact(opts: { now?: Date } = {}): Promise<void> {
    const now = (opts.now ?? new Date()).getTime();
    await this.withLock(async () => {
      // absent: nothing to compact
      const text = await readRegularText(this.file, { kind: 'log' }).catch(absentAs(null));
      if (text === null) return;
      const live = [...fold(text).values()].filter((i) => i.state === 'pending' || now - Date.parse(i.deadAt ?? '') < DEAD_RETENTION_MS);
      const records: JournalRecord[] = [];
      for (const i of live) {
        records.push({
          v: 1,
          op: 'put',
          id: i.id,
          rev: i.rev,
          at: i.queuedAt,
          job: i.job,
          attempts: i.attempts,
          ...(i.nextAt ? { next_at: new Date(i.nextAt).toISOString() } : {}),
          ...(i.lastError ? { error: i.lastError } : {}),
        });
        if (i.state === 'dead') records.push({ v: 1, op: 'dead', id: i.id, rev: i.rev, at: i.deadAt ?? new Date(now).toISOString(), error: i.lastError ?? '' });
      }
      const tmp = `${this.file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        await writeDurably(tmp, records.map((r) => `${JSON.stringify(redactDeep(r))}\n`).join(''), 'w');
        await rename(tmp, this.file);
      } catch (err) {
        await rm(tmp, { force: true });
        throw explain(err, this.file);
      }
      this.cache = null;
    });
  }

  private async append(records: JournalRecord[]): Promise<void> {
    const data = records.map((r) => `${JSON.stringify(redactDeep(r))}\n`).join('');
    await this.withLock(async () => {
      // A torn last line (a crash or a full disk mid-write) must not swallow the next record.
      const sep = (await endsWithNewline(this.file)) ? '' : '\n';
      await writeDurably(this.file, sep + data, 'a').catch((err: unknown) => {
        throw explain(err, this.file);
      });
    });
    this.cache = null;
  }

  private async withLock<T>(fn: () => Promise<T>): Promise<T> {
    await mkdir(dirname(this.file), { recursive: true }).catch((err: unknown) => {
      throw explain(err, this.file);
    });
    // A read-only filesystem is said at once (the lock's retries would only wait it out).
    await access(dirname(this.file), constants.W_OK).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'EROFS') throw explain(err, this.file);
    });
    let release: () => Promise<void>;
    try {
      // Short critical sections; a holder killed -9 goes stale after 5 s.
      release = await lockfile.lock(this.file, {
        realpath: false,
        lockfilePath: `${this.file}.lock`,
        stale: 5_000,
        update: 1_000,
        retries: { retries: 60, factor: 1.2, minTimeout: 20, maxTimeout: 250, randomize: true },
        onCompromised: () => undefined,
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'ENOSPC' || code === 'EDQUOT') throw explain(err, this.file);
      throw new OutboxError(`could not lock the outbox ${this.file}: ${(err as Error).message}`, false, this.file);
    }
    try {
      return await fn();
    } finally {
      // best effort: the lock goes stale by itself; the operation's result is already decided
      await release().catch(() => undefined);
    }
  }
}

async function endsWithNewline(file: string): Promise<boolean> {
  // absent: no journal yet ends in no torn line; anything else propagates
  const fh = await open(file, 'r').catch(absentAs(null));
  if (!fh) return true;
  try {
    const { size } = await fh.stat();
    if (size === 0) return true;
    const buf = Buffer.alloc(1);
    await fh.read(buf, 0, 1, size - 1);
    return buf[0] === 0x0a;
  } finally {
    await fh.close();
  }
}

async function writeDurably(file: string, data: string, flag: 'a' | 'w'): Promise<void> {
  const fh = await open(file, flag);
  try {
    // A nearly full disk can take part of a write: keep writing until all of it is in, or the
    // kernel says ENOSPC (the torn remainder is then ignored by readers).
    const buf = Buffer.from(data, 'utf8');
    for (let off = 0; off < buf.length; ) {
      const { bytesWritten } = await fh.write(buf, off, buf.length - off);
      off += bytesWritten;
    }
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

function explain(err: unknown, file: string): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new OutboxError(`no space left to record in the outbox ${file}; free some space (the queued work is retried when it can be written)`, true, file);
  }
  if (code === 'EROFS') {
    return new OutboxError(
      `the outbox ${file} is on a read-only filesystem; nothing was recorded — make it writable (the queued work is kept and retried when it can be written)`,
      false,
      file,
    );
  }
  return err as Error;
}
