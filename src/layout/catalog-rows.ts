/**
 * A run's line in the day's catalog (`.indexes/agentv-results.<day>.jsonl`): what `list` shows
 * without opening the run. A function of the run's rows, so a publish writes it and a merge that
 * changes the rows recomputes it (src/sync/rederive.ts).
 */
import type { CatalogRow, IndexRow } from '../model/artifacts.js';
import { passRate } from '../model/pass-rate.js';
import type { RunLocation } from './branch-layout.js';

/** The counts of a catalog line: a function of the run's rows. */
export function catalogCounts(rows: IndexRow[]): Pick<CatalogRow, 'targets' | 'total' | 'passed' | 'failed' | 'pass_rate'> {
  const total = rows.length;
  const passed = rows.filter((r) => r.verdict === 'pass').length;
  return {
    targets: [...new Set(rows.map((r) => r.target))],
    total,
    passed,
    failed: total - passed,
    pass_rate: passRate(passed, total),
  };
}

/** A catalog line's counts of a run in AgentV 5's layout: its tests as AgentV's own summary.json counts them. */
export function agentvCatalogCounts(summary: Record<string, unknown>): Pick<CatalogRow, 'targets' | 'total' | 'passed' | 'failed' | 'pass_rate'> {
  const counts = summary.counts as { total_tests: number; passed_tests: number };
  const total = counts.total_tests;
  const passed = counts.passed_tests;
  const targets = (summary.metadata as { targets: string[] }).targets;
  return { targets, total, passed, failed: total - passed, pass_rate: passRate(passed, total) };
}

export function catalogRow(loc: RunLocation, summary: Record<string, unknown> | null, rows: IndexRow[]): CatalogRow {
  const { targets, total, passed, failed, pass_rate } = catalogCounts(rows);
  return {
    run_id: loc.runId,
    experiment: loc.experiment,
    timestamp: (typeof summary?.timestamp === 'string' ? summary.timestamp : null) ?? loc.timestamp,
    path: loc.path,
    targets,
    total,
    passed,
    failed,
    pass_rate,
  };
}

/** Add or replace this run's line in the day's catalog; other lines are kept byte for byte. */
export function updatedCatalog(existing: string, row: CatalogRow): string {
  const line = JSON.stringify(row);
  const lines = existing.split('\n').filter((l) => l.trim() !== '');
  let replaced = false;
  const out = lines.map((l) => {
    try {
      if ((JSON.parse(l) as { run_id?: unknown }).run_id === row.run_id) {
        replaced = true;
        return line;
      }
    } catch {
      // a line we cannot read stays as it is
    }
    return l;
  });
  if (!replaced) out.push(line);
  return out.join('\n') + '\n';
}
