/**
 * Run workspace -> report data. Reads each row's sidecars (result.json, grading.json,
 * transcript.json, outputs/answer.md, outputs/file_changes.diff) through the run reader, which keeps every path
 * inside the run directory, and keeps only what the page shows, clipped (text.ts).
 *
 * Sidecars are data written by us but possibly edited or hand-made, so every field is read
 * defensively: a wrong type is treated as absent, never trusted.
 */
import { testAssertions, type GradingExpectation } from '../model/grading.js';
import type { IndexRow } from '../model/artifacts.js';
import { transcriptMessages } from '../model/transcript.js';
import { readSidecarJson, readSidecarText, type LoadedRun } from '../runs/read/run-reader.js';
import { DEFAULT_FIELD_CHARS, DEFAULT_TEST_CHARS, oneLine, PROMPT_CHARS, stringify, TextBudget } from './text.js';
import type { ReportAssertion, ReportAttempts, ReportData, ReportDetail, ReportGrader, ReportMessage, ReportTest } from './types.js';
import { mapLimit } from '../util/map-limit.js';
import { attemptsDetail } from '../runs/attempt-details.js';
import { runAttemptStats } from '../model/attempt-stats.js';

export interface ProjectionOptions {
  fieldChars?: number;
  testChars?: number;
  /** Sidecars read in parallel; a few dozen keeps the disk busy without exhausting file handles. */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface Projection {
  data: ReportData;
  details: ReportDetail[];
  /** Fields clipped over all tests. */
  truncated: number;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function graderOf(value: unknown, budget: TextBudget, depth: number): ReportGrader | null {
  if (!isObject(value)) return null;
  // Composite graders nest; real ones are two or three levels deep, a cap keeps hostile input bounded.
  const children =
    depth < 4
      ? arr(value.scores)
          .map((c) => graderOf(c, budget, depth + 1))
          .filter((g): g is ReportGrader => g !== null)
      : [];
  return {
    name: str(value.name) ?? 'unnamed',
    type: str(value.type) ?? 'unknown',
    score: num(value.score),
    verdict: str(value.verdict),
    weight: num(value.weight),
    reasoning: budget.clipOrNull(str(value.reasoning)),
    children,
  };
}

function assertionsOf(own: GradingExpectation[], budget: TextBudget): ReportAssertion[] {
  return own.map((a) => ({ text: budget.clip(a.text), passed: a.passed, evidence: budget.clip(a.evidence) }));
}

/** Our grading facts outside AgentV's tree live in its metadata; older bundles had them at the top. */
function gradingExtra(grading: Json | null, key: string): unknown {
  if (!grading) return undefined;
  if (grading[key] !== undefined) return grading[key];
  return isObject(grading.metadata) ? grading.metadata[key] : undefined;
}

/** The messages of `list` from index `from` within the budget; `next`: the index of the first one left out (null: none). */
function messagesOf(list: Json[], budget: TextBudget, from = 0): { messages: ReportMessage[]; omitted: number; next: number | null } {
  const messages: ReportMessage[] = [];
  let omitted = 0;
  let next: number | null = null;
  for (let i = from; i < list.length; i++) {
    const m = list[i];
    if (!isObject(m)) continue;
    if (budget.exhausted) {
      next ??= i;
      omitted++;
      continue;
    }
    const tools = arr(m.tool_calls)
      .filter(isObject)
      .map((c) => ({
        name: str(c.tool_name) ?? str(c.name) ?? 'unknown',
        input: budget.clipOrNull(stringify(c.input)),
        output: budget.clipOrNull(stringify(c.output)),
        duration_ms: num(c.duration_ms),
      }));
    messages.push({ role: str(m.role) ?? 'unknown', content: budget.clip(str(m.content) ?? ''), tools });
  }
  return { messages, omitted, next };
}

/** The criteria/prompt column: the first user message, else what the assertions check. */
function promptOf(transcript: Json[], own: GradingExpectation[]): Pick<ReportTest, 'prompt' | 'prompt_kind'> {
  for (const m of transcript) {
    if (isObject(m) && m.role === 'user' && typeof m.content === 'string' && m.content.trim() !== '') {
      return { prompt: oneLine(m.content, PROMPT_CHARS), prompt_kind: 'prompt' };
    }
  }
  const texts = own.map((a) => a.text).filter((t) => !!t);
  if (texts.length > 0) return { prompt: oneLine(texts.join('; '), PROMPT_CHARS), prompt_kind: 'criteria' };
  return { prompt: '', prompt_kind: 'none' };
}

function toolCountsOf(grading: Json | null): Record<string, number> {
  const extra = gradingExtra(grading, 'execution_metrics');
  const metrics = isObject(extra) ? extra : null;
  const counts: Record<string, number> = {};
  if (metrics && isObject(metrics.tool_calls)) {
    for (const [name, n] of Object.entries(metrics.tool_calls)) if (typeof n === 'number') counts[name] = n;
  }
  return counts;
}

async function projectRow(run: LoadedRun, row: IndexRow, opts: ProjectionOptions & { messagesFrom?: number; answerInline?: boolean }) {
  const [grading, transcript, answerText, diffText, result] = await Promise.all([
    readSidecarJson<Json>(run, row, 'grading'),
    readSidecarJson<Json>(run, row, 'transcript'),
    readSidecarText(run, row, 'answer'),
    readSidecarText(run, row, 'file_changes'),
    readSidecarJson<Json>(run, row, 'result'),
  ]);
  const gradingDoc = isObject(grading) ? grading : null;
  // Either schema of transcript.json: AgentV's normalized turns (written now) or our earlier messages.
  const rawMessages = transcriptMessages(transcript);
  const budget = new TextBudget(opts.fieldChars, opts.testChars);

  const error = budget.clipOrNull(row.error ?? null);
  // The test's own assertions, as `failures` lists them (whether or not a grader owns each); the
  // graders, by name with their scores, are listed apart from them below.
  const own = testAssertions(result, gradingDoc) ?? [];
  const assertions = assertionsOf(own, budget);
  // Without grading.json the index row still knows the graders' names, types and scores.
  // Full grader results: result.json's scores (our bundles), an older grading.json's evaluators.
  const graderSource =
    isObject(result) && Array.isArray(result.scores) ? result.scores : gradingDoc && Array.isArray(gradingDoc.evaluators) ? gradingDoc.evaluators : row.scores;
  const graders = graderSource.map((g) => graderOf(g, budget, 0)).filter((g): g is ReportGrader => g !== null);
  const last = rawMessages[rawMessages.length - 1];
  const answerInTranscript = answerText !== null && isObject(last) && last.role === 'assistant' && last.content === answerText;
  // The report shows an answer that is the transcript's last message once (inside the transcript);
  // a drill-down of one test (answerInline) shows it on its own too, from the transcript when no
  // answer file was written.
  const lastAssistant = [...rawMessages].reverse().find((m) => isObject(m) && m.role === 'assistant' && typeof m.content === 'string' && m.content !== '');
  const inline = opts.answerInline ? (answerText ?? (isObject(lastAssistant) ? (lastAssistant.content as string) : null)) : null;
  const answer = inline !== null ? budget.clip(inline) : answerText !== null && !answerInTranscript ? budget.clip(answerText) : null;
  const diff = budget.clipOrNull(diffText);
  const { messages, omitted, next } = messagesOf(rawMessages, budget, opts.messagesFrom);
  const workspaceChanges = gradingExtra(gradingDoc, 'workspace_changes');
  const changes = isObject(workspaceChanges) ? str(workspaceChanges.diff_summary) : null;

  const passed = assertions.length > 0 ? assertions.filter((a) => a.passed).length : row.assertions_summary.passed;
  const total = assertions.length > 0 ? assertions.length : row.assertions_summary.total;
  const detail: ReportDetail = {
    execution_status: row.execution_status,
    error,
    assertions,
    graders,
    tool_calls: toolCountsOf(gradingDoc),
    changes: changes ? changes : null,
    messages,
    omitted_messages: omitted,
    answer,
    answer_in_transcript: answerInTranscript,
    diff,
  };
  const attempts = attemptsOfRow(run, row, budget);
  if (attempts) detail.attempts = attempts;
  return {
    detail,
    prompt: promptOf(rawMessages, own),
    assertions: [passed, total] as [number, number],
    truncated: budget.truncated,
    nextMessage: next,
    messageCount: rawMessages.length,
  };
}

/** A repeated row's attempts (runs/attempt-details.ts), their answers and errors clipped like the rest. */
function attemptsOfRow(run: LoadedRun, row: IndexRow, budget: TextBudget): ReportAttempts | null {
  const a = attemptsDetail(run, row);
  if (!a) return null;
  return {
    ...a,
    list: a.list.map((x) => ({
      index: x.index,
      verdict: x.verdict,
      score: x.score,
      error: budget.clipOrNull(x.error),
      answer: budget.clipOrNull(x.answer),
      transcript: x.transcript,
    })),
  };
}

/**
 * One row's detail (assertions, graders, transcript, answer, diff), clipped like the report's: the
 * Dashboard's drill-down. The transcript is paged: `messagesFrom` is the index of its first message,
 * `nextMessage` the index the next page starts at (null when every message is shown). With
 * `answerInline`, `answer` holds the answer text even when it is also the transcript's last message
 * (and the last assistant message when the test wrote no answer file).
 */
export async function projectTest(
  run: LoadedRun,
  row: IndexRow,
  opts: ProjectionOptions & { messagesFrom?: number; answerInline?: boolean } = {},
): Promise<{ detail: ReportDetail; truncated: number; nextMessage: number | null; messageCount: number }> {
  const p = await projectRow(run, row, opts);
  return { detail: p.detail, truncated: p.truncated, nextMessage: p.nextMessage, messageCount: p.messageCount };
}

export async function projectRun(run: LoadedRun, opts: ProjectionOptions = {}): Promise<Projection> {
  const groupIndex = new Map<string, number>();
  const targetIndex = new Map<string, number>();
  const data: ReportData = {
    version: 1,
    run: {
      run_id: run.runId,
      experiment: run.experiment,
      timestamp: typeof run.summary?.timestamp === 'string' ? run.summary.timestamp : (run.rows[0]?.timestamp ?? null),
    },
    limits: { field_chars: opts.fieldChars ?? DEFAULT_FIELD_CHARS, test_chars: opts.testChars ?? DEFAULT_TEST_CHARS, prompt_chars: PROMPT_CHARS },
    groups: [],
    targets: [],
    tests: [],
  };

  let done = 0;
  let truncated = 0;
  const projected = await mapLimit(run.rows, opts.concurrency ?? 32, async (row) => {
    const p = await projectRow(run, row, opts);
    opts.onProgress?.(++done, run.rows.length);
    return p;
  });
  const details: ReportDetail[] = [];
  run.rows.forEach((row, i) => {
    const p = projected[i]!;
    // A suite can come from several eval files (and an eval file names its suite): group by both.
    const groupKey = JSON.stringify([row.suite, row.eval_path ?? null]);
    let group = groupIndex.get(groupKey);
    if (group === undefined) {
      group = data.groups.length;
      groupIndex.set(groupKey, group);
      data.groups.push({ suite: row.suite, eval_path: row.eval_path ?? null });
    }
    let target = targetIndex.get(row.target);
    if (target === undefined) {
      target = data.targets.length;
      targetIndex.set(row.target, target);
      data.targets.push(row.target);
    }
    data.tests.push({
      id: row.test_id,
      group,
      target,
      attempt: row.attempt,
      variant: row.variant,
      verdict: row.verdict,
      score: row.score,
      duration_ms: row.duration_ms,
      tokens: row.total_tokens,
      cost_usd: row.cost_usd,
      ...p.prompt,
      assertions: p.assertions,
      ...(p.detail.attempts ? { attempts: [p.detail.attempts.passed_samples, p.detail.attempts.total_samples] as [number, number] } : {}),
    });
    details.push(p.detail);
    truncated += p.truncated;
  });
  const attempts = runAttemptStats(run.rows as unknown as Record<string, unknown>[]);
  if (attempts) {
    const { tests: _tests, ...totals } = attempts;
    data.attempts = totals;
  }
  return { data, details, truncated };
}
