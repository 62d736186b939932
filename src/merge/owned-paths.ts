/**
 * Which files the merges own, by path. Paths use forward slashes, as git reports them.
 *
 * - driverKindForPath: used by the git merge driver entry. It is lenient about the directory
 *   (humans also merge run workspaces such as `.agentv/results/<experiment>/<ts>/index.jsonl`).
 * - ownedMergeKind: used by the tree-level resolver on the `agentv/results/v1` branch. It follows
 *   that branch's layout exactly (AgentV's: `<run_dir>/{index.jsonl,.internal/index.jsonl,tags.json,
 *   feedback.json}`, our catalog `.indexes/agentv-results.<day>.jsonl`; and the older `catalog/<day>.jsonl`,
 *   `runs/…/`), so a file that merely shares a name elsewhere is left to a human instead of merged by guess.
 * - unionMergePath: files AgentV's `.gitattributes` marks `merge=union` (its other `.indexes/*.jsonl`
 *   catalogs) and `.gitattributes` itself: merged line by line like git's union driver, so nothing
 *   AgentV wrote is dropped.
 */
import { catalogRowIdentity, indexRowIdentity, type RowIdentity } from './row-identity.js';

export type MergeKind = 'jsonl' | 'json';

const JSON_OVERLAYS = new Set(['tags.json', 'feedback.json']);

function segments(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '' && segment !== '.');
}

const CATALOG_PREFIX = 'agentv-results.';

function isOurCatalogName(dir: string | undefined, name: string): boolean {
  return dir === '.indexes' && name.startsWith(CATALOG_PREFIX) && name.endsWith('.jsonl') && name.length > CATALOG_PREFIX.length + '.jsonl'.length;
}

function kindOfSegments(parts: readonly string[]): MergeKind | null {
  const name = parts[parts.length - 1];
  if (name === undefined) return null;
  if (name === 'index.jsonl') return 'jsonl';
  if (parts[parts.length - 2] === 'catalog' && name.endsWith('.jsonl') && name !== '.jsonl') return 'jsonl';
  if (isOurCatalogName(parts[parts.length - 2], name)) return 'jsonl';
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
  if (parts.length === 2 && isOurCatalogName(parts[0], parts[1]!)) return 'jsonl';
  // AgentV 4.42's overlays of its run runs/<exp>/<ts>/: metadata/runs/<exp>/<ts>/{tags,feedback}.json
  // (layout/branch-layout.ts), merged like every overlay.
  if (parts[0] === 'metadata') return parts.length === 5 && parts[1] === 'runs' && JSON_OVERLAYS.has(parts[4]!) ? 'json' : null;
  // A run at the branch root (AgentV's layout): its manifest (ours at the root, AgentV 5's in
  // .internal/) and our overlays at the run's root.
  if (parts.length >= 2 && !parts[0]!.startsWith('.') && parts[0] !== 'runs' && parts[0] !== 'catalog') {
    const name = parts[parts.length - 1]!;
    if (parts.length === 2 && (name === 'index.jsonl' || JSON_OVERLAYS.has(name))) return kindOfSegments(parts);
    if (parts.length === 3 && parts[1] === '.internal' && name === 'index.jsonl') return 'jsonl';
    return null;
  }
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
  const name = parts[parts.length - 1] ?? '';
  if (isOurCatalogName(parts[parts.length - 2], name)) return catalogRowIdentity;
  return parts[parts.length - 2] === 'catalog' && name !== 'index.jsonl' ? catalogRowIdentity : indexRowIdentity;
}

/** A path merged line by line (git's union): AgentV's other `.indexes/*.jsonl`, and `.gitattributes`. */
export function unionMergePath(path: string): boolean {
  const parts = segments(path);
  if (parts.length === 1 && parts[0] === '.gitattributes') return true;
  return parts.length === 2 && parts[0] === '.indexes' && parts[1]!.endsWith('.jsonl') && !isOurCatalogName(parts[0], parts[1]!);
}

/**
 * git's union merge: our lines, then their lines we do not have, in order. `.gitattributes` keeps
 * AgentV's managed lines at the top when either side has them.
 */
export function unionLines(ours: string, theirs: string): string {
  const a = ours.split('\n').filter((l) => l !== '');
  const seen = new Set(a);
  for (const l of theirs.split('\n'))
    if (l !== '' && !seen.has(l)) {
      a.push(l);
      seen.add(l);
    }
  return a.length === 0 ? '' : a.join('\n') + '\n';
}
