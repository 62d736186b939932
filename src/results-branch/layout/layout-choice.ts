/**
 * Which AgentV's branch layout a publish writes (results-branch/layout/branch-layout.ts has both): the one the team's
 * AgentV reads. `results.layout` (`next`, `stable`) decides when set; `auto` (the default) follows
 * the branch: the layout its runs already use. A branch holding both (a team mid-upgrade) keeps
 * the 5.x layout, which is where the upgrade leads; an empty branch takes the layout of the run
 * being published (AgentV 4.42 writes its runs where its Dashboard lists them), else 5.x.
 * `status` prints the choice and the reason.
 */
import { readObjects, type Repo } from '../../git/index.js';
import { listRunDirs, STABLE_RUNS_DIR, type BranchLayout } from './branch-layout.js';

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
export async function chooseLayout(repo: Repo, tipList: (string | null)[], setting: LayoutSetting, runLayout?: BranchLayout): Promise<LayoutChoice> {
  if (setting !== 'auto') return { layout: setting, reason: `results.layout is ${setting}`, runs: null };
  const tips = [...new Set(tipList.filter((t): t is string => t !== null))];
  // The common case costs one object lookup, not a listing of every run: no runs/ tree and no 4.42 run to publish.
  const specs = tips.map((t) => `${t}:${STABLE_RUNS_DIR}`);
  const found = specs.length > 0 ? await readObjects(repo, specs) : new Map();
  const hasRunsTree = specs.some((s) => found.get(s)?.type === 'tree');
  if (!hasRunsTree && runLayout !== 'stable')
    return { layout: 'next', reason: tips.length > 0 ? `the branch has no ${NAMES.stable} runs` : 'the branch has no runs yet: 5.x, the default', runs: null };
  const paths = new Map<string, 'root' | 'stable'>();
  for (const tip of tips) for (const d of (await listRunDirs(repo, tip)).dirs) paths.set(d.path, d.layout);
  const stable = [...paths.values()].filter((l) => l === 'stable').length;
  // Root directories: 5.x runs (and ours); listRunDirs already skips the reserved names.
  const next = paths.size - stable;
  const runs = { next, stable };
  if (stable > 0 && next === 0) return { layout: 'stable', reason: `the branch's ${stable} run(s) use ${NAMES.stable}`, runs };
  if (next > 0 && stable === 0) return { layout: 'next', reason: `the branch's ${next} run(s) use ${NAMES.next}`, runs };
  if (next > 0 && stable > 0)
    return {
      layout: 'next',
      reason: `the branch holds both layouts (${next} 5.x, ${stable} 4.42): 5.x, where an upgrade leads (set results.layout to choose)`,
      runs,
    };
  if (runLayout) return { layout: runLayout, reason: `the branch has no runs yet: the layout of the run published (${NAMES[runLayout]})`, runs };
  return { layout: 'next', reason: 'the branch has no runs yet: 5.x, the default', runs };
}
