/**
 * `list`'s cache of the rows it derived from runs without a catalog line (AgentV's own publishes,
 * 4.42's `runs/<exp>/<ts>/` above all: one index.jsonl read and parsed per run). A row is a
 * function of the run's tree and its path, both in the key, so an entry is never stale: a run
 * that changes has a new tree. Kept in the repository's git directory
 * (`agentv-results-foreign-rows.json`), written atomically (temporary file, rename); a missing,
 * unreadable or foreign file is an empty cache. Bounded: past MAX_ENTRIES only the rows of the
 * latest listing are kept.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const FILE = 'agentv-results-foreign-rows.json';
const VERSION = 1;
const MAX_ENTRIES = 200_000;

export type CachedRows<R> = Map<string, R>;

export function foreignCacheKey(treeSha: string, path: string): string {
  return `${treeSha} ${path}`;
}

export async function loadForeignCache<R>(commonDir: string): Promise<CachedRows<R>> {
  try {
    const doc = JSON.parse(await readFile(join(commonDir, FILE), 'utf8')) as { version?: unknown; rows?: unknown };
    if (doc.version !== VERSION || !doc.rows || typeof doc.rows !== 'object') return new Map();
    return new Map(Object.entries(doc.rows as Record<string, R>));
  } catch {
    return new Map();
  }
}

/** Writes the cache when `fresh` added rows; `used` are the keys of this listing (kept first when trimming). */
export async function saveForeignCache<R>(commonDir: string, cache: CachedRows<R>, used: Set<string>): Promise<void> {
  let rows = cache;
  if (rows.size > MAX_ENTRIES) rows = new Map([...cache].filter(([k]) => used.has(k)));
  const tmp = join(commonDir, `${FILE}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, JSON.stringify({ version: VERSION, rows: Object.fromEntries(rows) }));
    await rename(tmp, join(commonDir, FILE));
  } catch {
    // A cache that cannot be written (a read-only repository) only costs the next listing its reads.
    await rm(tmp, { force: true }).catch(() => {});
  }
}
