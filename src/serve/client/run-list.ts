/** The runs listing of the Runs view: its filters, its pages, and the two runs ticked for compare. */
import type { RunRowAnswer, RunsAnswer } from '../api-types.js';
import { api, painted, scope, withProject } from './api.js';
import { byId, clear, d, el, fillSelect, flash, link, pct } from './dom.js';
import { go, href } from './route.js';

const PAGE = 50;
const FILTERS = ['experiment', 'target', 'tag', 'since', 'until'] as const;

/** Runs ticked for compare (with their timestamps). */
const selected = new Map<string, string>();
let runsKey = '';
let runsSeq = 0;
/** The listing's route query as last shown (its filters stay while a run is open). */
let lastQuery = new URLSearchParams();
/** The results branch the listing named (for the words of a missing run). */
let runsBranch = '';

/** The results branch the listing named ('' before it answered). */
export function listedBranch(): string {
  return runsBranch;
}

/** Whether the listing was asked for (a run opened from a link asks for the first page behind it). */
export function listingAsked(): boolean {
  return runsKey !== '';
}

/** Forget the listing on screen: the next render asks for it again (an edit shows in it). */
export function forgetListing(): void {
  runsKey = '';
}

/** The listing's query from the route: filters, offset. */
function filtersOf(q: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of FILTERS) {
    const v = q.get(k);
    if (v) out[k] = v;
  }
  return out;
}

function runsHash(q: URLSearchParams, change: Record<string, string | null>): string {
  const f: Record<string, string | null> = { ...filtersOf(q), offset: q.get('offset'), ...change };
  return href('runs', withProject(f));
}

/** Show the page of the listing the route's query names (its filters, its offset); a newer request wins. */
export function loadRuns(q: URLSearchParams): Promise<void> {
  const f = filtersOf(q);
  const offset = Math.max(0, Number(q.get('offset')) || 0);
  const query = new URLSearchParams({ ...f, limit: String(PAGE), offset: String(offset) });
  const key = `${scope.project}\0${query}`;
  if (key === runsKey) return Promise.resolve();
  runsKey = key;
  for (const k of FILTERS) {
    const input = byId<HTMLInputElement | HTMLSelectElement>(`f-${k}`);
    if (input.value !== (f[k] ?? '')) input.value = f[k] ?? '';
  }
  lastQuery = q;
  const seq = ++runsSeq;
  flash('runs-msg', '');
  return api<RunsAnswer>(`/runs?${query}`)
    .then((page) => {
      // Filters change faster than answers come back: only the newest request may paint.
      if (seq !== runsSeq) return;
      runsBranch = page.branch;
      fillSelect(byId<HTMLSelectElement>('f-experiment'), page.facets.experiments, f.experiment ?? '');
      fillSelect(byId<HTMLSelectElement>('f-target'), page.facets.targets, f.target ?? '');
      const body = byId('runs-body');
      clear(body);
      for (const r of page.runs) body.appendChild(runRow(r));
      const empty = byId('runs-empty');
      clear(empty);
      empty.hidden = page.runs.length > 0;
      if (page.total === 0) {
        empty.appendChild(el('strong', null, `No runs on ${page.branch} yet. `));
        empty.appendChild(el('span', null, 'Publish one with '));
        empty.appendChild(el('code', null, 'agentv-results publish'));
        empty.appendChild(
          el('span', null, page.remote ? ', or press Sync to bring the runs of the remote.' : ' (this repository has no remote to sync with).'),
        );
      } else if (page.matched === 0) {
        empty.appendChild(el('strong', null, `No run matches these filters (${page.total} runs on ${page.branch}). `));
        empty.appendChild(link('Clear the filters', href('runs', withProject({}))));
      } else if (page.runs.length === 0) {
        empty.appendChild(el('span', null, `Past the last page (${page.matched} matching runs). `));
        empty.appendChild(link('First page', runsHash(q, { offset: null })));
      }
      const end = Math.min(page.offset + page.runs.length, page.matched);
      byId('runs-count').textContent = `${page.matched === 0 ? 0 : page.offset + 1}–${end} of ${page.matched} matching runs (${page.total} on ${page.branch})`;
      byId<HTMLButtonElement>('runs-prev').disabled = page.offset === 0;
      byId<HTMLButtonElement>('runs-next').disabled = end >= page.matched;
      byId<HTMLButtonElement>('runs-prev').onclick = () => go(runsHash(q, { offset: page.offset - PAGE > 0 ? String(page.offset - PAGE) : null }));
      byId<HTMLButtonElement>('runs-next').onclick = () => go(runsHash(q, { offset: String(page.offset + PAGE) }));
      painted('runs');
    })
    .catch((e: Error) => {
      runsKey = '';
      if (seq === runsSeq) flash('runs-msg', e.message, true);
    });
}

function runRow(r: RunRowAnswer): HTMLTableRowElement {
  const tr = el('tr');
  tr.setAttribute('data-run', r.run_id);
  const pick = el('input');
  pick.type = 'checkbox';
  pick.checked = selected.has(r.run_id);
  pick.setAttribute('aria-label', 'select for compare');
  pick.addEventListener('change', () => {
    if (pick.checked) selected.set(r.run_id, r.timestamp);
    else selected.delete(r.run_id);
    while (selected.size > 2) selected.delete(selected.keys().next().value as string);
    for (const box of d.querySelectorAll<HTMLInputElement>('#runs-body input[type=checkbox]'))
      box.checked = selected.has(box.closest('tr')?.getAttribute('data-run') ?? '');
    updateCompareBtn();
  });
  const c0 = el('td');
  c0.appendChild(pick);
  tr.appendChild(c0);
  const c1 = el('td');
  c1.appendChild(link(r.run_id, href('runs', withProject({}), r.run_id), 'mono run-link'));
  tr.appendChild(c1);
  tr.appendChild(el('td', 'muted', r.timestamp));
  tr.appendChild(el('td', null, r.experiment));
  tr.appendChild(el('td', null, r.targets.join(', ')));
  tr.appendChild(el('td', 'num', `${r.passed}/${r.total}`));
  tr.appendChild(el('td', 'num pass-rate', pct(r.pass_rate)));
  const tags = el('td');
  for (const t of r.tags) tags.appendChild(el('span', 'tag', t));
  tr.appendChild(tags);
  // Where the run is (local, remote, both): this machine's view, hidden on the static site (a copy of the branch: all remote).
  tr.appendChild(el('td', 'muted where', r.where));
  return tr;
}

function updateCompareBtn(): void {
  const b = byId<HTMLButtonElement>('compare-btn');
  b.disabled = selected.size !== 2;
  b.textContent = `Compare selected (${selected.size}/2)`;
}

/** Compare the two ticked runs: the API makes the older one the baseline. */
function compareSelected(): void {
  if (selected.size !== 2) return;
  go(href('compare', withProject({ runs: [...selected.keys()].join(',') })));
}

export function resetRunList(): void {
  selected.clear();
  runsKey = '';
  updateCompareBtn();
}

export function initRunList(): void {
  for (const k of FILTERS) {
    byId(`f-${k}`).addEventListener('change', () => {
      const value = byId<HTMLInputElement>(`f-${k}`).value.trim();
      go(runsHash(lastQuery, { [k]: value || null, offset: null }));
    });
  }
  byId('compare-btn').addEventListener('click', compareSelected);
  updateCompareBtn();
}
