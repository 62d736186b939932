/**
 * The Autoresearch tab: the trajectory of one experiment's keep/drop loop — the same views and
 * numbers as the standalone `trajectory.html` (src/autoresearch/trajectory-html.ts), drawn from
 * `GET /api/autoresearch/:experiment` with DOM calls only (mutation texts and assertion names are
 * agent-written). While the tab is open it re-reads the log every 5 s, so it follows a running loop.
 */
import { painted } from './api.js';
import type { AutoresearchAnswer, AutoresearchListAnswer } from '../api-types.js';
import type { TrajectoryData, TrajectoryPoint } from '../../autoresearch/trajectory-types.js';
import { byId, clear, cost, el, flash, svg } from './dom.js';
import { go, href, type Route } from './route.js';

const W = 640;
const H = 240;
const L = 48;
const R = 16;
const T = 16;
const B = 32;
let current = '';
let seq = 0;

const score = (v: unknown) => (typeof v === 'number' ? v.toFixed(3) : '—');
const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
const r1 = (n: number) => Math.round(n * 10) / 10;
const msg = (text: string, bad = false) => flash('ar-msg', text, bad);

// The autoresearch API is not scoped to a project: it reads this server's own directory.
async function get<T>(path: string): Promise<T> {
  const r = await fetch(path, { credentials: 'same-origin' });
  const j = await r.json();
  // Browser code: the page's own rejection, shown on the page; not the library's error model.
  if (!r.ok) throw new Error(j?.error ? j.error : `HTTP ${r.status}`);
  return j;
}

function scale(n: number, max: number) {
  const pw = W - L - R;
  const ph = H - T - B;
  return {
    x: (i: number) => r1(L + (n <= 1 ? pw / 2 : (i / (n - 1)) * pw)),
    y: (v: number) => r1(T + ph - (max <= 0 ? 0 : (Math.min(Math.max(v, 0), max) / max) * ph)),
  };
}

function chart(id: string, label: string, points: TrajectoryPoint[], max: number, fmt: (v: number) => string) {
  const s = scale(points.length, max);
  const root = svg('svg', { id, class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label });
  let prev = '';
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const text = fmt(max * f);
    if (text === prev) continue;
    prev = text;
    const y = s.y(max * f);
    root.appendChild(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y, y2: y }));
    const t = svg('text', { class: 'tick', x: L - 6, y: r1(y + 4), 'text-anchor': 'end' });
    t.textContent = text;
    root.appendChild(t);
  }
  const step = Math.max(1, Math.ceil(points.length / 12));
  points.forEach((p, i) => {
    if (i % step !== 0 && i !== points.length - 1) return;
    const t = svg('text', { class: 'tick', x: s.x(i), y: H - 10, 'text-anchor': 'middle' });
    t.textContent = String(p.cycle);
    root.appendChild(t);
  });
  return { root, s };
}

function polyline(c: ReturnType<typeof chart>, cls: string, points: TrajectoryPoint[], key: 'score' | 'best_score' | 'cumulative_cost_usd'): void {
  if (points.length < 2) return;
  c.root.appendChild(svg('polyline', { class: cls, points: points.map((p, i) => `${c.s.x(i)},${c.s.y(p[key])}`).join(' ') }));
}

function stat(key: string, label: string, value: string, cls?: string): HTMLElement {
  const s = el('div', `stat${cls ? ` ${cls}` : ''}`);
  s.setAttribute('data-stat', key);
  s.appendChild(el('div', 'v', value));
  s.appendChild(el('div', 'k', label));
  return s;
}

function panel(title: string, child: Element): HTMLElement {
  const p = el('div', 'panel');
  p.appendChild(el('h3', null, title));
  p.appendChild(child);
  return p;
}

function render(name: string, t: TrajectoryData): void {
  const box = byId('ar-view');
  clear(box);
  box.setAttribute('data-experiment', name);
  const pts = t.points;
  const sum = t.summary;
  if (!pts.length) {
    box.appendChild(el('p', 'muted', 'No autoresearch cycle recorded yet.'));
    return;
  }
  const imp = sum.improvement === null ? '—' : (sum.improvement >= 0 ? '+' : '') + sum.improvement.toFixed(3);
  const stats = el('div', 'stats');
  for (const s of [
    stat('original', 'original score (cycle 1)', score(sum.original_score)),
    stat('best', `best kept score${sum.best_cycle === null ? '' : ` (cycle ${sum.best_cycle})`}`, score(sum.best_score), 'pass'),
    stat('improvement', 'best vs original', imp),
    stat('cycles', 'cycles', String(sum.cycles)),
    stat('keeps', 'kept', String(sum.keeps), 'pass'),
    stat('drops', 'dropped', String(sum.drops), 'fail'),
    stat('cost', 'total cost', cost(sum.total_cost_usd)),
  ])
    stats.appendChild(s);
  box.appendChild(stats);
  const charts = el('div', 'charts');
  const sc = chart('ar-chart-score', 'Score per cycle', pts, 1, (v) => v.toFixed(2));
  polyline(sc, 'best', pts, 'best_score');
  polyline(sc, 'line', pts, 'score');
  pts.forEach((p, i) => {
    const c = svg('circle', {
      class: p.decision === 'keep' ? 'keep' : 'drop',
      'data-cycle': p.cycle,
      'data-score': p.score,
      'data-decision': p.decision,
      cx: sc.s.x(i),
      cy: sc.s.y(p.score),
      r: 5,
    });
    const tt = svg('title');
    tt.textContent = `cycle ${p.cycle}: ${p.score.toFixed(3)} — ${p.decision === 'keep' ? 'KEEP' : 'DROP'}${p.mutation ? ` — ${p.mutation}` : ''}`;
    c.appendChild(tt);
    sc.root.appendChild(c);
  });
  const sp = panel('Score per cycle', sc.root);
  const legend = el('p', 'legend muted');
  for (const [cls, text] of [
    ['k', '● keep'],
    ['d', '● drop'],
    ['', '— score'],
    ['', '- - best so far'],
  ])
    legend.appendChild(el('span', cls || null, text));
  sp.appendChild(legend);
  charts.appendChild(sp);
  const cmax = Math.max(sum.total_cost_usd, 1e-9);
  const cc = chart('ar-chart-cost', 'Cumulative cost', pts, cmax, cost);
  polyline(cc, 'cost', pts, 'cumulative_cost_usd');
  pts.forEach((p, i) => {
    const c = svg('circle', {
      class: 'cost-point',
      'data-cycle': p.cycle,
      'data-cumulative': p.cumulative_cost_usd,
      cx: cc.s.x(i),
      cy: cc.s.y(p.cumulative_cost_usd),
      r: 3,
    });
    const tt = svg('title');
    tt.textContent = `cycle ${p.cycle}: ${cost(p.cumulative_cost_usd)} so far`;
    c.appendChild(tt);
    cc.root.appendChild(c);
  });
  charts.appendChild(panel('Cumulative cost', cc.root));
  box.appendChild(charts);
  box.appendChild(el('h2', null, 'Per-assertion pass rate'));
  if (!t.assertions.length) box.appendChild(el('p', 'muted', 'No per-assertion pass rates recorded.'));
  else {
    const at = el('table');
    at.id = 'ar-assertions';
    const head = el('tr');
    head.appendChild(el('th', null, 'Assertion'));
    for (const p of pts) head.appendChild(el('th', 'num', p.cycle));
    const th = el('thead');
    th.appendChild(head);
    at.appendChild(th);
    const tb = el('tbody');
    for (const name of t.assertions) {
      const tr = el('tr');
      tr.setAttribute('data-assertion', name);
      const nc = el('td');
      nc.appendChild(el('code', null, name));
      tr.appendChild(nc);
      (t.rates[name] ?? []).forEach((v, i) => {
        const td = el('td', 'num', v === null ? '—' : pct(v));
        td.setAttribute('data-cycle', String(pts[i]?.cycle));
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    }
    at.appendChild(tb);
    const ap = el('div', 'panel');
    ap.appendChild(at);
    box.appendChild(ap);
  }
  box.appendChild(el('h2', null, 'Cycles'));
  const ct = el('table');
  ct.id = 'ar-cycles';
  const h = el('tr');
  for (const [cls, text] of [
    ['num', 'Cycle'],
    ['num', 'Score'],
    ['', 'Decision'],
    ['num', 'Cost'],
    ['num', 'Cumulative'],
    ['', 'Mutation'],
    ['', 'Run'],
    ['', 'Time'],
  ])
    h.appendChild(el('th', cls || null, text));
  const chd = el('thead');
  chd.appendChild(h);
  ct.appendChild(chd);
  const cb = el('tbody');
  for (const p of pts) {
    const tr = el('tr');
    tr.setAttribute('data-cycle', String(p.cycle));
    const cells: [string, string | null, unknown][] = [
      ['num', null, p.cycle],
      ['num', 'score', p.score.toFixed(3)],
      [p.decision === 'keep' ? 'keep' : 'drop', 'decision', p.decision === 'keep' ? 'KEEP' : 'DROP'],
      ['num', 'cost', cost(p.cost_usd)],
      ['num', 'cumulative', cost(p.cumulative_cost_usd)],
      ['mutation', 'mutation', p.mutation],
    ];
    for (const [cls, k, v] of cells) {
      const td = el('td', cls, v);
      if (k) td.setAttribute('data-k', k);
      tr.appendChild(td);
    }
    const run = el('td');
    run.appendChild(el('code', null, p.run_dir));
    tr.appendChild(run);
    tr.appendChild(el('td', 'muted', p.timestamp));
    cb.appendChild(tr);
  }
  ct.appendChild(cb);
  const cp = el('div', 'panel');
  cp.appendChild(ct);
  box.appendChild(cp);
}

function load(name: string): Promise<void> {
  current = name;
  const n = ++seq;
  const link = byId('ar-page');
  if (!name) {
    clear(byId('ar-view'));
    link.hidden = true;
    return Promise.resolve();
  }
  link.setAttribute('href', `/api/autoresearch/${encodeURIComponent(name)}/trajectory.html`);
  link.hidden = false;
  return get<AutoresearchAnswer>(`/api/autoresearch/${encodeURIComponent(name)}`)
    .then((r) => {
      if (n !== seq) return;
      render(name, r.trajectory);
      msg(r.warnings?.length ? `${r.warnings.length} malformed line(s) skipped` : '');
      painted('autoresearch');
    })
    .catch((e: Error) => {
      if (n === seq) msg(e.message, true);
    });
}

/** The experiments with a log; open the one the URL names, else the first. */
export function renderAutoresearch(route: Route): Promise<void> {
  const wanted = route.q.get('experiment') ?? '';
  return get<AutoresearchListAnswer>('/api/autoresearch')
    .then((r) => {
      const sel = byId<HTMLSelectElement>('ar-experiment');
      while (sel.options.length > 1) sel.remove(1);
      for (const x of r.experiments) {
        const o = el('option', null, `${x.experiment} · ${x.cycles} cycle(s)`);
        o.value = x.experiment;
        sel.appendChild(o);
      }
      const names = r.experiments.map((x) => x.experiment);
      sel.value = names.includes(wanted) ? wanted : (names[0] ?? '');
      if (!names.length) msg('no autoresearch log under .agentv/results/runs/*/_autoresearch/ in this directory');
      return load(sel.value);
    })
    .catch((e: Error) => msg(e.message, true));
}

export function initAutoresearch(): void {
  byId('ar-experiment').addEventListener('change', () => go(href('autoresearch', { experiment: byId<HTMLSelectElement>('ar-experiment').value || null })));
  setInterval(() => {
    if (!byId('view-autoresearch').hidden && current) void load(current);
  }, 5000);
}
