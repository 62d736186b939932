/**
 * Sync branches: their names, and the small append-only log of the ones this repository created
 * (`<git-common-dir>/agentv-results/sync-branches.jsonl`), which `status` lists and
 * `sync --resolve` closes. The log lives in the git directory, never in a worktree, and one
 * `appendFile` per event keeps concurrent writers from interleaving inside a line.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { PathConflict } from './merge-commits.js';
import { InputError } from '../errors/input-error.js';
import { readRegularText } from '../util/safe-open.js';

export const SYNC_PREFIX = 'agentv/results-sync/';
export const ARTIFACTS_SYNC_PREFIX = 'agentv/artifacts-sync/';

/** Host part of a sync branch name: the first DNS label, lower case, [a-z0-9-] only. */
export function hostSlug(name: string = hostname()): string {
  const label = name.split('.')[0] ?? '';
  const slug = label
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 32)
    .replace(/-$/, '');
  return slug || 'host';
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function rand6(bytes: Buffer = randomBytes(6)): string {
  return [...bytes.subarray(0, 6)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
}

/** `<YYYYMMDDTHHMMSSZ>-<host>-<rand6>`: sorts by time, says where it came from, never collides in practice. */
export function syncSuffix(now: Date, host: string = hostSlug(), random: string = rand6()): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${stamp}-${host}-${random}`;
}

/** Accepts `agentv/results-sync/<x>`, `refs/heads/agentv/results-sync/<x>` or just `<x>`; returns the branch name. */
export function normalizeSyncBranch(name: string): string {
  let b = name.trim();
  if (b.startsWith('refs/heads/')) b = b.slice('refs/heads/'.length);
  if (!b.startsWith(SYNC_PREFIX)) b = SYNC_PREFIX + b;
  const suffix = b.slice(SYNC_PREFIX.length);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(suffix) || suffix.includes('..'))
    throw new InputError(`${JSON.stringify(name)} is not a sync branch name (${SYNC_PREFIX}<YYYYMMDDTHHMMSSZ>-<host>-<rand6>)`);
  return b;
}

export interface SyncBranchRecord {
  event: 'created';
  /** e.g. agentv/results-sync/20260314T103200Z-ci-7-a1b2c3 */
  branch: string;
  /** Set when the artifacts branch conflicted too and its local tip was set aside beside it. */
  artifacts_branch: string | null;
  remote: string;
  /** The results branch the sync branch should be merged into. */
  base_branch: string;
  /** Remote tip of base_branch when the conflict was found. */
  base: string;
  /** Our commit, now the sync branch tip. */
  head: string;
  created_at: string;
  host: string;
  conflicts: PathConflict[];
  compare_url: string | null;
  /** What to run when there is no compare page. */
  review_hint: string;
}

export interface SyncResolvedRecord {
  event: 'resolved';
  branch: string;
  resolved_at: string;
  /** The commit on the results branch that contains the sync branch. */
  commit: string;
  /** Whether the remote sync branch was deleted (false: it moved since, or was already gone). */
  deleted_remote: boolean;
}

/** A sync branch written elsewhere (AgentV's parked run) that `sync` could not take in: why, at that tip. */
export interface SyncKeptRecord {
  event: 'kept';
  branch: string;
  /** The tip that did not merge (a later tip is tried again). */
  tip: string;
  reason: string;
  checked_at: string;
}

export type SyncLogRecord = SyncBranchRecord | SyncResolvedRecord | SyncKeptRecord;

export function syncLogPath(commonDir: string): string {
  return join(commonDir, 'agentv-results', 'sync-branches.jsonl');
}

export async function appendSyncRecord(commonDir: string, record: SyncLogRecord): Promise<void> {
  const file = syncLogPath(commonDir);
  await mkdir(join(commonDir, 'agentv-results'), { recursive: true });
  await appendFile(file, JSON.stringify(record) + '\n', 'utf8');
}

/** Every record, oldest first; lines that do not parse (a torn write after a crash) are skipped. */
export async function readSyncLog(commonDir: string): Promise<SyncLogRecord[]> {
  const text = await readRegularText(syncLogPath(commonDir), { kind: 'log' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  const out: SyncLogRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const r = JSON.parse(line) as SyncLogRecord;
      if ((r.event === 'created' || r.event === 'resolved' || r.event === 'kept') && typeof r.branch === 'string') out.push(r);
    } catch {
      // skip a torn line
    }
  }
  return out;
}

/** Why each sync branch `sync` could not take in stayed, by branch, at the tip it last tried (the newest record). */
export async function keptSyncBranches(commonDir: string): Promise<Map<string, SyncKeptRecord>> {
  const kept = new Map<string, SyncKeptRecord>();
  for (const r of await readSyncLog(commonDir)) if (r.event === 'kept') kept.set(r.branch, r);
  return kept;
}

/** Sync branches created here and not resolved yet, oldest first. */
export async function openSyncBranches(commonDir: string): Promise<SyncBranchRecord[]> {
  const log = await readSyncLog(commonDir);
  const resolved = new Set(log.filter((r) => r.event === 'resolved').map((r) => r.branch));
  return log.filter((r): r is SyncBranchRecord => r.event === 'created' && !resolved.has(r.branch));
}
