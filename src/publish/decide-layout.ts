/**
 * Under the publish lock: which branch layout a publish writes (layout/layout-choice.ts), decided on
 * the tip the push goes onto, and where a 4.42 run comes from when the run is one.
 */
import { basename, dirname } from 'node:path';
import type { BranchLayout } from '../layout/branch-layout.js';
import { chooseLayout, heldLayouts, layoutName, type LayoutChoice } from '../layout/layout-choice.js';
import { adoptTeamTips, isShallow, teamTips } from '../repo/team-tip.js';
import type { PublishTarget } from '../repo/target.js';
import type { RunHandle } from '../runs/read/run-handle.js';
import { isAgentvWorkspace } from './prepare.js';

/** The run directory, experiment and timestamp when `run` names a run of AgentV 4.42's local layout; null otherwise. */
function stableRunSource(run: RunHandle): StableSource | null {
  const dir = run.dir;
  if (dir === null || run.layout !== 'agentv-stable') return null;
  return { dir, experiment: basename(dirname(dir)), timestamp: basename(dir) };
}

export type StableSource = { dir: string; experiment: string; timestamp: string };

/**
 * Under the publish lock: which layout to write (layout/layout-choice.ts), decided on the tip the
 * push goes onto, and where a 4.42 run comes from when the run is one.
 */
export async function decideLayout(
  target: PublishTarget,
  run: RunHandle,
  experiment: string | undefined,
  assertHeld: () => void,
): Promise<{ layout: LayoutChoice; source: StableSource | null; local: { results: string | null; artifacts: string | null } }> {
  const { repo, config } = target;
  const source = stableRunSource(run);
  // Decide from the tip the push goes onto (repo/team-tip.ts): on a fresh clone
  // the remote-tracking branch. The local branch first catches up with it only in a shallow clone
  // (a depth-1 CI checkout), where a merge could not find its base; elsewhere the commit goes on
  // the local branch and the push merges row by row, so rows another machine published of the
  // same run are never replaced (test/conformance/agentv-summary-merge.test.ts).
  if (isShallow(target)) await adoptTeamTips(target, assertHeld);
  // Both branches in one read: the commit, under the same lock, starts from these local tips.
  const read = await teamTips(target, [target.resultsRef, target.artifactsRef]);
  const tips = read.get(target.resultsRef)!.tips;
  const local = { results: read.get(target.resultsRef)!.local, artifacts: read.get(target.artifactsRef)!.local };
  // The run's writer, when known: its layout is where that AgentV's Dashboard looks (layout-choice.ts).
  const writer: BranchLayout | undefined = source ? 'stable' : isAgentvWorkspace(run) ? 'next' : undefined;
  let layout = await chooseLayout(repo, tips, config.layout, writer);
  // One run, one copy: a run the branch already holds in the other layout is merged there. Only
  // a tip with runs in the other layout can hold it there: the choice counted them (none counted:
  // no runs/ tree, or a configured layout, which did not look), so a one-layout branch reads nothing more.
  const other: BranchLayout = layout.layout === 'stable' ? 'next' : 'stable';
  const otherMayHold = layout.runs !== null ? layout.runs[other] > 0 : config.layout !== 'auto';
  // The run's identity on the branch, whichever layout holds it: its experiment and its id (AgentV
  // 4.42's timestamp directory, AgentV 5.x's run id). Known before the publish for AgentV's own runs
  // (4.42's from its path, 5.x's from the workspace's one reading); none for a results file or a
  // bundle of ours, whose id is known only once it is derived.
  let identity: { experiment: string; id: string } | null = null;
  if (otherMayHold && source && experiment === undefined) identity = { experiment: source.experiment, id: source.timestamp };
  else if (otherMayHold && isAgentvWorkspace(run)) {
    const loaded = await run.load();
    if (!loaded.runId.includes('/')) identity = { experiment: experiment ?? loaded.experiment, id: loaded.runId };
  }
  if (identity) {
    const held = await heldLayouts(repo, tips, identity.experiment, identity.id);
    if (!held.has(layout.layout) && held.has(other))
      layout = {
        layout: other,
        reason: `the branch already holds this run (${identity.experiment}, ${identity.id}) in ${layoutName(other)}: its rows are merged there, never a second copy`,
        runs: layout.runs,
      };
  }
  return { layout, source, local };
}
