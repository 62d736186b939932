/**
 * The report document, produced as a stream of string chunks (a 10,000-test report is tens of
 * megabytes; nothing needs the whole string at once).
 *
 * Order matters for first paint: the static, server-rendered parts (summary cards, charts,
 * suite table, empty test table) come first and need no script; then the small `report-data`
 * island; then the script, which fills the table as soon as it runs; the heavy
 * `report-details` island comes last, so the browser can paint and render the table while it
 * is still parsing the details.
 *
 * Security: a Content-Security-Policy meta tag that allows nothing but this page's own style
 * and script, pinned by their SHA-256 hashes (not a nonce: hashes keep the output byte-for-byte
 * deterministic, and there is no server to mint a nonce per view). With `default-src 'none'`
 * and no `connect-src`, the page cannot fetch, post, frame, or load fonts or remote images.
 * Data reaches the markup only through escapeHtml (server-rendered parts) or jsonForScript
 * (islands).
 */
import { createHash } from 'node:crypto';
import { scoreHistogram, targetPassRateChart } from './charts.js';
import { clientScript } from '../util/client-script.js';
import { escapeHtml, jsonForScript } from './escape.js';
import { fmtCost, fmtDuration, fmtInt, fmtPct, fmtScore } from './format.js';
import type { ReportStats, Tally } from './stats.js';
import { REPORT_CSS } from './styles.js';
import type { ReportData, ReportDetail } from './types.js';

/** The report's script: TypeScript in src/report/client/, compiled by esbuild (util/client-script.ts). */
const CLIENT_JS = clientScript('report');

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

// The inline script and style must not be able to end their own element early.
for (const [name, text] of [
  ['client script', CLIENT_JS],
  ['stylesheet', REPORT_CSS],
] as const) {
  // A plain Error on purpose: checked when the module loads, about our own bundled asset (a build bug, never user input).
  if (/<\/(script|style)|<!--/i.test(text)) throw new Error(`report ${name} contains a sequence that would end its element`);
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${sha256(CLIENT_JS)}`,
  `style-src ${sha256(REPORT_CSS)}`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The report's script and style as files a static site shares across every run's report (named by
 * content hash, so a new version never meets an old cached copy): about 16 KB a report less.
 */
export const REPORT_ASSETS = [
  { name: `report-${createHash('sha256').update(CLIENT_JS, 'utf8').digest('hex').slice(0, 16)}.js`, text: CLIENT_JS, inline: `<script>${CLIENT_JS}</script>` },
  {
    name: `report-${createHash('sha256').update(REPORT_CSS, 'utf8').digest('hex').slice(0, 16)}.css`,
    text: REPORT_CSS,
    inline: `<style>${REPORT_CSS}</style>`,
  },
] as const;

const sri = (text: string) => `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;

/**
 * The policy of a report whose script and style are the shared files: only this origin's, and
 * each element pins its file's hash (subresource integrity), so a changed file does not run.
 */
export const SHARED_ASSETS_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * A rendered report with its inline script and style replaced by references to the shared files
 * (REPORT_ASSETS) under `dir` (a relative URL from the report to the folder that holds them).
 */
export function withSharedAssets(html: string, dir: string): string {
  const [script, style] = REPORT_ASSETS;
  const policy = `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CONTENT_SECURITY_POLICY)}">`;
  const swaps: [string, string][] = [
    [policy, `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(SHARED_ASSETS_POLICY)}">`],
    [style.inline, `<link rel="stylesheet" href="${escapeHtml(`${dir}/${style.name}`)}" integrity="${sri(style.text)}">`],
    [script.inline, `<script src="${escapeHtml(`${dir}/${script.name}`)}" integrity="${sri(script.text)}"></script>`],
  ];
  let out = html;
  for (const [from, to] of swaps) {
    const at = out.indexOf(from);
    // A plain Error on purpose: the report is ours, rendered by renderReport just before (a bug, never user input).
    if (at < 0) throw new Error('report: an inline asset to share is not in the rendered report');
    out = out.slice(0, at) + to + out.slice(at + from.length);
  }
  return out;
}

export interface TemplateInput {
  data: ReportData;
  details: ReportDetail[];
  stats: ReportStats;
}

function stat(key: string, label: string, value: string, cls = ''): string {
  return `<div class="stat ${cls}" data-stat="${key}"><div class="v">${escapeHtml(value)}</div><div class="k">${escapeHtml(label)}</div></div>`;
}

/** A small pass-rate bar as SVG: a `style="width:…"` attribute would be blocked by the CSP. */
function miniBar(rate: number): string {
  const w = Math.round(Math.min(1, Math.max(0, rate)) * 700) / 10;
  const cls = rate >= 0.8 ? 'good' : rate >= 0.5 ? 'mid' : 'bad';
  return `<svg class="mini" width="70" height="8" viewBox="0 0 70 8" aria-hidden="true"><rect class="track" width="70" height="8" rx="4"/><rect class="bar ${cls}" width="${w}" height="8" rx="4"/></svg>`;
}

/** A run with repeated attempts: attempts passed and the mean attempt success rate (per target when there are several). */
function attemptCards(a: ReportData['attempts']): string[] {
  if (!a) return [];
  const targets = Object.entries(a.targets);
  return [
    stat('attempts', 'Attempts passed', `${fmtInt(a.passed_samples)}/${fmtInt(a.total_samples)}`),
    stat('attempt_rate', 'Mean attempt success', fmtPct(a.mean_pass_rate)),
    ...(targets.length > 1 ? targets.map(([t, x], i) => stat(`attempt_rate_${i}`, `Mean attempt success, ${t}`, fmtPct(x.mean_pass_rate))) : []),
  ];
}

function summaryCards(t: Tally, attempts: ReportData['attempts']): string {
  return [
    '<section id="summary" aria-label="Summary"><div class="stats">',
    stat('total', 'Tests', fmtInt(t.total)),
    stat('passed', 'Passed', fmtInt(t.passed), 'pass'),
    stat('failed', 'Failed', fmtInt(t.failed), 'fail'),
    stat('errors', 'Errors', fmtInt(t.errors), 'error'),
    stat('pass_rate', 'Pass rate', fmtPct(t.pass_rate)),
    stat('mean_score', 'Mean score', fmtScore(t.mean_score)),
    stat('duration', 'Duration (sum)', fmtDuration(t.duration_ms)),
    stat('cost', 'Cost', fmtCost(t.cost_usd)),
    stat('tokens', 'Tokens', fmtInt(t.tokens)),
    ...attemptCards(attempts),
    '</div></section>',
  ].join('');
}

function groupTable(data: ReportData, stats: ReportStats): string {
  const rows = data.groups.map((g, i) => {
    const t = stats.groups[i]!;
    const where = g.eval_path ? `<div class="muted mono">${escapeHtml(g.eval_path)}</div>` : '';
    return (
      `<tr class="group-row" data-group="${i}" tabindex="0" title="Show only this group's tests">` +
      `<td>${escapeHtml(g.suite)}${where}</td><td class="num">${fmtInt(t.total)}</td><td class="num">${fmtInt(t.passed)}</td>` +
      `<td class="num">${fmtInt(t.failed)}</td><td class="num">${fmtInt(t.errors)}</td>` +
      `<td class="num">${miniBar(t.pass_rate)}${fmtPct(t.pass_rate)}</td><td class="num">${fmtScore(t.mean_score)}</td>` +
      `<td class="num">${fmtDuration(t.duration_ms)}</td><td class="num">${fmtCost(t.cost_usd)}</td></tr>`
    );
  });
  return [
    '<section id="groups"><h2>Suites / eval files</h2><div class="panel">',
    '<table id="groups-table"><thead><tr><th>Suite / eval file</th><th class="num">Tests</th><th class="num">Passed</th><th class="num">Failed</th>',
    '<th class="num">Errors</th><th class="num">Pass rate</th><th class="num">Mean score</th><th class="num">Duration</th><th class="num">Cost</th></tr></thead><tbody>',
    ...rows,
    '</tbody></table></div></section>',
  ].join('');
}

function charts(data: ReportData, stats: ReportStats): string {
  const bars = data.targets.map((name, i) => ({ name, passed: stats.targets[i]!.passed, total: stats.targets[i]!.total }));
  return [
    '<section id="charts" class="charts">',
    `<div class="panel"><h3>Pass rate per target</h3>${targetPassRateChart(bars)}</div>`,
    `<div class="panel"><h3>Score distribution</h3>${scoreHistogram(stats.scores)}</div>`,
    '</section>',
  ].join('');
}

const TEST_TABLE = [
  '<section id="tests"><h2>Tests</h2>',
  '<div class="controls">',
  '<input type="search" id="f-q" placeholder="Filter by test id, suite, target or prompt" aria-label="Filter tests">',
  '<select id="f-verdict" aria-label="Status"><option value="">All statuses</option><option value="pass">pass</option><option value="fail">fail</option><option value="error">error</option></select>',
  '<select id="f-group" aria-label="Suite"><option value="-1">All suites</option></select>',
  '<select id="f-target" aria-label="Target"><option value="-1">All targets</option></select>',
  '<select id="f-size" aria-label="Rows per page"><option value="50">50 / page</option><option value="100" selected>100 / page</option><option value="500">500 / page</option></select>',
  '</div>',
  '<div class="panel"><table id="tests-table"><thead><tr>',
  '<th class="sortable" data-sort="id">Test</th><th class="sortable" data-sort="suite">Suite</th><th class="sortable" data-sort="target">Target</th>',
  '<th class="sortable" data-sort="verdict">Status</th><th class="sortable num" data-sort="score">Score</th><th class="sortable num" data-sort="assertions">Assertions</th>',
  '<th class="sortable num" data-sort="duration">Duration</th><th>Criteria / prompt</th>',
  '</tr></thead><tbody id="tests-body"></tbody></table></div>',
  '<div class="pager"><button type="button" id="page-prev">&lsaquo; Prev</button><span id="page-label"></span><button type="button" id="page-next">Next &rsaquo;</button><span id="page-info" class="muted"></span></div>',
  '<noscript><p class="note">The test table needs JavaScript; the summary above does not.</p></noscript>',
  '</section>',
].join('');

export function* renderReport({ data, details, stats }: TemplateInput): Generator<string> {
  const run = data.run;
  const sub = [`run <code>${escapeHtml(run.run_id)}</code>`, `experiment <code>${escapeHtml(run.experiment)}</code>`];
  if (run.timestamp) sub.push(`started ${escapeHtml(run.timestamp)}`);
  if (run.tags && run.tags.length > 0) sub.push(`tags ${run.tags.map((t) => `<code class="tag">${escapeHtml(t)}</code>`).join(' ')}`);
  yield [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CONTENT_SECURITY_POLICY)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="generator" content="agentv-results report">',
    // An explicit empty icon: otherwise a browser serving the file over http asks for /favicon.ico.
    '<link rel="icon" href="data:,">',
    `<title>AgentV report — ${escapeHtml(run.experiment)}</title>`,
    `<style>${REPORT_CSS}</style></head><body><main>`,
    `<header><h1>AgentV report — ${escapeHtml(run.experiment)}</h1><p class="sub">${sub.join(' · ')}</p></header>`,
    summaryCards(stats.overall, data.attempts),
    charts(data, stats),
    groupTable(data, stats),
    TEST_TABLE,
    `<footer>Generated by agentv-results from run ${escapeHtml(run.run_id)}. Text is embedded up to ${fmtInt(data.limits.field_chars)} characters per field and ${fmtInt(data.limits.test_chars)} per test; the complete artifacts stay in the run workspace.</footer>`,
    '</main>',
    `<script type="application/json" id="report-data">${jsonForScript(data)}</script>`,
    `<script>${CLIENT_JS}</script>`,
    '<script type="application/json" id="report-details">[',
  ].join('');
  for (let i = 0; i < details.length; i++) yield (i === 0 ? '' : ',') + jsonForScript(details[i]);
  yield ']</script></body></html>\n';
}
