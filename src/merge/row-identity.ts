/**
 * Row identity for jsonl-union: two rows with the same identity are "the same row", possibly in
 * different versions; rows with different identities are independent set members.
 *
 * Identities are namespaced (`projection_identity.id:…`, `run_id:…`, `json:…`) so that an id
 * string can never collide with the canonical JSON of an unrelated row.
 */
import { canonicalJson, isJsonObject } from '../util/canonical-json.js';

/** Maps a parsed row (and its exact line text) to its identity key. Must be deterministic. */
export type RowIdentity = (row: unknown, line: string) => string;

function stringField(row: unknown, field: string): string | undefined {
  if (!isJsonObject(row)) return undefined;
  const value = row[field];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `projection_identity.id` when the row is an object carrying a non-empty string id. */
function projectionId(row: unknown): string | undefined {
  if (!isJsonObject(row)) return undefined;
  return stringField(row['projection_identity'], 'id');
}

/** Fallback identity: the row's canonical JSON, so a row is identified by its whole content. */
export function contentRowIdentity(row: unknown): string {
  return `json:${canonicalJson(row)}`;
}

/**
 * Identity of an `index.jsonl` row: its stable `projection_identity.id` (derived from run_id,
 * suite, test_id, target, attempt, variant, …) when present, else the whole row's content.
 * `run_id` is deliberately NOT used here: every row of one run shares it.
 */
export function indexRowIdentity(row: unknown, _line: string): string {
  const id = projectionId(row);
  return id !== undefined ? `projection_identity.id:${id}` : contentRowIdentity(row);
}

/**
 * Identity of a `catalog/<day>.jsonl` row. The catalog holds exactly one line per published run,
 * so `run_id` (`<experiment>/<timestamp>`) identifies it: re-publishing a run replaces its line
 * instead of adding a second one, and two writers disagreeing about one run is a real conflict.
 */
export function catalogRowIdentity(row: unknown, _line: string): string {
  const runId = stringField(row, 'run_id');
  return runId !== undefined ? `run_id:${runId}` : contentRowIdentity(row);
}

/** An object row is catalog-shaped when it names a run but no test (index rows always name one). */
function looksLikeCatalogRow(row: unknown): boolean {
  return isJsonObject(row) && stringField(row, 'run_id') !== undefined && !('test_id' in row) && !('testId' in row);
}

/**
 * The default when the caller does not say which file it merges: `projection_identity.id`, else
 * `run_id` for catalog-shaped rows (a run id but no test id), else the row's canonical JSON.
 * Callers that know the path should pass `indexRowIdentity` or `catalogRowIdentity` explicitly.
 */
export function defaultRowIdentity(row: unknown, line: string): string {
  if (projectionId(row) !== undefined) return indexRowIdentity(row, line);
  if (looksLikeCatalogRow(row)) return catalogRowIdentity(row, line);
  return contentRowIdentity(row);
}
