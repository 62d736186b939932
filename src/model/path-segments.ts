/**
 * Turning data (suite names, test ids, targets, experiments) into path segments.
 *
 * Everything that becomes a directory name comes from untrusted rows, so a segment is either
 * already safe and kept verbatim, or rewritten and suffixed with a hash of the original. The
 * suffix keeps the mapping injective: `a/b` and `a_b` never land in the same directory.
 */
import { createHash } from 'node:crypto';

const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._+=@,-]*$/;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
const MAX_SEGMENT = 96;

export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

export function isSafeSegment(segment: string): boolean {
  return segment.length > 0 && segment.length <= MAX_SEGMENT && SAFE_SEGMENT.test(segment) && !WINDOWS_RESERVED.test(segment) && !segment.endsWith('.');
}

/** A single directory name derived from data; never empty, never `.`/`..`, never contains `/`. */
export function sanitizeSegment(value: string): string {
  if (isSafeSegment(value)) return value;
  let base = value
    .normalize('NFC')
    .replace(/[^A-Za-z0-9._+=@,-]/g, '_')
    .replace(/^[.]+/, '')
    .replace(/[.]+$/, '')
    .slice(0, MAX_SEGMENT - 10);
  if (base.length === 0 || WINDOWS_RESERVED.test(base)) base = `x${base}`;
  return `${base}-${shortHash(value)}`;
}

/** `2026-02-20T21:38:00.970Z` -> `2026-02-20T21-38-00-970Z`, the run-directory timestamp form. */
export function timestampSlug(iso: string): string | null {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return null;
  return new Date(ms).toISOString().replace(/:/g, '-').replace('.', '-');
}

/** Inverse of timestampSlug for slugs we produced; null for anything else. */
export function slugToIso(slug: string): string | null {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(?:-(\d{3}))?Z$/.exec(slug);
  if (!m) return null;
  return `${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5] ?? '000'}Z`;
}

/**
 * The fields of our bundle's index rows that name one file of the attempt (the sidecars export
 * writes). Every other list below includes them.
 */
export const BUNDLE_FILE_FIELDS = [
  'result_path',
  'grading_path',
  'metrics_path',
  'timing_path',
  'transcript_path',
  'transcript_raw_path',
  'answer_path',
  'file_changes_path',
] as const;

/**
 * Every field of an index row, in any layout we read (ours, AgentV 5's `.internal/index.jsonl`,
 * AgentV 4.42's `artifact_dir`/`targets_path`, older bundles), that names a file or directory of the run, relative to the run directory. The one
 * list every reader and writer uses: validate checks each, publish and pull refuse a row whose any
 * field escapes the run, combine copies them, derive drops them from a re-derived row. `eval_path`
 * is not here: ours records the eval file in the user's project (never opened), and AgentV's copy
 * inside the run is also named by `test_dir`.
 */
export const ROW_PATH_FIELDS = [
  'result_dir',
  'summary_path',
  ...BUNDLE_FILE_FIELDS,
  'output_path',
  'response_path',
  'input_path',
  'stdout_path',
  'stderr_path',
  'target_execution_path',
  'test_dir',
  'task_dir',
  'artifact_dir',
  'targets_path',
  'providers_path',
  'files_path',
  'graders_path',
] as const;

/** The fields of ROW_PATH_FIELDS that name a directory, not a file. */
export const ROW_DIR_FIELDS: ReadonlySet<string> = new Set(['result_dir', 'test_dir', 'task_dir', 'artifact_dir', 'files_path']);
