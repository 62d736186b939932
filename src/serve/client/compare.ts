/**
 * Compare two runs as a reviewer expects: the older run is the baseline unless the URL says
 * otherwise, a swap button, a target picker ("all targets" matches tests per (test, target)), and
 * the API's warnings on screen. The figures are /api/compare's, shown as they come.
 */
import type { UnmatchedPair } from '../../compare/report-types.js';
import type { CompareAnswer } from '../api-types.js';
import { api, painted, scope } from './api.js';
import { badge, byId, clear, d, el, fillSelect, flash, link, score, signed, stat } from './dom.js';
import { go, href, type Route } from './route.js';

let key = '';
let seq = 0;
/** The comparison on screen (its pages render without asking again). */
let last: CompareAnswer | null = null;
export const ROWS_PAGE = 200;
/** How many of the tests (or pairs) only one side has are named in the warning. */
const ONLY_SHOWN = 50;
/** Targets seen per pair of runs (a filtered answer names only its own target). */
const pairTargets = new Map<string, Set<string>>();

export function renderCompare(route: Route): Promise<void> {
  // `runs=a,b`: the API makes the older run the baseline; `baseline=&candidate=`: as given (after a swap).
  const runs = (route.q.get('runs') ?? '').split(',').filter(Boolean);
  const baseline = route.q.get('baseline') ?? '';
  const candidate = route.q.get('candidate') ?? '';
  const target = route.q.get('target') ?? '';
  const sides: Record<string, string> = runs.length === 2 ? { runs: runs.join(',') } : { baseline, candidate };
  const at = (p: Record<string, string>, t: string) => href('compare', { ...p, target: t || null, project: scope.project || null });
  byId<HTMLSelectElement>('compare-target').onchange = () => go(at(sides, byId<HTMLSelectElement>('compare-target').value));
  if (runs.length !== 2 && (!baseline || !candidate)) {
    flash('compare-msg', 'Pick two runs in the Runs tab (tick them, then “Compare selected”).');
    clear(byId('compare-body'));
    clear(byId('compare-stats'));
    return Promise.resolve();
  }
  const q = new URLSearchParams(sides);
  if (target) q.set('target', target);
  const page = Math.max(1, Number(route.q.get('page')) || 1);
  const k = `${scope.project}\0${q}`;
  if (k === key) {
    if (last) renderRows(last, page, at({ ...sides }, target));
    return Promise.resolve();
  }
  key = k;
  const s = ++seq;
  flash('compare-msg', 'comparing…');
  return api<CompareAnswer>(`/compare?${q}`)
    .then((c) => {
      if (s !== seq) return;
      const b = String(c.sources?.baseline?.source ?? baseline);
      const n = String(c.sources?.candidate?.source ?? candidate);
      byId<HTMLButtonElement>('compare-swap').onclick = () => go(at({ baseline: n, candidate: b }, target));
      // The target picker offers every target of either run.
      const pair = `${scope.project}\0${[b, n].sort().join('\0')}`;
      const names = pairTargets.get(pair) ?? new Set<string>();
      pairTargets.set(pair, names);
      if (target) names.add(target);
      for (const side of ['baseline', 'candidate'] as const) for (const t of c.sources?.[side]?.targets ?? []) names.add(t);
      fillSelect(byId<HTMLSelectElement>('compare-target'), [...names].sort(), target);
      const title = byId('compare-title');
      clear(title);
      title.appendChild(link(b, href('runs', { project: scope.project || null }, b), 'mono'));
      title.appendChild(el('span', 'muted', ' (baseline) → '));
      title.appendChild(link(n, href('runs', { project: scope.project || null }, n), 'mono'));
      title.appendChild(el('span', 'muted', ' (candidate)'));
      const st = byId('compare-stats');
      clear(st);
      st.appendChild(stat('Wins', String(c.summary.wins), 'wins'));
      st.appendChild(stat('Losses', String(c.summary.losses), 'losses'));
      st.appendChild(stat('Ties', String(c.summary.ties), 'ties'));
      st.appendChild(stat('Mean delta', signed(c.summary.mean_delta), 'mean_delta'));
      st.appendChild(stat('Matched', String(c.summary.matched ?? c.matched.length), 'matched'));
      // Which rule matched the rows (per target, or by test id and what that left out): the library's sentence.
      byId('compare-rule').textContent = String(c.match_note ?? '');
      const warn = byId('compare-warnings');
      clear(warn);
      const warnings: string[] = [...(c.warnings ?? [])];
      const only = c.unmatched ?? {};
      const bOnly: (string | UnmatchedPair)[] = only.baseline_only_pairs ?? only.baseline_only ?? [];
      const cOnly: (string | UnmatchedPair)[] = only.candidate_only_pairs ?? only.candidate_only ?? [];
      const what = c.match === 'test+target' ? '(test, target) pair(s)' : 'test(s)';
      if (c.order?.swapped) warnings.unshift('the older run is the baseline (the runs were given newest first)');
      for (const w of warnings) warn.appendChild(el('li', null, w));
      let lines = warnings.length;
      // What is only on one side is named, not just counted.
      for (const [side, list] of [
        ['baseline', bOnly],
        ['candidate', cOnly],
      ] as const) {
        if (!list.length) continue;
        const li = el('li', null, `${list.length} ${what} only in the ${side}: `);
        li.setAttribute('data-only', side);
        list.slice(0, ONLY_SHOWN).forEach((x, i) => {
          if (i) li.appendChild(el('span', null, ', '));
          li.appendChild(el('code', 'only-pair', typeof x === 'string' ? x : `${x.test_id} · ${x.target}`));
        });
        if (list.length > ONLY_SHOWN) li.appendChild(el('span', 'muted', ` and ${list.length - ONLY_SHOWN} more`));
        warn.appendChild(li);
        lines++;
      }
      warn.hidden = lines === 0;
      last = c;
      renderRows(c, page, at({ ...sides }, target));
      flash('compare-msg', c.regression ? 'regression: the candidate scores lower than the baseline' : '', Boolean(c.regression));
      painted('compare');
    })
    .catch((e: Error) => {
      key = '';
      if (s === seq) flash('compare-msg', e.message, true);
    });
}

export function resetCompare(): void {
  key = '';
  last = null;
}

/** One page of the matched rows (a comparison of thousands of tests is shown a page at a time). */
function renderRows(c: CompareAnswer, page: number, base: string): void {
  const matched = c.matched;
  const pages = Math.max(1, Math.ceil(matched.length / ROWS_PAGE));
  const p = Math.min(Math.max(1, page), pages);
  const perTarget = matched.some((t) => typeof t.target === 'string');
  byId('compare-target-col').hidden = !perTarget;
  const body = byId('compare-body');
  clear(body);
  const frag = d.createDocumentFragment();
  for (const t of matched.slice((p - 1) * ROWS_PAGE, p * ROWS_PAGE)) {
    const tr = el('tr');
    tr.setAttribute('data-test', t.test_id);
    tr.appendChild(el('td', 'mono', t.test_id));
    const tc = el('td', null, perTarget ? (t.target ?? '') : '');
    tc.hidden = !perTarget;
    tr.appendChild(tc);
    tr.appendChild(el('td', 'num', score(t.score1)));
    tr.appendChild(el('td', 'num', score(t.score2)));
    tr.appendChild(el('td', 'num', signed(t.delta)));
    const o = el('td');
    o.appendChild(badge(t.outcome));
    tr.appendChild(o);
    frag.appendChild(tr);
  }
  body.appendChild(frag);
  if (!matched.length)
    body
      .appendChild(el('tr'))
      .appendChild(el('td', 'muted', 'No test is in both runs for this target.'))
      .setAttribute('colspan', '6');
  const pager = byId('compare-pager');
  clear(pager);
  pager.hidden = pages <= 1;
  if (pages > 1) {
    const to = (n: number) => `${base}${base.includes('?') ? '&' : '?'}page=${n}`;
    if (p > 1) pager.appendChild(link('‹ Prev', to(p - 1), 'btn'));
    pager.appendChild(
      el('span', 'muted', ` rows ${(p - 1) * ROWS_PAGE + 1}–${Math.min(p * ROWS_PAGE, matched.length)} of ${matched.length} · page ${p} of ${pages} `),
    );
    if (p < pages) pager.appendChild(link('Next ›', to(p + 1), 'btn'));
  }
}
