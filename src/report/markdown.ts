/**
 * `--format markdown`: what `gate`, `compare` and `summary` write (`trend`'s: src/trend/markdown.ts, with these helpers) for a pull-request
 * comment or a CI job summary (`$GITHUB_STEP_SUMMARY`).
 *
 * Safe to post: every value that comes from a run (test ids, targets, experiments, run ids) is
 * escaped so it renders as the text it is — no table break (`|`), no emphasis, no link, no HTML,
 * no @mention or #reference that would notify someone. Bounded: the whole text stays under
 * GitHub's 65,536-character comment limit; rows past the budget are dropped from the end (the
 * tables put regressions first, so what is dropped is the least important) and a last line says
 * how many.
 */
import { targetPassRate, type Summary } from '../model/artifacts.js';
import { formatAttemptRate, formatPassK, type RunAttemptStats } from '../model/attempt-stats.js';
import type { CompareReport } from '../compare/compare.js';
import type { GateReport } from '../gate/gate.js';
import * as z from 'zod';
import { parseArgs } from '../options/verb-options.js';

/** GitHub's limit on an issue or pull-request comment body, in characters. */
export const MARKDOWN_LIMIT = 65_536;

/** Marks the gate's comment, so a CI step can find and update its own earlier comment. */
export const GATE_COMMENT_MARKER = '<!-- agentv-results:gate -->';

/** HTML entities for what Markdown would read as markup, a mention or a reference; the rest is backslash-escaped. */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '@': '&#64;', '#': '&#35;' };

/**
 * Text from a run, rendered literally inside a Markdown table cell or line, and readable as plain
 * text: only what is markup where the text lands is escaped (emphasis, code, links and images,
 * HTML, table pipes, mentions and references; a list or heading marker at its start; an autolink's
 * `://` and `www.`), so `says-42 (steady-agent)` stays as it reads.
 */
export function mdText(value: string): string {
  return value
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[&<>@#\\`*_[\]|~]/g, (c) => ENTITIES[c] ?? `\\${c}`)
    .replace(/\]\(/g, ']\\(')
    .replace(/^([-+=])/, '\\$1')
    .replace(/^(\d+)([.)])/, '$1\\$2')
    .replace(/:\/\//g, '\\://')
    .replace(/\b(www)\./gi, '$1\\.');
}

export interface RunLink {
  /** What to show: the run id, else the name or path given. */
  label: string;
  url?: string;
}

/*
 * The doors of the Markdown functions: each takes a report, and checks that it is an object with
 * the fields the function reads (loosely: a report carries more), so `gateMarkdown(42)` is an
 * InvalidArgumentsError naming the argument, not a TypeError inside.
 */
const RunLinkShape = z.looseObject({ label: z.string(), url: z.string().optional() });
const RunsShape = z.looseObject({ baseline: RunLinkShape, candidate: RunLinkShape });
const list = z.array(z.unknown());
const record = z.looseObject({});
const GateReportShape = z.looseObject({
  passed: z.boolean(),
  failures: z.array(z.string()),
  regressions: list,
  improvements: list,
  noisy: list,
  new: list,
  removed: list,
  history: record,
  policy: record,
  summary: record,
  tolerance: z.number(),
  max_regressions: z.number(),
  match_note: z.string(),
});
const CompareReportShape = z.looseObject({ matched: list, unmatched: record, summary: record, threshold: z.number(), match_note: z.string() });
const SummaryReportShape = z.looseObject({ experiment: z.string(), summary: record });

function runRef(r: RunLink): string {
  const text = mdText(r.label);
  // A URL we built from the remote (src/sync/compare-link.ts); parentheses and spaces would end the link.
  return r.url && /^https:\/\/[^\s()<>]+$/.test(r.url) ? `[${text}](${r.url})` : text;
}

export const signed = (n: number, digits = 3) => (n > 0 ? '+' : n < 0 ? '−' : '±') + Math.abs(n).toFixed(digits);
export const fixed = (n: number) => n.toFixed(3);
/** A p-value as people read it: 4 decimals, or 1.2e-5 when smaller. */
export const pValue = (p: number) => (p < 0.0001 ? p.toExponential(1) : p.toFixed(4));
export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * Joins `head` and as many `rows` as fit under `limit` (with `tail` after them), then a line saying
 * how many rows were left out. Rows are whole lines: a table is never cut inside a row.
 */
/** A test's cell: its id, and its target when rows were matched per (test id, target). */
const testCell = (t: { test_id: string; target?: string }) => (t.target === undefined ? mdText(t.test_id) : `${mdText(t.test_id)} (${mdText(t.target)})`);

export function fitMarkdown(head: string[], rows: string[], tail: string[] = [], limit = MARKDOWN_LIMIT): string {
  const headText = head.join('\n');
  const tailText = tail.length > 0 ? `\n${tail.join('\n')}` : '';
  const note = (n: number) =>
    `\n\n_${plural(n, 'more row')} not shown: the comment limit is ${MARKDOWN_LIMIT.toLocaleString('en-US')} characters (\`--json\` has them all)._`;
  let size = headText.length + tailText.length + 1;
  let kept = 0;
  const reserve = note(rows.length).length;
  for (const r of rows) {
    const next = size + 1 + r.length;
    if (next + (kept + 1 < rows.length ? reserve : 0) > limit) break;
    size = next;
    kept++;
  }
  // A plain Error on purpose: an internal invariant (the caller sizes head and tail under the limit), a bug if reached.
  if (kept < rows.length && size + reserve > limit) throw new Error('markdown head and tail exceed the limit');
  const body = rows.slice(0, kept);
  const out = [headText, ...body].join('\n') + (kept < rows.length ? note(rows.length - kept) : '') + tailText;
  return out + '\n';
}

/** Sections of rows, each with its own table header, fitted as one list (the header goes with the first row that fits). */
function sectionRows(sections: { title: string; header: string[]; rows: string[] }[]): string[] {
  const out: string[] = [];
  for (const s of sections) {
    if (s.rows.length === 0) continue;
    out.push(`\n${s.title}\n\n${s.header.join('\n')}\n${s.rows[0]}`, ...s.rows.slice(1));
  }
  return out;
}

const TEST_TABLE = ['| Test | Baseline | Candidate | Δ | Why |', '|---|--:|--:|--:|---|'];

/** The Markdown of a gate's verdict (`gate --format markdown`): a PR comment or a job summary. */
export function gateMarkdown(r: GateReport, runs: { baseline: RunLink; candidate: RunLink }): string {
  parseArgs('gateMarkdown', { report: GateReportShape, runs: RunsShape }, [r, runs]);
  const s = r.summary;
  const title = r.passed
    ? `### ✅ Eval gate passed: ${s.improvements > 0 ? `${plural(s.improvements, 'test')} improved, ` : ''}${s.regressions > 0 ? `${plural(s.regressions, 'regression')} (allowed ${r.max_regressions})` : 'no regressions'}`
    : `### ❌ Eval gate failed: ${s.regressions > r.max_regressions ? plural(s.regressions, 'regression') : r.failures.length === 1 ? 'test set changed' : 'see below'}`;
  const head = [
    GATE_COMMENT_MARKER,
    title,
    '',
    `Baseline ${runRef(runs.baseline)} → candidate ${runRef(runs.candidate)}: ${plural(s.matched, 'test')} compared, mean score ${fixed(s.baseline_mean)} → ${fixed(s.candidate_mean)} (${signed(s.mean_delta)}), tolerance ${r.tolerance}.`,
  ];
  // Say which rule matched the rows when it matters: several targets, or rows matching by test id hid.
  if (r.match === 'test+target' || r.pooled !== null) head.push('', mdText(r.match_note));
  head.push('', r.history.applied ? mdText(r.history.note) : `_${mdText(r.history.note)}_`);
  if (r.failures.length > 0) head.push('', ...r.failures.map((f) => `- ${mdText(f)}`));
  const attempts = (a: GateReport['regressions'][number]['attempts']) =>
    a ? `${a.candidate.passed}/${a.candidate.total} vs ${a.history.passed}/${a.history.total} over ${a.history.runs} runs, p ${pValue(a.p)}` : '–';
  const why = (t: GateReport['regressions'][number]) =>
    t.reason === 'verdict' ? `${mdText(t.baseline_verdict ?? '?')} → ${mdText(t.candidate_verdict ?? '?')}` : t.reason;
  const name = (t: GateReport['regressions'][number]) => `${testCell(t)}${t.noisy ? ' (noisy)' : ''}`;
  const row = (t: GateReport['regressions'][number]) =>
    `| ${name(t)} | ${fixed(t.baseline)} | ${fixed(t.candidate)} | ${signed(t.delta)} | ${why(t)} |${r.history.applied ? ` ${attempts(t.attempts)} |` : ''}`;
  // With history, a column of attempts: the candidate's against the test's history, and the p-value.
  const table = r.history.applied ? [`${TEST_TABLE[0]} Attempts (candidate vs history) |`, `${TEST_TABLE[1]}---|`] : TEST_TABLE;
  const noisyRow = (t: GateReport['noisy'][number]) =>
    `| ${testCell(t)} | ${t.candidate ? `${t.candidate.passed}/${t.candidate.total}` : '–'} | ${t.history.passed}/${t.history.total} over ${t.history.runs} runs | ${t.p === null ? '–' : pValue(t.p)} | ${t.regressed ? 'regressed' : 'within its noise'} |`;
  const list = (entries: GateReport['removed']) => entries.map((t) => `| ${testCell(t)} |`);
  const rows = sectionRows([
    { title: `#### Regressions (${s.regressions})`, header: table, rows: r.regressions.map(row) },
    {
      title: `#### Removed tests (${s.removed_tests})${r.policy.removed_tests === 'fail' ? ' — fail the gate' : ''}`,
      header: ['| Test |', '|---|'],
      rows: list(r.removed),
    },
    {
      title: `#### New tests (${s.new_tests})${r.policy.new_tests === 'fail' ? ' — fail the gate' : ''}`,
      header: ['| Test |', '|---|'],
      rows: list(r.new),
    },
    {
      title: `#### Noisy tests (${s.noisy}): their history passes and fails; they fail only when the candidate is improbable even for them`,
      header: ['| Test | Candidate attempts | History | p | |', '|---|--:|---|--:|---|'],
      rows: r.noisy.map(noisyRow),
    },
    { title: `#### Improvements (${s.improvements})`, header: table, rows: r.improvements.map(row) },
  ]);
  return fitMarkdown(head, rows, [`\n<sub>${plural(s.unchanged, 'test')} within ±${r.tolerance} · agentv-results gate</sub>`]);
}

/** The gate's Markdown when there is no baseline yet (`--missing-baseline pass`): never an empty comment. */
export function gateNoBaselineMarkdown(baseline: string, candidate: RunLink, opts: { nowBaseline?: boolean } = {}): string {
  parseArgs(
    'gateNoBaselineMarkdown',
    { baseline: z.string(), candidate: RunLinkShape, options: z.strictObject({ nowBaseline: z.boolean().optional() }).optional() },
    [baseline, candidate, opts],
  );
  if (opts.nowBaseline)
    return [
      GATE_COMMENT_MARKER,
      '### ✅ Eval gate passed: this run is the first baseline',
      '',
      `${mdText(baseline)} named no published run, so there was nothing to compare ${runRef(candidate)} with: it passes, and the \`baseline\` tag now points to it. The next runs are gated on it.`,
      '',
    ].join('\n');
  return [
    GATE_COMMENT_MARKER,
    '### ✅ Eval gate passed: no baseline yet',
    '',
    `No baseline yet: ${mdText(baseline)} names no published run, so there is nothing to compare ${runRef(candidate)} with. This run becomes the baseline when it lands on main.`,
    '',
  ].join('\n');
}

/** The gate's Markdown when it could not decide (bad input, git, a bug): says so, with the error and its exit code. */
export function gateErrorMarkdown(message: string, exitCode: number, bug: boolean): string {
  parseArgs('gateErrorMarkdown', { message: z.string(), exitCode: z.number(), bug: z.boolean() }, [message, exitCode, bug]);
  const what = bug
    ? 'agentv-results hit an unexpected error (a bug in the tool, not a regression of the agent): please report it.'
    : exitCode === 3
      ? 'a git or remote failure: retrying the job may help.'
      : 'bad input: a run or flag it could not use.';
  return [
    GATE_COMMENT_MARKER,
    `### ⚠️ Eval gate could not decide (exit ${exitCode})`,
    '',
    `The gate compared nothing: ${what}`,
    '',
    `> ${mdText(message.split('\n')[0]!.slice(0, 2000))}`,
    '',
  ].join('\n');
}

/** The Markdown of a comparison (`compare --format markdown`): a PR comment or a job summary. */
export function compareMarkdown(r: CompareReport, runs: { baseline: RunLink; candidate: RunLink }): string {
  parseArgs('compareMarkdown', { report: CompareReportShape, runs: RunsShape }, [r, runs]);
  const s = r.summary;
  const head = [
    `### ${r.regression ? '❌' : '✅'} compare: mean delta ${signed(s.mean_delta)} (${s.wins} wins, ${s.losses} losses, ${s.ties} ties)`,
    '',
    `Baseline ${runRef(runs.baseline)} → candidate ${runRef(runs.candidate)}: ${plural(s.matched, 'test')} matched; win when Δ ≥ ${r.threshold}, loss when Δ ≤ −${r.threshold}.`,
  ];
  if (r.match === 'test+target' || r.pooled !== null) head.push('', `${r.pooled !== null ? '⚠️ ' : ''}${mdText(r.match_note)}`);
  const order = { loss: 0, win: 1, tie: 2 } as const;
  const sorted = [...r.matched].sort((a, b) => order[a.outcome] - order[b.outcome] || a.delta - b.delta);
  const rows = sectionRows([
    {
      title: '',
      header: ['| Test | Baseline | Candidate | Δ | Outcome |', '|---|--:|--:|--:|---|'],
      rows: sorted.map((t) => `| ${testCell(t)} | ${fixed(t.score1)} | ${fixed(t.score2)} | ${signed(t.delta)} | ${t.outcome} |`),
    },
  ]);
  const only = [
    r.unmatched.baseline_only.length > 0 ? `\nOnly in the baseline: ${plural(r.unmatched.baseline_only.length, 'test')}.` : '',
    r.unmatched.candidate_only.length > 0 ? `\nOnly in the candidate: ${plural(r.unmatched.candidate_only.length, 'test')}.` : '',
  ].filter((l) => l !== '');
  return fitMarkdown(head, rows, only);
}

/** The Markdown of a run's summary (`summary --format markdown`). */
export function summaryMarkdown(report: { experiment: string; summary: Summary; attempts?: RunAttemptStats | null }, run: RunLink): string {
  parseArgs('summaryMarkdown', { report: SummaryReportShape, run: RunLinkShape }, [report, run]);
  const { run_summary: per, total, passed, pass_rate: rate } = report.summary;
  const a = report.attempts ?? null;
  const head = [
    `### Eval run ${runRef(run)}: ${passed}/${total} passed (${(rate * 100).toFixed(1)}%)`,
    '',
    `Experiment ${mdText(report.experiment)}.${a ? ` Repeated attempts: ${a.passed_samples}/${a.total_samples} passed, mean attempt success ${(a.mean_pass_rate * 100).toFixed(1)}%.` : ''}`,
    '',
    `| Target | Tests | Passed | Failed | Pass rate | Mean score |${a ? ' Attempts passed | Mean attempt success |' : ''}`,
    `|---|--:|--:|--:|--:|--:|${a ? '--:|--:|' : ''}`,
  ];
  // The weakest target first. A target's pass rate is AgentV's {mean, stddev} or an older number.
  const targetRate = (v: (typeof per)[string]) => targetPassRate(v.pass_rate) ?? 0;
  const attemptCells = (t: string) => {
    const x = a?.targets[t];
    return a ? (x ? ` ${x.passed_samples}/${x.total_samples} | ${(x.mean_pass_rate * 100).toFixed(1)}% |` : ' — | — |') : '';
  };
  const rows = Object.entries(per)
    .sort(([, a], [, b]) => targetRate(a) - targetRate(b) || a.mean_score - b.mean_score)
    .map(
      ([t, v]) =>
        `| ${mdText(t)} | ${v.total} | ${v.passed} | ${v.failed + v.errors} | ${(targetRate(v) * 100).toFixed(1)}% | ${fixed(v.mean_score)} |${attemptCells(t)}`,
    );
  // Tests whose attempts disagree (some passed, some not), least reliable first.
  const mixed = (a?.tests ?? [])
    .filter((t) => t.passed_samples > 0 && t.passed_samples < t.total_samples)
    .sort((x, y) => x.pass_rate - y.pass_rate)
    // Our own figures (digits, %, @, ^): nothing in them Markdown reads as markup, so they are not escaped.
    .map((t) => `| ${testCell(t)} | ${formatAttemptRate(t.passed_samples, t.total_samples)} | ${formatPassK(t)} |`);
  const sections = sectionRows([
    { title: '**Tests that passed only some attempts**', header: ['| Test | Attempts | pass@k, pass^k |', '|---|---|---|'], rows: mixed },
  ]);
  return fitMarkdown(head, [...rows, ...sections]);
}
