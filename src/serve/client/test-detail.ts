/**
 * One test of a run in the Dashboard (#/runs/<run>/tests/<test>): its Grading, Answer and
 * Transcript tabs, read lazily from the API, the transcript in parts under the size cap.
 */
import { api, painted, scope, withProject } from './api.js';
import type { FlakyAnswer, ReportGrader, TestDetailAnswer } from '../api-types.js';
import { badge, byId, bytes, clear, cost, dur, el, flash, link, score } from './dom.js';
import { href } from './route.js';

let testSeq = 0;
let testKey = '';

/** Hides the test panel and forgets what it showed. */
export function hideTest(): void {
  byId('test-detail').hidden = true;
  testKey = '';
}

// ── one test ─────────────────────────────────────────────────────────
type Clipped = string | { head: string; bytes: number } | null;
function clipped(t: Clipped, cls = 'pre'): HTMLElement {
  const box = el('div', cls);
  if (t && typeof t === 'object') {
    box.textContent = t.head;
    box.appendChild(el('div', 'note', `truncated (${bytes(t.bytes)}) — the full text: agentv-results pull --with-artifacts`));
  } else box.textContent = t ?? '';
  return box;
}

const TABS = ['grading', 'answer', 'transcript'] as const;

export function showTest(id: string, testId: string, q: URLSearchParams): Promise<void> {
  const sec = byId('test-detail');
  sec.hidden = false;
  const target = q.get('target');
  const attempt = q.get('attempt');
  const tab = (TABS as readonly string[]).includes(q.get('tab') ?? '') ? (q.get('tab') as (typeof TABS)[number]) : 'grading';
  const qs = new URLSearchParams();
  if (target !== null) qs.set('target', target);
  if (attempt) qs.set('attempt', attempt);
  const key = `${scope.project}\0${id}\0${testId}\0${qs}`;
  byId('test-title').textContent = `${testId}${target ? ` · ${target}` : ''}`;
  const tabs = byId('test-tabs');
  clear(tabs);
  for (const t of TABS) {
    const a = link(t[0]!.toUpperCase() + t.slice(1), href('runs', withProject({ target, attempt, tab: t === 'grading' ? null : t }), id, testId), 'tab');
    a.setAttribute('role', 'tab');
    a.setAttribute('aria-selected', String(t === tab));
    a.id = `test-tab-${t}`;
    tabs.appendChild(a);
  }
  const show = (detail: TestDetailAnswer | null) => {
    for (const t of TABS) byId(`test-${t}`).hidden = t !== tab;
    sec.setAttribute('data-tab', tab);
    void detail;
  };
  if (key === testKey) {
    show(null);
    return Promise.resolve();
  }
  testKey = key;
  for (const t of TABS) clear(byId(`test-${t}`));
  flash('test-msg', 'loading the test’s grading and transcript…');
  const seq = ++testSeq;
  const started = performance.now();
  return api<TestDetailAnswer>(`/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(testId)}?${qs}`)
    .then((r) => {
      if (seq !== testSeq) return;
      renderTest(r, `/runs/${encodeURIComponent(id)}/tests/${encodeURIComponent(testId)}`, qs, seq);
      showHistory(r, seq);
      show(r);
      const missing = r.missing ?? [];
      if (missing.length)
        flash(
          'test-msg',
          `${missing.length} payload${missing.length === 1 ? '' : 's'} of this test ${missing.length === 1 ? 'is' : 'are'} not on the artifacts branch (local or remote): ${missing.map((m) => m.path).join(', ')} — shown without ${missing.length === 1 ? 'it' : 'them'}`,
          true,
        );
      else flash('test-msg', r.fetched ? 'payloads fetched from the remote' : '');
      sec.setAttribute('data-ms', String(Math.round(performance.now() - started)));
      painted('test');
    })
    .catch((e: Error) => {
      testKey = '';
      if (seq === testSeq) flash('test-msg', e.message, true);
    });
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

/**
 * The test's attempts across the last runs of its experiment (`/api/flaky`, the CLI's `flaky`): a
 * "noisy" mark when its attempts both pass and fail, its class, and one cell per run. Nothing when
 * the answer is not there (an older site) or the test is not in it.
 */
function showHistory(r: TestDetailAnswer, seq: number): void {
  if (!r.experiment) return;
  api<FlakyAnswer>(`/flaky?experiment=${encodeURIComponent(r.experiment)}`)
    .then((f) => {
      if (seq !== testSeq) return;
      const t = f.tests.find((x) => x.test_id === r.test.test_id && (x.target ?? null) === (r.test.target ?? null));
      if (!t) return;
      const box = el('div', 'test-history');
      box.id = 'test-history';
      box.setAttribute('data-class', t.class);
      if (t.class === 'flaky') box.appendChild(el('span', 'badge noisy', 'noisy'));
      box.appendChild(
        el(
          'span',
          'muted',
          ` ${t.class} over the last ${f.runs.length} runs of ${f.experiment ?? 'the experiment'}: ${t.passed}/${t.total} attempts passed (${pct(t.pass_rate)}, 95% ${pct(t.interval.low)}–${pct(t.interval.high)}), ${t.flips} flip${t.flips === 1 ? '' : 's'} `,
        ),
      );
      for (const c of t.history) {
        const cell = el('span', `attempt-run ${c.verdict}`, c.verdict === 'pass' ? '✓' : '✗');
        cell.title = `${c.run_id}: ${c.passed}/${c.total} attempts passed`;
        box.appendChild(cell);
      }
      byId('test-meta').appendChild(box);
      painted('test-history');
    })
    .catch(() => {
      // no history answer (an older site, a branch without the experiment): the test shows without it
    });
}

/** A repeated test's attempts under its aggregate: the statistics, then each attempt's verdict, score and answer. */
function renderAttempts(into: HTMLElement, a: NonNullable<TestDetailAnswer['detail']['attempts']>): void {
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  const k = String(a.total_samples);
  into.appendChild(
    el(
      'h4',
      null,
      `Attempts (${a.passed_samples}/${a.total_samples} passed, ${pct(a.pass_rate)}, 95% CI ${pct(a.ci95.low)}–${pct(a.ci95.high)}${a.strategy ? `, ${a.strategy}` : ''})`,
    ),
  );
  const at = a.pass_at_k[k];
  const hat = a.pass_hat_k[k];
  if (at !== undefined && hat !== undefined) into.appendChild(el('p', 'muted', `pass@${k} ${at.toFixed(2)} · pass^${k} ${hat.toFixed(2)}`));
  const ul = el('ul', 'attempts');
  for (const x of a.list) {
    const li = el('li', x.verdict);
    li.setAttribute('data-verdict', x.verdict);
    li.appendChild(el('strong', null, `#${x.index + 1} `));
    li.appendChild(badge(x.verdict));
    li.appendChild(el('span', 'muted', ` score ${x.score === null ? '—' : score(x.score)}${x.transcript ? ` · ${x.transcript}` : ''}`));
    if (x.error) li.appendChild(clipped(x.error, 'pre bad'));
    if (x.answer) li.appendChild(clipped(x.answer));
    ul.appendChild(li);
  }
  into.appendChild(ul);
}

function renderTest(r: TestDetailAnswer, path: string, qs: URLSearchParams, seq: number): void {
  const t = r.test;
  const det = r.detail;
  const meta = byId('test-meta');
  clear(meta);
  meta.appendChild(badge(t.verdict));
  meta.appendChild(
    el('span', 'muted', ` score ${score(t.score)} · ${dur(t.duration_ms)} · ${cost(t.cost_usd)} · attempt ${t.attempt} · ${det.execution_status}`),
  );
  // Grading: assertions with pass/fail and evidence, then the graders with their reasons.
  const g = byId('test-grading');
  if (det.error) {
    g.appendChild(el('h4', null, 'Error'));
    g.appendChild(clipped(det.error, 'pre bad'));
  }
  if (det.attempts) renderAttempts(g, det.attempts);
  g.appendChild(el('h4', null, `Assertions (${det.assertions.filter((a) => a.passed).length}/${det.assertions.length} passed)`));
  const ul = el('ul', 'assertions');
  for (const a of det.assertions) {
    const li = el('li', a.passed ? 'pass' : 'fail');
    li.setAttribute('data-passed', String(a.passed));
    li.appendChild(el('span', 'mark', a.passed ? '✓ ' : '✗ '));
    li.appendChild(clipped(a.text, 'text'));
    if (a.evidence) li.appendChild(clipped(a.evidence, 'evidence muted'));
    ul.appendChild(li);
  }
  if (!det.assertions.length) ul.appendChild(el('li', 'muted', 'no assertions recorded'));
  g.appendChild(ul);
  const graders = (list: ReportGrader[], into: HTMLElement) => {
    for (const gr of list) {
      const li = el('li');
      li.appendChild(el('strong', null, gr.name));
      li.appendChild(
        el(
          'span',
          'muted',
          ` ${gr.type} · score ${score(gr.score)}${gr.verdict ? ` · ${gr.verdict}` : ''}${gr.weight !== null ? ` · weight ${gr.weight}` : ''}`,
        ),
      );
      if (gr.reasoning) li.appendChild(clipped(gr.reasoning, 'evidence'));
      if (gr.children?.length) {
        const sub = el('ul', 'graders');
        graders(gr.children, sub);
        li.appendChild(sub);
      }
      into.appendChild(li);
    }
  };
  if (det.graders.length) {
    g.appendChild(el('h4', null, 'Graders'));
    const gl = el('ul', 'graders');
    graders(det.graders, gl);
    g.appendChild(gl);
  }
  // Answer.
  const ans = byId('test-answer');
  if (det.answer) {
    ans.appendChild(clipped(det.answer));
    if (det.answer_in_transcript) ans.appendChild(el('p', 'note', 'Also the last assistant message of the transcript.'));
  } else ans.appendChild(el('p', 'muted', 'No answer recorded for this test.'));
  if (det.diff) {
    ans.appendChild(el('h4', null, 'File changes'));
    ans.appendChild(clipped(det.diff));
  }
  // Transcript.
  const tr = byId('test-transcript');
  appendMessages(tr, r, path, qs, seq);
  if (!det.messages.length)
    tr.appendChild(el('p', 'muted', (r.missing ?? []).length ? 'The transcript is not available (see above).' : 'No transcript recorded for this test.'));
}

/**
 * One page of the transcript (the server pages it by the size cap), then — when messages remain —
 * a note saying how many, and a button that appends the next page in place.
 */
function appendMessages(tr: HTMLElement, r: TestDetailAnswer, path: string, qs: URLSearchParams, seq: number): void {
  const det = r.detail;
  for (const m of det.messages) {
    const box = el('div', 'msg-turn');
    box.setAttribute('data-role', m.role);
    box.appendChild(el('div', 'role', m.role));
    box.appendChild(clipped(m.content));
    for (const tool of m.tools) {
      const tb = el('details', 'tool');
      tb.appendChild(el('summary', null, `tool ${tool.name}${tool.duration_ms !== null ? ` · ${dur(tool.duration_ms)}` : ''}`));
      if (tool.input) tb.appendChild(clipped(tool.input));
      if (tool.output) tb.appendChild(clipped(tool.output));
      box.appendChild(tb);
    }
    tr.appendChild(box);
  }
  const next = r.next_message;
  if (!det.omitted_messages || typeof next !== 'number') return;
  const more = el('div', 'more-messages');
  const shown = tr.querySelectorAll('.msg-turn').length;
  more.appendChild(
    el('p', 'note', `${shown} message(s) shown, ${det.omitted_messages} more not shown yet: a long transcript is loaded in parts (the page’s size cap)`),
  );
  const btn = el('button', null, 'Show more messages');
  btn.id = 'test-more';
  btn.addEventListener('click', () => {
    btn.disabled = true;
    btn.textContent = 'loading…';
    const q = new URLSearchParams(qs);
    q.set('from', String(next));
    api<TestDetailAnswer>(`${path}?${q}`)
      .then((page) => {
        if (seq !== testSeq) return;
        more.remove();
        appendMessages(tr, page, path, qs, seq);
        painted('test-more');
      })
      .catch((e: Error) => {
        btn.disabled = false;
        btn.textContent = 'Show more messages';
        if (seq === testSeq) flash('test-msg', e.message, true);
      });
  });
  more.appendChild(btn);
  tr.appendChild(more);
}
