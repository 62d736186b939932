/** The Runs view: the listing (filters, pages, selection for compare) and one run (tests paged); one test is test-detail.ts. */
import { api, ApiError, painted, READ_ONLY, reportHref, scope, withProject } from './api.js';
import type { FeedbackWriteAnswer, RunDetailAnswer, RunRowAnswer, RunsAnswer, RunTestAnswer, TagsWriteAnswer } from '../api-types.js';
import { badge, byId, clear, cost, d, dur, el, fillSelect, flash, link, pct, score, stat } from './dom.js';
import { go, href, type Route } from './route.js';
import { hideTest, showTest } from './test-detail.js';

const PAGE = 50;
export const TESTS_PAGE = 100;
const FILTERS = ['experiment', 'target', 'tag', 'since', 'until'] as const;

/** Runs ticked for compare (with their timestamps). */
const selected = new Map<string, string>();
let runsKey = '';
let runsSeq = 0;
let runSeq = 0;
let run: RunDetailAnswer | null = null;
let runKey = '';
/** The key of the run whose figures are on screen ('' when none). */
let shownKey = '';
/** The listing's route query as last shown (its filters stay while a run is open). */
let lastQuery = new URLSearchParams();
/** The results branch the listing named (for the words of a missing run). */
let runsBranch = '';

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

function loadRuns(q: URLSearchParams): Promise<void> {
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

// ── one run ──────────────────────────────────────────────────────────
/** Forget the run on screen and empty everything it drew (figures, tags, tests, the open test). */
function clearRun(): void {
  run = null;
  shownKey = '';
  for (const id of ['run-stats', 'run-tags', 'tests-body', 'tests-pager', 'run-missing']) clear(byId(id));
  byId('run-body').hidden = true;
  byId('run-missing').hidden = true;
  byId('run-report').setAttribute('href', '#');
  hideTest();
}

/**
 * The one rendering of "no such run": the id, and why, from the API's `run_state` (the server asked
 * the branch and the archive) — nothing of a previous run, and no report link, tags or feedback.
 */
function showMissing(id: string, e: ApiError): void {
  clearRun();
  byId('run-title').textContent = id;
  flash('run-msg', '');
  const box = byId('run-missing');
  const state = String(e.body?.run_state ?? (e.status === 404 ? 'unknown' : 'error'));
  box.setAttribute('data-state', state);
  const branch = runsBranch || 'the results branch';
  if (state === 'archived') {
    box.appendChild(el('strong', null, 'This run was archived. '));
    box.appendChild(el('span', null, `Rollover moved it off ${branch} to ${e.body.archive_branch}; read it with `));
    box.appendChild(el('code', null, `agentv-results pull ${id}`));
    box.appendChild(el('span', null, '.'));
  } else if (state === 'expired') {
    box.appendChild(el('strong', null, `This run was removed by retention on ${e.body.expired_at} `));
    box.appendChild(el('span', null, `(${e.body.policy}). Git history still holds it: `));
    box.appendChild(el('code', null, `agentv-results pull ${id}`));
    box.appendChild(el('span', null, ' names the commit to read it from.'));
  } else if (state === 'not_on_site') {
    // The static history site: it cannot ask the branch or the archive, only say what it holds.
    box.appendChild(el('strong', null, 'Not on this site. '));
    box.appendChild(el('span', null, `${e.message}. `));
  } else if (state === 'error') {
    box.appendChild(el('strong', null, 'This run could not be read. '));
    box.appendChild(el('span', null, e.message));
  } else {
    box.appendChild(el('strong', null, `No run ${id} on ${branch}. `));
    box.appendChild(el('span', null, 'Check the id: the list above shows every published run. '));
  }
  box.appendChild(link('Back to the runs', href('runs', withProject({})), 'btn'));
  box.hidden = false;
}

/** The feedback form is about the test that is open (else the run's first test). */
function followTest(test: string | null): void {
  const sel = byId<HTMLSelectElement>('fb-test');
  if (test !== null && [...sel.options].some((o) => o.value === test)) sel.value = test;
}

function showRun(id: string, q: URLSearchParams, test: string | null): Promise<void> {
  const sec = byId('run-detail');
  sec.hidden = false;
  const key = `${scope.project}\0${id}`;
  const page = Math.max(1, Number(q.get('page')) || 1);
  if (key === runKey && run) {
    renderTests(id, page);
    followTest(test);
    return Promise.resolve();
  }
  if (key !== shownKey) {
    // Another run: nothing of the previous one stays on screen while this one loads (or is missing).
    // The title too: it names the run whose figures are shown (or the missing one), once answered.
    clearRun();
    byId('run-title').textContent = '';
  }
  runKey = key;
  flash('run-msg', 'loading…');
  const seq = ++runSeq;
  return api<RunDetailAnswer>(`/runs/${encodeURIComponent(id)}`)
    .then((r) => {
      if (seq !== runSeq) return;
      run = r;
      shownKey = key;
      byId('run-title').textContent = r.run.run_id;
      const s = r.summary ?? {};
      const stats = byId('run-stats');
      clear(stats);
      stats.appendChild(stat('Tests', String(r.run.total), 'total'));
      stats.appendChild(stat('Passed', String(r.run.passed), 'passed'));
      stats.appendChild(stat('Failed', String(r.run.failed), 'failed'));
      stats.appendChild(stat('Pass rate', pct(r.run.pass_rate), 'pass_rate'));
      stats.appendChild(stat('Mean score', score(s.mean_score), 'mean_score'));
      stats.appendChild(stat('Cost', cost(s.cost_usd), 'cost'));
      stats.appendChild(stat('Duration', dur(s.duration_ms), 'duration'));
      // A run with repeated attempts: attempts passed and the mean attempt success rate, per target too.
      const a = r.attempts;
      if (a) {
        stats.appendChild(stat('Attempts passed', `${a.passed_samples}/${a.total_samples}`, 'attempts'));
        const perTarget = Object.entries(a.targets).map(([t, x]) => `${t} ${pct(x.mean_pass_rate)}`);
        stats.appendChild(stat('Mean attempt success', `${pct(a.mean_pass_rate)}${perTarget.length > 1 ? ` (${perTarget.join(', ')})` : ''}`, 'attempt_rate'));
      }
      byId('run-report').setAttribute('href', reportHref(id));
      renderTags();
      const sel = byId<HTMLSelectElement>('fb-test');
      fillSelect(sel, [...new Set<string>(r.tests.map((t) => t.test_id))], sel.value, 0);
      followTest(test);
      renderTests(id, page);
      byId('run-body').hidden = false;
      flash('run-msg', '');
      painted('run');
    })
    .catch((e: Error) => {
      if (seq !== runSeq) return;
      if (e instanceof ApiError && e.status === 404) {
        showMissing(id, e);
        painted('run');
      } else {
        runKey = '';
        flash('run-msg', e.message, true);
      }
    });
}

function renderTests(id: string, page: number): void {
  if (!run) return;
  const tests: RunTestAnswer[] = run.tests;
  const pages = Math.max(1, Math.ceil(tests.length / TESTS_PAGE));
  const p = Math.min(page, pages);
  const body = byId('tests-body');
  clear(body);
  const fb = run.feedback?.entries ?? {};
  const targetsOf = new Map<string, number>();
  for (const t of tests) targetsOf.set(t.test_id, (targetsOf.get(t.test_id) ?? 0) + 1);
  const noted = new Set<string>();
  const frag = d.createDocumentFragment();
  for (const t of tests.slice((p - 1) * TESTS_PAGE, p * TESTS_PAGE)) {
    const tr = el('tr');
    tr.setAttribute('data-test', t.test_id);
    tr.setAttribute('data-target', t.target);
    const c = el('td', 'mono');
    c.appendChild(link(t.test_id, href('runs', withProject({ target: t.target, attempt: t.attempt > 1 ? t.attempt : null }), id, t.test_id), 'test-link'));
    tr.appendChild(c);
    tr.appendChild(el('td', null, t.target));
    const v = el('td', 'verdict');
    v.appendChild(badge(t.verdict));
    tr.appendChild(v);
    tr.appendChild(el('td', 'num', `${score(t.score)}${t.attempts ? ` (${t.attempts[0]}/${t.attempts[1]} attempts)` : ''}`));
    tr.appendChild(el('td', 'num', dur(t.duration_ms)));
    // Feedback is keyed by test, not by target: shown once, on the test's first row.
    const cell = el('td', 'feedback');
    const notes = Object.hasOwn(fb, t.test_id) && !noted.has(t.test_id) ? fb[t.test_id] : undefined;
    if (notes) {
      noted.add(t.test_id);
      for (const [who, note] of Object.entries(notes)) cell.appendChild(el('div', null, `${note.feedback} — ${who}`));
      if ((targetsOf.get(t.test_id) ?? 0) > 1) cell.appendChild(el('div', 'muted', '(on the test, every target)'));
    }
    tr.appendChild(cell);
    frag.appendChild(tr);
  }
  body.appendChild(frag);
  const pager = byId('tests-pager');
  clear(pager);
  pager.hidden = pages <= 1;
  if (pages > 1) {
    const at = (n: number) => href('runs', withProject({ page: n > 1 ? n : null }), id);
    if (p > 1) pager.appendChild(link('‹ Prev', at(p - 1), 'btn'));
    pager.appendChild(
      el('span', 'muted', ` tests ${(p - 1) * TESTS_PAGE + 1}–${Math.min(p * TESTS_PAGE, tests.length)} of ${tests.length} · page ${p} of ${pages} `),
    );
    if (p < pages) pager.appendChild(link('Next ›', at(p + 1), 'btn'));
  }
}

function renderTags(): void {
  const box = byId('run-tags');
  clear(box);
  const tags: string[] = run?.tags?.tags ?? [];
  for (const t of tags) {
    const chip = el('span', 'tag', t);
    if (!READ_ONLY) {
      const x = el('button', 'tag-x', '×');
      x.type = 'button';
      x.setAttribute('aria-label', 'remove tag');
      x.addEventListener('click', () => editTags([], [t]));
      chip.appendChild(x);
    }
    box.appendChild(chip);
  }
  if (!tags.length) box.appendChild(el('span', 'muted', 'no tags'));
}

function reloadRun(): Promise<void> {
  runKey = '';
  runsKey = '';
  return refresh();
}

function editTags(add: string[], remove: string[]): void {
  if (!run) return;
  flash('tag-msg', 'saving…');
  const shown = run;
  api<TagsWriteAnswer>(`/runs/${encodeURIComponent(run.run.run_id)}/tags`, 'POST', { add, remove, expect_revision: run.tags?.tag_revision ?? '' })
    .then((res) => {
      shown.tags = res.tags;
      renderTags();
      flash('tag-msg', res.changed ? 'saved' : 'no change');
      runsKey = '';
      void refresh();
    })
    .catch((e: ApiError) => {
      flash('tag-msg', e.status === 409 ? 'someone else changed the tags; reloaded — try again' : e.message, true);
      if (e.status === 409) void reloadRun();
    });
}

// ── the view ─────────────────────────────────────────────────────────
let refresh: () => Promise<void> = () => Promise.resolve();

export function renderRuns(route: Route): Promise<void> {
  refresh = () => renderRuns(route);
  const jobs: Promise<void>[] = [];
  if (!route.run) jobs.push(loadRuns(route.q));
  else if (!runsKey) jobs.push(loadRuns(new URLSearchParams()));
  if (route.run) jobs.push(showRun(route.run, route.q, route.test));
  else {
    byId('run-detail').hidden = true;
    runKey = '';
  }
  if (route.run && route.test) jobs.push(showTest(route.run, route.test, route.q));
  else hideTest();
  const linked = route.run ? (route.test ? 'test-detail' : 'run-detail') : null;
  if (linked) byId(linked).scrollIntoView({ block: 'start' });
  const seq = ++renderSeq;
  return Promise.all(jobs).then(() => {
    // What loaded above it (the listing, the run's tests) moved the linked element down: bring it
    // back into view, unless another route was rendered meanwhile.
    if (linked && seq === renderSeq) byId(linked).scrollIntoView({ block: 'start' });
  });
}
let renderSeq = 0;

export function resetRuns(): void {
  selected.clear();
  runsKey = '';
  runKey = '';
  clearRun();
  updateCompareBtn();
}

export function initRuns(): void {
  for (const k of FILTERS) {
    byId(`f-${k}`).addEventListener('change', () => {
      const value = byId<HTMLInputElement>(`f-${k}`).value.trim();
      go(runsHash(lastQuery, { [k]: value || null, offset: null }));
    });
  }
  byId('compare-btn').addEventListener('click', compareSelected);
  byId('tag-add').addEventListener('click', () => {
    const input = byId<HTMLInputElement>('tag-input');
    const v = input.value.trim();
    if (v) editTags([v], []);
    input.value = '';
  });
  byId('fb-save').addEventListener('click', () => {
    if (!run) return;
    const who = byId<HTMLInputElement>('fb-reviewer').value.trim();
    if (!who) return flash('fb-msg', 'enter your name as reviewer', true);
    flash('fb-msg', 'saving…');
    const test = byId<HTMLSelectElement>('fb-test').value;
    const entries = run.feedback?.entries ?? {};
    const onTest = Object.hasOwn(entries, test) ? entries[test] : undefined;
    const mine = onTest && Object.hasOwn(onTest, who) ? onTest[who] : undefined;
    api<FeedbackWriteAnswer>(`/runs/${encodeURIComponent(run.run.run_id)}/feedback`, 'POST', {
      test_id: test,
      text: byId<HTMLTextAreaElement>('fb-text').value,
      reviewer: who,
      expect_revision: mine ? mine.revision : '',
    })
      .then(() => {
        flash('fb-msg', 'saved');
        byId<HTMLTextAreaElement>('fb-text').value = '';
        return reloadRun();
      })
      .catch((e: Error) => flash('fb-msg', e.message, true));
  });
  if (READ_ONLY) for (const id of ['tag-add', 'fb-save']) byId<HTMLButtonElement>(id).disabled = true;
  updateCompareBtn();
}
