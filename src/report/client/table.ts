/**
 * The report's table of tests: filtered, sorted and paged over the whole run (one page of rows
 * drawn at a time), a row expanded into its details in place, by click or Enter.
 */
import type { ReportData, ReportDetail, ReportTest } from '../types.js';
import { fmtDuration, fmtInt, fmtScore } from '../format.js';
import { verdictClass } from './blocks.js';
import { buildDetail } from './details.js';
import { add, byId, d, el } from './dom.js';

const COLS = 8;

/** What the controls set: the filters, the sort, the page and its size. */
export interface TableState {
  q: string;
  verdict: string;
  group: number;
  target: number;
  sort: string;
  dir: number;
  page: number;
  size: number;
}

export interface TestTable {
  state: TableState;
  /** Filter and sort again from the state, back to the first page, and draw. */
  update(): void;
  /** Draw the state's page. */
  render(): void;
}

/** `detailOf(i)`: the embedded details of test `i` (null: none embedded). */
export function testTable(data: ReportData, detailOf: (i: number) => ReportDetail | null): TestTable {
  const { tests, groups, targets } = data;
  const state: TableState = { q: '', verdict: '', group: -1, target: -1, sort: '', dir: 1, page: 0, size: 100 };
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
      el('td', 'num', fmtDuration(t.duration_ms)),
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
        td.appendChild(detailNode(i));
      });
    } else {
      td.appendChild(detailNode(i));
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

  function detailNode(i: number): HTMLElement {
    const t = tests[i]!;
    return buildDetail(t, detailOf(i), groups[t.group]!, targets[t.target]!);
  }
  return {
    state,
    update: () => {
      recompute();
      render();
    },
    render,
  };
}
