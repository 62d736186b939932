/**
 * Which files the merges own, by path. Paths use forward slashes, as git reports them.
 *
 * - driverKindForPath: used by the git merge driver entry. It is lenient about the directory
 *   (humans also merge run workspaces such as `.agentv/results/<experiment>/<ts>/index.jsonl`).
 * - ownedMergeKind: used by the tree-level resolver on the `agentv/results/v1` branch. It follows
 *   that branch's layout exactly (`catalog/<day>.jsonl`, `runs/…/{index.jsonl,tags.json,feedback.json}`),
 *   so a file that merely shares a name elsewhere is left to a human instead of merged by guess.
 */
import { catalogRowIdentity, indexRowIdentity, type RowIdentity } from './identity.js';

export type MergeKind = 'jsonl' | 'json';

const JSON_OVERLAYS = new Set(['tags.json', 'feedback.json']);

function segments(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '' && segment !== '.');
}

function kindOfSegments(parts: readonly string[]): MergeKind | null {
  const name = parts[parts.length - 1];
  if (name === undefined) return null;
  if (name === 'index.jsonl') return 'jsonl';
  if (parts[parts.length - 2] === 'catalog' && name.endsWith('.jsonl') && name !== '.jsonl') return 'jsonl';
  if (JSON_OVERLAYS.has(name)) return 'json';
  return null;
}

/** The merge a git driver should run for `pathname`, or null when the path is not one of ours. */
export function driverKindForPath(pathname: string): MergeKind | null {
  return kindOfSegments(segments(pathname));
}

/** The merge kind of a path on the results branch, or null for a file we do not own. */
export function ownedMergeKind(path: string): MergeKind | null {
  const parts = segments(path);
  if (parts.length === 2 && parts[0] === 'catalog') return kindOfSegments(parts);
  if (parts.length >= 2 && parts[0] === 'runs') {
    const kind = kindOfSegments(parts);
    // A `catalog/` directory inside a run is not the catalog; only index.jsonl and overlays count.
    return kind === 'jsonl' && parts[parts.length - 1] !== 'index.jsonl' ? null : kind;
  }
  return null;
}

/** Row identity for a JSONL path: run_id for catalog files, projection identity otherwise. */
export function rowIdentityForPath(pathname: string): RowIdentity {
  const parts = segments(pathname);
  return parts[parts.length - 2] === 'catalog' && parts[parts.length - 1] !== 'index.jsonl' ? catalogRowIdentity : indexRowIdentity;
}
