/**
 * Small shared helpers: how rows are keyed, filtered and displayed across the results commands.
 */
import type { IndexRow } from '../../model/artifacts.js';
import { InputError } from '../../errors/input-error.js';

/**
 * The case a row records: (suite, test_id, target, source_target, attempt, variant).
 *
 * Two rows with the same key are the same case recorded twice (a duplicate). AgentV's results docs name
 * (test_id, target, attempt, variant); suite and source_target are added because the same test id
 * may legitimately exist in two suites of a multi-eval run, and a replay from another source
 * target is a distinct projection by AgentV's results docs — counting either as a duplicate would be wrong.
 */
export function caseKey(row: Pick<IndexRow, 'suite' | 'test_id' | 'target' | 'source_target' | 'attempt' | 'variant'>): string {
  return JSON.stringify([row.suite, row.test_id, row.target, row.source_target, row.attempt, row.variant]);
}

/** `research-question (target gpt-4o, attempt 0)` — how a case is named in messages. */
export function describeCase(row: Pick<IndexRow, 'test_id' | 'target' | 'attempt' | 'variant'>): string {
  const variant = row.variant === null ? '' : `, variant ${row.variant}`;
  return `${row.test_id} (target ${row.target}, attempt ${row.attempt}${variant})`;
}

/**
 * `*` (any run of characters) and `?` (one character) test-id globs; everything else is literal.
 * Test ids are not paths, so `*` also matches `/`.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const ch of glob) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** A predicate matching any of the globs; no globs matches everything. */
export function matchAny(globs: readonly string[] | undefined): (value: string) => boolean {
  if (!globs || globs.length === 0) return () => true;
  const res = globs.map(globToRegExp);
  return (value) => res.some((re) => re.test(value));
}

/** Keep rows of the given targets (none given: all rows). */
export function filterTargets(rows: IndexRow[], targets: readonly string[] | undefined): IndexRow[] {
  if (!targets || targets.length === 0) return rows;
  const wanted = new Set(targets);
  return rows.filter((r) => wanted.has(r.target));
}

/**
 * The cases `--target` and `--test-id` select, for every command that shows cases (failures, show):
 * a filter that matches no case of a non-empty run is a mistyped filter (InputError, exit 2), never
 * an empty answer.
 */
export function selectCases(run: { runId: string; rows: IndexRow[] }, filters: { targets?: readonly string[]; testIds?: readonly string[] }): IndexRow[] {
  const matches = matchAny(filters.testIds);
  const rows = filterTargets(run.rows, filters.targets).filter((r) => matches(r.test_id));
  if (rows.length === 0 && run.rows.length > 0 && ((filters.targets?.length ?? 0) > 0 || (filters.testIds?.length ?? 0) > 0)) {
    const given = [
      ...(filters.targets ?? []).map((t) => `--target ${JSON.stringify(t)}`),
      ...(filters.testIds ?? []).map((t) => `--test-id ${JSON.stringify(t)}`),
    ].join(' ');
    throw new InputError(`no case of ${run.runId} matches ${given} (targets: ${distinct(run.rows.map((r) => r.target)).join(', ')})`);
  }
  return rows;
}

/** Distinct values in first-seen order. */
export function distinct<T>(values: Iterable<T>): T[] {
  return [...new Set(values)];
}

export { mapLimit } from '../../util/map-limit.js';
