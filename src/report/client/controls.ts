/** The report's controls over its table: the search box, the filters, the page size, the pager, the sort headers and the suite rows. */
import type { ReportData } from '../types.js';
import { byId, d, el } from './dom.js';
import type { TestTable } from './table.js';

export function wireControls(data: ReportData, table: TestTable): void {
  const { groups, targets } = data;
  const { state, update, render } = table;
  const prev = byId<HTMLButtonElement>('page-prev');
  const next = byId<HTMLButtonElement>('page-next');
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
}
