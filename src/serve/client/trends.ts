/**
 * Trend charts: one row of four charts (pass rate, mean score, cost, duration) per series, dates on
 * the x axis (runs placed by time), three labelled ticks on the y axis, and a red mark only on the
 * mean-score points the API flags as regressions (the trend rule lives on the server, src/trend). Series are
 * shown in the API's order (most recent first, then the longer ones) and split as the URL's `by`
 * asks (none: every target pooled, as `agentv trend`).
 */
import type { SkippedSeries, TrendAnswer, TrendRunPoint, TrendSeries } from '../api-types.js';
import { api, painted, scope } from './api.js';
import { byId, clear, cost, day, dur, el, fillSelect, flash, isNum, pct, score, svg } from './dom.js';
import { go, href, type Route } from './route.js';

let key = '';
let seq = 0;

type Fmt = (v: number) => string;
const compactCost: Fmt = (v) => (v === 0 ? '$0' : Math.abs(v) >= 100 ? `$${Math.round(v)}` : Math.abs(v) >= 1 ? `$${v.toFixed(2)}` : `$${v.toPrecision(2)}`);
const compactDur: Fmt = (v) =>
  v === 0 ? '0' : v >= 60_000 ? `${(v / 60_000).toFixed(1)} min` : v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
const compactPct: Fmt = (v) => `${Math.round(v * 100)}%`;
const compactScore: Fmt = (v) => (Math.abs(v * 10 - Math.round(v * 10)) < 1e-9 ? v.toFixed(1) : v.toFixed(2));

/**
 * The chart a regression mark belongs on: the trend rule (src/trend/series.ts) judges a run's mean
 * score, so its marks go on the mean-score line only — never on pass rate, cost or time, which may
 * be flat where the score fell.
 */
const SCORED = new Set(['mean_score']);
/** Metrics that are shares or scores: their axis never leaves 0..1. */
const UNIT = new Set(['pass_rate', 'mean_score']);

/**
 * The y axis of a chart: a pass rate 0..1 always; a score zoomed to its values on steps of 0.1
 * within 0..1 (a constant 0.917 draws on 0.8..1.0); cost and duration from 0 up to the largest
 * value (a constant one in the middle of its axis).
 */
export function axisRange(metric: string, vals: number[]): [number, number] {
  if (metric === 'pass_rate') return [0, 1];
  if (!vals.length) return [0, 1];
  const min = Math.min(...vals);
  const max = Math.max(...vals);
  if (UNIT.has(metric) && min >= 0 && max <= 1) {
    const step = 0.1;
    let lo = Math.max(0, Math.floor(min / step - 1e-9) * step);
    let hi = Math.min(1, Math.ceil(max / step + 1e-9) * step);
    if (hi - lo < 2 * step) {
      if (hi >= 1) lo = Math.max(0, hi - 2 * step);
      else hi = Math.min(1, lo + 2 * step);
    }
    lo = Math.round(lo * 10) / 10;
    hi = Math.round(hi * 10) / 10;
    return [lo, hi];
  }
  const lo = Math.min(min, 0);
  if (max === lo) return [lo, lo === 0 ? 1 : lo + Math.abs(lo)];
  return min === max ? [lo, max * 2] : [lo, max];
}

/** What a chart with no value says instead (the series' runs are there; their results carry no such number). */
const NO_DATA: Record<'pass_rate' | 'mean_score' | 'cost_usd' | 'duration_ms', string> = {
  pass_rate: 'No pass rate: no result of these runs says whether it passed.',
  mean_score: 'No score: no result of these runs has one.',
  cost_usd: 'No cost: the results of these runs carry none (the agent reported no cost).',
  duration_ms: 'No duration: the results of these runs carry none.',
};

function chart(
  title: string,
  points: TrendRunPoint[],
  metric: 'pass_rate' | 'mean_score' | 'cost_usd' | 'duration_ms',
  fmt: (x: unknown) => string,
  tick: Fmt,
): HTMLElement {
  const W = 380;
  const H = 170;
  const L = 52;
  const R = 14;
  const T = 12;
  const B = 34;
  const vals = points.map((p) => p[metric]).filter(isNum);
  const panel = el('div', 'panel trend-chart');
  panel.setAttribute('data-metric', metric);
  panel.appendChild(el('h3', null, `${title}${vals.length ? ` — last ${fmt(vals[vals.length - 1])}` : ''}`));
  // No value to draw: a sentence, never axes with no mark on them.
  if (vals.length === 0) {
    panel.classList.add('no-data');
    panel.appendChild(el('p', 'muted chart-empty', NO_DATA[metric]));
    return panel;
  }
  const s = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': title });
  const [lo, hi] = axisRange(metric, vals);
  const times = points.map((p) => Date.parse(p.timestamp ?? ''));
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const x = (i: number) => {
    const t = times[i]!;
    return (
      L + (t1 > t0 && Number.isFinite(t) ? ((t - t0) / (t1 - t0)) * (W - L - R) : points.length < 2 ? (W - L - R) / 2 : (i / (points.length - 1)) * (W - L - R))
    );
  };
  const y = (v: number) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  s.appendChild(svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, class: 'axis' }));
  s.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' }));
  for (const v of [lo, (lo + hi) / 2, hi]) {
    s.appendChild(svg('line', { x1: L, y1: y(v), x2: W - R, y2: y(v), class: 'grid' }));
    const t = svg('text', { x: L - 5, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' });
    t.textContent = tick(v);
    s.appendChild(t);
  }
  // Dates: the first and last run, and the middle one when it is another day.
  const idx = [...new Set([0, Math.floor((points.length - 1) / 2), points.length - 1])];
  const shown = new Set<string>();
  for (const i of idx) {
    const label = day(points[i]?.timestamp);
    if (!label || shown.has(label)) continue;
    shown.add(label);
    const anchor = i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle';
    const t = svg('text', {
      x: points.length < 2 ? x(i) : i === 0 ? L : i === points.length - 1 ? W - R : x(i),
      y: H - B + 16,
      'text-anchor': points.length < 2 ? 'middle' : anchor,
      class: 'tick date',
    });
    t.textContent = label;
    s.appendChild(t);
  }
  let path = '';
  points.forEach((p, i) => {
    if (isNum(p[metric])) path += `${path ? ' L' : 'M'}${x(i).toFixed(1)} ${y(p[metric]).toFixed(1)}`;
  });
  if (path) s.appendChild(svg('path', { d: path, class: 'trend-line' }));
  points.forEach((p, i) => {
    if (!isNum(p[metric])) return;
    // The trend rule flags a run whose score fell; cost and duration carry no such mark.
    const reg = p.regression === true && SCORED.has(metric);
    const c = svg('circle', { cx: x(i).toFixed(1), cy: y(p[metric]).toFixed(1), r: reg ? 5 : 3, class: reg ? 'pt regression' : 'pt' });
    c.setAttribute('data-run', String(p.run_id));
    c.setAttribute('data-value', String(p[metric]));
    const tt = svg('title');
    tt.textContent = `${p.run_id} · ${day(p.timestamp)}: ${fmt(p[metric])}${reg ? ' (regression)' : ''}`;
    c.appendChild(tt);
    s.appendChild(c);
  });
  panel.appendChild(s);
  return panel;
}

/** A series' name as the CLI prints it (src/trend seriesName). */
export const seriesName = (s: Pick<TrendSeries | SkippedSeries, 'experiment' | 'target'>) =>
  `${s.experiment ?? 'all experiments'} × ${s.target ?? 'all targets'}`;
/** `none`: one series, pooled. Without a choice, one series per experiment (all experiments' runs rarely share tests to pool). */
const BY = ['none', 'target', 'experiment', 'experiment,target'];

export function renderTrends(route: Route): Promise<void> {
  const experiment = route.q.get('experiment') ?? '';
  const target = route.q.get('target') ?? '';
  const by = BY.includes(route.q.get('by') ?? '') ? (route.q.get('by') ?? '') : experiment ? 'none' : 'experiment';
  const at = (e: string, t: string, b: string) => href('trends', { experiment: e || null, target: t || null, by: b || null, project: scope.project || null });
  byId<HTMLSelectElement>('t-experiment').onchange = () => go(at(byId<HTMLSelectElement>('t-experiment').value, target, by));
  byId<HTMLSelectElement>('t-target').onchange = () => go(at(experiment, byId<HTMLSelectElement>('t-target').value, by));
  byId<HTMLSelectElement>('t-by').value = by;
  byId<HTMLSelectElement>('t-by').onchange = () => go(at(experiment, target, byId<HTMLSelectElement>('t-by').value));
  const q = new URLSearchParams();
  if (experiment) q.set('experiment', experiment);
  if (target) q.set('target', target);
  if (by !== 'none') q.set('by', by);
  const k = `${scope.project}\0${q}`;
  if (k === key) return Promise.resolve();
  key = k;
  const s = ++seq;
  flash('trend-msg', 'loading…');
  return api<TrendAnswer>(`/trend?${q}`)
    .then((t) => {
      if (s !== seq) return;
      fillSelect(byId<HTMLSelectElement>('t-experiment'), t.experiments ?? [], experiment);
      fillSelect(byId<HTMLSelectElement>('t-target'), t.targets ?? [], target);
      const box = byId('trend-charts');
      clear(box);
      for (const series of t.series) {
        const points = series.runs;
        const name = seriesName(series);
        const sec = el('section', 'series');
        sec.setAttribute('data-series', name);
        const regs = points.filter((p) => p.regression).length;
        const first = day(points[0]?.timestamp);
        const lastDay = day(points[points.length - 1]?.timestamp);
        const dates = first && lastDay ? `, ${first === lastDay ? first : `${first} → ${lastDay}`}` : '';
        const dir = series.summary?.direction;
        const slope = series.summary?.slope;
        sec.appendChild(
          el(
            'h3',
            null,
            `${name} · ${points.length} run${points.length === 1 ? '' : 's'}${dates}${dir ? ` · ${dir}${isNum(slope) ? ` (slope ${slope.toFixed(4)})` : ''}` : ''}${regs ? ` · ${regs} regression(s)` : ''}`,
          ),
        );
        if (dir) sec.setAttribute('data-direction', dir);
        const row = el('div', 'charts');
        row.appendChild(chart('Pass rate', points, 'pass_rate', pct, compactPct));
        row.appendChild(chart('Mean score', points, 'mean_score', score, compactScore));
        row.appendChild(chart('Cost', points, 'cost_usd', cost, compactCost));
        row.appendChild(chart('Duration', points, 'duration_ms', dur, compactDur));
        sec.appendChild(row);
        box.appendChild(sec);
      }
      // An empty chart says why in the reader's words (no command-line flags: the page may be the static site).
      const skipped = t.skipped ?? [];
      if (!t.series.length)
        box.appendChild(
          el(
            'p',
            'muted',
            skipped.length > 0
              ? 'No chart: the runs of this choice share no test, so their scores cannot be followed from run to run. Choose series per experiment, or one experiment.'
              : experiment || target
                ? 'No runs match this experiment and target.'
                : 'No runs to chart yet: a trend needs published runs.',
          ),
        );
      const words = (reason: string) => reason.replace(/\s*\(use --[^)]*\)/g, '');
      const notes: string[] = [...(t.warnings ?? []), ...skipped.map((x) => `${seriesName(x)}: ${words(x.reason)}`)];
      flash('trend-msg', notes.join(' · '));
      painted('trend');
    })
    .catch((e: Error) => {
      key = '';
      if (s === seq) flash('trend-msg', e.message, true);
    });
}

export function resetTrends(): void {
  key = '';
}
