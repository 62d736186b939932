/**
 * Which AgentV's branch layout a publish writes (layout/branch-layout.ts has both): the one the team's
 * AgentV reads. `results.layout` (`next`, `stable`) decides when set; `auto` (the default) follows
 * the branch: the layout its runs already use. A branch holding both (a team mid-upgrade) keeps
 * the 5.x layout, which is where the upgrade leads, except for a run whose writer is known (a run
 * directory of AgentV 4.42's local layout, an AgentV 5.x workspace): on a branch both lines write,
 * such a run lands in its writer's layout, where that writer's Dashboard looks. An empty branch
 * takes the layout of the run being published, else 5.x. `status` prints the choice and the reason.
 *
 * A run is one run whichever layout holds it (its experiment and its id: `heldLayouts`): a publish
 * of a run the branch already holds in the other layout merges into that copy, never adds a second.
 */
import { readObjects, type Repo } from '../git/index.js';
import { listRunDirs, runDirName, STABLE_RUNS_DIR, type BranchLayout } from './branch-layout.js';
import { summaryExperimentOf } from './duplicate-runs.js';

export type LayoutSetting = 'auto' | BranchLayout;

export interface LayoutChoice {
  layout: BranchLayout;
  /** Why, in words (status prints it). */
  reason: string;
  /** Runs the tip holds in each layout (null when the choice did not look: a configured layout). */
  runs: { next: number; stable: number } | null;
}

const NAMES: Record<BranchLayout, string> = {
  next: 'AgentV 5.x (runs at the branch root)',
  stable: 'AgentV 4.42 (runs/<experiment>/<timestamp>/)',
};

export function layoutName(layout: BranchLayout): string {
  return NAMES[layout];
}

/**
 * The layout to write given the branch's tips (the local branch for a publish; status adds the
 * remote's; null: absent). `runLayout` is the layout of the run about to be published, when
 * known: it decides for an empty branch.
 */
/** Whether one of `tipList` (commits, or branches by name) has AgentV 4.42's `runs/` tree: without one, chooseLayout picks 5.x for any run but a 4.42 one. */
export async function holdsStableTree(repo: Repo, tipList: (string | null)[]): Promise<boolean> {
  const tips = [...new Set(tipList.filter((t): t is string => t !== null))];
  const specs = tips.map((t) => `${t}:${STABLE_RUNS_DIR}`);
  const found = specs.length > 0 ? await readObjects(repo, specs) : new Map();
  return specs.some((s) => found.get(s)?.type === 'tree');
}

export async function chooseLayout(repo: Repo, tipList: (string | null)[], setting: LayoutSetting, runLayout?: BranchLayout): Promise<LayoutChoice> {
  if (setting !== 'auto') return { layout: setting, reason: `results.layout is ${setting}`, runs: null };
  const tips = [...new Set(tipList.filter((t): t is string => t !== null))];
  // The common case costs one object lookup, not a listing of every run: no runs/ tree and no 4.42 run to publish.
  if (!(await holdsStableTree(repo, tips)) && runLayout !== 'stable')
    return { layout: 'next', reason: tips.length > 0 ? `the branch has no ${NAMES.stable} runs` : 'the branch has no runs yet: 5.x, the default', runs: null };
  const paths = new Map<string, 'root' | 'stable'>();
  for (const tip of tips) for (const d of (await listRunDirs(repo, tip)).dirs) paths.set(d.path, d.layout);
  const stable = [...paths.values()].filter((l) => l === 'stable').length;
  // Root directories: 5.x runs (and ours); listRunDirs already skips the reserved names.
  const next = paths.size - stable;
  const runs = { next, stable };
  if (stable > 0 && next === 0) return { layout: 'stable', reason: `the branch's ${stable} run(s) use ${NAMES.stable}`, runs };
  if (next > 0 && stable === 0) return { layout: 'next', reason: `the branch's ${next} run(s) use ${NAMES.next}`, runs };
  if (next > 0 && stable > 0 && runLayout)
    return {
      layout: runLayout,
      reason: `the branch holds both layouts (${next} 5.x, ${stable} 4.42): the run's own AgentV's, ${NAMES[runLayout]}, where its Dashboard lists it`,
      runs,
    };
  if (next > 0 && stable > 0)
    return {
      layout: 'next',
      reason: `the branch holds both layouts (${next} 5.x, ${stable} 4.42): 5.x, where an upgrade leads (set results.layout to choose)`,
      runs,
    };
  if (runLayout) return { layout: runLayout, reason: `the branch has no runs yet: the layout of the run published (${NAMES[runLayout]})`, runs };
  return { layout: 'next', reason: 'the branch has no runs yet: 5.x, the default', runs };
}

/**
 * The layouts in which any of `tips` already holds the run `experiment` + `id` (its identity,
 * whichever AgentV wrote it): AgentV 4.42's `runs/<experiment>/<id>/`, and at the root `<id>/`
 * (whose summary.json names that experiment; none named: `default`) or our older
 * `<experiment>--<id>/`. Two `cat-file --batch` reads at most.
 */
export async function heldLayouts(repo: Repo, tipList: (string | null)[], experiment: string, id: string): Promise<Set<BranchLayout>> {
  const held = new Set<BranchLayout>();
  const tips = [...new Set(tipList.filter((t): t is string => t !== null))];
  if (tips.length === 0) return held;
  let paired: string | null = null;
  try {
    paired = runDirName(`${experiment}/${id}`);
  } catch {
    paired = null; // an id with a slash: no older spelling
  }
  const specs: string[] = [];
  for (const tip of tips) specs.push(`${tip}:${STABLE_RUNS_DIR}/${experiment}/${id}`, `${tip}:${id}`, ...(paired ? [`${tip}:${paired}`] : []));
  const found = await readObjects(repo, specs);
  const roots: string[] = [];
  for (const tip of tips) {
    if (found.get(`${tip}:${STABLE_RUNS_DIR}/${experiment}/${id}`)?.type === 'tree') held.add('stable');
    if (paired && found.get(`${tip}:${paired}`)?.type === 'tree') held.add('next');
    if (found.get(`${tip}:${id}`)?.type === 'tree') roots.push(`${tip}:${id}/summary.json`);
  }
  if (roots.length > 0) {
    const summaries = await readObjects(repo, roots);
    for (const spec of roots) {
      const named = summaryExperimentOf(summaries.get(spec)?.data);
      // A root run with no readable summary is taken to be this run: merging into it loses nothing.
      if (named === null || named === experiment) held.add('next');
    }
  }
  return held;
}
