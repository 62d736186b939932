/**
 * The Dashboard's only script, inlined and allowed by its hash in the page's CSP. It keeps the
 * report client's rules (src/report/client.ts): everything it shows is untrusted run data, put on
 * the page with textContent / createTextNode / setAttribute of fixed names — never innerHTML,
 * insertAdjacentHTML, document.write or eval. The only links built from data are sync-branch
 * compare links (http/https only, checked here) and paths of this server (encodeURIComponent).
 * It talks to nothing but this server's own API (the CSP's connect-src 'self' enforces it).
 *
 * Plain ES2017 in a string, without backticks or `${`, like the report's client.
 */
export const DASHBOARD_JS = String.raw`
(function () {
  'use strict';
  var d = document;
  var TOKEN = d.querySelector('meta[name="agentv-results-token"]').getAttribute('content');
  var READ_ONLY = d.body.getAttribute('data-read-only') === 'true';
  var state = { project: '', offset: 0, limit: 50, selected: [], run: null };
  function byId(id) { return d.getElementById(id); }
  function el(tag, cls, text) {
    var e = d.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function pct(x) { return typeof x === 'number' ? (Math.round(x * 1000) / 10).toFixed(1) + '%' : '—'; }
  function score(x) { return typeof x === 'number' ? x.toFixed(3) : '—'; }
  function cost(x) { return typeof x === 'number' ? '$' + x.toFixed(4) : '—'; }
  function dur(x) { return typeof x === 'number' ? (x >= 1000 ? (x / 1000).toFixed(1) + ' s' : Math.round(x) + ' ms') : '—'; }
  function prefix() { return state.project ? '/api/projects/' + encodeURIComponent(state.project) : '/api'; }
  function api(path, method, body) {
    var init = { method: method || 'GET', headers: {}, credentials: 'same-origin' };
    if (method && method !== 'GET') {
      init.headers['x-agentv-results-token'] = TOKEN;
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body || {});
    }
    return fetch(prefix() + path, init).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) { var e = new Error(j && j.error ? j.error : ('HTTP ' + r.status)); e.status = r.status; throw e; }
        return j;
      });
    });
  }
  function flash(id, text, bad) {
    var m = byId(id); m.textContent = text; m.className = 'msg' + (bad ? ' bad' : '');
  }
  function safeHttpUrl(u) {
    try { var p = new URL(u); return (p.protocol === 'https:' || p.protocol === 'http:') ? p.href : null; } catch (e) { return null; }
  }
  function setField(root, name, text) {
    var f = root.querySelector('[data-field="' + name + '"]');
    if (f) f.textContent = String(text);
  }

  // ── remote status and sync ──────────────────────────────────────────
  function showRemote(s) {
    var box = byId('remote');
    setField(box, 'sync_status', s.sync_status);
    setField(box, 'branch', s.branch || '—');
    setField(box, 'upstream', s.upstream || 'no remote');
    setField(box, 'ahead', s.ahead === undefined ? '—' : s.ahead);
    setField(box, 'behind', s.behind === undefined ? '—' : s.behind);
    setField(box, 'run_count', s.run_count);
    var ours = s.agentv_results || {};
    setField(box, 'outbox', ours.outbox ? ours.outbox.depth + (ours.outbox.failed ? ' (' + ours.outbox.failed + ' failed)' : '') : '—');
    setField(box, 'last_push', ours.last_push ? ours.last_push.at : '—');
    setField(box, 'remote_url', ours.remote_url || '—');
    byId('remote').setAttribute('data-sync-status', s.sync_status);
    var list = byId('sync-branches'); clear(list);
    (ours.sync_branches || []).forEach(function (b) {
      var li = el('li');
      var href = b.compare_url ? safeHttpUrl(b.compare_url) : null;
      if (href) { var a = el('a', null, b.branch); a.setAttribute('href', href); a.setAttribute('rel', 'noopener noreferrer'); a.setAttribute('target', '_blank'); li.appendChild(a); }
      else li.appendChild(el('code', null, b.branch));
      li.appendChild(el('span', 'muted', ' ' + b.conflicts + ' conflict(s) · ' + b.resolve_command));
      list.appendChild(li);
    });
    if (!list.firstChild) list.appendChild(el('li', 'muted', 'none open'));
    var wip = byId('wip-branches'); clear(wip);
    (ours.wip || []).forEach(function (w) { wip.appendChild(el('li', null, w.branch + ' · ' + (w.rows === null ? '?' : w.rows) + ' rows · ' + w.where)); });
    if (!wip.firstChild) wip.appendChild(el('li', 'muted', 'none'));
  }
  function loadRemote() {
    return api('/remote/status').then(showRemote).catch(function (e) { flash('remote-msg', e.message, true); });
  }
  byId('sync-btn').addEventListener('click', function () {
    var btn = byId('sync-btn'); btn.disabled = true; flash('remote-msg', 'syncing…');
    api('/remote/sync', 'POST').then(function (s) {
      showRemote(s);
      flash('remote-msg', s.blocked ? ('sync blocked: ' + (s.block_reason || 'unknown')) : (s.push_performed ? 'pushed' : 'already in sync'), !!s.blocked);
      loadRuns();
    }).catch(function (e) { flash('remote-msg', e.message, true); }).then(function () { btn.disabled = READ_ONLY; });
  });

  // ── runs ──────────────────────────────────────────────────────────────
  function fillSelect(sel, values, keep) {
    var cur = sel.value;
    while (sel.options.length > 1) sel.remove(1);
    values.forEach(function (v) { var o = el('option', null, v); o.value = v; sel.appendChild(o); });
    if (keep && values.indexOf(cur) >= 0) sel.value = cur;
  }
  function runsQuery() {
    var q = [];
    var add = function (k, v) { if (v) q.push(k + '=' + encodeURIComponent(v)); };
    add('experiment', byId('f-experiment').value);
    add('target', byId('f-target').value);
    add('tag', byId('f-tag').value.trim());
    add('since', byId('f-since').value);
    add('until', byId('f-until').value);
    q.push('limit=' + state.limit, 'offset=' + state.offset);
    return '?' + q.join('&');
  }
  var runsSeq = 0;
  function loadRuns() {
    var seq = ++runsSeq;
    return api('/runs' + runsQuery()).then(function (page) {
      // Filters change faster than answers come back: only the newest request may paint.
      if (seq !== runsSeq) return;
      fillSelect(byId('f-experiment'), page.facets.experiments, true);
      fillSelect(byId('f-target'), page.facets.targets, true);
      fillSelect(byId('t-experiment'), page.facets.experiments, true);
      var body = byId('runs-body'); clear(body);
      page.runs.forEach(function (r) {
        var tr = el('tr'); tr.setAttribute('data-run', r.run_id);
        var pick = el('input'); pick.type = 'checkbox'; pick.checked = state.selected.indexOf(r.run_id) >= 0;
        pick.setAttribute('aria-label', 'select for compare');
        pick.addEventListener('change', function () {
          var i = state.selected.indexOf(r.run_id);
          if (pick.checked && i < 0) state.selected.push(r.run_id);
          if (!pick.checked && i >= 0) state.selected.splice(i, 1);
          if (state.selected.length > 2) state.selected.shift();
          updateCompareBtn();
        });
        var c0 = el('td'); c0.appendChild(pick); tr.appendChild(c0);
        var c1 = el('td'); var b = el('button', 'linkish mono', r.run_id); b.type = 'button';
        b.addEventListener('click', function () { showRun(r.run_id); }); c1.appendChild(b); tr.appendChild(c1);
        tr.appendChild(el('td', 'muted', r.timestamp));
        tr.appendChild(el('td', null, r.experiment));
        tr.appendChild(el('td', null, r.targets.join(', ')));
        tr.appendChild(el('td', 'num', r.passed + '/' + r.total));
        tr.appendChild(el('td', 'num pass-rate', pct(r.pass_rate)));
        var tags = el('td'); r.tags.forEach(function (t) { tags.appendChild(el('span', 'tag', t)); }); tr.appendChild(tags);
        tr.appendChild(el('td', 'muted', r.where));
        body.appendChild(tr);
      });
      var end = Math.min(page.offset + page.runs.length, page.matched);
      byId('runs-count').textContent = (page.matched === 0 ? 0 : page.offset + 1) + '–' + end + ' of ' + page.matched + ' matching runs (' + page.total + ' on ' + page.branch + ')';
      byId('runs-prev').disabled = page.offset === 0;
      byId('runs-next').disabled = end >= page.matched;
      d.body.setAttribute('data-runs-loaded', String(Date.now()));
    }).catch(function (e) { flash('runs-msg', e.message, true); });
  }
  function updateCompareBtn() {
    var b = byId('compare-btn'); b.disabled = state.selected.length !== 2;
    b.textContent = 'Compare selected (' + state.selected.length + '/2)';
  }
  ['f-experiment', 'f-target', 'f-since', 'f-until'].forEach(function (id) {
    byId(id).addEventListener('change', function () { state.offset = 0; loadRuns(); });
  });
  byId('f-tag').addEventListener('change', function () { state.offset = 0; loadRuns(); });
  byId('runs-prev').addEventListener('click', function () { state.offset = Math.max(0, state.offset - state.limit); loadRuns(); });
  byId('runs-next').addEventListener('click', function () { state.offset += state.limit; loadRuns(); });

  // ── one run ──────────────────────────────────────────────────────────
  function stat(label, value, key) {
    var s = el('div', 'stat'); s.setAttribute('data-stat', key);
    s.appendChild(el('div', 'v', value)); s.appendChild(el('div', 'k', label)); return s;
  }
  var runSeq = 0;
  function showRun(id) {
    var sec = byId('run-detail'); sec.hidden = false; flash('run-msg', 'loading…');
    var seq = ++runSeq;
    return api('/runs/' + encodeURIComponent(id)).then(function (r) {
      if (seq !== runSeq) return;
      state.run = r;
      byId('run-title').textContent = r.run.run_id;
      var s = r.summary || {};
      var stats = byId('run-stats'); clear(stats);
      stats.appendChild(stat('Tests', r.run.total, 'total'));
      stats.appendChild(stat('Passed', r.run.passed, 'passed'));
      stats.appendChild(stat('Failed', r.run.failed, 'failed'));
      stats.appendChild(stat('Pass rate', pct(r.run.pass_rate), 'pass_rate'));
      stats.appendChild(stat('Mean score', score(s.mean_score), 'mean_score'));
      stats.appendChild(stat('Cost', cost(s.cost_usd), 'cost'));
      stats.appendChild(stat('Duration', dur(s.duration_ms), 'duration'));
      var rep = byId('run-report'); rep.setAttribute('href', prefix() + '/runs/' + encodeURIComponent(id) + '/report');
      renderTags(r);
      var body = byId('tests-body'); clear(body);
      var sel = byId('fb-test'); while (sel.options.length) sel.remove(0);
      var fb = (r.feedback && r.feedback.entries) || {};
      r.tests.forEach(function (t) {
        var tr = el('tr');
        tr.appendChild(el('td', 'mono', t.test_id));
        tr.appendChild(el('td', null, t.target));
        var v = el('td', 'verdict'); v.appendChild(el('span', 'badge ' + ({ pass: 'pass', fail: 'fail', error: 'error' }[t.verdict] || 'error'), t.verdict)); tr.appendChild(v);
        tr.appendChild(el('td', 'num', score(t.score)));
        tr.appendChild(el('td', 'num', dur(t.duration_ms)));
        var notes = Object.prototype.hasOwnProperty.call(fb, t.test_id) ? fb[t.test_id] : null;
        var cell = el('td', 'feedback');
        if (notes) Object.keys(notes).forEach(function (who) { cell.appendChild(el('div', null, notes[who].feedback + ' — ' + who)); });
        tr.appendChild(cell);
        body.appendChild(tr);
        var exists = false; for (var i = 0; i < sel.options.length; i++) if (sel.options[i].value === t.test_id) exists = true;
        if (!exists) { var o = el('option', null, t.test_id); o.value = t.test_id; sel.appendChild(o); }
      });
      flash('run-msg', '');
      sec.scrollIntoView();
    }).catch(function (e) { flash('run-msg', e.message, true); });
  }
  function renderTags(r) {
    var box = byId('run-tags'); clear(box);
    var tags = (r.tags && r.tags.tags) || [];
    tags.forEach(function (t) {
      var chip = el('span', 'tag', t);
      if (!READ_ONLY) {
        var x = el('button', 'tag-x', '×'); x.type = 'button'; x.setAttribute('aria-label', 'remove tag');
        x.addEventListener('click', function () { editTags([], [t]); });
        chip.appendChild(x);
      }
      box.appendChild(chip);
    });
    if (!tags.length) box.appendChild(el('span', 'muted', 'no tags'));
  }
  function editTags(add, remove) {
    var r = state.run; if (!r) return;
    flash('tag-msg', 'saving…');
    api('/runs/' + encodeURIComponent(r.run.run_id) + '/tags', 'POST', { add: add, remove: remove, expect_revision: r.tags.tag_revision })
      .then(function (res) { r.tags = res.tags; renderTags(r); flash('tag-msg', res.changed ? 'saved' : 'no change'); loadRuns(); })
      .catch(function (e) { flash('tag-msg', e.status === 409 ? 'someone else changed the tags; reloaded — try again' : e.message, true); if (e.status === 409) showRun(r.run.run_id); });
  }
  byId('tag-add').addEventListener('click', function () {
    var v = byId('tag-input').value.trim(); if (v) editTags([v], []);
    byId('tag-input').value = '';
  });
  byId('fb-save').addEventListener('click', function () {
    var r = state.run; if (!r) return;
    flash('fb-msg', 'saving…');
    var who = byId('fb-reviewer').value.trim();
    if (!who) { flash('fb-msg', 'enter your name as reviewer', true); return; }
    var test = byId('fb-test').value;
    var entries = (r.feedback && r.feedback.entries) || {};
    var mine = Object.prototype.hasOwnProperty.call(entries, test) && Object.prototype.hasOwnProperty.call(entries[test], who) ? entries[test][who] : null;
    api('/runs/' + encodeURIComponent(r.run.run_id) + '/feedback', 'POST', { test_id: test, text: byId('fb-text').value, reviewer: who, expect_revision: mine ? mine.revision : '' })
      .then(function () { flash('fb-msg', 'saved'); byId('fb-text').value = ''; return showRun(r.run.run_id); })
      .catch(function (e) { flash('fb-msg', e.message, true); });
  });

  // ── compare ──────────────────────────────────────────────────────────
  byId('compare-btn').addEventListener('click', function () {
    if (state.selected.length !== 2) return;
    var a = state.selected[0], b = state.selected[1];
    var sec = byId('compare-view'); sec.hidden = false; flash('compare-msg', 'comparing…');
    api('/compare?baseline=' + encodeURIComponent(a) + '&candidate=' + encodeURIComponent(b)).then(function (c) {
      byId('compare-title').textContent = a + ' → ' + b;
      var st = byId('compare-stats'); clear(st);
      st.appendChild(stat('Wins', c.summary.wins, 'wins'));
      st.appendChild(stat('Losses', c.summary.losses, 'losses'));
      st.appendChild(stat('Ties', c.summary.ties, 'ties'));
      st.appendChild(stat('Mean delta', (c.summary.mean_delta > 0 ? '+' : '') + c.summary.mean_delta.toFixed(3), 'mean_delta'));
      var body = byId('compare-body'); clear(body);
      c.matched.forEach(function (t) {
        var tr = el('tr');
        tr.appendChild(el('td', 'mono', t.test_id));
        tr.appendChild(el('td', 'num', score(t.score1)));
        tr.appendChild(el('td', 'num', score(t.score2)));
        tr.appendChild(el('td', 'num', (t.delta > 0 ? '+' : '') + t.delta.toFixed(3)));
        var o = el('td'); o.appendChild(el('span', 'badge ' + ({ win: 'pass', loss: 'fail', tie: 'tie' }[t.outcome] || 'tie'), t.outcome)); tr.appendChild(o);
        body.appendChild(tr);
      });
      flash('compare-msg', c.regression ? 'regression: the candidate scores lower on average' : '', c.regression);
      sec.scrollIntoView();
    }).catch(function (e) { flash('compare-msg', e.message, true); });
  });

  // ── trends ───────────────────────────────────────────────────────────
  var SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs) { var e = d.createElementNS(SVG, tag); for (var k in attrs) e.setAttribute(k, String(attrs[k])); return e; }
  function chart(title, points, key, fmt) {
    var W = 360, H = 150, L = 48, B = 22, T = 12, R = 8;
    var vals = points.map(function (p) { return p[key]; }).filter(function (v) { return typeof v === 'number'; });
    var panel = el('div', 'panel trend-chart'); panel.setAttribute('data-metric', key);
    panel.appendChild(el('h3', null, title + (vals.length ? ' — last ' + fmt(vals[vals.length - 1]) : '')));
    var s = svg('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, class: 'chart' });
    var lo = Math.min.apply(null, vals.concat(key === 'pass_rate' ? [0] : [])), hi = Math.max.apply(null, vals.concat(key === 'pass_rate' ? [1] : []));
    if (!vals.length) { lo = 0; hi = 1; }
    if (hi === lo) { hi = lo + 1; }
    var x = function (i) { return L + (points.length < 2 ? (W - L - R) / 2 : i * (W - L - R) / (points.length - 1)); };
    var y = function (v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); };
    s.appendChild(svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, class: 'axis' }));
    s.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: H - B, class: 'axis' }));
    [lo, hi].forEach(function (v) { var t = svg('text', { x: L - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }); t.textContent = fmt(v); s.appendChild(t); });
    var path = '';
    points.forEach(function (p, i) { if (typeof p[key] === 'number') path += (path ? ' L' : 'M') + x(i).toFixed(1) + ' ' + y(p[key]).toFixed(1); });
    if (path) s.appendChild(svg('path', { d: path, class: 'trend-line' }));
    points.forEach(function (p, i) {
      if (typeof p[key] !== 'number') return;
      var c = svg('circle', { cx: x(i).toFixed(1), cy: y(p[key]).toFixed(1), r: p.regression ? 5 : 3, class: p.regression ? 'pt regression' : 'pt' });
      var tt = svg('title', {}); tt.textContent = p.run_id + ': ' + fmt(p[key]) + (p.regression ? ' (regression)' : ''); c.appendChild(tt);
      s.appendChild(c);
    });
    panel.appendChild(s);
    return panel;
  }
  function loadTrend() {
    var q = '?by=experiment,target&experiment=' + encodeURIComponent(byId('t-experiment').value);
    return api('/trend' + q).then(function (t) {
      fillSelect(byId('t-experiment'), t.experiments, true);
      var box = byId('trend-charts'); clear(box);
      t.series.forEach(function (s) {
        var sec = el('section', 'series'); sec.setAttribute('data-series', s.experiment + ' × ' + s.target);
        var regs = s.runs.filter(function (p) { return p.regression; }).length;
        sec.appendChild(el('h3', null, s.experiment + ' × ' + s.target + ' · ' + s.runs.length + ' runs' + (regs ? ' · ' + regs + ' regression(s)' : '')));
        var row = el('div', 'charts');
        row.appendChild(chart('Pass rate', s.runs, 'pass_rate', pct));
        row.appendChild(chart('Mean score', s.runs, 'mean_score', score));
        row.appendChild(chart('Cost', s.runs, 'cost_usd', cost));
        row.appendChild(chart('Duration', s.runs, 'duration_ms', dur));
        sec.appendChild(row); box.appendChild(sec);
      });
      if (!t.series.length) box.appendChild(el('p', 'muted', 'no runs to chart'));
    }).catch(function (e) { flash('trend-msg', e.message, true); });
  }
  byId('t-experiment').addEventListener('change', loadTrend);

  // ── tabs and projects ────────────────────────────────────────────────
  function tab(name) {
    ['runs', 'trends', 'autoresearch'].forEach(function (n) { byId('view-' + n).hidden = n !== name; byId('tab-' + n).setAttribute('aria-selected', String(n === name)); });
    if (name === 'trends') loadTrend();
  }
  byId('tab-runs').addEventListener('click', function () { tab('runs'); });
  byId('tab-trends').addEventListener('click', function () { tab('trends'); });
  byId('tab-autoresearch').addEventListener('click', function () { tab('autoresearch'); });
  byId('project').addEventListener('change', function () {
    state.project = byId('project').value; state.offset = 0; state.selected = []; updateCompareBtn();
    byId('run-detail').hidden = true; byId('compare-view').hidden = true;
    loadRemote(); loadRuns();
  });
  if (READ_ONLY) { byId('sync-btn').disabled = true; byId('tag-add').disabled = true; byId('fb-save').disabled = true; }
  fetch('/api/projects').then(function (r) { return r.json(); }).then(function (p) {
    var sel = byId('project');
    (p.projects || []).forEach(function (x) { var o = el('option', null, x.id); o.value = x.id; sel.appendChild(o); });
    if (p.projects && p.projects.length) byId('project-box').hidden = false;
  }).catch(function () {});
  updateCompareBtn();
  loadRemote();
  loadRuns();
})();
`;
