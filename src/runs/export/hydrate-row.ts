/**
 * A row read back from the sidecars it names. A workspace's index row (ours, AgentV 5's with its
 * `samples[]`, 4.42's, the older layouts') points at its grading, timing, answer and transcript
 * files instead of carrying them; `hydrateIndexRow` reads them into a full result row, so
 * derivation has one input shape whichever layout wrote the run. `resolveRowFiles` does the same
 * for a results file whose rows name files by relative path. Every path is judged before it is
 * read (inside the run, no link out, no pipe or device).
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { ROW_PATH_FIELDS } from '../../model/path-segments.js';
import { componentLabel, componentLeaves } from '../../model/grading.js';
import { transcriptMessages } from '../../model/transcript.js';
import { SourceError } from '../../errors/read-errors.js';
import { checkRunPath, safeRelativePath, unsafeRowPath } from '../read/run-files.js';
import { readRegularText } from '../../util/safe-open.js';
import { isJsonObject } from '../../model/json-object.js';

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/**
 * A transcript sidecar as one value: a JSON document as is, or AgentV 4.42's `transcript.jsonl`
 * (one `agentv.transcript.v1` message per line) as `{messages, targets}` in `message_index` order.
 */
function parseTranscript(rel: string, text: string): unknown {
  if (!/\.jsonl$/i.test(rel)) return JSON.parse(text);
  const lines: Record<string, unknown>[] = [];
  const targets = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const value: unknown = JSON.parse(line);
    if (!isJsonObject(value)) continue;
    if (typeof value.target === 'string') targets.add(value.target);
    lines.push(value);
  }
  const order = (m: Record<string, unknown>, i: number) => (typeof m.message_index === 'number' ? m.message_index : i);
  const messages = lines
    .map((m, i) => [order(m, i), i, m] as const)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([, , m]) => {
      const out: Record<string, unknown> = {
        role: str(m.role) ?? 'assistant',
        content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''),
      };
      if (Array.isArray(m.tool_calls)) out.tool_calls = m.tool_calls;
      return out;
    });
  return { messages, targets: [...targets] };
}

async function readSidecar(dir: string, rel: unknown, asJson: boolean | 'transcript'): Promise<unknown> {
  if (typeof rel !== 'string') return undefined;
  // AgentV writes some paths as `./x`; they are still relative to the run directory.
  const safe = safeRelativePath(rel.replace(/^(\.\/)+/, ''));
  if (safe === null) throw new SourceError(`sidecar path ${JSON.stringify(rel)} escapes the run directory`);
  // Never read through a link leading out of the run, nor a pipe or device.
  const at = await checkRunPath(dir, safe);
  if (at.kind === 'bad') throw new SourceError(`refusing to read a sidecar: ${at.message}`);
  try {
    const text = await readRegularText(join(dir, safe), { kind: 'run-file' });
    return asJson === 'transcript' ? parseTranscript(safe, text) : asJson ? JSON.parse(text) : text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw new SourceError(`${rel}: ${(err as Error).message}`);
  }
}

function samplePathOf(s: unknown): string | undefined {
  if (!isJsonObject(s)) return undefined;
  return str(s.sample_path) ?? str(s.attempt_path) ?? str(s.run_path) ?? undefined;
}

/**
 * A row's attempts as written, each with its own answer and transcript read from its folder
 * (AgentV 5's `<test>/sample-K/outputs/answer.md` and `transcript.json`) as `output` messages:
 * the bundle writes them beside the row (runs/export/row-files.ts). The folder path itself is
 * AgentV's layout, not the bundle's, so it is dropped once read.
 */
async function attemptsWithOutputs(dir: string, resultDir: string | null, list: unknown[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const s of list) {
    if (!isJsonObject(s)) {
      out.push(s);
      continue;
    }
    const copy: Record<string, unknown> = { ...s };
    const rel = samplePathOf(s);
    if (resultDir && rel) {
      const transcript = await readSidecar(dir, `${resultDir}/${rel}/transcript.json`, 'transcript');
      const messages = isJsonObject(transcript) ? transcriptMessages(transcript) : undefined;
      if (messages && messages.length > 0 && copy.output === undefined) copy.output = messages;
      else if (copy.output === undefined) {
        const answer = await readSidecar(dir, `${resultDir}/${rel}/outputs/answer.md`, false);
        if (typeof answer === 'string') copy.output = answer;
      }
      delete copy.sample_path;
      delete copy.attempt_path;
      delete copy.run_path;
    }
    out.push(copy);
  }
  return out;
}

/** Per-sample folder lists of the layouts we read: AgentV 5 `samples`, older `attempts`/`trials`. */
function samplePaths(row: Record<string, unknown>): string[] {
  const list = [row.samples, row.attempts, row.trials].find(Array.isArray) as unknown[] | undefined;
  const out: string[] = [];
  for (const s of list ?? []) {
    if (!isJsonObject(s)) continue;
    const p = str(s.sample_path) ?? str(s.attempt_path) ?? str(s.run_path);
    if (p) out.push(p);
  }
  return out;
}

/**
 * True when a workspace row is an index row that points at sidecars rather than a full result:
 * ours and older AgentV docs' (`grading_path`, `result_dir`), AgentV 5 (`summary_path`, `samples[]`),
 * Era-A (`trials[].run_path`) and pipeline bench (`graders[]`, a `pass` verdict).
 */
export function isIndexRow(row: Record<string, unknown>): boolean {
  return (
    typeof row.grading_path === 'string' ||
    typeof row.result_dir === 'string' ||
    typeof row.summary_path === 'string' ||
    Array.isArray(row.graders) ||
    samplePaths(row).length > 0
  );
}

/** Paths, ids and bookkeeping of the layouts we read that must not leak into a re-derived row. */
const INDEX_ONLY_KEYS = [
  ...ROW_PATH_FIELDS,
  'projection_identity',
  'artifact_pointers',
  'assertions_summary',
  'run_id',
  'experiment',
  'total_tokens',
  'total_tool_calls',
  'errors_encountered',
  'export_metadata',
  'graders',
  'pass',
  'samples',
  'trials',
];

/**
 * The sample AgentV built the row from: the first best-scoring attempt (its orchestrator keeps that
 * attempt's answer, grading and transcript as the test's), or the first when none has a score.
 */
function bestSampleIndex(list: unknown[]): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  list.forEach((s, i) => {
    const score = isJsonObject(s) && typeof s.score === 'number' ? s.score : Number.NEGATIVE_INFINITY;
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  return best;
}

/** One AgentV grading component -> one grader result in the shape of a result row's `scores[]`. */
function componentToScore(c: Record<string, unknown>): Record<string, unknown> {
  const a = isJsonObject(c.assertion) ? c.assertion : {};
  const out: Record<string, unknown> = {
    name: str(a.name) ?? str(a.id) ?? str(c.name) ?? componentLabel(c),
    type: str(a.type) ?? str(c.type) ?? 'unknown',
    score: typeof c.score === 'number' ? c.score : c.pass === true ? 1 : 0,
    verdict: c.pass === true ? 'pass' : 'fail',
    // Its leaves, or itself as the one leaf when it has none.
    assertions: componentLeaves([c]),
  };
  if (typeof a.weight === 'number') out.weight = a.weight;
  if (str(c.reason)) out.reasoning = c.reason;
  return out;
}

/** An inline AgentV score (`{name, type, pass, score, reason}`) keeps its fields; its verdict and reasoning get our names. */
function inlineScore(s: unknown, component: Record<string, unknown> | undefined): unknown {
  if (!isJsonObject(s)) return s;
  const out: Record<string, unknown> = { ...s };
  if (out.verdict === undefined && typeof s.pass === 'boolean') out.verdict = s.pass ? 'pass' : 'fail';
  if (out.reasoning === undefined && str(s.reason)) out.reasoning = s.reason;
  if (!Array.isArray(out.assertions) && component) {
    out.assertions = componentLeaves([component]);
  }
  // An assert-set's members: AgentV's component lists them first, in order, then the set's own leaves.
  if (Array.isArray(s.scores)) {
    const parts = component && Array.isArray(component.component_results) ? component.component_results.filter(isJsonObject) : [];
    out.scores = s.scores.map((n, i) => inlineScore(n, memberComponent(n, parts[i])));
  }
  return out;
}

/** A member's own component: the one at its place, when that names no other grader. */
function memberComponent(member: unknown, c: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!c || !isJsonObject(member)) return undefined;
  const named = isJsonObject(c.assertion) ? str(c.assertion.name) : undefined;
  return named === undefined || str(member.name) === undefined || named === member.name ? c : undefined;
}

/**
 * Rebuild a result row from an index row and its sidecars. Pointer-only rows (payloads on the
 * artifacts branch, not present locally) hydrate from whatever is present.
 *
 * Facts the row carries inline (AgentV 5 rows are complete results) win over sidecars; sidecars
 * fill in what the row lacks. A grading document's own verdict (`pass`) is the test's verdict
 * when there is one: AgentV and pipeline bench decide pass/fail there, not by our threshold.
 */
export async function hydrateIndexRow(dir: string, row: Record<string, unknown>): Promise<Record<string, unknown>> {
  // Every path the row names, read or not: a run naming a file outside itself is refused whole.
  // (AgentV writes some as `./x`: still relative to the run directory.)
  const unsafe = unsafeRowPath(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/^(\.\/)+/, '') : v])));
  if (unsafe) throw new SourceError(`refusing a row whose ${unsafe}`);
  const out: Record<string, unknown> = { ...row };
  for (const key of INDEX_ONLY_KEYS) delete out[key];
  const resultDir = str(row.result_dir);
  // Every attempt is kept (model/attempts.ts reads them); the test's own files come from the attempt
  // AgentV built the row from, not the first one.
  const attemptKey = (['samples', 'trials', 'attempts'] as const).find((k) => Array.isArray(row[k]));
  const list = attemptKey ? (row[attemptKey] as unknown[]) : [];
  const repeated = list.length > 1 || isJsonObject(row.aggregation);
  const bestSample = list.length > 0 ? samplePathOf(list[bestSampleIndex(list)]) : undefined;
  const inSample = (name: string): string | undefined => (resultDir && bestSample ? `${resultDir}/${bestSample}/${name}` : undefined);
  if (attemptKey && repeated) out[attemptKey] = await attemptsWithOutputs(dir, resultDir, list);

  const transcript = await readSidecar(dir, row.transcript_path ?? inSample('transcript.json'), 'transcript');
  // AgentV 4.42 keeps one `<suite>/<test>/` folder per test whatever the target, so with several
  // targets the folder holds the last one's files: its transcript names that target. A row of
  // another target then reads nothing from the folder; its own line carries its scores.
  const foreign =
    isJsonObject(transcript) &&
    Array.isArray(transcript.targets) &&
    transcript.targets.length > 0 &&
    typeof row.target === 'string' &&
    !transcript.targets.includes(row.target);
  const sidecar = (rel: unknown, asJson: boolean) => (foreign ? Promise.resolve(undefined) : readSidecar(dir, rel, asJson));

  const grading = await sidecar(row.grading_path ?? inSample('grading.json') ?? (resultDir ? `${resultDir}/grading.json` : undefined), true);
  // Our bundles keep the full grader results and expectations in result.json.
  const result = await sidecar(row.result_path, true);
  const ours = isJsonObject(result) && Array.isArray(result.scores) ? result : null;
  const inlineScores = Array.isArray(row.scores) && row.scores.length > 0 ? row.scores : null;
  if (isJsonObject(grading)) {
    const components = Array.isArray(grading.component_results) ? grading.component_results.filter(isJsonObject) : null;
    if (ours && Array.isArray(ours.expectations)) out.assertions = ours.expectations;
    else if (Array.isArray(grading.expectations)) out.assertions = grading.expectations;
    else if (Array.isArray(grading.assertions) && grading.assertions.every((a) => isJsonObject(a) && typeof a.text === 'string'))
      out.assertions = grading.assertions;
    // Our own result.json (or an older grading.json) holds the full grader results (the index row only their summary).
    if (ours) out.scores = ours.scores;
    else if (Array.isArray(grading.evaluators)) out.scores = grading.evaluators;
    else if (inlineScores) {
      // Same graders, same order (AgentV writes both from one list): each score gets its component's assertions.
      const byIndex = components && components.length === inlineScores.length;
      out.scores = inlineScores.map((s, i) => inlineScore(s, byIndex ? components![i] : undefined));
    } else if (Array.isArray(grading.graders)) out.scores = grading.graders;
    else if (components) out.scores = components.map(componentToScore);
    if (typeof grading.pass === 'boolean' && out.verdict === undefined) out.verdict = grading.pass ? 'pass' : 'fail';
  } else if (inlineScores) {
    out.scores = inlineScores.map((s) => inlineScore(s, undefined));
  } else if (Array.isArray(row.graders)) {
    out.scores = row.graders.map((g) => inlineScore(g, undefined));
  }
  if (typeof row.pass === 'boolean' && out.verdict === undefined) out.verdict = row.pass ? 'pass' : 'fail';

  const messages = !foreign && isJsonObject(transcript) ? transcriptMessages(transcript) : undefined;
  if (messages && out.input === undefined && out.output === undefined) {
    const firstAssistant = messages.findIndex((m) => m.role !== 'user');
    const split = firstAssistant === -1 ? messages.length : firstAssistant;
    if (split > 0) out.input = messages.slice(0, split);
    if (split < messages.length) out.output = messages.slice(split);
  }
  if (out.output === undefined) {
    const answer = await sidecar(row.answer_path ?? row.output_path ?? row.response_path ?? inSample('outputs/answer.md'), false);
    if (typeof answer === 'string') out.output = answer;
  }
  const diff = await sidecar(row.file_changes_path, false);
  if (typeof diff === 'string') out.file_changes = diff;
  const timing = await sidecar(row.timing_path, true);
  if (isJsonObject(timing)) {
    if (typeof timing.duration_ms === 'number' && out.duration_ms == null) out.duration_ms = timing.duration_ms;
    if (typeof timing.cost_usd === 'number' && out.cost_usd == null) out.cost_usd = timing.cost_usd;
    if (timing.usage_source !== 'unavailable' && isJsonObject(timing.token_usage)) {
      out.token_usage = { ...timing.token_usage, total_tokens: timing.total_tokens };
    }
    if (typeof timing.executor_start === 'string') out.start_time = timing.executor_start;
    if (typeof timing.executor_end === 'string') out.end_time = timing.executor_end;
  }
  // AgentV's metrics.json (agentv.metrics.v2) carries tokens, cost and tool counts.
  const metrics = await sidecar(row.metrics_path ?? inSample('metrics.json'), true);
  if (isJsonObject(metrics) && String(metrics.schema_version ?? '').startsWith('agentv.metrics.v2')) {
    const tokens = isJsonObject(metrics.tokens) ? metrics.tokens : null;
    if (tokens && tokens.source !== 'unavailable' && out.token_usage == null) {
      out.token_usage = { input: tokens.input, output: tokens.output, total_tokens: tokens.total };
    }
    const cost = isJsonObject(metrics.cost) ? metrics.cost : null;
    if (cost && typeof cost.usd === 'number' && out.cost_usd == null) out.cost_usd = cost.usd;
    const counts = isJsonObject(metrics.tool_call_counts) ? metrics.tool_call_counts : null;
    if (counts && Object.keys(counts).length > 0) {
      const trace = isJsonObject(out.trace) ? { ...out.trace } : {};
      if (trace.tool_calls_by_name === undefined && trace.toolCalls === undefined) trace.tool_calls_by_name = counts;
      out.trace = trace;
    }
  }
  for (const [k, v] of Object.entries(out)) if (v === null) delete out[k];
  return out;
}

/** The fields of a results row that name a file of its run (read against `pathBase`), by kind. */
export const RESULT_FILE_FIELDS = [
  'answer_path',
  'output_path',
  'response_path',
  'transcript_path',
  'grading_path',
  'result_path',
  'timing_path',
  'metrics_path',
  'file_changes_path',
] as const;

/** What a results row gains from the files it names, and the fields whose file could not be read. */
export interface ResolvedRowFiles {
  row: Record<string, unknown>;
  unresolved: string[];
}

/**
 * A results-file row whose fields name files by relative path: each file found under `base` is
 * read as a run's index row would be (hydrateIndexRow: the answer, the transcript's messages, the
 * grading's assertions and scores, timing and metrics); what the row carries inline wins. A field
 * whose file is not there (or whose path is absolute or leads out of `base`) is named in
 * `unresolved`, never read.
 */
export async function resolveRowFiles(base: string, row: Record<string, unknown>): Promise<ResolvedRowFiles> {
  const unresolved: string[] = [];
  const found: Record<string, string> = {};
  let realBase: string | undefined;
  for (const field of RESULT_FILE_FIELDS) {
    const v = row[field];
    if (typeof v !== 'string' || v === '') continue;
    const safe = safeRelativePath(v.replace(/^(\.\/)+/, ''));
    // The check says absent, out of base, or not a regular file: no second stat of the same path.
    if (safe !== null && realBase === undefined) realBase = await realpath(base);
    const at = safe === null ? null : await checkRunPath(base, safe, realBase);
    if (safe !== null && at?.kind === 'ok' && !at.isDir) found[field] = safe;
    else unresolved.push(field);
  }
  if (Object.keys(found).length === 0) return { row, unresolved };
  const bare: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!(RESULT_FILE_FIELDS as readonly string[]).includes(k)) bare[k] = v;
  const hydrated = await hydrateIndexRow(base, { ...bare, ...found });
  const out: Record<string, unknown> = { ...row };
  for (const k of [
    'output',
    'input',
    'assertions',
    'scores',
    'verdict',
    'file_changes',
    'duration_ms',
    'cost_usd',
    'token_usage',
    'start_time',
    'end_time',
    'trace',
  ])
    if (out[k] === undefined && hydrated[k] !== undefined) out[k] = hydrated[k];
  return { row: out, unresolved };
}
