/**
 * How two runs' rows are matched — the one rule `compare`, `gate` and the Dashboard's compare
 * share, and the sentence each of them shows about it.
 *
 * - **per (test id, target)** (`test+target`): a suite run against several targets (AgentV's
 *   `execution.targets`) is compared target by target; a test id seen for one target only is
 *   new/removed for that target. `gate` and the Dashboard do this by default (`'auto'`) whenever a
 *   side holds several targets and the sides share one.
 * - **by test id** (`test`, AgentV compare's rule and `compare`'s default): the last row of a test
 *   id counts, so the other targets' rows of that id are never compared. When that collapses rows
 *   the report says how many and names the flag that compares per target (`pooled`).
 */
import type { ScoreRow } from './score-rows.js';

export type MatchRule = 'test' | 'test+target';

/** `allTargets`: true, false, or `'auto'` (per target when a side holds several targets and the sides share one). */
export type AllTargets = boolean | 'auto';

/** The flag that asks for per-(test id, target) matching, named wherever pooling is reported. */
export const PER_TARGET_FLAG = '--all-targets';

export type { Pooled } from './report-types.js';
import type { Pooled } from './report-types.js';

/** The key rows are matched by under a rule. */
export function matchKey(r: Pick<ScoreRow, 'test_id' | 'target'>, rule: MatchRule): string {
  return rule === 'test+target' ? JSON.stringify([r.test_id, r.target ?? null]) : r.test_id;
}

function targetsOf(rows: ScoreRow[]): Set<string> {
  return new Set(rows.map((r) => r.target ?? ''));
}

/** The rule `allTargets` picks for these two sides. */
export function chooseRule(baseline: ScoreRow[], candidate: ScoreRow[], allTargets: AllTargets | undefined): MatchRule {
  if (allTargets === 'auto') {
    const [b, c] = [targetsOf(baseline), targetsOf(candidate)];
    return (b.size > 1 || c.size > 1) && [...b].some((t) => c.has(t)) ? 'test+target' : 'test';
  }
  return allTargets ? 'test+target' : 'test';
}

/** Under the test-id rule: the rows a later row of the same id hid, or null when none was. */
export function pooledRows(baseline: ScoreRow[], candidate: ScoreRow[], rule: MatchRule): Pooled | null {
  if (rule !== 'test') return null;
  const hidden = (rows: ScoreRow[]) => rows.length - new Set(rows.map((r) => r.test_id)).size;
  const collapsed = hidden(baseline) + hidden(candidate);
  if (collapsed === 0) return null;
  const targets = [...new Set([...baseline, ...candidate].map((r) => r.target).filter((t): t is string => t !== undefined))].sort();
  return { collapsed_rows: collapsed, targets: targets.length > 1 ? targets : [], flag: PER_TARGET_FLAG };
}

/** One sentence saying which rule matched the rows (the CLI's text and Markdown, the Dashboard's rule line). */
export function ruleNote(rule: MatchRule, pooled: Pooled | null): string {
  if (rule === 'test+target') return 'Matched per (test id, target): each target is compared with the same target.';
  if (pooled === null) return "Matched by test id (agentv compare's rule).";
  const of = pooled.targets.length > 1 ? ` of targets ${pooled.targets.join(', ')}` : '';
  return `Matched by test id (agentv compare's rule): ${pooled.collapsed_rows} row(s)${of} were not compared (the last row of a test id counts); ${pooled.flag} compares per (test id, target).`;
}
