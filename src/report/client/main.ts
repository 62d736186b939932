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
 */
import type { ClippedText, ReportAttempts, ReportData, ReportDetail, ReportGrader, ReportMessage, ReportTest } from '../types.js';
import { add, byId, d, el } from './dom.js';

const COLS = 8;

function island<T>(id: string): T | null {
  const n = d.getElementById(id);
  return n ? (JSON.parse(n.textContent || 'null') as T) : null;
}

const fmtInt = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '\u2014');
const fmtScore = (s: unknown) => (typeof s === 'number' && Number.isFinite(s) ? s.toFixed(2) : '\u2014');
const fmtCost = (c: unknown) => (typeof c === 'number' && Number.isFinite(c) ? `$${c.toFixed(c < 1 ? 4 : 2)}` : '\u2014');
function fmtDur(ms: unknown): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '\u2014';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m} min ${Math.round(s - m * 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
const VERDICT_CLASS: Record<string, string> = { pass: 'pass', fail: 'fail', error: 'error' };
const verdictClass = (v: string) => (Object.hasOwn(VERDICT_CLASS, v) ? VERDICT_CLASS[v]! : 'plain');

/* Clipped text is a string or {head, bytes}. */
function plain(t: ClippedText | null | undefined): string {
  if (t && typeof t === 'object') return `${t.head} \u2026 [truncated (${fmtInt(t.bytes)} bytes)]`;
  return t === null || t === undefined ? '' : String(t);
}
function truncNote(t: ClippedText | null): HTMLElement | null {
  return t && typeof t === 'object' ? el('div', 'note', `truncated (${fmtInt(t.bytes)} bytes) \u2014 the full text is in the run workspace`) : null;
}
function textBlock(t: ClippedText | null, cls?: string): DocumentFragment {
  return add(d.createDocumentFragment(), el('pre', cls, t && typeof t === 'object' ? t.head : t === null || t === undefined ? '' : String(t)), truncNote(t));
}
function diffBlock(t: ClippedText): DocumentFragment {
  const pre = el('pre', 'diff');
  const lines = (t && typeof t === 'object' ? t.head : String(t)).split('\n');
  lines.forEach((line, i) => {
    const cls = line.startsWith('@@') ? 'hunk' : line.startsWith('+++') || line.startsWith('---') ? '' : line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : '';
    add(pre, el('span', cls, line + (i < lines.length - 1 ? '\n' : '')));
  });
  return add(d.createDocumentFragment(), pre, truncNote(t));
}
/* A <details> whose body is built the first time it is opened. */
function collapsible(title: string, build: () => Node, cls: string): HTMLDetailsElement {
  const det = add(el('details', cls), el('summary', null, title));
  let built = false;
  det.addEventListener('toggle', () => {
    if (det.open && !built) {
      built = true;
      det.appendChild(build());
    }
  });
  return det;
}

function main(): void {
  const data = island<ReportData>('report-data');
  if (!data) return;
  const { tests, groups, targets } = data;
  let details: (ReportDetail | null)[] | null = null;

  /* ---- filtering, sorting, paging ---- */
  const state = { q: '', verdict: '', group: -1, target: -1, sort: '', dir: 1, page: 0, size: 100 };
  const expanded: Record<number, boolean> = {};
  let view: number[] = [];
  const hay: (string | undefined)[] = new Array(tests.length);
  function haystack(i: number): string {
    let s = hay[i];
    if (s === undefined) {
      const t = tests[i]!;
      const g = groups[t.group]!;
      s = hay[i] = `${t.id}\n${g.suite}\n${g.eval_path || ''}\n${targets[t.target]}\n${t.prompt}`.toLowerCase();
    }
    return s;
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const numOr = (x: number | null) => (typeof x === 'number' ? x : -1);
  const SORTS: Record<string, (a: ReportTest, b: ReportTest) => number> = {
    id: (a, b) => cmp(a.id, b.id),
    suite: (a, b) => cmp(groups[a.group]!.suite, groups[b.group]!.suite),
    target: (a, b) => cmp(targets[a.target]!, targets[b.target]!),
    verdict: (a, b) => cmp(a.verdict, b.verdict),
    score: (a, b) => a.score - b.score,
    assertions: (a, b) => (a.assertions[1] ? a.assertions[0] / a.assertions[1] : -1) - (b.assertions[1] ? b.assertions[0] / b.assertions[1] : -1),
    duration: (a, b) => numOr(a.duration_ms) - numOr(b.duration_ms),
  };
  function recompute(): void {
    const q = state.q.toLowerCase();
    view = [];
    tests.forEach((t, i) => {
      if (state.verdict && t.verdict !== state.verdict) return;
      if (state.group >= 0 && t.group !== state.group) return;
      if (state.target >= 0 && t.target !== state.target) return;
      if (q && !haystack(i).includes(q)) return;
      view.push(i);
    });
    if (state.sort && Object.hasOwn(SORTS, state.sort)) {
      const key = SORTS[state.sort]!;
      const dir = state.dir;
      view.sort((a, b) => {
        const c = key(tests[a]!, tests[b]!);
        return c !== 0 ? c * dir : a - b;
      });
    }
    state.page = 0;
  }

  const tbody = byId('tests-body');
  const info = byId('page-info');
  const prev = byId<HTMLButtonElement>('page-prev');
  const next = byId<HTMLButtonElement>('page-next');
  const label = byId('page-label');

  function row(i: number): HTMLTableRowElement {
    const t = tests[i]!;
    const tr = el('tr', 'test-row');
    tr.setAttribute('data-index', String(i));
    tr.setAttribute('data-verdict', verdictClass(t.verdict));
    tr.setAttribute('aria-expanded', expanded[i] ? 'true' : 'false');
    tr.tabIndex = 0;
    const idCell = add(el('td', 'id'), el('span', 'tog', expanded[i] ? '\u25BE' : '\u25B8'), d.createTextNode(t.id));
    if (t.attempt > 0 || t.variant !== null) {
      add(idCell, el('span', 'muted', ` \u00B7 attempt ${t.attempt}${t.variant !== null ? ` \u00B7 variant ${t.variant}` : ''}`));
    }
    const prompt = el('td', 'prompt');
    if (t.prompt_kind === 'criteria') add(prompt, el('em', null, 'criteria: '));
    add(prompt, d.createTextNode(t.prompt));
    prompt.setAttribute('title', t.prompt);
    add(
      tr,
      idCell,
      el('td', null, groups[t.group]!.suite),
      el('td', null, targets[t.target]),
      add(el('td'), el('span', `badge ${verdictClass(t.verdict)}`, t.verdict)),
      el('td', 'num', fmtScore(t.score)),
      el('td', 'num', `${t.assertions[0]}/${t.assertions[1]}`),
      el('td', 'num', fmtDur(t.duration_ms)),
      prompt,
    );
    return tr;
  }

  function render(): void {
    const pages = Math.max(1, Math.ceil(view.length / state.size));
    if (state.page >= pages) state.page = pages - 1;
    const start = state.page * state.size;
    const end = Math.min(view.length, start + state.size);
    const frag = d.createDocumentFragment();
    for (let k = start; k < end; k++) {
      const i = view[k]!;
      frag.appendChild(row(i));
      if (expanded[i]) frag.appendChild(detailRow(i));
    }
    if (view.length === 0) {
      const td = el('td', 'muted', 'No tests match the filters.');
      td.colSpan = COLS;
      frag.appendChild(add(el('tr'), td));
    }
    tbody.textContent = '';
    tbody.appendChild(frag);
    info.textContent =
      view.length === 0
        ? '0 tests'
        : `Showing ${fmtInt(start + 1)}\u2013${fmtInt(end)} of ${fmtInt(view.length)}${view.length !== tests.length ? ` (filtered from ${fmtInt(tests.length)})` : ''}`;
    label.textContent = `Page ${state.page + 1} / ${pages}`;
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  /* ---- details, built on expansion ---- */
  function detailOf(i: number): ReportDetail | null {
    if (details === null) details = island<(ReportDetail | null)[]>('report-details') || [];
    return details[i] || null;
  }
  function graderList(list: ReportGrader[]): HTMLUListElement {
    const ul = el('ul', 'graders');
    for (const g of list) {
      const li = el('li');
      add(
        li,
        el('span', 'badge type', g.type),
        d.createTextNode(' '),
        el('strong', null, g.name),
        el('span', 'muted', ` score ${g.score === null ? '\u2014' : fmtScore(g.score)}${g.weight !== null ? ` \u00B7 weight ${g.weight}` : ''}`),
      );
      if (g.verdict) add(li, d.createTextNode(' '), el('span', `badge ${verdictClass(g.verdict)}`, g.verdict));
      if (g.reasoning) add(li, el('div', 'evidence', plain(g.reasoning)));
      if (g.children?.length) add(li, graderList(g.children));
      ul.appendChild(li);
    }
    return ul;
  }
  function messagesNode(msgs: ReportMessage[]): DocumentFragment {
    const frag = d.createDocumentFragment();
    for (const m of msgs) {
      const box = add(el('div', 'msg'), el('div', 'role', m.role));
      if (plain(m.content)) add(box, textBlock(m.content));
      for (const c of m.tools) {
        add(
          box,
          collapsible(
            `tool call: ${c.name}${c.duration_ms !== null ? ` (${fmtDur(c.duration_ms)})` : ''}`,
            () => {
              const f = d.createDocumentFragment();
              if (c.input !== null) add(f, el('div', 'muted', 'input'), textBlock(c.input));
              if (c.output !== null) add(f, el('div', 'muted', 'output'), textBlock(c.output));
              if (c.input === null && c.output === null) add(f, el('div', 'muted', 'no input or output recorded'));
              return f;
            },
            'tool',
          ),
        );
      }
      frag.appendChild(box);
    }
    return frag;
  }
  /* A repeated test: the attempt statistics, then each attempt (verdict, score, answer). */
  function attemptsNode(a: ReportAttempts): DocumentFragment {
    const frag = d.createDocumentFragment();
    const pct = (v: number) => `${Math.round(v * 100)}%`;
    const k = String(a.total_samples);
    add(
      frag,
      el(
        'h4',
        null,
        `Attempts (${a.passed_samples}/${a.total_samples} passed, ${pct(a.pass_rate)}, 95% CI ${pct(a.ci95.low)}\u2013${pct(a.ci95.high)}${a.strategy ? `, ${a.strategy}` : ''})`,
      ),
    );
    const at = a.pass_at_k[k];
    const hat = a.pass_hat_k[k];
    if (at !== undefined && hat !== undefined) add(frag, el('div', 'muted', `pass@${k} ${at.toFixed(2)} \u00B7 pass^${k} ${hat.toFixed(2)}`));
    const ul = el('ul', 'attempts');
    for (const x of a.list) {
      const li = add(
        el('li', x.verdict),
        el('strong', null, `#${x.index + 1} `),
        el('span', `badge ${verdictClass(x.verdict)}`, x.verdict),
        el('span', 'muted', ` score ${x.score === null ? '\u2014' : fmtScore(x.score)}`),
      );
      li.setAttribute('data-verdict', x.verdict);
      if (x.transcript) add(li, el('span', 'muted', ` \u00B7 ${x.transcript}`));
      if (x.error) add(li, textBlock(x.error, 'error'));
      const answer = x.answer;
      if (answer !== null)
        add(
          li,
          collapsible('answer', () => textBlock(answer), 'io answer'),
        );
      ul.appendChild(li);
    }
    return add(frag, ul);
  }
  function buildDetail(i: number): HTMLElement {
    const t = tests[i]!;
    const x = detailOf(i);
    const g = groups[t.group]!;
    const root = el('div', 'detail');
    const meta = add(
      el('div', 'meta'),
      el('span', null, `status: ${x ? x.execution_status : t.verdict}`),
      el('span', null, `score: ${fmtScore(t.score)}`),
      el('span', null, `duration: ${fmtDur(t.duration_ms)}`),
      el('span', null, `tokens: ${fmtInt(t.tokens)}`),
      el('span', null, `cost: ${fmtCost(t.cost_usd)}`),
      el('span', null, `target: ${targets[t.target]}`),
      g.eval_path ? el('span', null, `eval file: ${g.eval_path}`) : null,
    );
    root.appendChild(meta);
    if (!x) {
      add(root, el('p', 'muted', 'No details were embedded for this test.'));
      return root;
    }
    const tools = Object.keys(x.tool_calls);
    if (tools.length) add(meta, el('span', null, `tool calls: ${tools.map((n) => `${n} \u00D7${x.tool_calls[n]}`).join(', ')}`));
    if (x.changes) add(meta, el('span', null, `files: ${x.changes}`));
    if (x.error) add(root, el('h4', null, 'Error'), textBlock(x.error, 'error'));
    if (x.attempts) add(root, attemptsNode(x.attempts));

    const passed = x.assertions.filter((a) => a.passed).length;
    add(root, el('h4', null, `Assertions (${passed}/${x.assertions.length} passed)`));
    if (!x.assertions.length) add(root, el('p', 'muted', 'No assertions recorded.'));
    else {
      const ul = el('ul', 'asserts');
      for (const a of x.assertions) {
        const li = add(el('li', a.passed ? 'pass' : 'fail'), el('span', 'mark', a.passed ? '\u2713' : '\u2717'), el('span', 'text', plain(a.text)));
        li.setAttribute('data-passed', a.passed ? 'true' : 'false');
        if (plain(a.evidence)) add(li, el('div', 'evidence', plain(a.evidence)));
        ul.appendChild(li);
      }
      add(root, ul);
    }
    if (x.graders.length) add(root, el('h4', null, 'Graders'), graderList(x.graders));
    if (x.feedback?.length) {
      const fb = el('ul', 'feedback');
      for (const n of x.feedback) add(fb, add(el('li'), el('span', 'who', `${n.reviewer} (${String(n.updated_at).slice(0, 10)})`), el('div', 'text', n.text)));
      add(root, el('h4', null, `Reviewer feedback (${x.feedback.length})`), fb);
    }

    /* Input: the messages before the first assistant turn; output: the rest, in order. */
    let split = x.messages.findIndex((m) => m.role === 'assistant');
    if (split < 0) split = x.messages.length;
    const input = x.messages.slice(0, split);
    const output = x.messages.slice(split);
    const calls = output.reduce((n, m) => n + m.tools.length, 0);
    if (input.length || output.length) add(root, el('h4', null, 'Input / output'));
    if (input.length)
      add(
        root,
        collapsible(`Input (${input.length} message${input.length === 1 ? '' : 's'})`, () => messagesNode(input), 'io input'),
      );
    if (output.length)
      add(
        root,
        collapsible(
          `Output (${output.length} message${output.length === 1 ? '' : 's'}, ${calls} tool call${calls === 1 ? '' : 's'})`,
          () => messagesNode(output),
          'io output',
        ),
      );
    if (x.omitted_messages)
      add(root, el('div', 'note', `${x.omitted_messages} more message(s) not embedded (report size limit) \u2014 see transcript.json in the run workspace`));
    const answer = x.answer;
    if (answer !== null)
      add(
        root,
        collapsible('outputs/answer.md', () => textBlock(answer), 'io answer'),
      );
    const diff = x.diff;
    if (diff !== null)
      add(
        root,
        collapsible('outputs/file_changes.diff', () => diffBlock(diff), 'io diff'),
      );
    return root;
  }
  function detailRow(i: number): HTMLTableRowElement {
    const tr = el('tr', 'detail-row');
    const td = el('td');
    td.colSpan = COLS;
    tr.appendChild(td);
    /* The details island follows this script in the document: wait for it if still parsing. */
    if (d.readyState === 'loading') {
      td.textContent = 'Loading\u2026';
      d.addEventListener('DOMContentLoaded', () => {
        td.textContent = '';
        td.appendChild(buildDetail(i));
      });
    } else {
      td.appendChild(buildDetail(i));
    }
    return tr;
  }
  function toggle(tr: HTMLElement): void {
    const i = Number(tr.getAttribute('data-index'));
    const nextRow = tr.nextElementSibling;
    if (expanded[i]) {
      delete expanded[i];
      if (nextRow && nextRow.className === 'detail-row') tbody.removeChild(nextRow);
    } else {
      expanded[i] = true;
      tbody.insertBefore(detailRow(i), nextRow);
    }
    tr.setAttribute('aria-expanded', expanded[i] ? 'true' : 'false');
    const tog = tr.querySelector('.tog');
    if (tog) tog.textContent = expanded[i] ? '\u25BE' : '\u25B8';
  }
  function testRowOf(node: EventTarget | null): HTMLElement | null {
    let n = node as Node | null;
    while (n && n !== tbody) {
      if (n.nodeType === 1 && (n as HTMLElement).classList.contains('test-row')) return n as HTMLElement;
      n = n.parentNode;
    }
    return null;
  }
  tbody.addEventListener('click', (ev) => {
    const tr = testRowOf(ev.target);
    if (tr) toggle(tr);
  });
  tbody.addEventListener('keydown', (ev) => {
    const tr = testRowOf(ev.target);
    if (tr && ev.target === tr && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      toggle(tr);
    }
  });

  /* ---- controls ---- */
  const fq = byId<HTMLInputElement>('f-q');
  const fv = byId<HTMLSelectElement>('f-verdict');
  const fg = byId<HTMLSelectElement>('f-group');
  const ft = byId<HTMLSelectElement>('f-target');
  const fs = byId<HTMLSelectElement>('f-size');
  groups.forEach((g, i) => {
    const o = el('option', null, g.suite + (g.eval_path ? ` (${g.eval_path})` : ''));
    o.value = String(i);
    fg.appendChild(o);
  });
  targets.forEach((t, i) => {
    const o = el('option', null, t);
    o.value = String(i);
    ft.appendChild(o);
  });
  const update = () => {
    recompute();
    render();
  };
  let timer = 0;
  fq.addEventListener('input', () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      state.q = fq.value;
      update();
    }, 150);
  });
  fv.addEventListener('change', () => {
    state.verdict = fv.value;
    update();
  });
  fg.addEventListener('change', () => {
    state.group = Number(fg.value);
    markGroup();
    update();
  });
  ft.addEventListener('change', () => {
    state.target = Number(ft.value);
    update();
  });
  fs.addEventListener('change', () => {
    state.size = Number(fs.value) || 100;
    state.page = 0;
    render();
  });
  prev.addEventListener('click', () => {
    if (state.page > 0) {
      state.page--;
      render();
    }
  });
  next.addEventListener('click', () => {
    state.page++;
    render();
  });
  const sortHeads = d.querySelectorAll<HTMLElement>('th[data-sort]');
  for (const th of sortHeads) {
    th.addEventListener('click', () => {
      const key = th.getAttribute('data-sort') ?? '';
      state.dir = state.sort === key ? -state.dir : 1;
      state.sort = key;
      for (const h of sortHeads) h.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
      update();
    });
  }
  /* The server-rendered suite table filters the test table. */
  function markGroup(): void {
    for (const tr of d.querySelectorAll('tr.group-row')) tr.classList.toggle('active', Number(tr.getAttribute('data-group')) === state.group);
  }
  for (const tr of d.querySelectorAll('tr.group-row')) {
    tr.addEventListener('click', () => {
      const gi = Number(tr.getAttribute('data-group'));
      state.group = state.group === gi ? -1 : gi;
      fg.value = String(state.group);
      markGroup();
      update();
      byId('tests').scrollIntoView();
    });
  }

  update();
  d.documentElement.setAttribute('data-ready', 'true');
}

main();
