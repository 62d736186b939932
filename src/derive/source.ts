/**
 * What the user pointed us at: a results JSONL file, a run workspace, or a workspace's index.jsonl.
 *
 * A workspace's index.jsonl may hold plain result rows (a runner that wrote nothing else) or
 * index rows that point at sidecars; the latter are hydrated back into result rows from their
 * sidecars so that derivation has one input shape either way.
 */
import { checkRunPath } from '../util/run-files.js';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { safeRelativePath, sanitizeSegment } from '../model/paths.js';

export interface ResolvedSource {
  kind: 'results-file' | 'workspace';
  /** The JSONL file to stream. */
  file: string;
  /** The workspace directory, for `workspace` sources. */
  dir: string | null;
  /** The name used for the experiment when none is given. */
  defaultExperiment: string;
  /** run_id recorded by the workspace itself, when it has one. */
  recordedRunId: string | null;
  recordedExperiment: string | null;
  /** benchmark.json's metadata.eval_file, kept when a workspace is re-derived. */
  recordedEvalFile: string | null;
}

export class SourceError extends Error {}

async function statOrNull(path: string) {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

async function readJsonOrNull(path: string): Promise<Record<string, unknown> | null> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

export async function resolveSource(source: string, cwd = process.cwd()): Promise<ResolvedSource> {
  const abs = resolve(cwd, source);
  const st = await statOrNull(abs);
  if (!st) throw new SourceError(`${source}: no such file or directory — pass a results .jsonl file, a run workspace directory, or its index.jsonl`);
  let dir: string | null = null;
  let file = abs;
  if (st.isDirectory()) {
    dir = abs;
    file = join(abs, 'index.jsonl');
    if (!(await statOrNull(file))?.isFile()) {
      throw new SourceError(`${source}: not a run workspace (no index.jsonl inside) — pass a results .jsonl file or a run directory`);
    }
  } else if (basename(abs) === 'index.jsonl') {
    dir = dirname(abs);
  }
  if (dir === null) {
    const name = basename(abs).replace(/\.jsonl?$/i, '') || 'results';
    return { kind: 'results-file', file, dir: null, defaultExperiment: sanitizeSegment(name), recordedRunId: null, recordedExperiment: null, recordedEvalFile: null };
  }
  const summary = await readJsonOrNull(join(dir, 'summary.json'));
  const recordedRunId = typeof summary?.run_id === 'string' ? summary.run_id : null;
  const recordedExperiment = typeof summary?.experiment === 'string' ? summary.experiment : null;
  const benchmark = await readJsonOrNull(join(dir, 'benchmark.json'));
  const metadata = benchmark?.metadata as Record<string, unknown> | undefined;
  return {
    recordedEvalFile: typeof metadata?.eval_file === 'string' ? metadata.eval_file : null,
    kind: 'workspace',
    file,
    dir,
    defaultExperiment: sanitizeSegment(basename(dirname(dir)) || 'results'),
    recordedRunId,
    recordedExperiment,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function readSidecar(dir: string, rel: unknown, asJson: boolean): Promise<unknown> {
  if (typeof rel !== 'string') return undefined;
  const safe = safeRelativePath(rel);
  if (safe === null) throw new SourceError(`sidecar path ${JSON.stringify(rel)} escapes the run directory`);
  // Never read through a link leading out of the run, nor a pipe or device.
  const at = await checkRunPath(dir, safe);
  if (at.kind === 'bad') throw new SourceError(`refusing to read a sidecar: ${at.message}`);
  try {
    const text = await readFile(join(dir, safe), 'utf8');
    return asJson ? JSON.parse(text) : text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SourceError(`${rel}: ${(err as Error).message}`);
  }
}

/** True when a workspace row is an index row that points at sidecars rather than a full result. */
export function isIndexRow(row: Record<string, unknown>): boolean {
  return typeof row.grading_path === 'string' || typeof row.result_dir === 'string';
}

/**
 * Rebuild a result row from an index row and its sidecars. Pointer-only rows (payloads on the
 * artifacts branch, not present locally) hydrate from whatever is present.
 */
export async function hydrateIndexRow(dir: string, row: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { ...row };
  for (const key of ['result_dir', 'result_path', 'grading_path', 'metrics_path', 'timing_path', 'transcript_path', 'transcript_raw_path', 'answer_path', 'file_changes_path', 'projection_identity', 'artifact_pointers', 'assertions_summary', 'run_id', 'experiment', 'total_tokens', 'total_tool_calls', 'errors_encountered']) {
    delete out[key];
  }
  const grading = await readSidecar(dir, row.grading_path, true);
  if (isObject(grading)) {
    if (Array.isArray(grading.expectations)) out.assertions = grading.expectations;
    if (Array.isArray(grading.evaluators)) out.scores = grading.evaluators;
  }
  const transcript = await readSidecar(dir, row.transcript_path, true);
  if (isObject(transcript) && Array.isArray(transcript.messages)) {
    const messages = transcript.messages as Record<string, unknown>[];
    const firstAssistant = messages.findIndex((m) => m.role !== 'user');
    const split = firstAssistant === -1 ? messages.length : firstAssistant;
    if (split > 0) out.input = messages.slice(0, split);
    if (split < messages.length) out.output = messages.slice(split);
  }
  if (out.output === undefined) {
    const answer = await readSidecar(dir, row.answer_path, false);
    if (typeof answer === 'string') out.output = answer;
  }
  const diff = await readSidecar(dir, row.file_changes_path, false);
  if (typeof diff === 'string') out.file_changes = diff;
  const timing = await readSidecar(dir, row.timing_path, true);
  if (isObject(timing)) {
    if (typeof timing.duration_ms === 'number' && out.duration_ms == null) out.duration_ms = timing.duration_ms;
    if (typeof timing.cost_usd === 'number' && out.cost_usd == null) out.cost_usd = timing.cost_usd;
    if (timing.usage_source !== 'unavailable' && isObject(timing.token_usage)) {
      out.token_usage = { ...timing.token_usage, total_tokens: timing.total_tokens };
    }
    if (typeof timing.executor_start === 'string') out.start_time = timing.executor_start;
    if (typeof timing.executor_end === 'string') out.end_time = timing.executor_end;
  }
  for (const [k, v] of Object.entries(out)) if (v === null) delete out[k];
  return out;
}
