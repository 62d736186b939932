/**
 * The report's only script, inlined once and allowed by its hash in the page's CSP.
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
 * It is plain ES2017 in a string (the project's TypeScript has no DOM types); written without
 * backticks or `${` so that it can sit in a String.raw template unchanged.
 */
export const CLIENT_JS = String.raw`
(function () {
  'use strict';
  var d = document;
  var COLS = 8;
  function byId(id) { return d.getElementById(id); }
  function el(tag, cls, text) {
    var e = d.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) { var c = arguments[i]; if (c) parent.appendChild(c); }
    return parent;
  }
  function island(id) { var n = byId(id); return n ? JSON.parse(n.textContent || 'null') : null; }

  var data = island('report-data');
  if (!data) return;
  var tests = data.tests, groups = data.groups, targets = data.targets;
  var details = null;

  function fmtInt(n) { return typeof n === 'number' && isFinite(n) ? Math.round(n).toLocaleString('en-US') : '\u2014'; }
  function fmtScore(s) { return typeof s === 'number' && isFinite(s) ? s.toFixed(2) : '\u2014'; }
  function fmtCost(c) { return typeof c === 'number' && isFinite(c) ? '$' + c.toFixed(c < 1 ? 4 : 2) : '\u2014'; }
  function fmtDur(ms) {
    if (typeof ms !== 'number' || !isFinite(ms)) return '\u2014';
    if (ms < 1000) return Math.round(ms) + ' ms';
    var s = ms / 1000;
    if (s < 120) return s.toFixed(1) + ' s';
    var m = Math.floor(s / 60);
    return m < 120 ? m + ' min ' + Math.round(s - m * 60) + ' s' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  var VERDICT_CLASS = { pass: 'pass', fail: 'fail', error: 'error' };
  function verdictClass(v) { return VERDICT_CLASS.hasOwnProperty(v) ? VERDICT_CLASS[v] : 'plain'; }

  /* Clipped text is a string or {head, bytes}. */
  function plain(t) {
    if (t && typeof t === 'object') return t.head + ' \u2026 [truncated (' + fmtInt(t.bytes) + ' bytes)]';
    return t === null || t === undefined ? '' : String(t);
  }
  function truncNote(t) {
    return t && typeof t === 'object' ? el('div', 'note', 'truncated (' + fmtInt(t.bytes) + ' bytes) \u2014 the full text is in the run workspace') : null;
  }
  function textBlock(t, cls) {
    var frag = d.createDocumentFragment();
    add(frag, el('pre', cls, t && typeof t === 'object' ? t.head : (t === null || t === undefined ? '' : String(t))), truncNote(t));
    return frag;
  }
  function diffBlock(t) {
    var pre = el('pre', 'diff');
    var lines = (t && typeof t === 'object' ? t.head : String(t)).split('\n');
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      var cls = line.indexOf('@@') === 0 ? 'hunk' : line.indexOf('+++') === 0 || line.indexOf('---') === 0 ? '' : line.charAt(0) === '+' ? 'add' : line.charAt(0) === '-' ? 'del' : '';
      add(pre, el('span', cls, line + (i < lines.length - 1 ? '\n' : '')));
    }
    var frag = d.createDocumentFragment();
    add(frag, pre, truncNote(t));
    return frag;
  }
  /* A <details> whose body is built the first time it is opened. */
  function collapsible(title, build, cls) {
    var det = el('details', cls);
    add(det, el('summary', null, title));
    var built = false;
    det.addEventListener('toggle', function () {
      if (det.open && !built) { built = true; det.appendChild(build()); }
    });
    return det;
  }

  /* ---- filtering, sorting, paging ---- */
  var state = { q: '', verdict: '', group: -1, target: -1, sort: '', dir: 1, page: 0, size: 100 };
  var expanded = {};
  var view = [];
  var hay = new Array(tests.length);
  function haystack(i) {
    var s = hay[i];
    if (s === undefined) {
      var t = tests[i], g = groups[t.group];
      s = hay[i] = (t.id + '\n' + g.suite + '\n' + (g.eval_path || '') + '\n' + targets[t.target] + '\n' + t.prompt).toLowerCase();
    }
    return s;
  }
  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }
  function numOr(x) { return typeof x === 'number' ? x : -1; }
  var SORTS = {
    id: function (a, b) { return cmp(a.id, b.id); },
    suite: function (a, b) { return cmp(groups[a.group].suite, groups[b.group].suite); },
    target: function (a, b) { return cmp(targets[a.target], targets[b.target]); },
    verdict: function (a, b) { return cmp(a.verdict, b.verdict); },
    score: function (a, b) { return a.score - b.score; },
    assertions: function (a, b) { return (a.assertions[1] ? a.assertions[0] / a.assertions[1] : -1) - (b.assertions[1] ? b.assertions[0] / b.assertions[1] : -1); },
    duration: function (a, b) { return numOr(a.duration_ms) - numOr(b.duration_ms); }
  };
  function recompute() {
    var q = state.q.toLowerCase();
    view = [];
    for (var i = 0; i < tests.length; i++) {
      var t = tests[i];
      if (state.verdict && t.verdict !== state.verdict) continue;
      if (state.group >= 0 && t.group !== state.group) continue;
      if (state.target >= 0 && t.target !== state.target) continue;
      if (q && haystack(i).indexOf(q) < 0) continue;
      view.push(i);
    }
    if (state.sort && SORTS.hasOwnProperty(state.sort)) {
      var key = SORTS[state.sort], dir = state.dir;
      view.sort(function (a, b) { var c = key(tests[a], tests[b]); return c !== 0 ? c * dir : a - b; });
    }
    state.page = 0;
  }

  var tbody = byId('tests-body');
  var info = byId('page-info'), prev = byId('page-prev'), next = byId('page-next'), label = byId('page-label');

  function row(i) {
    var t = tests[i];
    var tr = el('tr', 'test-row');
    tr.setAttribute('data-index', String(i));
    tr.setAttribute('data-verdict', verdictClass(t.verdict));
    tr.setAttribute('aria-expanded', expanded[i] ? 'true' : 'false');
    tr.tabIndex = 0;
    var idCell = add(el('td', 'id'), el('span', 'tog', expanded[i] ? '\u25BE' : '\u25B8'), d.createTextNode(t.id));
    if (t.attempt > 0 || t.variant !== null) {
      add(idCell, el('span', 'muted', ' \u00B7 attempt ' + t.attempt + (t.variant !== null ? ' \u00B7 variant ' + t.variant : '')));
    }
    var prompt = el('td', 'prompt');
    if (t.prompt_kind === 'criteria') add(prompt, el('em', null, 'criteria: '));
    add(prompt, d.createTextNode(t.prompt));
    prompt.setAttribute('title', t.prompt);
    add(tr, idCell, el('td', null, groups[t.group].suite), el('td', null, targets[t.target]),
      add(el('td'), el('span', 'badge ' + verdictClass(t.verdict), t.verdict)),
      el('td', 'num', fmtScore(t.score)), el('td', 'num', t.assertions[0] + '/' + t.assertions[1]),
      el('td', 'num', fmtDur(t.duration_ms)), prompt);
    return tr;
  }

  function render() {
    var pages = Math.max(1, Math.ceil(view.length / state.size));
    if (state.page >= pages) state.page = pages - 1;
    var start = state.page * state.size, end = Math.min(view.length, start + state.size);
    var frag = d.createDocumentFragment();
    for (var k = start; k < end; k++) {
      var i = view[k];
      frag.appendChild(row(i));
      if (expanded[i]) frag.appendChild(detailRow(i));
    }
    if (view.length === 0) {
      var td = el('td', 'muted', 'No tests match the filters.');
      td.colSpan = COLS;
      frag.appendChild(add(el('tr'), td));
    }
    tbody.textContent = '';
    tbody.appendChild(frag);
    info.textContent = view.length === 0 ? '0 tests' : 'Showing ' + fmtInt(start + 1) + '\u2013' + fmtInt(end) + ' of ' + fmtInt(view.length) +
      (view.length !== tests.length ? ' (filtered from ' + fmtInt(tests.length) + ')' : '');
    label.textContent = 'Page ' + (state.page + 1) + ' / ' + pages;
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  /* ---- details, built on expansion ---- */
  function detailOf(i) {
    if (details === null) details = island('report-details') || [];
    return details[i] || null;
  }
  function graderList(list) {
    var ul = el('ul', 'graders');
    list.forEach(function (g) {
      var li = el('li');
      add(li, el('span', 'badge type', g.type), d.createTextNode(' '), el('strong', null, g.name),
        el('span', 'muted', ' score ' + (g.score === null ? '\u2014' : fmtScore(g.score)) + (g.weight !== null ? ' \u00B7 weight ' + g.weight : '')));
      if (g.verdict) add(li, d.createTextNode(' '), el('span', 'badge ' + verdictClass(g.verdict), g.verdict));
      if (g.reasoning) add(li, el('div', 'evidence', plain(g.reasoning)));
      if (g.children && g.children.length) add(li, graderList(g.children));
      ul.appendChild(li);
    });
    return ul;
  }
  function messagesNode(msgs) {
    var frag = d.createDocumentFragment();
    msgs.forEach(function (m) {
      var box = add(el('div', 'msg'), el('div', 'role', m.role));
      if (plain(m.content)) add(box, textBlock(m.content));
      m.tools.forEach(function (c) {
        add(box, collapsible('tool call: ' + c.name + (c.duration_ms !== null ? ' (' + fmtDur(c.duration_ms) + ')' : ''), function () {
          var f = d.createDocumentFragment();
          if (c.input !== null) add(f, el('div', 'muted', 'input'), textBlock(c.input));
          if (c.output !== null) add(f, el('div', 'muted', 'output'), textBlock(c.output));
          if (c.input === null && c.output === null) add(f, el('div', 'muted', 'no input or output recorded'));
          return f;
        }, 'tool'));
      });
      frag.appendChild(box);
    });
    return frag;
  }
  function buildDetail(i) {
    var t = tests[i], x = detailOf(i), g = groups[t.group];
    var root = el('div', 'detail');
    var meta = add(el('div', 'meta'),
      el('span', null, 'status: ' + (x ? x.execution_status : t.verdict)),
      el('span', null, 'score: ' + fmtScore(t.score)),
      el('span', null, 'duration: ' + fmtDur(t.duration_ms)),
      el('span', null, 'tokens: ' + fmtInt(t.tokens)),
      el('span', null, 'cost: ' + fmtCost(t.cost_usd)),
      el('span', null, 'target: ' + targets[t.target]),
      g.eval_path ? el('span', null, 'eval file: ' + g.eval_path) : null);
    root.appendChild(meta);
    if (!x) { add(root, el('p', 'muted', 'No details were embedded for this test.')); return root; }
    var tools = Object.keys(x.tool_calls);
    if (tools.length) add(meta, el('span', null, 'tool calls: ' + tools.map(function (n) { return n + ' \u00D7' + x.tool_calls[n]; }).join(', ')));
    if (x.changes) add(meta, el('span', null, 'files: ' + x.changes));
    if (x.error) add(root, el('h4', null, 'Error'), textBlock(x.error, 'error'));

    var passed = x.assertions.filter(function (a) { return a.passed; }).length;
    add(root, el('h4', null, 'Assertions (' + passed + '/' + x.assertions.length + ' passed)'));
    if (!x.assertions.length) add(root, el('p', 'muted', 'No assertions recorded.'));
    else {
      var ul = el('ul', 'asserts');
      x.assertions.forEach(function (a) {
        var li = add(el('li', a.passed ? 'pass' : 'fail'), el('span', 'mark', a.passed ? '\u2713' : '\u2717'), el('span', 'text', plain(a.text)));
        li.setAttribute('data-passed', a.passed ? 'true' : 'false');
        if (plain(a.evidence)) add(li, el('div', 'evidence', plain(a.evidence)));
        ul.appendChild(li);
      });
      add(root, ul);
    }
    if (x.graders.length) add(root, el('h4', null, 'Graders'), graderList(x.graders));
    if (x.feedback && x.feedback.length) {
      var fb = el('ul', 'feedback');
      x.feedback.forEach(function (n) {
        add(fb, add(el('li'), el('span', 'who', n.reviewer + ' (' + String(n.updated_at).slice(0, 10) + ')'), el('div', 'text', n.text)));
      });
      add(root, el('h4', null, 'Reviewer feedback (' + x.feedback.length + ')'), fb);
    }

    /* Input: the messages before the first assistant turn; output: the rest, in order. */
    var split = x.messages.length;
    for (var k = 0; k < x.messages.length; k++) if (x.messages[k].role === 'assistant') { split = k; break; }
    var input = x.messages.slice(0, split), output = x.messages.slice(split);
    var calls = output.reduce(function (n, m) { return n + m.tools.length; }, 0);
    if (input.length || output.length) add(root, el('h4', null, 'Input / output'));
    if (input.length) add(root, collapsible('Input (' + input.length + ' message' + (input.length === 1 ? '' : 's') + ')', function () { return messagesNode(input); }, 'io input'));
    if (output.length) add(root, collapsible('Output (' + output.length + ' message' + (output.length === 1 ? '' : 's') + ', ' + calls + ' tool call' + (calls === 1 ? '' : 's') + ')', function () { return messagesNode(output); }, 'io output'));
    if (x.omitted_messages) add(root, el('div', 'note', x.omitted_messages + ' more message(s) not embedded (report size limit) \u2014 see transcript.json in the run workspace'));
    if (x.answer !== null) add(root, collapsible('outputs/answer.md', function () { return textBlock(x.answer); }, 'io answer'));
    if (x.diff !== null) add(root, collapsible('outputs/file_changes.diff', function () { return diffBlock(x.diff); }, 'io diff'));
    return root;
  }
  function detailRow(i) {
    var tr = el('tr', 'detail-row');
    var td = el('td');
    td.colSpan = COLS;
    tr.appendChild(td);
    /* The details island follows this script in the document: wait for it if still parsing. */
    if (d.readyState === 'loading') {
      td.textContent = 'Loading\u2026';
      d.addEventListener('DOMContentLoaded', function () { td.textContent = ''; td.appendChild(buildDetail(i)); });
    } else {
      td.appendChild(buildDetail(i));
    }
    return tr;
  }
  function toggle(tr) {
    var i = Number(tr.getAttribute('data-index'));
    var nextRow = tr.nextElementSibling;
    if (expanded[i]) {
      delete expanded[i];
      if (nextRow && nextRow.className === 'detail-row') tbody.removeChild(nextRow);
    } else {
      expanded[i] = true;
      tbody.insertBefore(detailRow(i), nextRow);
    }
    tr.setAttribute('aria-expanded', expanded[i] ? 'true' : 'false');
    tr.querySelector('.tog').textContent = expanded[i] ? '\u25BE' : '\u25B8';
  }
  function testRowOf(node) {
    while (node && node !== tbody) {
      if (node.nodeType === 1 && node.classList.contains('test-row')) return node;
      node = node.parentNode;
    }
    return null;
  }
  tbody.addEventListener('click', function (ev) { var tr = testRowOf(ev.target); if (tr) toggle(tr); });
  tbody.addEventListener('keydown', function (ev) {
    var tr = testRowOf(ev.target);
    if (tr && ev.target === tr && (ev.key === 'Enter' || ev.key === ' ')) { ev.preventDefault(); toggle(tr); }
  });

  /* ---- controls ---- */
  var fq = byId('f-q'), fv = byId('f-verdict'), fg = byId('f-group'), ft = byId('f-target'), fs = byId('f-size');
  groups.forEach(function (g, i) { var o = el('option', null, g.suite + (g.eval_path ? ' (' + g.eval_path + ')' : '')); o.value = String(i); fg.appendChild(o); });
  targets.forEach(function (t, i) { var o = el('option', null, t); o.value = String(i); ft.appendChild(o); });
  function update() { recompute(); render(); }
  var timer = 0;
  fq.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(function () { state.q = fq.value; update(); }, 150); });
  fv.addEventListener('change', function () { state.verdict = fv.value; update(); });
  fg.addEventListener('change', function () { state.group = Number(fg.value); markGroup(); update(); });
  ft.addEventListener('change', function () { state.target = Number(ft.value); update(); });
  fs.addEventListener('change', function () { state.size = Number(fs.value) || 100; state.page = 0; render(); });
  prev.addEventListener('click', function () { if (state.page > 0) { state.page--; render(); } });
  next.addEventListener('click', function () { state.page++; render(); });
  Array.prototype.forEach.call(d.querySelectorAll('th[data-sort]'), function (th) {
    th.addEventListener('click', function () {
      var key = th.getAttribute('data-sort');
      state.dir = state.sort === key ? -state.dir : 1;
      state.sort = key;
      Array.prototype.forEach.call(d.querySelectorAll('th[data-sort]'), function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
      update();
    });
  });
  /* The server-rendered suite table filters the test table. */
  function markGroup() {
    Array.prototype.forEach.call(d.querySelectorAll('tr.group-row'), function (tr) {
      tr.classList.toggle('active', Number(tr.getAttribute('data-group')) === state.group);
    });
  }
  Array.prototype.forEach.call(d.querySelectorAll('tr.group-row'), function (tr) {
    tr.addEventListener('click', function () {
      var gi = Number(tr.getAttribute('data-group'));
      state.group = state.group === gi ? -1 : gi;
      fg.value = String(state.group);
      markGroup();
      update();
      byId('tests').scrollIntoView();
    });
  });

  update();
  d.documentElement.setAttribute('data-ready', 'true');
})();
`.trim();
