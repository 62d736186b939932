/**
 * A run held twice on one results tip: once at the root (AgentV 5.x's layout, or a run of ours) and
 * once under AgentV 4.42's `runs/<experiment>/<timestamp>/`, with the same identity (experiment and
 * id: branch-layout.ts `runIdentityKey`). Publish never makes one any more (layout-choice.ts
 * `heldLayouts`); a branch written before, or by hand, may still hold one. `status` names them and
 * `sync` removes the second copy (sync/repair-duplicates.ts).
 *
 * Cheap on a branch with no `runs/` tree (one `ls-tree` of the root, which the caller may pass):
 * only root directories named like a 4.42 run's timestamp (or our older `<experiment>--<timestamp>`)
 * are candidates, and only their summary.json files are read, in one batch.
 */
import { readObjects, type Repo, type TreeEntry } from '../git/index.js';
import { listRunDirs, runDirName, runIdentityKey } from './branch-layout.js';

/** One run held in both layouts of a tip. */
export interface DuplicateRun {
  experiment: string;
  /** The run's id without its experiment (4.42's timestamp, 5.x's run id). */
  id: string;
  /** Its directory at the root. */
  rootPath: string;
  /** Its directory under AgentV 4.42's `runs/`. */
  stablePath: string;
}

/** The experiment a summary.json names (`metadata.experiment`, else `experiment`; `default` when none); null: unreadable. */
export function summaryExperimentOf(data: Buffer | undefined): string | null {
  if (data === undefined) return null;
  try {
    const doc = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return null;
    const meta = doc.metadata as Record<string, unknown> | undefined;
    const named = (typeof meta?.experiment === 'string' && meta.experiment.trim()) || (typeof doc.experiment === 'string' && doc.experiment);
    return named || 'default';
  } catch {
    // unparsable: names no experiment
    return null;
  }
}

/** Every run `tip` holds in both layouts, by identity (sorted by the stable path). */
export async function findDuplicateRuns(repo: Repo, tip: string, root?: TreeEntry[]): Promise<DuplicateRun[]> {
  const { dirs } = await listRunDirs(repo, tip, root);
  const stable = dirs.filter((d) => d.layout === 'stable');
  if (stable.length === 0) return [];
  const roots = new Set(dirs.filter((d) => d.layout === 'root').map((d) => d.path));
  // Candidates: a root directory named like a 4.42 run of the tip.
  const candidates: { rootPath: string; experiment: string; id: string; stablePath: string }[] = [];
  for (const d of stable) {
    const experiment = d.experiment!;
    const id = d.timestamp!;
    let paired: string | null = null;
    try {
      paired = runDirName(`${experiment}/${id}`);
    } catch {
      paired = null; // not a two-segment id: no older spelling
    }
    for (const name of [id, paired]) if (name !== null && roots.has(name)) candidates.push({ rootPath: name, experiment, id, stablePath: d.path });
  }
  if (candidates.length === 0) return [];
  const specs = [...new Set(candidates.map((c) => `${tip}:${c.rootPath}/summary.json`))];
  const summaries = await readObjects(repo, specs);
  const out: DuplicateRun[] = [];
  for (const c of candidates) {
    const named = summaryExperimentOf(summaries.get(`${tip}:${c.rootPath}/summary.json`)?.data);
    if (named === null) continue;
    if (runIdentityKey(named, c.rootPath) === runIdentityKey(c.experiment, `${c.experiment}::${c.id}`)) out.push(c);
  }
  return out.sort((a, b) => (a.stablePath < b.stablePath ? -1 : a.stablePath > b.stablePath ? 1 : 0));
}
