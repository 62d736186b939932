/**
 * The one safety check of a run folder: `validate`, `report`, `show`, `publish` (with or without
 * `--allow-invalid`), the daemon and WIP all ask it, so what one of them refuses none passes.
 *
 * A run is unsafe when
 *   - any entry of its folder is not a regular file or a directory: a symbolic link (leading out, a
 *     directory link, even one staying inside: publish copies files, never links), a named pipe, a
 *     socket or a device — referenced by a row or not (an unreferenced `notes.txt -> /etc/passwd`
 *     would otherwise ride along into a branch or a tarball);
 *   - a row's path field escapes the run (lexically, or through such an entry);
 *   - a row's `run_id` is not a safe path segment (`../x`, a NUL): it becomes a directory name;
 *   - a per-test `result.json` points (grading_path, output, transcript, …) at an absolute path or
 *     out of the run: we never follow those pointers, AgentV's reader might.
 * The folder is walked once; the rows are then checked lexically (with no link or special file in
 * the folder, a lexically safe path can only name something inside it), and on disk only to explain
 * a problem the walk found. Missing files are not problems here: `validate` reports them.
 */
import { posix } from 'node:path';
import { isSafeSegment, ROW_PATH_FIELDS } from '../../model/path-segments.js';
import {
  irregularEntryMessage,
  onDiskMessage,
  realRunDir,
  RunDirFiles,
  unsafePathMessage,
  type RunFileRead,
  type RunFiles,
  safeRelativePath,
} from './run-files.js';
import { RunTree } from './run-tree.js';

/** One problem: `file[:line]` it is about, and what is wrong (without the file's name). */
export interface RunSafetyProblem {
  file: string;
  line?: number;
  message: string;
}

export interface RunSafetyOptions {
  /** The folder to walk when it is not `dir` (another layout read through a derived copy: the user's folder). */
  walkRoot?: string;
  /** Run-relative paths the walk leaves alone (report's own default output, `report.html`). */
  except?: readonly string[];
  /** Stop after this many problems (default 50). */
  limit?: number;
  /** The walked folder (runs/read/run-tree.ts) when the caller has it: the folder is not walked again, its files not checked again. */
  tree?: RunTree;
}

/** The pointer fields of a per-test result.json (relative to its folder), as export writes them and AgentV reads them. */
export const RESULT_POINTER_FIELDS = [
  'grading_path',
  'metrics_path',
  'timing_path',
  'summary_path',
  'transcript',
  'transcript_path',
  'transcript_raw_path',
  'output',
  'answer_path',
  'file_changes_path',
] as const;

/** Why a run id is not a safe directory name (`<run_id>` or `<experiment>/<timestamp>`), or null. */
export function unsafeRunIdMessage(runId: unknown): string | null {
  if (typeof runId !== 'string') return 'is not a string';
  const parts = runId.split('/');
  if (parts.length <= 2 && parts.every(isSafeSegment)) return null;
  return `${JSON.stringify(runId)} is not a safe path segment (letters, digits and ._+=@,- only; at most one "/")`;
}

/** Why a pointer of a result.json at `resultPath` leaves the run, or null (null/absent pointers are fine). */
export function unsafePointerMessage(resultPath: string, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return 'is not a string';
  const bad = `${JSON.stringify(value)} points outside the run (a result file's pointers must be relative and stay inside the run)`;
  if (value.includes('\0') || value.includes('\\') || posix.isAbsolute(value) || /^[A-Za-z]:/.test(value)) return bad;
  const resolved = posix.normalize(posix.join(posix.dirname(resultPath), value));
  return safeRelativePath(resolved) === null ? bad : null;
}

/** Top-level pointer fields of a per-test result.json beyond RESULT_POINTER_FIELDS (AgentV 5.x writes them too). */
const RESULT_EXTRA_POINTER_FIELDS = ['stdout_path', 'stderr_path', 'target_execution_path', 'output_path', 'input_path'] as const;

/**
 * The files of a run that hold pointers to other files of it, by name, and where in them: AgentV
 * 5.x writes per sample `result.json` (its own fields and `target_execution.artifacts`),
 * `target-execution.json` (`artifacts`) and `metrics.json` (`source_artifacts`), each relative to the
 * file's own folder, and the run's `summary.json` names its index (`index_path`, from the run's root).
 */
function pointersOf(rel: string, doc: Record<string, unknown>, asResult: boolean): [string, unknown][] {
  const name = asResult ? 'result.json' : rel.slice(rel.lastIndexOf('/') + 1);
  const map = (prefix: string, v: unknown): [string, unknown][] =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.entries(v).map(([k, x]) => [`${prefix}.${k}`, x]) : [];
  if (name === 'result.json') {
    const te = doc.target_execution as Record<string, unknown> | undefined;
    return [
      ...[...RESULT_POINTER_FIELDS, ...RESULT_EXTRA_POINTER_FIELDS].map((f): [string, unknown] => [f, doc[f]]),
      ...(typeof te === 'object' && te !== null ? map('target_execution.artifacts', te.artifacts) : []),
    ];
  }
  if (name === 'target-execution.json') return map('artifacts', doc.artifacts);
  if (name === 'metrics.json') return map('source_artifacts', doc.source_artifacts);
  if (rel === 'summary.json') return [['index_path', doc.index_path]];
  return [];
}

/** True for a run-relative path whose file may hold pointers (pointerFileProblems reads it). */
export function isPointerFile(rel: string): boolean {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return rel === 'summary.json' || name === 'result.json' || name === 'target-execution.json' || name === 'metrics.json';
}

/**
 * The pointers of one file of the run (`rel`, its bytes in `read`) that leave the run: absolute,
 * or out of it from the file's folder. Files that hold no pointers, and unparsable ones (validate
 * reports those), have none. `asResult`: a row's `result_path` names it, whatever its name.
 */
export function pointerFileProblems(rel: string, read: RunFileRead, opts: { asResult?: boolean } = {}): RunSafetyProblem[] {
  const asResult = opts.asResult ?? false;
  if (read.kind !== 'ok' || !(asResult || isPointerFile(rel))) return [];
  let doc: unknown;
  try {
    doc = JSON.parse(read.data.toString('utf8'));
  } catch {
    // unparsable (JSON.parse throws only a SyntaxError): validate reports it; no pointer to check
    return [];
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return [];
  const out: RunSafetyProblem[] = [];
  for (const [field, value] of pointersOf(rel, doc as Record<string, unknown>, asResult)) {
    const bad = unsafePointerMessage(rel, value);
    if (bad) out.push({ file: rel, message: `${field} ${bad}` });
  }
  return out;
}

/** The problems of one row by itself: its run ids and path fields, lexically; `onDisk` explains a path on disk. */
export function rowSafetyProblems(row: Record<string, unknown>, line: number, onDisk?: (rel: string) => string | null): RunSafetyProblem[] {
  const out: RunSafetyProblem[] = [];
  const problem = (message: string) => out.push({ file: 'index.jsonl', line, message });
  const runIdBad = unsafeRunIdMessage(row.run_id);
  if (row.run_id !== undefined && runIdBad) problem(`run_id ${runIdBad}`);
  const identity = row.projection_identity as Record<string, unknown> | undefined;
  if (identity && typeof identity === 'object' && identity.run_id !== undefined && identity.run_id !== row.run_id) {
    const bad = unsafeRunIdMessage(identity.run_id);
    if (bad) problem(`projection_identity.run_id ${bad}`);
  }
  const paths: [string, unknown][] = ROW_PATH_FIELDS.map((f) => [f, row[f]]);
  const pointers = Array.isArray(row.artifact_pointers) ? (row.artifact_pointers as { path?: unknown }[]) : [];
  for (const p of pointers) paths.push(['artifact_pointers[].path', p?.path]);
  for (const [field, rel] of paths) {
    if (rel === null || rel === undefined) continue;
    if (typeof rel !== 'string') {
      problem(`${field} is not a string`);
      continue;
    }
    const message = unsafePathMessage(rel) ?? (onDisk ? onDisk(rel) : null);
    if (message !== null) problem(`${field} ${message}`);
  }
  return out;
}

/** Every reason `dir` (with its manifest rows) may not be read or published; empty when it is safe. */
export function runSafetyProblems(
  dir: string,
  rows: readonly Record<string, unknown>[],
  rowLines: readonly number[] = [],
  opts: RunSafetyOptions = {},
): RunSafetyProblem[] {
  const limit = opts.limit ?? 50;
  const problems: RunSafetyProblem[] = [];
  const root = opts.walkRoot ?? dir;
  const except = new Set(opts.except ?? []);
  const walked = opts.tree && opts.tree.root === root ? opts.tree : RunTree.walk(root);
  const irregular = walked.irregular.filter((e) => !except.has(e.path)).slice(0, limit);
  const realRoot = walked.realDir;
  const readOwn = opts.tree && opts.tree.root === dir ? opts.tree : walked.root === dir ? walked : null;
  for (const e of irregular) problems.push({ file: e.path, message: irregularEntryMessage(root, realRoot, e) });
  // Through a link or a special file of the rows' own folder a lexically safe path may still lead out.
  const onDisk = irregular.length > 0 && root === dir;
  const realDir = readOwn ? readOwn.realDir : realRunDir(dir);
  // The rows' own folder: the walk when it is the one walked, else the disk.
  const own: RunFiles = readOwn ?? new RunDirFiles(dir, realDir);
  const checked = new Set<string>();
  for (let i = 0; i < rows.length && problems.length < limit; i++) {
    const row = rows[i]!;
    problems.push(...rowSafetyProblems(row, rowLines[i] ?? i + 1, onDisk ? (rel) => onDiskMessage(dir, rel, realDir) : undefined));
    const resultPath = typeof row.result_path === 'string' ? safeRelativePath(row.result_path) : null;
    if (resultPath === null || checked.has(resultPath)) continue;
    checked.add(resultPath);
    const read = own.read(resultPath);
    problems.push(...pointerFileProblems(resultPath, read, { asResult: true }));
  }
  // Every file of the walked folder that holds pointers (AgentV 5.x's per-sample files, found by
  // name: a row need not name them), read once; what the rows' own result files said is not repeated.
  for (const rel of [...walked.files].sort()) {
    if (problems.length >= limit) break;
    if (!isPointerFile(rel) || except.has(rel) || (root === dir && checked.has(rel))) continue;
    problems.push(...pointerFileProblems(rel, walked.read(rel)));
  }
  return problems.slice(0, limit);
}

/** One line per problem, as commands print them (`index.jsonl:3: answer_path …`, `notes.txt resolves outside …`). */
export function runSafetyLine(p: RunSafetyProblem): string {
  return p.line === undefined
    ? `${p.file}${p.message.startsWith('is ') || p.message.startsWith('resolves ') ? ' ' : ': '}${p.message}`
    : `${p.file}:${p.line}: ${p.message}`;
}
