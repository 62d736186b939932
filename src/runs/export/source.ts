/**
 * What the user pointed us at: a results JSONL file, a run workspace, or a workspace's index.jsonl.
 *
 * A workspace's index.jsonl may hold plain result rows (a runner that wrote nothing else) or
 * index rows that point at sidecars; the latter are hydrated back into result rows from their
 * sidecars so that derivation has one input shape either way.
 */
import { checkRunPath, specialInputMessage, unsafeRowPath, missingManifestHint, safeRelativePath } from '../../util/run-files.js';
import { realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ROW_PATH_FIELDS, sanitizeSegment } from '../../model/path-segments.js';
import { transcriptMessages } from '../../model/transcript.js';
import { absentAs } from '../../errors/errors.js';
import { openRegularFile, readOptionalJson, readRegularText } from '../../util/safe-open.js';
import { SourceError } from '../../errors/read-errors.js';
import { runShown } from '../../util/run-shown.js';

export interface ResolvedSource {
  kind: 'results-file' | 'workspace';
  /**
   * Which run layout a workspace is (see RunDirLayout; `agentv` also covers today's pipeline
   * bench). null for a results file.
   */
  layout: RunDirLayout | null;
  /** The JSONL file to stream. */
  file: string;
  /** The workspace directory, for `workspace` sources. */
  dir: string | null;
  /** The name used for the experiment when none is given. */
  defaultExperiment: string;
  /** run_id recorded by the workspace itself, when it has one. */
  recordedRunId: string | null;
  recordedExperiment: string | null;
  /** benchmark.json's (or AgentV's summary.json's) metadata.eval_file, kept when a workspace is re-derived. */
  recordedEvalFile: string | null;
  /**
   * A results file: the run directory its rows' relative paths (`answer_path`, `transcript_path`,
   * as AgentV's index rows write them) are read against — the directory named like the file
   * without `.jsonl` beside it when there is one, else the file's own directory.
   */
  pathBase?: string;
}

async function statOrNull(path: string) {
  try {
    return await stat(path);
  } catch (err) {
    // absent: null is the answer; anything else propagates
    return absentAs(null)(err);
  }
}

/** A JSON object the run holds at `rel`, or null (missing, not JSON, or not inside the run: never read through a link out); a file there that cannot be read is an error. */
async function readRunJsonOrNull(dir: string, rel: string): Promise<Record<string, unknown> | null> {
  const at = await checkRunPath(dir, rel);
  if (at.kind !== 'ok' || at.isDir) return null;
  // Not JSON: no manifest object. A file that cannot be read (a pipe, EACCES) is said, not taken for none.
  const value = await readOptionalJson(at.abs, { kind: 'run-file' });
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** AgentV 5 keeps its manifest in `<run>/.internal/index.jsonl`. */
export const AGENTV_INDEX = join('.internal', 'index.jsonl');

/**
 * The run layouts we read from a directory: `bundle` (a root index.jsonl: ours, the attempt-N
 * layout, an older pipeline bench), `agentv` (AgentV 5: `.internal/index.jsonl`) and
 * `agentv-stable` (AgentV 4.42, `.agentv/results/runs/<experiment>/<timestamp>/`: a root
 * index.jsonl of its result rows, each naming its `<suite>/<test>/` folder as `artifact_dir`,
 * beside benchmark.json and timing.json, no summary.json).
 */
export type RunDirLayout = 'bundle' | 'agentv' | 'agentv-stable';

/** The first line of a file (at most 1 MiB of it, read 64 KiB at a time), or null when unreadable. */
async function firstLine(path: string): Promise<string | null> {
  let handle: FileHandle | null = null;
  try {
    handle = (await openRegularFile(path, { kind: 'run-file', limit: Number.MAX_SAFE_INTEGER })).handle;
    const chunks: Buffer[] = [];
    let size = 0;
    while (size < 1 << 20) {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, size);
      if (bytesRead === 0) break;
      const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
      chunks.push(buf.subarray(0, nl === -1 ? bytesRead : nl));
      size += bytesRead;
      if (nl !== -1) break;
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch {
    // unreadable: no first line to sniff
    return null;
  } finally {
    await handle?.close();
  }
}

/** True when a root index.jsonl's first row is an AgentV 4.42 result row (it names its per-test folder; ours never do). */
async function isStableIndex(file: string): Promise<boolean> {
  const line = await firstLine(file);
  if (!line?.trim()) return false;
  try {
    const row: unknown = JSON.parse(line);
    return isObject(row) && typeof row.artifact_dir === 'string' && typeof row.test_id === 'string' && row.result_dir === undefined;
  } catch {
    // unparsable: not this layout's row
    return false;
  }
}

/**
 * The manifest of a run directory and which layout it is, or null when the directory holds none.
 * A root index.jsonl wins: that is what every tool reading both (AgentV included) prefers after
 * its own `.internal/` one, and a directory holding ours is ours.
 */
export async function runManifestOf(dir: string): Promise<{ file: string; layout: RunDirLayout } | null> {
  for (const [rel, layout] of [
    ['index.jsonl', 'bundle'],
    ['.internal/index.jsonl', 'agentv'],
  ] as const) {
    // The manifest is a file the run holds like any other: a link out of the run, a pipe or a
    // device is refused here, before anything opens it (its bytes never reach a message).
    const at = await checkRunPath(dir, rel);
    if (at.kind === 'bad') throw new SourceError(`${dir}: refusing to read ${rel}: ${at.message}`);
    if (at.kind === 'ok' && !at.isDir) {
      const file = join(dir, rel);
      return { file, layout: layout === 'bundle' && (await isStableIndex(file)) ? 'agentv-stable' : layout };
    }
  }
  return null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** `shownAs`: the name the source is known by when it is a copy (a published run's id); its errors name it so. */
export async function resolveSource(source: string, cwd = process.cwd(), shownAs?: string): Promise<ResolvedSource> {
  const abs = resolve(cwd, source);
  const name = runShown(source, shownAs);
  const st = await statOrNull(abs);
  if (!st)
    throw new SourceError(
      `${name}: no such file or directory — pass a results .jsonl file, a run directory (ours or AgentV's .agentv/results/<run_id>), or its index.jsonl`,
      { data: { path: name } },
    );
  const special = specialInputMessage(st);
  if (special) throw new SourceError(`${name}: ${special}`, { data: { path: name } });
  let dir: string | null = null;
  let file = abs;
  let layout: RunDirLayout | null = null;
  if (st.isDirectory()) {
    dir = abs;
    const manifest = await runManifestOf(abs);
    if (!manifest) {
      throw new SourceError(
        `${name}: not a run workspace (neither index.jsonl nor .internal/index.jsonl inside${missingManifestHint(abs)}) — pass a results .jsonl file or a run directory such as .agentv/results/<run_id>`,
        { data: { path: name } },
      );
    }
    file = manifest.file;
    layout = manifest.layout;
  } else if (basename(abs) === 'index.jsonl') {
    const parent = dirname(abs);
    if (basename(parent) === '.internal') {
      dir = dirname(parent);
      layout = 'agentv';
    } else {
      dir = parent;
      // Checked before isStableIndex opens it: never read through a link out of the run.
      const at = await checkRunPath(dir, 'index.jsonl');
      if (at.kind === 'bad') throw new SourceError(`${name}: refusing to read index.jsonl: ${at.message}`, { data: { path: name } });
      layout = (await isStableIndex(abs)) ? 'agentv-stable' : 'bundle';
    }
    if (layout === 'agentv') {
      const at = await checkRunPath(dir, '.internal/index.jsonl');
      if (at.kind === 'bad') throw new SourceError(`${name}: refusing to read .internal/index.jsonl: ${at.message}`, { data: { path: name } });
    }
  }
  if (dir === null) {
    const name = basename(abs).replace(/\.jsonl?$/i, '') || 'results';
    const beside = abs.replace(/\.jsonl?$/i, '');
    const besideDir = beside !== abs ? await statOrNull(beside) : null;
    return {
      pathBase: besideDir?.isDirectory() ? beside : dirname(abs),
      kind: 'results-file',
      layout: null,
      file,
      dir: null,
      defaultExperiment: sanitizeSegment(name),
      recordedRunId: null,
      recordedExperiment: null,
      recordedEvalFile: null,
    };
  }
  const summary = await readRunJsonOrNull(dir, 'summary.json');
  const summaryMeta = isObject(summary?.metadata) ? summary.metadata : undefined;
  const benchmark = await readRunJsonOrNull(dir, 'benchmark.json');
  const metadata = isObject(benchmark?.metadata) ? benchmark.metadata : undefined;
  // AgentV keeps runs as direct children of .agentv/results/ and the experiment in the summary;
  // a run it made without --experiment belongs to its "default" experiment.
  const parentName = basename(dirname(dir));
  return {
    recordedEvalFile: str(metadata?.eval_file) ?? str(summaryMeta?.eval_file),
    kind: 'workspace',
    layout,
    file,
    dir,
    defaultExperiment: parentName === 'results' ? 'default' : sanitizeSegment(parentName || 'results'),
    recordedRunId: str(summary?.run_id),
    recordedExperiment: str(summary?.experiment) ?? str(summaryMeta?.experiment) ?? str(metadata?.experiment),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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
    if (!isObject(value)) continue;
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
  if (!isObject(s)) return undefined;
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
    if (!isObject(s)) {
      out.push(s);
      continue;
    }
    const copy: Record<string, unknown> = { ...s };
    const rel = samplePathOf(s);
    if (resultDir && rel) {
      const transcript = await readSidecar(dir, `${resultDir}/${rel}/transcript.json`, 'transcript');
      const messages = isObject(transcript) ? transcriptMessages(transcript) : undefined;
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
    if (!isObject(s)) continue;
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
    const score = isObject(s) && typeof s.score === 'number' ? s.score : Number.NEGATIVE_INFINITY;
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  });
  return best;
}

interface AssertionLike {
  text: string;
  passed: boolean;
  evidence: string;
}

/** The label AgentV itself shows for a grading component: its assertion's value, name, id or type. */
function componentLabel(c: Record<string, unknown>): string {
  const a = isObject(c.assertion) ? c.assertion : {};
  for (const k of ['value', 'name', 'id', 'type']) {
    const v = str(a[k]);
    if (v) return v;
  }
  return str(c.reason) ?? 'grading component';
}

/** Leaf components of an AgentV grading node, as assertions (the ones `agentv results show` lists). */
function componentAssertions(components: unknown): AssertionLike[] {
  if (!Array.isArray(components)) return [];
  return components.flatMap((c) => {
    if (!isObject(c)) return [];
    const nested = componentAssertions(c.component_results);
    return nested.length > 0 ? nested : [{ text: componentLabel(c), passed: c.pass === true, evidence: str(c.reason) ?? '' }];
  });
}

/** One AgentV grading component -> one grader result in the shape of a result row's `scores[]`. */
function componentToScore(c: Record<string, unknown>): Record<string, unknown> {
  const a = isObject(c.assertion) ? c.assertion : {};
  const out: Record<string, unknown> = {
    name: str(a.name) ?? str(a.id) ?? str(c.name) ?? componentLabel(c),
    type: str(a.type) ?? str(c.type) ?? 'unknown',
    score: typeof c.score === 'number' ? c.score : c.pass === true ? 1 : 0,
    verdict: c.pass === true ? 'pass' : 'fail',
    assertions:
      componentAssertions(c.component_results).length > 0
        ? componentAssertions(c.component_results)
        : [{ text: componentLabel(c), passed: c.pass === true, evidence: str(c.reason) ?? '' }],
  };
  if (typeof a.weight === 'number') out.weight = a.weight;
  if (str(c.reason)) out.reasoning = c.reason;
  return out;
}

/** An inline AgentV score (`{name, type, pass, score, reason}`) keeps its fields; its verdict and reasoning get our names. */
function inlineScore(s: unknown, component: Record<string, unknown> | undefined): unknown {
  if (!isObject(s)) return s;
  const out: Record<string, unknown> = { ...s };
  if (out.verdict === undefined && typeof s.pass === 'boolean') out.verdict = s.pass ? 'pass' : 'fail';
  if (out.reasoning === undefined && str(s.reason)) out.reasoning = s.reason;
  if (!Array.isArray(out.assertions) && component) {
    const leaves = componentAssertions(component.component_results);
    out.assertions = leaves.length > 0 ? leaves : [{ text: componentLabel(component), passed: component.pass === true, evidence: str(component.reason) ?? '' }];
  }
  // An assert-set's members: AgentV's component lists them first, in order, then the set's own leaves.
  if (Array.isArray(s.scores)) {
    const parts = component && Array.isArray(component.component_results) ? component.component_results.filter(isObject) : [];
    out.scores = s.scores.map((n, i) => inlineScore(n, memberComponent(n, parts[i])));
  }
  return out;
}

/** A member's own component: the one at its place, when that names no other grader. */
function memberComponent(member: unknown, c: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!c || !isObject(member)) return undefined;
  const named = isObject(c.assertion) ? str(c.assertion.name) : undefined;
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
  const repeated = list.length > 1 || isObject(row.aggregation);
  const bestSample = list.length > 0 ? samplePathOf(list[bestSampleIndex(list)]) : undefined;
  const inSample = (name: string): string | undefined => (resultDir && bestSample ? `${resultDir}/${bestSample}/${name}` : undefined);
  if (attemptKey && repeated) out[attemptKey] = await attemptsWithOutputs(dir, resultDir, list);

  const transcript = await readSidecar(dir, row.transcript_path ?? inSample('transcript.json'), 'transcript');
  // AgentV 4.42 keeps one `<suite>/<test>/` folder per test whatever the target, so with several
  // targets the folder holds the last one's files: its transcript names that target. A row of
  // another target then reads nothing from the folder; its own line carries its scores.
  const foreign =
    isObject(transcript) &&
    Array.isArray(transcript.targets) &&
    transcript.targets.length > 0 &&
    typeof row.target === 'string' &&
    !transcript.targets.includes(row.target);
  const sidecar = (rel: unknown, asJson: boolean) => (foreign ? Promise.resolve(undefined) : readSidecar(dir, rel, asJson));

  const grading = await sidecar(row.grading_path ?? inSample('grading.json') ?? (resultDir ? `${resultDir}/grading.json` : undefined), true);
  // Our bundles keep the full grader results and expectations in result.json.
  const result = await sidecar(row.result_path, true);
  const ours = isObject(result) && Array.isArray(result.scores) ? result : null;
  const inlineScores = Array.isArray(row.scores) && row.scores.length > 0 ? row.scores : null;
  if (isObject(grading)) {
    const components = Array.isArray(grading.component_results) ? grading.component_results.filter(isObject) : null;
    if (ours && Array.isArray(ours.expectations)) out.assertions = ours.expectations;
    else if (Array.isArray(grading.expectations)) out.assertions = grading.expectations;
    else if (Array.isArray(grading.assertions) && grading.assertions.every((a) => isObject(a) && typeof a.text === 'string'))
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

  const messages = !foreign && isObject(transcript) ? transcriptMessages(transcript) : undefined;
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
  if (isObject(timing)) {
    if (typeof timing.duration_ms === 'number' && out.duration_ms == null) out.duration_ms = timing.duration_ms;
    if (typeof timing.cost_usd === 'number' && out.cost_usd == null) out.cost_usd = timing.cost_usd;
    if (timing.usage_source !== 'unavailable' && isObject(timing.token_usage)) {
      out.token_usage = { ...timing.token_usage, total_tokens: timing.total_tokens };
    }
    if (typeof timing.executor_start === 'string') out.start_time = timing.executor_start;
    if (typeof timing.executor_end === 'string') out.end_time = timing.executor_end;
  }
  // AgentV's metrics.json (agentv.metrics.v2) carries tokens, cost and tool counts.
  const metrics = await sidecar(row.metrics_path ?? inSample('metrics.json'), true);
  if (isObject(metrics) && String(metrics.schema_version ?? '').startsWith('agentv.metrics.v2')) {
    const tokens = isObject(metrics.tokens) ? metrics.tokens : null;
    if (tokens && tokens.source !== 'unavailable' && out.token_usage == null) {
      out.token_usage = { input: tokens.input, output: tokens.output, total_tokens: tokens.total };
    }
    const cost = isObject(metrics.cost) ? metrics.cost : null;
    if (cost && typeof cost.usd === 'number' && out.cost_usd == null) out.cost_usd = cost.usd;
    const counts = isObject(metrics.tool_call_counts) ? metrics.tool_call_counts : null;
    if (counts && Object.keys(counts).length > 0) {
      const trace = isObject(out.trace) ? { ...out.trace } : {};
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
