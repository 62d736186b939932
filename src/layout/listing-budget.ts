/**
 * The listing budget of the live branch. AgentV's Dashboard lists runs with one
 * `git ls-tree -r --name-only` of the whole results branch into a 1 MiB buffer, and lists nothing
 * at all once the output is larger. What fills it is paths, not runs: a run of 50 tests lists
 * about 14 KB, a run of 3 tests under 1 KB. So a count of runs (keep_runs) cannot keep the
 * Dashboard alive on its own; the rollover also archives the oldest live runs until the listing
 * fits this budget, whatever their age.
 */
import { listingBytes, lsTree, type Repo } from '../git/index.js';
import { isLegacyDayDir, STABLE_METADATA_DIR, STABLE_RUNS_DIR } from './branch-layout.js';

/** AgentV's buffer is 1 MiB; 768 KiB leaves room for the runs published between two rollovers. */
export const DEFAULT_MAX_LISTING_BYTES = 768 * 1024;

export interface ListingSize {
  /** Bytes of `git ls-tree -r --name-only` of the tip: each path and its newline. */
  total: number;
  /**
   * The same, per run: a run at the root by its directory, AgentV 4.42's `runs/<exp>/<ts>` with its
   * overlays under `metadata/runs/<exp>/<ts>/` counted to it, the older layout's
   * `runs/<exp>/<day>/<ts>`; anything else by its top-level directory (`.indexes`, ...).
   */
  byDir: Map<string, number>;
}

/**
 * Paths git would quote (control characters, `"`, non-ASCII under core.quotePath) print a few
 * bytes longer than counted here; run directories and our file names never need quoting.
 */
export async function listingSize(repo: Repo, tip: string): Promise<ListingSize> {
  const byDir = new Map<string, number>();
  let total = 0;
  for (const e of await lsTree(repo, tip, { recursive: true })) {
    const bytes = Buffer.byteLength(e.path) + 1;
    total += bytes;
    const dir = listingKey(e.path);
    byDir.set(dir, (byDir.get(dir) ?? 0) + bytes);
  }
  return { total, byDir };
}

/** The run (or top-level directory) a listed path counts to: see ListingSize.byDir. */
export function listingKey(path: string): string {
  const parts = path.split('/');
  const overlay = path.startsWith(`${STABLE_METADATA_DIR}/`);
  const run = overlay ? parts.slice(1) : parts;
  if (run[0] === STABLE_RUNS_DIR && run.length >= 4) {
    const legacy = isLegacyDayDir(run[2]!);
    if (!legacy) return run.slice(0, 3).join('/');
    if (!overlay && run.length >= 5) return run.slice(0, 4).join('/');
  }
  return parts[0]!;
}

/**
 * The runs to archive, oldest first, so that the listing left is at most `max` bytes once the
 * already expired runs are gone. `newestFirst` are the catalogued live runs; the newest one always
 * stays (archiving the run just published would leave the Dashboard empty, not smaller).
 */
export function overBudget<T extends { path: string }>(size: ListingSize, newestFirst: T[], expired: ReadonlySet<string>, max: number): T[] {
  let bytes = size.total;
  for (const path of expired) bytes -= size.byDir.get(path) ?? 0;
  const out: T[] = [];
  for (let i = newestFirst.length - 1; i > 0 && bytes > max; i--) {
    const r = newestFirst[i]!;
    if (expired.has(r.path)) continue;
    out.push(r);
    bytes -= size.byDir.get(r.path) ?? 0;
  }
  return out;
}

export interface ListingCheck {
  /** Bytes counted; a lower bound when `complete` is false (counting stopped past the budget). */
  bytes: number;
  max: number;
  over: boolean;
  complete: boolean;
}

/** Whether the live listing of `tip` passes `max` bytes; reads at most `max` bytes of listing. */
export async function checkListing(repo: Repo, tip: string, max: number): Promise<ListingCheck> {
  if (max <= 0) return { bytes: 0, max, over: false, complete: false };
  const { bytes, complete } = await listingBytes(repo, tip, { stopAfter: max });
  return { bytes, max, over: bytes > max, complete };
}

const kib = (n: number) => `${Math.round(n / 1024).toLocaleString('en-US')} KiB`;

/** What `publish` and `status` say when the live listing is past the budget, and what to run. */
export function listingWarning(branch: string, check: ListingCheck): string {
  return `the listing of ${branch} is ${check.complete ? '' : 'over '}${kib(check.bytes)}, past the listing budget of ${kib(check.max)} (AgentV's Dashboard lists nothing once it passes 1 MiB): run \`agentv-results archive\` to move the oldest runs to the archive branches`;
}
