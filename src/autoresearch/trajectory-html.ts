/**
 * The autoresearch trajectory as HTML: score per cycle with keep/drop markers and the best-so-far
 * line, per-assertion pass rates, cumulative cost, best vs original.
 *
 * Everything is rendered on our side as inline SVG and tables, so the page needs no script and
 * no CDN (the agentv-bench skill's template pulls Chart.js from one and fetches iterations.jsonl, which a
 * browser refuses on file://). It keeps the report's discipline: data enters markup only through
 * escapeHtml, the machine-readable copy only through jsonForScript, and a CSP allowing nothing but
 * the page's own stylesheet (by hash) — no script, no connection, no remote image.
 *
 * "Refreshes while the loop runs": every `autoresearch record` rewrites the page with the new
 * data, and while the loop is live the page carries `<meta http-equiv="refresh">`, so an open tab
 * reloads it every few seconds; `--final` writes it without that tag and the page stops.
 *
 * `trajectoryFragment` is the same views without the document around them, for the Dashboard.
 */
import { createHash } from 'node:crypto';
import { escapeHtml, jsonForScript } from '../report/escape.js';
import { fmtCost, fmtPct } from '../report/format.js';
import { REPORT_CSS } from '../report/styles.js';
import type { Iteration } from './iterations.js';
import { trajectoryData, type TrajectoryData } from './trajectory-data.js';

/** The trajectory charts' own rules (the Dashboard's autoresearch tab uses them too). */
export const TRAJECTORY_CHART_CSS = `svg .line{fill:none;stroke:var(--accent);stroke-width:2}
svg .best{fill:none;stroke:var(--pass);stroke-width:1.5;stroke-dasharray:5 4}
svg .cost{fill:none;stroke:var(--err);stroke-width:2}
svg .keep{fill:var(--pass)}svg .drop{fill:var(--fail)}
svg .grid{stroke:var(--line);stroke-width:1}
td.keep{color:var(--pass);font-weight:600}td.drop{color:var(--fail);font-weight:600}
td.mutation{word-break:break-word;max-width:520px}
.legend span{margin-right:14px}.legend .k{color:var(--pass)}.legend .d{color:var(--fail)}
`;

export const TRAJECTORY_CSS = `${REPORT_CSS}\n${TRAJECTORY_CHART_CSS}`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export const TRAJECTORY_CSP = ["default-src 'none'", `style-src ${sha256(TRAJECTORY_CSS)}`, 'img-src data:', "base-uri 'none'", "form-action 'none'"].join(
  '; ',
);

const CHART = { width: 640, height: 240, left: 48, right: 16, top: 16, bottom: 32 } as const;
const r1 = (n: number) => Math.round(n * 10) / 10;

/** x/y mapping for a chart over cycles; `max` is the top of the y axis. */
function scale(n: number, max: number) {
  const plotW = CHART.width - CHART.left - CHART.right;
  const plotH = CHART.height - CHART.top - CHART.bottom;
  return {
    x: (i: number) => r1(CHART.left + (n <= 1 ? plotW / 2 : (i / (n - 1)) * plotW)),
    y: (v: number) => r1(CHART.top + plotH - (max <= 0 ? 0 : (Math.min(Math.max(v, 0), max) / max) * plotH)),
  };
}

function axes(n: number, max: number, fmt: (v: number) => string, cycles: number[]): string {
  const s = scale(n, max);
  const parts: string[] = [];
  let previous = '';
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    // A flat series (e.g. no cost recorded) would print one label five times: keep the first.
    const label = fmt(max * f);
    if (label === previous) continue;
    previous = label;
    const y = s.y(max * f);
    parts.push(
      `<line class="grid" x1="${CHART.left}" x2="${CHART.width - CHART.right}" y1="${y}" y2="${y}"/>`,
      `<text class="tick" x="${CHART.left - 6}" y="${r1(y + 4)}" text-anchor="end">${escapeHtml(label)}</text>`,
    );
  }
  const step = Math.max(1, Math.ceil(n / 12));
  cycles.forEach((c, i) => {
    if (i % step === 0 || i === n - 1) parts.push(`<text class="tick" x="${s.x(i)}" y="${CHART.height - 10}" text-anchor="middle">${c}</text>`);
  });
  return parts.join('');
}

function svgOpen(id: string, label: string): string {
  return `<svg class="chart" id="${id}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${CHART.width} ${CHART.height}" width="${CHART.width}" height="${CHART.height}" role="img" aria-label="${escapeHtml(label)}">`;
}

function scoreChart(d: TrajectoryData): string {
  const n = d.points.length;
  const s = scale(n, 1);
  const line = d.points.map((p, i) => `${s.x(i)},${s.y(p.score)}`).join(' ');
  const best = d.points.map((p, i) => `${s.x(i)},${s.y(p.best_score)}`).join(' ');
  const marks = d.points.map(
    (p, i) =>
      `<circle class="${p.decision}" data-cycle="${p.cycle}" data-score="${p.score}" data-decision="${p.decision}" cx="${s.x(i)}" cy="${s.y(p.score)}" r="5"><title>cycle ${p.cycle}: ${escapeHtml(p.score.toFixed(3))} — ${p.decision === 'keep' ? 'KEEP' : 'DROP'}${p.mutation ? ` — ${escapeHtml(p.mutation)}` : ''}</title></circle>`,
  );
  return [
    svgOpen('chart-score', 'Score per cycle'),
    axes(
      n,
      1,
      (v) => v.toFixed(2),
      d.points.map((p) => p.cycle),
    ),
    n > 1 ? `<polyline class="best" points="${best}"/><polyline class="line" points="${line}"/>` : '',
    ...marks,
    '</svg>',
  ].join('');
}

function costChart(d: TrajectoryData): string {
  const n = d.points.length;
  const max = Math.max(d.summary.total_cost_usd, 1e-9);
  const s = scale(n, max);
  const line = d.points.map((p, i) => `${s.x(i)},${s.y(p.cumulative_cost_usd)}`).join(' ');
  return [
    svgOpen('chart-cost', 'Cumulative cost'),
    axes(
      n,
      max,
      (v) => fmtCost(v),
      d.points.map((p) => p.cycle),
    ),
    n > 1 ? `<polyline class="cost" points="${line}"/>` : '',
    ...d.points.map(
      (p, i) =>
        `<circle class="cost-point" data-cycle="${p.cycle}" data-cumulative="${p.cumulative_cost_usd}" cx="${s.x(i)}" cy="${s.y(p.cumulative_cost_usd)}" r="3"><title>cycle ${p.cycle}: ${escapeHtml(fmtCost(p.cumulative_cost_usd))} so far</title></circle>`,
    ),
    '</svg>',
  ].join('');
}

function stat(key: string, label: string, value: string, cls = ''): string {
  return `<div class="stat ${cls}" data-stat="${key}"><div class="v">${escapeHtml(value)}</div><div class="k">${escapeHtml(label)}</div></div>`;
}

const score = (v: number | null) => (v === null ? '—' : v.toFixed(3));

function cards(d: TrajectoryData): string {
  const s = d.summary;
  const imp = s.improvement === null ? '—' : `${s.improvement >= 0 ? '+' : ''}${s.improvement.toFixed(3)}`;
  return `<div class="stats">${[
    stat('original', 'original score (cycle 1)', score(s.original_score)),
    stat('best', `best kept score${s.best_cycle === null ? '' : ` (cycle ${s.best_cycle})`}`, score(s.best_score), 'pass'),
    stat('improvement', 'best vs original', imp),
    stat('cycles', 'cycles', String(s.cycles)),
    stat('keeps', 'kept', String(s.keeps), 'pass'),
    stat('drops', 'dropped', String(s.drops), 'fail'),
    stat('cost', 'total cost', fmtCost(s.total_cost_usd)),
  ].join('')}</div>`;
}

function assertionTable(d: TrajectoryData): string {
  if (d.assertions.length === 0) return '<p class="muted">No per-assertion pass rates recorded.</p>';
  const head = `<tr><th>Assertion</th>${d.points.map((p) => `<th class="num">${p.cycle}</th>`).join('')}</tr>`;
  const rows = d.assertions.map(
    (name) =>
      `<tr data-assertion="${escapeHtml(name)}"><td><code>${escapeHtml(name)}</code></td>${d.rates[name]!.map((v, i) => `<td class="num" data-cycle="${d.points[i]!.cycle}">${v === null ? '—' : fmtPct(v)}</td>`).join('')}</tr>`,
  );
  return `<div class="panel"><table id="assertions"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function cycleTable(d: TrajectoryData): string {
  const rows = d.points.map(
    (p) =>
      `<tr data-cycle="${p.cycle}"><td class="num">${p.cycle}</td><td class="num" data-k="score">${p.score.toFixed(3)}</td><td class="${p.decision}" data-k="decision">${p.decision === 'keep' ? 'KEEP' : 'DROP'}</td><td class="num" data-k="cost">${escapeHtml(fmtCost(p.cost_usd))}</td><td class="num" data-k="cumulative">${escapeHtml(fmtCost(p.cumulative_cost_usd))}</td><td class="mutation" data-k="mutation">${escapeHtml(p.mutation)}</td><td><code>${escapeHtml(p.run_dir)}</code></td><td class="muted">${escapeHtml(p.timestamp)}</td></tr>`,
  );
  return `<div class="panel"><table id="cycles"><thead><tr><th class="num">Cycle</th><th class="num">Score</th><th>Decision</th><th class="num">Cost</th><th class="num">Cumulative</th><th>Mutation</th><th>Run</th><th>Time</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

/** The trajectory views without a document around them (for the Dashboard), plus their data. */
export function trajectoryFragment(iterations: Iteration[]): { html: string; data: TrajectoryData } {
  const data = trajectoryData(iterations);
  if (data.points.length === 0) return { html: '<section class="trajectory"><p class="muted">No autoresearch cycle recorded yet.</p></section>', data };
  const html = [
    '<section class="trajectory">',
    cards(data),
    '<div class="charts">',
    `<div class="panel"><h3>Score per cycle</h3>${scoreChart(data)}<p class="legend muted"><span class="k">● keep</span><span class="d">● drop</span><span>— score</span><span>- - best so far</span></p></div>`,
    `<div class="panel"><h3>Cumulative cost</h3>${costChart(data)}</div>`,
    '</div>',
    '<h2>Per-assertion pass rate</h2>',
    assertionTable(data),
    '<h2>Cycles</h2>',
    cycleTable(data),
    '</section>',
  ].join('');
  return { html, data };
}

export interface TrajectoryPageOptions {
  experiment: string;
  /** While the loop runs: reload every `refreshSeconds` (default 2). False: a static page. */
  live?: boolean;
  refreshSeconds?: number;
}

/** The standalone `trajectory.html`. */
export function renderTrajectoryHtml(iterations: Iteration[], opts: TrajectoryPageOptions): string {
  const { html, data } = trajectoryFragment(iterations);
  const live = opts.live ?? true;
  const refresh = Math.max(1, Math.round(opts.refreshSeconds ?? 2));
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(TRAJECTORY_CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="generator" content="agentv-results autoresearch">',
    live ? `<meta http-equiv="refresh" content="${refresh}"><!-- __AUTO_REFRESH__ -->` : '',
    '<link rel="icon" href="data:,">',
    `<title>Autoresearch — ${escapeHtml(opts.experiment)}</title>`,
    `<style>${TRAJECTORY_CSS}</style></head><body><main>`,
    `<header><h1>Autoresearch — ${escapeHtml(opts.experiment)}</h1><p class="sub">${live ? `live: this page reloads every ${refresh} s while the loop runs` : 'final'} · ${data.summary.cycles} cycle${data.summary.cycles === 1 ? '' : 's'}</p></header>`,
    html,
    '</main>',
    `<script type="application/json" id="trajectory-data">${jsonForScript(data)}</script>`,
    '</body></html>\n',
  ].join('');
}
