/**
 * The Dashboard's Autoresearch tab: the trajectory of one experiment's keep/drop loop — the same
 * views and numbers as the standalone `trajectory.html` (src/autoresearch/trajectory-html.ts):
 * summary cards (original, best kept, best vs original, cycles, kept, dropped, total cost), score
 * per cycle with keep/drop markers and the best-so-far line, cumulative cost, per-assertion pass
 * rates, and the cycles with their mutations. It draws from `GET /api/autoresearch/:experiment`
 * (trajectoryData, computed on the server once for both) with DOM calls only — mutation texts and
 * assertion names are agent-written and go in through textContent/setAttribute, never as markup.
 * While the tab is open it re-reads the log every 5 s, so it follows a running loop.
 *
 * A second script block in the same inline <script> as page-client.ts (the CSP hashes the whole
 * text); plain ES2017, no backticks, no `${`.
 */
export const AUTORESEARCH_JS = String.raw`
(function () {
  'use strict';
  var d = document;
  var SVG = 'http://www.w3.org/2000/svg';
  var W = 640, H = 240, L = 48, R = 16, T = 16, B = 32;
  var current = '';
  var seq = 0;
  function byId(id) { return d.getElementById(id); }
  function el(tag, cls, text) {
    var e = d.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) { var e = d.createElementNS(SVG, tag); for (var k in attrs) e.setAttribute(k, String(attrs[k])); return e; }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function msg(text, bad) { var m = byId('ar-msg'); m.textContent = text; m.className = 'msg' + (bad ? ' bad' : ''); }
  function score(v) { return typeof v === 'number' ? v.toFixed(3) : '—'; }
  function pct(v) { return (v * 100).toFixed(1) + '%'; }
  function cost(v) { return typeof v === 'number' && isFinite(v) ? '$' + v.toFixed(v < 1 ? 4 : 2) : '—'; }
  function r1(n) { return Math.round(n * 10) / 10; }
  function get(path) {
    return fetch(path, { credentials: 'same-origin' }).then(function (r) {
      return r.json().then(function (j) { if (!r.ok) throw new Error(j && j.error ? j.error : 'HTTP ' + r.status); return j; });
    });
  }
  function scale(n, max) {
    var pw = W - L - R, ph = H - T - B;
    return {
      x: function (i) { return r1(L + (n <= 1 ? pw / 2 : (i / (n - 1)) * pw)); },
      y: function (v) { return r1(T + ph - (max <= 0 ? 0 : (Math.min(Math.max(v, 0), max) / max) * ph)); }
    };
  }
  function chart(id, label, points, max, fmt) {
    var s = scale(points.length, max);
    var root = svg('svg', { id: id, class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': label });
    var prev = '';
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      var text = fmt(max * f); if (text === prev) return; prev = text;
      var y = s.y(max * f);
      root.appendChild(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y, y2: y }));
      var t = svg('text', { class: 'tick', x: L - 6, y: r1(y + 4), 'text-anchor': 'end' }); t.textContent = text; root.appendChild(t);
    });
    var step = Math.max(1, Math.ceil(points.length / 12));
    points.forEach(function (p, i) {
      if (i % step !== 0 && i !== points.length - 1) return;
      var t = svg('text', { class: 'tick', x: s.x(i), y: H - 10, 'text-anchor': 'middle' }); t.textContent = String(p.cycle); root.appendChild(t);
    });
    return { root: root, s: s };
  }
  function polyline(c, cls, points, key) {
    if (points.length < 2) return;
    c.root.appendChild(svg('polyline', { class: cls, points: points.map(function (p, i) { return c.s.x(i) + ',' + c.s.y(p[key]); }).join(' ') }));
  }
  function stat(key, label, value, cls) {
    var s = el('div', 'stat' + (cls ? ' ' + cls : '')); s.setAttribute('data-stat', key);
    s.appendChild(el('div', 'v', value)); s.appendChild(el('div', 'k', label)); return s;
  }
  function panel(title, child) { var p = el('div', 'panel'); p.appendChild(el('h3', null, title)); p.appendChild(child); return p; }
  function render(name, t) {
    var box = byId('ar-view'); clear(box);
    box.setAttribute('data-experiment', name);
    var pts = t.points, sum = t.summary;
    if (!pts.length) { box.appendChild(el('p', 'muted', 'No autoresearch cycle recorded yet.')); return; }
    var imp = sum.improvement === null ? '—' : (sum.improvement >= 0 ? '+' : '') + sum.improvement.toFixed(3);
    var stats = el('div', 'stats');
    [stat('original', 'original score (cycle 1)', score(sum.original_score)),
      stat('best', 'best kept score' + (sum.best_cycle === null ? '' : ' (cycle ' + sum.best_cycle + ')'), score(sum.best_score), 'pass'),
      stat('improvement', 'best vs original', imp),
      stat('cycles', 'cycles', String(sum.cycles)),
      stat('keeps', 'kept', String(sum.keeps), 'pass'),
      stat('drops', 'dropped', String(sum.drops), 'fail'),
      stat('cost', 'total cost', cost(sum.total_cost_usd))].forEach(function (s) { stats.appendChild(s); });
    box.appendChild(stats);
    var charts = el('div', 'charts');
    var sc = chart('ar-chart-score', 'Score per cycle', pts, 1, function (v) { return v.toFixed(2); });
    polyline(sc, 'best', pts, 'best_score'); polyline(sc, 'line', pts, 'score');
    pts.forEach(function (p, i) {
      var c = svg('circle', { class: p.decision === 'keep' ? 'keep' : 'drop', 'data-cycle': p.cycle, 'data-score': p.score, 'data-decision': p.decision, cx: sc.s.x(i), cy: sc.s.y(p.score), r: 5 });
      var tt = svg('title', {}); tt.textContent = 'cycle ' + p.cycle + ': ' + p.score.toFixed(3) + ' — ' + (p.decision === 'keep' ? 'KEEP' : 'DROP') + (p.mutation ? ' — ' + p.mutation : '');
      c.appendChild(tt); sc.root.appendChild(c);
    });
    var sp = panel('Score per cycle', sc.root);
    var legend = el('p', 'legend muted');
    [['k', '● keep'], ['d', '● drop'], ['', '— score'], ['', '- - best so far']].forEach(function (x) { legend.appendChild(el('span', x[0] || null, x[1])); });
    sp.appendChild(legend); charts.appendChild(sp);
    var cmax = Math.max(sum.total_cost_usd, 1e-9);
    var cc = chart('ar-chart-cost', 'Cumulative cost', pts, cmax, cost);
    polyline(cc, 'cost', pts, 'cumulative_cost_usd');
    pts.forEach(function (p, i) {
      var c = svg('circle', { class: 'cost-point', 'data-cycle': p.cycle, 'data-cumulative': p.cumulative_cost_usd, cx: cc.s.x(i), cy: cc.s.y(p.cumulative_cost_usd), r: 3 });
      var tt = svg('title', {}); tt.textContent = 'cycle ' + p.cycle + ': ' + cost(p.cumulative_cost_usd) + ' so far'; c.appendChild(tt); cc.root.appendChild(c);
    });
    charts.appendChild(panel('Cumulative cost', cc.root));
    box.appendChild(charts);
    box.appendChild(el('h2', null, 'Per-assertion pass rate'));
    if (!t.assertions.length) box.appendChild(el('p', 'muted', 'No per-assertion pass rates recorded.'));
    else {
      var at = el('table'); at.id = 'ar-assertions';
      var head = el('tr'); head.appendChild(el('th', null, 'Assertion'));
      pts.forEach(function (p) { head.appendChild(el('th', 'num', p.cycle)); });
      var th = el('thead'); th.appendChild(head); at.appendChild(th);
      var tb = el('tbody');
      t.assertions.forEach(function (name) {
        var tr = el('tr'); tr.setAttribute('data-assertion', name);
        var nc = el('td'); nc.appendChild(el('code', null, name)); tr.appendChild(nc);
        (t.rates[name] || []).forEach(function (v, i) { var td = el('td', 'num', v === null ? '—' : pct(v)); td.setAttribute('data-cycle', pts[i].cycle); tr.appendChild(td); });
        tb.appendChild(tr);
      });
      at.appendChild(tb); var ap = el('div', 'panel'); ap.appendChild(at); box.appendChild(ap);
    }
    box.appendChild(el('h2', null, 'Cycles'));
    var ct = el('table'); ct.id = 'ar-cycles';
    var h = el('tr');
    [['num', 'Cycle'], ['num', 'Score'], ['', 'Decision'], ['num', 'Cost'], ['num', 'Cumulative'], ['', 'Mutation'], ['', 'Run'], ['', 'Time']].forEach(function (x) { h.appendChild(el('th', x[0] || null, x[1])); });
    var chd = el('thead'); chd.appendChild(h); ct.appendChild(chd);
    var cb = el('tbody');
    pts.forEach(function (p) {
      var tr = el('tr'); tr.setAttribute('data-cycle', p.cycle);
      var cells = [['num', null, p.cycle], ['num', 'score', p.score.toFixed(3)], [p.decision === 'keep' ? 'keep' : 'drop', 'decision', p.decision === 'keep' ? 'KEEP' : 'DROP'], ['num', 'cost', cost(p.cost_usd)], ['num', 'cumulative', cost(p.cumulative_cost_usd)], ['mutation', 'mutation', p.mutation]];
      cells.forEach(function (c) { var td = el('td', c[0], c[2]); if (c[1]) td.setAttribute('data-k', c[1]); tr.appendChild(td); });
      var run = el('td'); run.appendChild(el('code', null, p.run_dir)); tr.appendChild(run);
      tr.appendChild(el('td', 'muted', p.timestamp));
      cb.appendChild(tr);
    });
    ct.appendChild(cb); var cp = el('div', 'panel'); cp.appendChild(ct); box.appendChild(cp);
  }
  function load(name) {
    current = name;
    var n = ++seq;
    var link = byId('ar-page');
    if (!name) { clear(byId('ar-view')); link.hidden = true; return Promise.resolve(); }
    link.setAttribute('href', '/api/autoresearch/' + encodeURIComponent(name) + '/trajectory.html'); link.hidden = false;
    return get('/api/autoresearch/' + encodeURIComponent(name)).then(function (r) {
      if (n !== seq) return;
      render(name, r.trajectory);
      msg(r.warnings && r.warnings.length ? r.warnings.length + ' malformed line(s) skipped' : '', false);
      d.body.setAttribute('data-autoresearch-loaded', String(Date.now()));
    }).catch(function (e) { if (n === seq) msg(e.message, true); });
  }
  function list() {
    return get('/api/autoresearch').then(function (r) {
      var sel = byId('ar-experiment'); var cur = sel.value;
      while (sel.options.length > 1) sel.remove(1);
      r.experiments.forEach(function (x) { var o = el('option', null, x.experiment + ' · ' + x.cycles + ' cycle(s)'); o.value = x.experiment; sel.appendChild(o); });
      var names = r.experiments.map(function (x) { return x.experiment; });
      if (names.indexOf(cur) >= 0) sel.value = cur;
      else if (names.length) sel.value = names[0];
      if (!names.length) msg('no autoresearch log under .agentv/results/runs/*/_autoresearch/ in this directory', false);
      return load(sel.value);
    }).catch(function (e) { msg(e.message, true); });
  }
  byId('tab-autoresearch').addEventListener('click', function () { list(); });
  byId('ar-experiment').addEventListener('change', function () { load(byId('ar-experiment').value); });
  setInterval(function () { if (!byId('view-autoresearch').hidden && current) load(current); }, 5000);
})();
`;
