/**
 * Per-row checks of `validate`: every path a row names resolves inside the run directory, exists,
 * and parses against its schema; the row agrees with its result.json, grading.json and
 * projection identity; artifact pointers match the payload bytes when those are present.
 *
 * Paths come from data, so each is checked twice: lexically (no absolute path, no `..`, no
 * `.git`) and after resolving symlinks (a link inside the run must not lead outside it).
 */
import { componentLeaves } from '../model/grading.js';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import type * as z from 'zod';
import { AttemptTimingSchema, GradingSchema, MetricsSchema, ResultSchema, TranscriptSchema, type IndexRow } from '../model/artifacts.js';
import { safeRelativePath } from '../model/paths.js';
import { checkRunPathSync } from '../util/run-files.js';
import { rangeProblems } from '../model/ranges.js';
import { identityFieldsOf, projectionIdentity } from '../derive/identity.js';
import type { ValidationProblem } from './validate-types.js';

type PathField =
  | 'result_path'
  | 'grading_path'
  | 'metrics_path'
  | 'timing_path'
  | 'transcript_path'
  | 'transcript_raw_path'
  | 'answer_path'
  | 'file_changes_path';

/** The sidecars a row can name; JSON ones are parsed against the schema of what export writes. */
const SIDECARS: { field: PathField; schema: z.ZodType | null; what: string }[] = [
  { field: 'result_path', schema: ResultSchema, what: 'result' },
  { field: 'grading_path', schema: GradingSchema, what: 'grading' },
  { field: 'metrics_path', schema: MetricsSchema, what: 'metrics' },
  { field: 'timing_path', schema: AttemptTimingSchema, what: 'attempt timing' },
  { field: 'transcript_path', schema: TranscriptSchema, what: 'transcript' },
  // Raw transcripts keep native provider bytes and outputs are free text: existence only.
  { field: 'transcript_raw_path', schema: null, what: 'raw transcript' },
  { field: 'answer_path', schema: null, what: 'answer' },
  { field: 'file_changes_path', schema: null, what: 'file changes' },
];

export interface RowCheckContext {
  dir: string;
  /** realpath of `dir`, for the symlink check. */
  realDir: string;
  requirePayloads: boolean;
  problems: ValidationProblem[];
  notes: ValidationProblem[];
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}${more}`;
}

type Located = { kind: 'ok'; abs: string; isDir: boolean } | { kind: 'missing' } | { kind: 'bad'; message: string };

/**
 * Resolve a manifest path: unsafe, missing, escaping via a symlink, a pipe/device, or the absolute
 * path (the check every reading command shares). The synchronous twin: a big run names thousands of
 * paths, and three sequential thread-pool round trips per path were most of `validate`'s time.
 */
async function locate(ctx: RowCheckContext, rel: string): Promise<Located> {
  return checkRunPathSync(ctx.dir, rel, ctx.realDir);
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function parseJsonFile(ctx: RowCheckContext, abs: string, rel: string, where: string): Promise<unknown | undefined> {
  try {
    return JSON.parse(await readFile(abs, 'utf8'));
  } catch (err) {
    ctx.problems.push({ file: rel, message: `not valid JSON (${(err as Error).message}) — referenced by ${where}` });
    return undefined;
  }
}

/** result.json and grading.json restate facts of the row; a disagreement means one was edited. */
function crossCheck(ctx: RowCheckContext, row: IndexRow, field: PathField, doc: Record<string, unknown>, rel: string, where: string): void {
  const differ = (name: string, theirs: unknown, ours: unknown) => {
    ctx.problems.push({ file: rel, message: `${name} is ${JSON.stringify(theirs)} but ${where} says ${JSON.stringify(ours)}` });
  };
  if (field === 'result_path') {
    for (const key of ['test_id', 'target', 'attempt', 'verdict', 'score'] as const) {
      if (doc[key] !== row[key]) differ(key, doc[key], row[key]);
    }
  }
  if (field === 'grading_path') {
    // AgentV's verdict tree: one leaf component per assertion.
    const leaves = componentLeaves(doc.component_results);
    const passed = leaves.filter((l) => l.passed).length;
    if (passed !== row.assertions_summary.passed || leaves.length !== row.assertions_summary.total) {
      differ('component_results (passed/total)', `${passed}/${leaves.length}`, `${row.assertions_summary.passed}/${row.assertions_summary.total}`);
    }
  }
}

export async function checkRow(ctx: RowCheckContext, row: IndexRow, line: number): Promise<void> {
  const where = `index.jsonl:${line}`;
  const problem = (message: string) => ctx.problems.push({ file: 'index.jsonl', line, message });
  const pointers = new Map((row.artifact_pointers ?? []).map((p) => [safeRelativePath(p.path) ?? p.path, p]));

  const dirAt = await locate(ctx, row.result_dir);
  if (dirAt.kind === 'bad') problem(`result_dir ${dirAt.message}`);
  else if (dirAt.kind === 'ok' && !dirAt.isDir) problem(`result_dir ${row.result_dir} is not a directory`);
  // A missing result_dir is reported through the sidecars inside it, which say more.

  for (const { field, schema, what } of SIDECARS) {
    const rel = row[field];
    if (rel === null || rel === undefined) continue;
    const at = await locate(ctx, rel);
    if (at.kind === 'bad') {
      problem(`${field} ${at.message}`);
      continue;
    }
    if (at.kind === 'missing') {
      // A detached payload (its bytes live on the artifacts branch) is reported by checkPointer.
      if (!pointers.has(safeRelativePath(rel) ?? rel)) problem(`${field} ${rel} does not exist — the ${what} sidecar is missing`);
      continue;
    }
    if (at.isDir) {
      problem(`${field} ${rel} is a directory, not a file`);
      continue;
    }
    if (!schema) continue;
    const doc = await parseJsonFile(ctx, at.abs, rel, where);
    if (doc === undefined) continue;
    const parsed = schema.safeParse(doc);
    if (!parsed.success) {
      ctx.problems.push({ file: rel, message: `does not match the ${what} schema: ${firstIssue(parsed.error)} — referenced by ${where}` });
      continue;
    }
    crossCheck(ctx, row, field, parsed.data as Record<string, unknown>, rel, where);
  }

  checkIdentity(row, problem);
  for (const p of rangeProblems(row as unknown as Record<string, unknown>)) problem(p);
  for (const pointer of row.artifact_pointers ?? []) await checkPointer(ctx, pointer, line);
}

/** The identity must describe this row and hash to its id, or merges key rows wrongly. */
function checkIdentity(row: IndexRow, problem: (message: string) => void): void {
  const id = row.projection_identity;
  for (const key of ['run_id', 'test_id', 'target', 'suite', 'source_target', 'attempt', 'variant'] as const) {
    if (id[key] !== row[key]) problem(`projection_identity.${key} is ${JSON.stringify(id[key])} but the row's ${key} is ${JSON.stringify(row[key])}`);
  }
  const expected = projectionIdentity(id.run_id, identityFieldsOf(id)).id;
  if (expected !== id.id) problem(`projection_identity.id ${id.id} does not match its fields (expected ${expected})`);
}

async function checkPointer(ctx: RowCheckContext, pointer: NonNullable<IndexRow['artifact_pointers']>[number], line: number): Promise<void> {
  const problem = (message: string) => ctx.problems.push({ file: 'index.jsonl', line, message: `artifact pointer ${pointer.path}: ${message}` });
  const safe = safeRelativePath(pointer.path);
  if (safe === null) {
    problem('path escapes the run directory');
    return;
  }
  if (pointer.key !== safe && !pointer.key.endsWith(`/${safe}`)) problem(`key ${pointer.key} does not end with its path`);
  const at = await locate(ctx, safe);
  if (at.kind === 'bad') {
    problem(at.message);
    return;
  }
  if (at.kind === 'missing') {
    // Publishing may detach heavy payloads to the artifacts branch: absent bytes are expected
    // unless the caller needs a self-contained run.
    const message = `artifact pointer ${safe}: payload not present locally (it is on ${pointer.ref} as ${pointer.key})`;
    if (ctx.requirePayloads) ctx.problems.push({ file: 'index.jsonl', line, message: `${message} — fetch it, or drop --require-payloads` });
    else ctx.notes.push({ file: 'index.jsonl', line, message });
    return;
  }
  if (at.isDir) {
    problem('path is a directory, not a payload file');
    return;
  }
  const size = (await lstat(at.abs)).size;
  if (size !== pointer.size) problem(`size is ${pointer.size} but the local payload has ${size} bytes`);
  const sha = await sha256File(at.abs);
  if (sha !== pointer.sha256) problem(`sha256 ${pointer.sha256} does not match the local payload (${sha})`);
}
