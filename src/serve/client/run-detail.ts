/** One run in the Runs view: its figures, tags and feedback, and its tests paged; one test is test-detail.ts. */
import type { FeedbackWriteAnswer, RunDetailAnswer, RunTestAnswer, TagsWriteAnswer } from '../api-types.js';
import { api, ApiError, painted, READ_ONLY, reportHref, scope, withProject } from './api.js';
import { badge, byId, clear, cost, d, dur, el, fillSelect, flash, link, pct, score, stat } from './dom.js';
import { href } from './route.js';
import { forgetListing, listedBranch } from './run-list.js';
import { hideTest } from './test-detail.js';

export const TESTS_PAGE = 100;

let runSeq = 0;
let run: RunDetailAnswer | null = null;
let runKey = '';
/** The key of the run whose figures are on screen ('' when none). */
let shownKey = '';
/** Renders the Runs view again (given by initRunDetail). */
let refresh: () => Promise<void> = () => Promise.resolve();

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
  const branch = listedBranch() || 'the results branch';
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

export function showRun(id: string, q: URLSearchParams, test: string | null): Promise<void> {
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
  forgetListing();
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
      forgetListing();
      void refresh();
    })
    .catch((e: ApiError) => {
      flash('tag-msg', e.status === 409 ? 'someone else changed the tags; reloaded — try again' : e.message, true);
      if (e.status === 409) void reloadRun();
    });
}

/** Save the reviewer's note on the test the form names, with the revision of their note the page read. */
function saveFeedback(): void {
  if (!run) return;
  const who = byId<HTMLInputElement>('fb-reviewer').value.trim();
  if (!who) {
    flash('fb-msg', 'enter your name as reviewer', true);
    return;
  }
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
}

/** No run open: the run's section hidden, and the next one asked for afresh. */
export function closeRun(): void {
  byId('run-detail').hidden = true;
  runKey = '';
}

/** Another project: no run is open. */
export function resetRun(): void {
  runKey = '';
  clearRun();
}

/** The tag and feedback controls; `rerender` renders the view again after an edit. */
export function initRunDetail(rerender: () => Promise<void>): void {
  refresh = rerender;
  byId('tag-add').addEventListener('click', () => {
    const input = byId<HTMLInputElement>('tag-input');
    const v = input.value.trim();
    if (v) editTags([v], []);
    input.value = '';
  });
  byId('fb-save').addEventListener('click', saveFeedback);
  if (READ_ONLY) for (const id of ['tag-add', 'fb-save']) byId<HTMLButtonElement>(id).disabled = true;
}
