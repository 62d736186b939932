/**
 * Repairing a run held twice on the results branch (layout/duplicate-runs.ts): one
 * copy at the root, one under AgentV 4.42's `runs/<experiment>/<timestamp>/`. Before this release
 * our daemon could publish a run AgentV 4.42 had already committed on its local results branch a
 * second time at the root; AgentV 5.x's Dashboard then listed the copy beside its own runs.
 *
 * `sync` runs this after taking in the remote's work and before its push, so the same push lands
 * the repair: under the publish lock, one ordinary commit on the local results branch (never a
 * force, moved compare-and-swap) removes the second copy of each such run. The copy kept is the
 * one its writer's Dashboard lists: the root copy when it is AgentV 5.x's own workspace (it has
 * `.internal/index.jsonl`), else 4.42's. A copy is removed only when every row of it (by test and
 * target) is also in the copy kept: when each holds rows the other lacks, both stay and the repair
 * says so. Our catalog line of a removed root copy goes with it; its payloads on the artifacts
 * branch stay (unreferenced; nothing lists them). Overlays under `metadata/runs/` stay too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { absentAs } from '../errors/errors.js';
import { readRegularText } from '../util/safe-open.js';
import { type FileChange, lsTree, type Repo, readBlobs, resolveRef, updateRefs, writeCommit } from '../git/index.js';
import { RefConflictError } from '../errors/git-errors.js';
import { CATALOG_DIR, CATALOG_PREFIX } from '../layout/branch-layout.js';
import { findDuplicateRuns, type DuplicateRun } from '../layout/duplicate-runs.js';
import { acquirePublishLock } from '../repo/publish-lock.js';
import type { PublishTarget } from '../repo/target.js';
import { jsonlObjects } from '../util/jsonl-objects.js';
import { syncIdent } from './integrate.js';

/** What the repair did with one run held twice. */
export interface RepairedDuplicate extends DuplicateRun {
  /** The copy kept, and the one removed (null when both stay). */
  kept: string;
  removed: string | null;
  /** Why, in words (the CLI prints it). */
  reason: string;
}

export interface DuplicateRepair {
  runs: RepairedDuplicate[];
  /** The commit that removed the copies, null when none was removed. */
  commit: string | null;
}

const CHECKED_FILE = 'duplicates-checked';

/** The results tip last found holding no run twice (this machine's state; absent: none yet). */
async function checkedTip(repo: Repo): Promise<string | null> {
  return readRegularText(join(repo.commonDir, 'agentv-results', CHECKED_FILE), { kind: 'state' }).then((t) => t.trim(), absentAs(null));
}

async function rememberChecked(repo: Repo, tip: string): Promise<void> {
  try {
    await mkdir(join(repo.commonDir, 'agentv-results'), { recursive: true });
    await writeFile(join(repo.commonDir, 'agentv-results', CHECKED_FILE), `${tip}\n`);
  } catch {
    // best effort: without it the next sync looks again
  }
}

/** A key no other row holds. */
let unmatched = 0;
const ownKey = (): string => `\u0001${++unmatched}`;

/**
 * The (test, target) pairs of a run's index rows (exported for the tests). A row naming no test,
 * or an index that could not be read, gets a key of its own that no other copy holds: a copy is
 * never found to hold "every row" of another through rows that cannot be told apart (every such
 * row would otherwise be the one key `undefined`).
 */
export function rowKeys(text: string | undefined): Set<string> {
  const keys = new Set<string>();
  if (text === undefined) return new Set([ownKey()]);
  for (const r of jsonlObjects(text)) {
    const test = r.test_id ?? r.testId ?? r.eval_id;
    const target =
      typeof r.target === 'string' ? r.target : typeof (r.target as { name?: unknown })?.name === 'string' ? (r.target as { name: string }).name : '';
    const known = typeof test === 'string' ? test !== '' : typeof test === 'number';
    keys.add(known ? `${String(test)}\u0000${target}` : ownKey());
  }
  return keys;
}

const subset = (a: Set<string>, b: Set<string>): boolean => [...a].every((k) => b.has(k));

/** Which copy of `dup` goes, given what each holds (exported for the tests). */
export function chooseCopy(
  dup: DuplicateRun,
  root: { agentv5: boolean; rows: Set<string> },
  stable: { rows: Set<string> },
): { kept: string; removed: string | null; reason: string } {
  const prefer = root.agentv5 ? 'root' : 'stable';
  const [keep, drop] = prefer === 'root' ? [root, stable] : [stable, root];
  const [keepPath, dropPath] = prefer === 'root' ? [dup.rootPath, dup.stablePath] : [dup.stablePath, dup.rootPath];
  const writer = prefer === 'root' ? 'AgentV 5.x wrote it' : 'AgentV 4.42 lists it there';
  if (subset(drop.rows, keep.rows)) return { kept: keepPath, removed: dropPath, reason: `kept ${keepPath} (${writer}); ${dropPath} held no row it lacks` };
  if (subset(keep.rows, drop.rows)) return { kept: dropPath, removed: keepPath, reason: `kept ${dropPath}: it holds every row of ${keepPath} and more` };
  return { kept: keepPath, removed: null, reason: `kept both ${dup.rootPath} and ${dup.stablePath}: each holds rows the other lacks (merge them by hand)` };
}

/**
 * Remove the second copy of every run the local results branch holds twice, in one commit on it
 * (sync pushes it next). Nothing to do: no commit, `runs` empty.
 */
export async function repairDuplicateRuns(target: PublishTarget, opts: { now?: () => Date; tip?: string | null } = {}): Promise<DuplicateRepair> {
  const { repo } = target;
  const lock = await acquirePublishLock(repo.commonDir);
  try {
    // The caller may know the tip (sync: the one its integration left); the ref update below is
    // compare-and-swap on it, so a tip that moved since costs only this repair, retried next sync.
    const tip = opts.tip !== undefined ? opts.tip : await resolveRef(repo, target.resultsRef);
    if (tip === null) return { runs: [], commit: null };
    // A commit id names the exact tree: a tip checked before holds none (an idle sync reads nothing).
    if ((await checkedTip(repo)) === tip) return { runs: [], commit: null };
    const dups = await findDuplicateRuns(repo, tip);
    if (dups.length === 0) {
      await rememberChecked(repo, tip);
      return { runs: [], commit: null };
    }
    const specs = dups.flatMap((d) => [`${tip}:${d.rootPath}/.internal/index.jsonl`, `${tip}:${d.rootPath}/index.jsonl`, `${tip}:${d.stablePath}/index.jsonl`]);
    const blobs = await readBlobs(repo, specs);
    const text = (spec: string) => blobs.get(spec)?.toString('utf8');
    const runs: RepairedDuplicate[] = dups.map((d) => {
      const internal = text(`${tip}:${d.rootPath}/.internal/index.jsonl`);
      const root = { agentv5: internal !== undefined, rows: rowKeys(internal ?? text(`${tip}:${d.rootPath}/index.jsonl`)) };
      return { ...d, ...chooseCopy(d, root, { rows: rowKeys(text(`${tip}:${d.stablePath}/index.jsonl`)) }) };
    });
    const removed = new Set(runs.map((r) => r.removed).filter((p): p is string => p !== null));
    if (removed.size === 0) return { runs, commit: null }; // not remembered: status and the next sync say it again
    const changes: FileChange[] = [...removed].sort().map((path) => ({ path, delete: true as const }));
    // Our catalog lines of removed root copies go with them.
    const catalogs = (await lsTree(repo, tip, { path: `${CATALOG_DIR}/` })).filter(
      (e) => e.type === 'blob' && e.path.startsWith(`${CATALOG_DIR}/${CATALOG_PREFIX}`) && e.path.endsWith('.jsonl'),
    );
    const catalogTexts = await readBlobs(
      repo,
      catalogs.map((e) => e.sha),
    );
    for (const e of catalogs) {
      const before = catalogTexts.get(e.sha)?.toString('utf8') ?? '';
      const lines = before.split('\n');
      const kept = lines.filter((l) => {
        if (l.trim() === '') return true;
        try {
          const row = JSON.parse(l) as { path?: unknown };
          return !(typeof row.path === 'string' && removed.has(row.path));
        } catch {
          return true; // unparsable: a line we cannot read stays as it is
        }
      });
      if (kept.length !== lines.length) changes.push({ path: e.path, data: kept.join('\n') });
    }
    const author = await syncIdent(repo, (opts.now ?? (() => new Date()))());
    const list = runs.filter((r) => r.removed !== null);
    const written = await writeCommit(repo, {
      parent: tip,
      files: changes,
      author,
      message: `fix(results): remove ${list.length} second cop${list.length === 1 ? 'y' : 'ies'} of a run held in both layouts\n\n${list
        .map((r) => `- ${r.experiment} ${r.id}: ${r.reason}`)
        .join('\n')}\n`,
    });
    lock.assertHeld();
    try {
      await updateRefs(repo, [{ ref: target.resultsRef, new: written.commit, old: tip }], { message: 'agentv-results: sync removes runs held twice' });
    } catch (err) {
      if (!(err instanceof RefConflictError)) throw err;
      return { runs: [], commit: null }; // the branch moved since it was read: the next sync repairs
    }
    if (runs.every((r) => r.removed !== null)) await rememberChecked(repo, written.commit);
    return { runs, commit: written.commit };
  } finally {
    await lock.release();
  }
}
