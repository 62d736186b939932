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
import { lstat } from 'node:fs/promises';
import type * as z from 'zod';
import { AttemptTimingSchema, GradingSchema, MetricsSchema, ResultSchema, TranscriptSchema, type IndexRow } from '../model/artifacts.js';
import { BUNDLE_FILE_FIELDS, ROW_PATH_FIELDS } from '../model/path-segments.js';
import { pointerList } from '../model/artifacts.js';
import { isContentKey, OBJECT_STORE_REF } from '../store/object-store.js';
import { pathFieldProblems, safeRelativePath, type RunFiles, type RunPathCheck } from './read/run-files.js';
import { rangeProblems } from './row-ranges.js';
import { identityFieldsOf, projectionIdentity } from './export/projection-identity.js';
import type { ValidationProblem } from './validate-types.js';
import { openRegularFile } from '../util/safe-open.js';

type PathField = (typeof BUNDLE_FILE_FIELDS)[number];

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
  requirePayloads: boolean;
  /**
   * The run's files: `check` resolves a manifest path (unsafe, missing, escaping via a symlink, a
   * pipe/device, or the absolute path: the check every reading command shares), through the walked
   * folder when there is one, else the run-path check on disk. Synchronous: a big run names
   * thousands of paths, and three sequential thread-pool round trips per path were most of
   * `validate`'s time.
   */
  files: RunFiles;
  problems: ValidationProblem[];
  notes: ValidationProblem[];
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}${more}`;
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
    // AgentV's verdict tree: one component per grader (named as the row's scores), else one leaf per assertion.
    const graders = Array.isArray(doc.component_results) ? doc.component_results.map(graderName) : [];
    if (graders.length > 0 && graders.every((g) => g !== null)) {
      const names = (row.scores ?? []).map((s) => s.name);
      if (JSON.stringify(graders) !== JSON.stringify(names)) differ('component_results (graders)', graders, names);
      return;
    }
    const leaves = componentLeaves(doc.component_results);
    const passed = leaves.filter((l) => l.passed).length;
    if (passed !== row.assertions_summary.passed || leaves.length !== row.assertions_summary.total) {
      differ('component_results (passed/total)', `${passed}/${leaves.length}`, `${row.assertions_summary.passed}/${row.assertions_summary.total}`);
    }
  }
}

/** The grader a top-level grading component stands for (`assertion.name`), null for an assertion's leaf. */
function graderName(c: unknown): string | null {
  const a = typeof c === 'object' && c !== null ? (c as { assertion?: unknown }).assertion : undefined;
  const name = typeof a === 'object' && a !== null ? (a as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : null;
}

/** A sidecar a row names, as the run holds it: where it is and, for a JSON sidecar that is a file, its text or why it was not read. */
interface SidecarSeen {
  field: PathField;
  rel: string;
  schema: z.ZodType | null;
  what: string;
  at: RunPathCheck;
  text?: { ok: true; text: string } | { ok: false; message: string };
}

type Pointer = NonNullable<IndexRow['artifact_pointers']>[number];

/** An artifact pointer's payload as the run holds it: its path judged, where it is, and its size and sha256 when it is a file. */
interface PointerSeen {
  pointer: Pointer;
  safe: string | null;
  at?: RunPathCheck;
  size?: number;
  sha256?: string;
}

/**
 * What the run holds of one row: result_dir, the sidecars and the payloads its pointers name
 * located, then the JSON sidecars read and the payloads hashed. Nothing is judged here: checkRow
 * reports from it, in the order a reader meets the row.
 */
async function seeRow(ctx: RowCheckContext, row: IndexRow) {
  const dirAt = ctx.files.check(row.result_dir);
  const sidecars: SidecarSeen[] = [];
  for (const { field, schema, what } of SIDECARS) {
    const rel = row[field];
    if (rel !== null && rel !== undefined) sidecars.push({ field, rel, schema, what, at: ctx.files.check(rel) });
  }
  const pointers: PointerSeen[] = (row.artifact_pointers ?? []).map((pointer) => {
    const safe = safeRelativePath(pointer.path);
    return { pointer, safe, at: safe === null ? undefined : ctx.files.check(safe) };
  });
  for (const s of sidecars) {
    if (s.at.kind !== 'ok' || s.at.isDir || !s.schema) continue;
    // Unreadable: the row's problem says why (`not valid JSON (…)`, as an unparsable one).
    const read = ctx.files.read(s.rel);
    s.text =
      read.kind === 'ok'
        ? { ok: true, text: read.data.toString('utf8') }
        : { ok: false, message: read.kind === 'bad' ? read.message : `${s.rel} vanished while it was read` };
  }
  for (const p of pointers) {
    if (p.at?.kind !== 'ok' || p.at.isDir) continue;
    p.size = (await lstat(p.at.abs)).size;
    const hash = createHash('sha256');
    const { handle } = await openRegularFile(p.at.abs, { kind: 'run-file', limit: Number.MAX_SAFE_INTEGER });
    for await (const chunk of handle.createReadStream()) hash.update(chunk as Buffer);
    p.sha256 = hash.digest('hex');
  }
  return { dirAt, sidecars, pointers };
}

/** The path fields beyond our sidecars (summary_path, AgentV's stdout_path, test_dir, ...). */
const EXTRA_PATH_FIELDS = (() => {
  const bundle = new Set<string>([...BUNDLE_FILE_FIELDS, 'result_dir']);
  return ROW_PATH_FIELDS.filter((f) => !bundle.has(f));
})();

export async function checkRow(ctx: RowCheckContext, row: IndexRow, line: number): Promise<void> {
  const where = `index.jsonl:${line}`;
  const problem = (message: string) => ctx.problems.push({ file: 'index.jsonl', line, message });
  // A lexically safe path is its own normal form, so each path is its key as written.
  const pointers = new Set((row.artifact_pointers ?? []).map((p) => p.path));
  const seen = await seeRow(ctx, row);

  const { dirAt } = seen;
  if (dirAt.kind === 'bad') problem(`result_dir ${dirAt.message}`);
  else if (dirAt.kind === 'ok' && !dirAt.isDir) problem(`result_dir ${row.result_dir} is not a directory`);
  // A missing result_dir is reported through the sidecars inside it, which say more.

  for (const { field, rel, schema, what, at, text } of seen.sidecars) {
    if (at.kind === 'bad') {
      problem(`${field} ${at.message}`);
      continue;
    }
    if (at.kind === 'missing') {
      // A detached payload (its bytes live on the artifacts branch) is reported with its pointer.
      if (!pointers.has(rel)) problem(`${field} ${rel} does not exist — the ${what} sidecar is missing`);
      continue;
    }
    if (at.isDir) {
      problem(`${field} ${rel} is a directory, not a file`);
      continue;
    }
    if (!schema || !text) continue;
    // Unread or unparsable: the same problem, with why.
    let doc: unknown;
    let notJson = text.ok ? null : text.message;
    if (text.ok)
      try {
        doc = JSON.parse(text.text);
      } catch (err) {
        notJson = (err as Error).message;
      }
    if (notJson !== null) {
      ctx.problems.push({ file: rel, message: `not valid JSON (${notJson}) — referenced by ${where}` });
      continue;
    }
    const parsed = schema.safeParse(doc);
    if (!parsed.success) {
      ctx.problems.push({ file: rel, message: `does not match the ${what} schema: ${firstIssue(parsed.error)} — referenced by ${where}` });
      continue;
    }
    crossCheck(ctx, row, field, parsed.data as Record<string, unknown>, rel, where);
  }

  // What the pointers' payloads are found to be, and the id the identity's fields hash to: reported
  // after the row's other path fields and its identity's fields, in that order.
  const pointerFindings = seen.pointers.map((p) => pointerProblems(ctx.requirePayloads, p, line));
  const id = row.projection_identity;
  const expected = projectionIdentity(id.run_id, identityFieldsOf(id)).id;

  pathFieldProblems(ctx.files, row as unknown as Record<string, unknown>, EXTRA_PATH_FIELDS, pointers, problem);

  // The identity must describe this row and hash to its id, or merges key rows wrongly.
  for (const key of ['run_id', 'test_id', 'target', 'suite', 'source_target', 'attempt', 'variant'] as const) {
    if (id[key] !== row[key]) problem(`projection_identity.${key} is ${JSON.stringify(id[key])} but the row's ${key} is ${JSON.stringify(row[key])}`);
  }
  if (expected !== id.id) problem(`projection_identity.id ${id.id} does not match its fields (expected ${expected})`);
  for (const p of rangeProblems(row as unknown as Record<string, unknown>)) problem(p);
  for (const { problems, notes } of pointerFindings) {
    ctx.problems.push(...problems);
    ctx.notes.push(...notes);
  }
}

/**
 * What is wrong with one artifact pointer (seen by seeRow), on the row's line; a payload absent
 * locally is a note unless payloads are required.
 */
function pointerProblems(
  requirePayloads: boolean,
  { pointer, safe, at, size, sha256 }: PointerSeen,
  line: number,
): { problems: ValidationProblem[]; notes: ValidationProblem[] } {
  const out = { problems: [] as ValidationProblem[], notes: [] as ValidationProblem[] };
  const problem = (message: string) => out.problems.push({ file: 'index.jsonl', line, message: `artifact pointer ${pointer.path}: ${message}` });
  if (safe === null || at === undefined) {
    problem('path escapes the run directory');
    return out;
  }
  // A pointer into the bucket (storage_mode hybrid) names the content address of its bytes; one into the artifacts branch ends with its path.
  if (pointer.ref === OBJECT_STORE_REF) {
    if (!isContentKey(pointer.key, pointer.sha256)) problem(`key ${pointer.key} is not the content address of sha256 ${pointer.sha256}`);
  } else if (pointer.key !== safe && !pointer.key.endsWith(`/${safe}`)) problem(`key ${pointer.key} does not end with its path`);
  if (at.kind === 'bad') {
    problem(at.message);
    return out;
  }
  if (at.kind === 'missing') {
    // Publishing may detach heavy payloads to the artifacts branch: absent bytes are expected
    // unless the caller needs a self-contained run.
    const message = `artifact pointer ${safe}: payload not present locally (it is on ${pointer.ref} as ${pointer.key})`;
    if (requirePayloads) out.problems.push({ file: 'index.jsonl', line, message: `${message} — fetch it, or drop --require-payloads` });
    else out.notes.push({ file: 'index.jsonl', line, message });
    return out;
  }
  if (at.isDir) {
    problem('path is a directory, not a payload file');
    return out;
  }
  if (size !== pointer.size) problem(`size is ${pointer.size} but the local payload has ${size} bytes`);
  if (sha256 !== pointer.sha256) problem(`sha256 ${pointer.sha256} does not match the local payload (${sha256})`);
  return out;
}

/** AgentV's verdict node: `pass`, `score` and `reason` at every level of `component_results`. */
function gradingNodeProblems(node: unknown, label: string): string[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return [`${label} is not an object`];
  const n = node as Record<string, unknown>;
  const out: string[] = [];
  if (typeof n.pass !== 'boolean' || typeof n.score !== 'number' || typeof n.reason !== 'string') out.push(`${label} lacks pass, score or reason`);
  if (n.component_results !== undefined) {
    if (!Array.isArray(n.component_results)) out.push(`${label}.component_results is not an array`);
    else
      n.component_results.forEach((c, i) => {
        out.push(...gradingNodeProblems(c, `${label}.component_results[${i}]`));
      });
  }
  return out;
}

/**
 * The checks a run of another layout (AgentV 5's `.internal/index.jsonl`, plain result rows)
 * needs on its own files: the derived copy validate reads cannot show a sidecar the source lacks.
 * Every row names its test, target, score and `summary_path`; every path field stays inside the
 * run, and the test's summary and grading exist; each sample has its result.json and grading.json; grading and metrics parse;
 * the run has its summary.json. `files` are the source folder's (its walk), `manifest` the manifest's
 * path in it.
 */
export function checkSourceRows(files: RunFiles, manifest: string, problems: ValidationProblem[], notes: ValidationProblem[]): void {
  const read = files.read(manifest);
  if (read.kind !== 'ok') return; // loadRun already refused or reported it
  // AgentV 5's own layout (`.internal/index.jsonl`): AgentV's rules apply in full. Older layouts
  // (pipeline bench, Era-A) never had a summary_path, per-sample result.json or summary.json.
  const agentv5 = manifest !== 'index.jsonl';
  const lines = read.data.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.trim();
    if (!text) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue; // reported with the derived copy's problems
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const row = value as Record<string, unknown>;
    const problem = (message: string) => problems.push({ file: manifest, line: i + 1, message });
    if (typeof row.test_id !== 'string' || row.test_id === '') problem('test_id is missing');
    if (typeof row.target !== 'string' || row.target === '') problem('target is missing');
    if (typeof row.score !== 'number' || !(row.score >= 0 && row.score <= 1)) problem(`score ${JSON.stringify(row.score ?? null)} is not a number in [0, 1]`);
    if (agentv5 && typeof row.summary_path !== 'string') problem('summary_path is missing');
    const detached = new Set<string>();
    const pointers = pointerList(row.artifact_pointers);
    if (Array.isArray(pointers)) for (const p of pointers) if (typeof (p as { path?: unknown })?.path === 'string') detached.add((p as { path: string }).path);
    // A missing file is an error where AgentV says so (the test's summary, its grading); other
    // files a row names may be absent from a copy (AgentV keeps some on its artifacts branch).
    pathFieldProblems(files, row, ROW_PATH_FIELDS, detached, problem, (field, rel) =>
      field === 'summary_path' || field === 'grading_path'
        ? problem(`${field} ${rel} does not exist`)
        : notes.push({ file: manifest, line: i + 1, message: `${field} ${rel} is not in this copy of the run` }),
    );
    const resultDir = typeof row.result_dir === 'string' ? safeRelativePath(row.result_dir) : null;
    const samples = [row.samples, row.attempts, row.trials].find(Array.isArray) as unknown[] | undefined;
    for (const s of samples ?? []) {
      const sample = (s ?? {}) as Record<string, unknown>;
      const rel = [sample.sample_path, sample.attempt_path, sample.run_path].find((x) => typeof x === 'string') as string | undefined;
      if (!agentv5 || rel === undefined || resultDir === null) continue;
      for (const name of ['result.json', 'grading.json']) {
        const at = files.check(`${resultDir}/${rel}/${name}`);
        if (at.kind === 'bad') problem(`sample ${rel}: ${at.message}`);
        else if (at.kind === 'missing') problem(`sample ${rel}: ${resultDir}/${rel}/${name} does not exist`);
      }
    }
    for (const [field, what] of [
      ['grading_path', 'grading'],
      ['metrics_path', 'metrics'],
      ['summary_path', 'test summary'],
    ] as const) {
      const rel = row[field];
      if (typeof rel !== 'string') continue;
      const doc = files.read(rel);
      if (doc.kind !== 'ok') continue; // reported above
      let parsed: unknown;
      try {
        parsed = JSON.parse(doc.data.toString('utf8'));
      } catch (err) {
        problems.push({ file: rel, message: `not valid JSON (${(err as Error).message}) — the ${what} of ${manifest}:${i + 1}` });
        continue;
      }
      // AgentV 5's verdict tree; older layouts (AgentV 4.42, pipeline bench) grade in their own shape.
      if (field === 'grading_path' && agentv5)
        for (const m of gradingNodeProblems(parsed, 'grading.json')) problems.push({ file: rel, message: `${m} — the grading of ${manifest}:${i + 1}` });
      else if (field !== 'metrics_path') continue;
      else if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        problems.push({ file: rel, message: `is not a JSON object — the metrics of ${manifest}:${i + 1}` });
    }
  }
  if (!agentv5) return;
  const summary = files.read('summary.json');
  if (summary.kind === 'missing') problems.push({ file: 'summary.json', message: 'missing — the run has no summary.json' });
  else if (summary.kind === 'ok') {
    try {
      JSON.parse(summary.data.toString('utf8'));
    } catch (err) {
      problems.push({ file: 'summary.json', message: `not valid JSON (${(err as Error).message})` });
    }
  }
}
