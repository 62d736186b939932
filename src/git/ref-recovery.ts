/**
 * Recovering from a git killed in the middle of a ref transaction.
 *
 * `update-ref --stdin` moves several refs "atomically", but with the files backend the commit
 * phase renames one `<ref>.lock` after another: a kill between two renames leaves one ref moved,
 * the other unmoved and its `.lock` file behind. Every later update of that ref then fails with
 * "cannot lock ref … File exists" — for ever, since nothing removes the file.
 *
 * Two pieces make this recoverable:
 *   - a journal, `<common-dir>/agentv-results/ref-txn.json`, written before each multi-ref
 *     transaction (old and new value of every ref, our pid) and removed after it. A journal whose
 *     process is dead marks an interrupted update; it is completed (every `new` object was written
 *     before the transaction started, so moving the laggards forward yields the intended pair).
 *   - stale lock detection: a `<ref>.lock` older than STALE_LOCK_MS with no live git process in
 *     the repository is a leftover (git holds a ref lock for milliseconds) and is removed.
 * A lock that might still be held is never removed: the error then says what to check and do.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync, unlinkSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { processAlive } from '../util/process-alive.js';
import { resolveRef, zeroId, type Repo } from './repo.js';
import { gitIn } from './repo.js';
import { absentAs, isAbsent } from '../errors/errors.js';
import { unreadableFile } from '../util/safe-open.js';

/** Git holds a ref lock for the time of a rename; a lock this old with no git around is a leftover. */
export const STALE_LOCK_MS = 10_000;

interface Journal {
  pid: number;
  started: string;
  updates: { ref: string; old: string | null; new: string | null }[];
}

export interface InterruptedUpdate {
  /** Refs of an interrupted transaction (journal of a dead process), with where each stands. */
  journal: { pid: number; started: string; refs: { ref: string; old: string | null; new: string | null; now: string | null }[] } | null;
  /** `.lock` files of refs under refs/, with their age and whether they look stale. */
  locks: { ref: string; path: string; ageMs: number; stale: boolean }[];
}

const JOURNAL = /^ref-txn\.(\d+)\.json$/;

// One journal per process: concurrent writers never remove each other's.
function journalPath(repo: Repo, pid = process.pid): string {
  return join(repo.commonDir, 'agentv-results', `ref-txn.${pid}.json`);
}

export async function writeJournal(repo: Repo, updates: Journal['updates']): Promise<string> {
  const path = journalPath(repo);
  await mkdir(join(repo.commonDir, 'agentv-results'), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  // No fsync: the journal guards against a killed process (the page cache survives that), not power loss.
  await writeFile(tmp, JSON.stringify({ pid: process.pid, started: new Date().toISOString(), updates } satisfies Journal));
  await rename(tmp, path);
  return path;
}

export async function clearJournal(repo: Repo): Promise<void> {
  await rm(journalPath(repo), { force: true });
}

/** The journal of a process that is gone (its transaction was interrupted), if any. */
function readJournal(repo: Repo): Journal | null {
  let names: string[];
  try {
    names = readdirSync(join(repo.commonDir, 'agentv-results'));
  } catch (err) {
    // absent: no journal directory, nothing interrupted; anything else propagates
    return absentAs(null)(err);
  }
  for (const name of names) {
    const m = JOURNAL.exec(name);
    if (!m || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
    let text: string;
    try {
      text = readFileSync(join(repo.commonDir, 'agentv-results', name), 'utf8');
    } catch (err) {
      // absent: recovered and removed by another process meanwhile; anything else propagates
      if (isAbsent(err)) continue;
      throw unreadableFile(join(repo.commonDir, 'agentv-results', name), {}, err);
    }
    try {
      const j = JSON.parse(text) as Journal;
      if (Array.isArray(j.updates) && typeof j.pid === 'number') return j;
    } catch {
      // torn by the kill before the rename: the transaction never started
    }
  }
  return null;
}

/** Whether a git process runs with its working directory in this repository (Linux /proc; elsewhere: assume yes). */
function gitRunningIn(repo: Repo): boolean {
  if (!existsSync('/proc/self/cwd')) return true;
  const roots = [repo.commonDir, repo.gitDir, repo.workTree].filter((d): d is string => d !== null).map((d) => resolve(d));
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      if (comm !== 'git' && !comm.startsWith('git-')) continue;
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (!roots.some((r) => cwd === r || cwd.startsWith(`${r}/`))) continue;
      // Our own fast-import (git/fast-import.ts) never takes a ref lock: a publish's may be packing
      // the run's blobs while it repairs the refs.
      if (parentOf(pid) === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('fast-import')) continue;
      return true;
    } catch {
      // any failure here is fine: a process that exited meanwhile, or one not ours to look at, is no git of ours
    }
  }
  return false;
}

function parentOf(pid: string): number | null {
  const m = /^PPid:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : null;
}

function lockFiles(repo: Repo, refs: readonly string[]): InterruptedUpdate['locks'] {
  const out: InterruptedUpdate['locks'] = [];
  const now = Date.now();
  let running: boolean | null = null;
  for (const ref of refs) {
    const path = join(repo.commonDir, `${ref}.lock`);
    let mtime: number;
    try {
      mtime = statSync(path).mtimeMs;
    } catch (err) {
      // absent: the lock went away meanwhile; anything else propagates
      if (isAbsent(err)) continue;
      throw err;
    }
    const ageMs = Math.max(0, now - mtime);
    running ??= ageMs >= STALE_LOCK_MS ? gitRunningIn(repo) : true;
    out.push({ ref, path, ageMs, stale: ageMs >= STALE_LOCK_MS && !running });
  }
  return out;
}

/** What an interrupted update left in `repo` for these refs (status shows it; nothing is changed). */
export async function inspectInterrupted(repo: Repo, refs: readonly string[]): Promise<InterruptedUpdate | null> {
  const j = readJournal(repo);
  let journal: InterruptedUpdate['journal'] = null;
  if (j) {
    journal = { pid: j.pid, started: j.started, refs: await Promise.all(j.updates.map(async (u) => ({ ...u, now: await resolveRef(repo, u.ref) }))) };
  }
  const locks = lockFiles(repo, [...new Set([...refs, ...(j?.updates.map((u) => u.ref) ?? [])])]);
  return journal || locks.length > 0 ? { journal, locks } : null;
}

/** The advice every lock error carries. */
export function lockAdvice(lock: { path: string; ageMs: number; stale: boolean }): string {
  const age = `${Math.round(lock.ageMs / 1000)}s old`;
  return lock.stale
    ? `${lock.path} is a leftover of a killed git (${age}, no git running here)`
    : `${lock.path} exists (${age}): another git process may be updating this ref — wait for it; if none is running (check \`ps aux | grep git\`), delete that file and retry (agentv-results removes such a file itself once it is ${STALE_LOCK_MS / 1000}s old and no git runs in the repository)`;
}

/**
 * Clears stale locks of `refs` and completes an interrupted transaction of a dead process.
 * Returns what it did (empty when there was nothing to repair); fresh locks are left alone.
 */
export async function repairInterrupted(repo: Repo, refs: readonly string[]): Promise<string[]> {
  const found = await inspectInterrupted(repo, refs);
  if (!found) return [];
  const done: string[] = [];
  for (const lock of found.locks) {
    if (!lock.stale) continue;
    try {
      unlinkSync(lock.path);
      done.push(`removed stale lock ${lock.path}`);
    } catch {
      // someone else removed it first
    }
  }
  if (found.journal) {
    if (found.locks.some((l) => !l.stale)) return done; // a live writer: let it finish first
    const laggards = found.journal.refs.filter((r) => r.now !== r.new);
    const moved = found.journal.refs.filter((r) => r.now === r.new);
    // Complete forward only when the refs that did not move are still where the transaction found them.
    if (laggards.length > 0 && moved.length > 0 && laggards.every((r) => r.now === r.old)) {
      const zero = zeroId(repo);
      let input = 'start\0';
      for (const r of laggards) input += `update ${r.ref}\0${r.new ?? zero}\0${r.old ?? zero}\0`;
      input += 'prepare\0commit\0';
      const res = await gitIn(repo, ['update-ref', '-m', 'agentv-results: complete an interrupted update', '--no-deref', '-z', '--stdin'], {
        input,
        okCodes: [0, 128],
      });
      if (res.code === 0)
        done.push(
          `completed an interrupted update of ${laggards.map((r) => r.ref).join(', ')} (process ${found.journal.pid} was killed after moving ${moved.map((r) => r.ref).join(', ')})`,
        );
      else return done;
    }
    await rm(journalPath(repo, found.journal.pid), { force: true });
  }
  return done;
}
