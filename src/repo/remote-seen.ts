/**
 * When this machine last heard from a remote: every fetch and push of ours that reached it notes the
 * time here (`<git dir>/agentv-results/remote-seen.json`, one ISO time per remote). A read that does
 * not fetch says how old its view of the remote is from this; nothing else depends on it, so a
 * failure to write it never fails a command.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Repo } from '../git/index.js';
import { readOptionalJson } from '../util/safe-open.js';

function file(repo: Repo): string {
  return join(repo.commonDir, 'agentv-results', 'remote-seen.json');
}

async function readAll(repo: Repo): Promise<Record<string, string>> {
  // Never contacted (no file), or a torn one: no dates. One that cannot be read is said, not taken for none.
  const doc = await readOptionalJson(file(repo), { kind: 'state' });
  return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, string>) : {};
}

/** The last time a fetch or push of ours reached `remote`, or null when none is recorded. */
export async function remoteSeenAt(repo: Repo, remote: string): Promise<Date | null> {
  const v = (await readAll(repo))[remote];
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isNaN(t) ? null : new Date(t);
}

/** Notes that `remote` answered just now (a later time is never replaced by an earlier one). */
export async function noteRemoteSeen(repo: Repo, remote: string, when: Date = new Date()): Promise<void> {
  try {
    const all = await readAll(repo);
    const prev = typeof all[remote] === 'string' ? Date.parse(all[remote]) : Number.NaN;
    if (!Number.isNaN(prev) && prev >= when.getTime()) return;
    all[remote] = when.toISOString();
    await mkdir(join(repo.commonDir, 'agentv-results'), { recursive: true });
    const tmp = `${file(repo)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(tmp, JSON.stringify(all));
    await rename(tmp, file(repo));
  } catch {
    // best effort: only the age a later offline read reports depends on it
  }
}

/** "just now", "5 min", "3 h", "2 days": how long ago `then` was. */
export function describeAge(then: Date, now: Date = new Date()): string {
  const s = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400 * 2) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} days ago`;
}
