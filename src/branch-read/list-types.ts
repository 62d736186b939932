/** The listing's row and catalog-read types: their own module so the catalog cache and line parser share them without importing list.ts. */
import type { RunSummaryRow } from '../layout/run-index.js';

export type RunWhere = 'local' | 'remote' | 'both';

export interface ListedRun extends RunSummaryRow {
  /** Which tip lists it: only local = not pushed yet; only remote = published elsewhere, not merged here. */
  where: RunWhere;
  /** Who wrote it: our publish (catalogued), or another writer such as AgentV's auto_push. */
  writer?: 'agentv-results' | 'agentv';
  /** The run's tags (tags.json), when listed with `withOverlays` or `tag`. */
  tags?: string[];
  /** How many reviewer notes feedback.json holds, when listed with `withOverlays` or `tag`. */
  feedback_notes?: number;
  /** Set when archive rollover moved the run off the live branch: the month of its archive branch. */
  archived?: string;
}

export interface CatalogSource {
  tip: string;
  where: 'local' | 'remote';
}

export interface CatalogRead {
  /** Every run listed by any source, newest first. */
  runs: ListedRun[];
  /** Catalog lines (or foreign run summaries) that could not be read. */
  unreadable: number;
  /** Tips whose root has the older layout's `runs/` directory (only those need the catalog check). */
  legacyRunsOn?: Set<string>;
  /** Per tip: each run directory at its root and the directory's tree id (for reading run files by tree). */
  dirTrees?: Map<string, Map<string, string>>;
}
