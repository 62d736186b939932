/** `trend --format markdown` (and `flaky`'s): a job summary, degrading series first, every run-supplied value escaped (src/report/markdown.ts). */
import { fitMarkdown, fixed, mdText, plural, signed } from '../report/markdown.js';
import type { TrendReport } from './series.js';
import type { FlakyReport } from './flaky.js';
import * as z from 'zod';
import { parseArgs } from '../options/verb-options.js';

// The doors: a report is an object with the fields the function reads (it may carry more).
const list = z.array(z.unknown());
const TrendReportShape = z.looseObject({ series: list, skipped: list, slope_threshold: z.number(), triggered: z.boolean() });
const FlakyReportShape = z.looseObject({ runs: list, tests: list, summary: z.looseObject({}), experiment: z.string().nullable() });

/** The Markdown of a trend report (`trend --format markdown`). */
export function trendMarkdown(r: TrendReport): string {
  parseArgs('trendMarkdown', { report: TrendReportShape }, [r]);
  // No series yet (fewer than two published runs, say): a sentence, never an empty table.
  if (r.series.length === 0)
    return `### Trend: nothing to chart yet\n\nA trend needs at least two runs that share tests${r.skipped.length > 0 ? ` (${plural(r.skipped.length, 'series', 'series')} with too few runs so far)` : ''}.\n`;
  const degrading = r.series.filter((s) => s.summary.direction === 'degrading').length;
  const head = [
    `### ${r.triggered ? '❌' : degrading > 0 ? '⚠️' : '✅'} Trend: ${plural(r.series.length, 'series', 'series')}, ${degrading} degrading`,
    '',
    `Slope per run; degrading when slope ≤ −${r.slope_threshold}.`,
    '',
    '| Experiment | Target | Direction | Slope | r² | Runs | Last mean |',
    '|---|---|---|--:|--:|--:|--:|',
  ];
  const rank = { degrading: 0, stable: 1, improving: 2 } as Record<string, number>;
  const rows = [...r.series]
    .sort((a, b) => (rank[a.summary.direction] ?? 1) - (rank[b.summary.direction] ?? 1) || a.summary.slope - b.summary.slope)
    .map(
      (s) =>
        `| ${mdText(s.experiment ?? 'all')} | ${mdText(s.target ?? 'all')} | ${s.summary.direction} | ${signed(s.summary.slope, 4)} | ${s.summary.r_squared.toFixed(3)} | ${s.summary.run_count} | ${s.runs.length > 0 ? fixed(s.runs[s.runs.length - 1]!.mean_score) : '—'} |`,
    );
  return fitMarkdown(
    head,
    rows,
    r.skipped.length > 0 ? [`\n${plural(r.skipped.length, 'series', 'series')} not classified (too few runs or shared tests).`] : [],
  );
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** The Markdown of a flaky report (`flaky --format markdown`): strongest evidence first, stable passes left out of the table. */
export function flakyMarkdown(r: FlakyReport): string {
  parseArgs('flakyMarkdown', { report: FlakyReportShape }, [r]);
  const s = r.summary;
  const head = [
    `### ${s['newly failing'] > 0 ? '❌' : s.flaky > 0 ? '⚠️' : '✅'} Flaky tests: ${s.flaky} flaky, ${s['newly failing']} newly failing, ${s['stable fail']} stable fail, ${s['stable pass']} stable pass`,
    '',
    `${plural(r.runs.length, 'run')}${r.experiment ? ` of ${mdText(r.experiment)}` : ''}; attempt success rate with its 95% Wilson interval; a flip is a verdict that changed from one run to the next.`,
    '',
    '| Test | Target | Class | Attempts | Rate [95%] | Flips | Verdicts (oldest first) |',
    '|---|---|---|--:|---|--:|---|',
  ];
  const mark = (v: string) => (v === 'pass' ? '✓' : v === 'error' ? '!' : '✗');
  const rows = r.tests
    .filter((t) => t.class !== 'stable pass')
    .map(
      (t) =>
        `| ${mdText(t.test_id)} | ${mdText(t.target ?? '–')} | ${t.class} | ${t.passed}/${t.total} | ${pct(t.pass_rate)} [${pct(t.interval.low)}, ${pct(t.interval.high)}] | ${t.flips} | ${t.history.map((c) => mark(c.verdict)).join('')} |`,
    );
  return fitMarkdown(head, rows, [`\n<sub>${plural(s['stable pass'], 'stable pass', 'stable passes')} not listed · agentv-results flaky</sub>`]);
}
