/**
 * A test's details, built when its row is expanded: its status and figures, error, attempts,
 * assertions with their evidence, graders, reviewer feedback, the conversation split into input and
 * output (each message's tool calls collapsed), the answer and the diff.
 */
import type { ReportAttempts, ReportDetail, ReportGrader, ReportGroup, ReportMessage, ReportTest } from '../types.js';
import { fmtCost, fmtDuration, fmtInt, fmtScore } from '../format.js';
import { collapsible, diffBlock, plain, textBlock, verdictClass } from './blocks.js';
import { add, d, el } from './dom.js';

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
          `tool call: ${c.name}${c.duration_ms !== null ? ` (${fmtDuration(c.duration_ms)})` : ''}`,
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
export function buildDetail(t: ReportTest, x: ReportDetail | null, g: ReportGroup, target: string): HTMLElement {
  const root = el('div', 'detail');
  const meta = add(
    el('div', 'meta'),
    el('span', null, `status: ${x ? x.execution_status : t.verdict}`),
    el('span', null, `score: ${fmtScore(t.score)}`),
    el('span', null, `duration: ${fmtDuration(t.duration_ms)}`),
    el('span', null, `tokens: ${fmtInt(t.tokens)}`),
    el('span', null, `cost: ${fmtCost(t.cost_usd)}`),
    el('span', null, `target: ${target}`),
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
