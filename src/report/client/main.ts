/**
 * The report's only script, inlined once and allowed by its hash in the page's CSP
 * (util/client-script.ts compiles it).
 *
 * Rules it keeps, because everything it displays is untrusted agent output:
 * - data is read from the JSON islands with JSON.parse and put on the page with `textContent`,
 *   `createTextNode` and `setAttribute` of fixed attribute names; never innerHTML,
 *   insertAdjacentHTML, document.write, eval, or a URL built from data (the page has no links
 *   to data at all);
 * - class names derived from data (verdicts) go through a whitelist;
 * - the table renders one page of rows at a time (100 by default) and a test's details are
 *   built only when it is expanded; the details island is parsed on first expansion, so a
 *   10,000-test report shows its first rows without touching transcripts.
 *
 * The table is table.ts (its rows' details: details.ts, made of blocks.ts), its controls controls.ts.
 */
import type { ReportData, ReportDetail } from '../types.js';
import { wireControls } from './controls.js';
import { d } from './dom.js';
import { testTable } from './table.js';

function island<T>(id: string): T | null {
  const n = d.getElementById(id);
  return n ? (JSON.parse(n.textContent || 'null') as T) : null;
}

function main(): void {
  const data = island<ReportData>('report-data');
  if (!data) return;
  /* The details island is parsed on the first expansion. */
  let details: (ReportDetail | null)[] | null = null;
  const detailOf = (i: number): ReportDetail | null => {
    if (details === null) details = island<(ReportDetail | null)[]>('report-details') || [];
    return details[i] || null;
  };
  const table = testTable(data, detailOf);
  wireControls(data, table);
  table.update();
  d.documentElement.setAttribute('data-ready', 'true');
}

main();
