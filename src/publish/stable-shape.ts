/**
 * A run of ours (our bundle: `index.jsonl`, `<…>/attempt-N/{result,grading,timing,…}.json`) in the
 * files AgentV 4.42 writes for a run, so a team on 4.42 opens a run we published as one of its
 * own: its Dashboard loads it (it answered HTTP 500 on our bundle's grading.json), its `results
 * validate` finds no error and its `results summary` reads it. Per test, under
 * `<suite>/<test_id>/` as 4.42 names it:
 *
 * - `grading.json`: its `assertions` array (text, passed, evidence), `summary` (passed, failed,
 *   total, pass_rate to three places), `execution_metrics` and `graders` (name, type, score,
 *   reasoning, weight, verdict, assertions);
 * - `timing.json`; `input.md` when the row has input; `outputs/answer.md` and
 *   `outputs/response.md` when it has an answer; `outputs/transcript.jsonl` (one message a line,
 *   schema `agentv.transcript.v1`) when it has a transcript;
 * - the `index.jsonl` line with 4.42's fields (`artifact_dir`, `grading_path`, `timing_path`,
 *   `input_path`, `output_path`, `answer_path`, `response_path`, `transcript_path`, scores with
 *   their `verdict` and `assertions`, an assert-set's members in its `scores` at every depth);
 *
 * and the run's `benchmark.json` and `timing.json` (ours: 4.42's Dashboard lists a run by them).
 * 4.42 gives every target and attempt of a test the same directory (the last one written wins);
 * we lose none: a second one gets `--<target>`, then `--attempt-<n>`, appended.
 */
import { join } from 'node:path';
import { expectationList, testAssertions, type GradingExpectation } from '../model/grading.js';
import { sanitizeSegment } from '../model/path-segments.js';
import { safeRelativePath } from '../runs/read/run-files.js';
import { transcriptMessages } from '../model/transcript.js';
import { InputError } from '../errors/input-error.js';
import { readRegularFileSync } from '../util/safe-open.js';

export interface StableRunFile {
  rel: string;
  data: Buffer;
  executable: boolean;
}

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const pretty = (v: unknown): Buffer => Buffer.from(`${JSON.stringify(v, null, 2)}\n`);

function readIn(dir: string, rel: unknown): Buffer | null {
  if (typeof rel !== 'string' || safeRelativePath(rel) !== rel) return null;
  try {
    return readRegularFileSync(join(dir, rel), { kind: 'run-file' });
  } catch (err) {
    // absent: the row names no such file, nothing to carry; anything else is not ours to hide
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

function readDoc(dir: string, rel: unknown): Doc | null {
  const data = readIn(dir, rel);
  if (data === null) return null;
  try {
    const doc = JSON.parse(data.toString('utf8')) as unknown;
    return isDoc(doc) ? doc : null;
  } catch {
    // unparsable (JSON.parse throws only a SyntaxError): no document
    return null;
  }
}

/**
 * A grader's assertions: its own, else (an assert-set written without them) its members', each
 * prefixed `[member]`, as 4.42 writes a composite grader's in grading.json.
 */
function graderAssertions(e: Doc, depth = 0): GradingExpectation[] {
  const own = Array.isArray(e.assertions) ? expectationList(e.assertions) : [];
  if (own.length > 0 || depth >= MAX_NESTING) return own;
  return members(e).flatMap((m) => graderAssertions(m, depth + 1).map((a) => ({ ...a, text: `[${String(m.name ?? 'unnamed')}] ${a.text}` })));
}

/** How deep an assert-set's members are carried (a hostile row cannot make the walk unbounded). */
const MAX_NESTING = 16;

/** An assert-set's members (its `scores`), none for a plain grader. */
function members(e: Doc): Doc[] {
  return Array.isArray(e.scores) ? e.scores.filter(isDoc) : [];
}

/**
 * A grader in the index line's `scores`, its members beneath it in `scores` at every depth, as
 * 4.42's eval writes its index (grading.json's `graders` hold the top level only, as 4.42's do).
 */
function indexScore(e: Doc, verdict: string | undefined, depth: number): Doc {
  const nested = depth < MAX_NESTING ? members(e) : [];
  return {
    name: String(e.name ?? 'unnamed'),
    type: String(e.type ?? 'unknown'),
    score: num(e.score) ?? 0,
    weight: num(e.weight),
    verdict,
    assertions: graderAssertions(e, depth),
    ...(nested.length > 0 ? { scores: nested.map((m) => indexScore(m, str(m.verdict), depth + 1)) } : {}),
  };
}

/** A grader's verdict: its own, else our index row's pass for it. */
function verdictOf(e: Doc, indexScore: Doc | undefined): string {
  return str(e.verdict) ?? str(indexScore?.verdict) ?? (indexScore?.pass === true ? 'pass' : 'fail');
}

/** The directory 4.42 names a test's files by, made unique among the run's tests. */
function testDir(row: Doc, taken: Set<string>): string {
  const suite = sanitizeSegment(str(row.suite) ?? 'default');
  const test = sanitizeSegment(str(row.test_id) ?? 'unknown');
  const target = sanitizeSegment(str(row.target) ?? 'unknown');
  const candidates = [`${suite}/${test}`, `${suite}/${test}--${target}`, `${suite}/${test}--${target}--attempt-${num(row.attempt) ?? 0}`];
  let dir = candidates.find((c) => !taken.has(c));
  for (let i = 2; dir === undefined; i++) if (!taken.has(`${candidates[2]}-${i}`)) dir = `${candidates[2]}-${i}`;
  taken.add(dir);
  return dir;
}

/** One test's files and its index line, in 4.42's shape. */
function stableTest(bundleDir: string, row: Doc, dir: string, experiment: string | undefined): { files: StableRunFile[]; line: Doc } {
  const files: StableRunFile[] = [];
  const add = (rel: string, data: Buffer | string) =>
    files.push({ rel: `${dir}/${rel}`, data: Buffer.isBuffer(data) ? data : Buffer.from(data), executable: false });
  // The test's files are read first, then shaped: what is read is the bundle's, what is written 4.42's.
  const result = readDoc(bundleDir, row.result_path);
  const metrics = readDoc(bundleDir, row.metrics_path);
  const input = readIn(bundleDir, row.input_path);
  const answer = readIn(bundleDir, row.answer_path);
  const transcriptDoc = readDoc(bundleDir, row.transcript_path);
  // The test's own assertions (model/grading.ts), as `failures` and the report list them.
  const expectations = testAssertions(result, null) ?? [];
  // The transcript, one message a line (model/transcript.ts reads every shape a transcript comes in).
  const transcript = transcriptMessages(transcriptDoc)
    .map((m, i) =>
      JSON.stringify({
        schema_version: 'agentv.transcript.v1',
        test_id: row.test_id,
        target: row.target,
        message_index: i,
        role: m.role,
        content: m.content,
      }),
    )
    .map((l) => `${l}\n`)
    .join('');
  const evaluators = (Array.isArray(result?.scores) ? result.scores : []).filter(isDoc);
  const indexScores = (Array.isArray(row.scores) ? row.scores : []).filter(isDoc);
  const passed = expectations.filter((e) => e.passed).length;
  const total = expectations.length;
  const graders = evaluators.map((e, i) => ({
    name: String(e.name ?? 'unnamed'),
    type: String(e.type ?? 'unknown'),
    score: num(e.score) ?? 0,
    reasoning: typeof e.reasoning === 'string' ? e.reasoning : '',
    weight: num(e.weight),
    verdict: verdictOf(e, indexScores[i]),
    assertions: graderAssertions(e),
  }));
  add(
    'grading.json',
    pretty({
      assertions: expectations,
      summary: { passed, failed: total - passed, total, pass_rate: total > 0 ? Math.round((passed / total) * 1000) / 1000 : 0 },
      execution_metrics: {
        tool_calls: isDoc(metrics?.tool_calls) ? metrics.tool_calls : {},
        total_tool_calls: num(row.total_tool_calls) ?? 0,
        errors_encountered: num(row.errors_encountered) ?? 0,
      },
      ...(graders.length > 0 ? { graders } : {}),
    }),
  );
  const usage = isDoc(row.token_usage) ? row.token_usage : null;
  const durationMs = num(row.duration_ms) ?? 0;
  add(
    'timing.json',
    pretty({
      total_tokens: num(row.total_tokens) ?? 0,
      duration_ms: durationMs,
      total_duration_seconds: Math.round(durationMs) / 1000,
      token_usage: { input: num(usage?.input) ?? 0, output: num(usage?.output) ?? 0, reasoning: 0 },
    }),
  );
  if (input !== null) add('input.md', input);
  if (answer !== null && answer.length > 0) {
    add('outputs/answer.md', answer);
    add('outputs/response.md', answer);
  }
  if (transcript !== '') add('outputs/transcript.jsonl', transcript);
  const has = (rel: string) => files.some((f) => f.rel === `${dir}/${rel}`);
  const line: Doc = {
    timestamp: str(row.timestamp),
    test_id: row.test_id,
    suite: row.suite,
    category: str(row.category),
    score: row.score,
    target: row.target,
    token_usage: usage ? { input: num(usage.input) ?? 0, output: num(usage.output) ?? 0 } : undefined,
    cost_usd: num(row.cost_usd),
    duration_ms: num(row.duration_ms),
    scores: evaluators.map((e, i) => indexScore(e, verdictOf(e, indexScores[i]), 0)),
    execution_status: row.execution_status,
    error: str(row.error),
    artifact_dir: dir,
    grading_path: `${dir}/grading.json`,
    timing_path: `${dir}/timing.json`,
    output_path: has('outputs/answer.md') ? `${dir}/outputs/answer.md` : undefined,
    answer_path: has('outputs/answer.md') ? `${dir}/outputs/answer.md` : undefined,
    transcript_path: has('outputs/transcript.jsonl') ? `${dir}/outputs/transcript.jsonl` : undefined,
    input_path: has('input.md') ? `${dir}/input.md` : undefined,
    response_path: has('outputs/response.md') ? `${dir}/outputs/response.md` : undefined,
    experiment,
  };
  return { files, line };
}

/** Our bundle at `bundleDir` as the files of a 4.42 run directory (sorted by path). */
export function stableRunFiles(bundleDir: string): StableRunFile[] {
  const index = readIn(bundleDir, 'index.jsonl');
  if (index === null) throw new InputError(`${bundleDir}: no index.jsonl — not a run to publish`);
  const rows: Doc[] = [];
  for (const l of index.toString('utf8').split('\n')) {
    if (!l.trim()) continue;
    const row = JSON.parse(l) as unknown;
    if (isDoc(row)) rows.push(row);
  }
  const taken = new Set<string>();
  const files: StableRunFile[] = [];
  // The run's own documents, carried as they are (read with the index, before the tests are shaped).
  for (const name of ['benchmark.json', 'timing.json']) {
    const data = readIn(bundleDir, name);
    if (data !== null) files.push({ rel: name, data, executable: false });
  }
  const lines: string[] = [];
  for (const row of rows) {
    const t = stableTest(bundleDir, row, testDir(row, taken), str(row.experiment));
    files.push(...t.files);
    lines.push(JSON.stringify(t.line));
  }
  files.push({ rel: 'index.jsonl', data: Buffer.from(lines.map((l) => `${l}\n`).join('')), executable: false });
  return files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}
