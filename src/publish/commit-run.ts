/**
 * Write one run onto the results and artifacts branches as two commits, then move both refs in
 * one compare-and-swap transaction: after a crash either neither ref moved or both did, and a
 * results commit never points at payloads that are not committed.
 *
 * Only the run's own paths and its day's catalog file change, so the commit costs O(size of the
 * run). Publishing identical content again changes nothing and moves no ref.
 */
import { blobId } from '../git/hash.js';
import { type FastImportSession, type FileChange, type Ident, lsTree, readObjects, readRefs, type Repo, updateRefs, writeCommit } from '../git/index.js';
export { catalogRow, updatedCatalog } from '../layout/catalog-rows.js';
import { catalogCounts, updatedCatalog } from '../layout/catalog-rows.js';
import { AGENTV_MANIFESTS, keepAgentvBranchRows, keepBranchRows, keptFile } from './append-only-rows.js';
import type { CatalogRow } from '../model/artifacts.js';
import { gitattributesUpdate, type RunLocation } from '../layout/branch-layout.js';
import type { SplitFile } from './split.js';

/** Overlays are edited on the branch by teammates; a publish never overwrites them. */
const OVERLAYS = new Set(['tags.json', 'feedback.json']);

import { GENESIS_MESSAGE } from '../repo/genesis.js';
import { PublishError } from '../errors/publish-errors.js';
export { GENESIS_COMMIT, GENESIS_MESSAGE } from '../repo/genesis.js';
export const AGENTV_IDENT = { name: 'AgentV Results', email: 'agentv@results-repo' } as const;

/** Writes (or finds) the genesis commit; `kind` is kept for callers of the older API: both branches share it. */
const GENESIS_AUTHOR: Ident = { ...AGENTV_IDENT, date: '0 +0000' };

export async function rootCommit(repo: Repo, _kind: 'results' | 'artifacts' = 'results'): Promise<string> {
  const { commit } = await writeCommit(repo, { parent: null, files: [], message: GENESIS_MESSAGE, author: GENESIS_AUTHOR });
  return commit;
}

/**
 * Changes that make `base/<path>` hold `files` (overlays excepted); empty when it already does.
 * With `deleteMissing`, paths not in `files` are removed too (exactly `files`).
 */
async function runTreeChanges(
  repo: Repo,
  tip: string | null,
  base: string,
  files: SplitFile[],
  deleteMissing: boolean,
  keep: ReadonlySet<string> = new Set(),
): Promise<FileChange[]> {
  const existing = new Map<string, string>();
  const modes = new Map<string, string>();
  // tip null: the run's directory is not on the branch (the common case: a new run), nothing to list.
  if (tip)
    for (const e of await lsTree(repo, tip, { path: base, recursive: true }))
      if (e.type === 'blob') {
        existing.set(e.path, e.sha);
        modes.set(e.path, e.mode);
      }
  const changes: FileChange[] = [];
  const wanted = new Set<string>();
  for (const f of files) {
    const path = `${base}/${f.path}`;
    wanted.add(path);
    if (OVERLAYS.has(f.path) && existing.has(path)) continue;
    // Hash only to compare with a file already there; a new run skips it.
    const there = existing.get(path);
    if (there === undefined || there !== blobId(repo, f.data) || modes.get(path) !== (f.mode ?? '100644'))
      changes.push({ path, data: f.data, ...(f.mode ? { mode: f.mode } : {}) });
  }
  if (!deleteMissing) return changes;
  for (const path of existing.keys()) {
    const rel = path.slice(base.length + 1);
    if (!wanted.has(path) && !OVERLAYS.has(rel) && !keptFile(rel, keep)) changes.push({ path, delete: true });
  }
  return changes;
}

export interface CommitRunInput {
  repo: Repo;
  resultsRef: string;
  artifactsRef: string;
  location: RunLocation;
  metadata: SplitFile[];
  payloads: SplitFile[];
  catalog: CatalogRow;
  /**
   * A run AgentV wrote: the run's directory on the results branch becomes exactly `metadata`
   * (overlays kept), as AgentV's own publish leaves it, except that rows the branch has and the
   * workspace lacks (another machine's shard) are kept with their files and AgentV's summary.json
   * is recomputed over the union (append-only-rows.ts).
   */
  replaceRun?: boolean;
  message: string;
  author: Ident;
  /** Called right before refs move: throws if the publish must abort (lost lock). */
  beforeRefUpdate?: () => void;
  /**
   * fast-import sessions already fed the run's blobs (publish/prefeed.ts): each branch's commit is
   * written on its session, naming the blobs it was offered. Absent: a session is started per commit.
   */
  sessions?: { results: FastImportSession; artifacts: FastImportSession };
  /** Both branches' local tips, read by the caller under the same lock (null: no such branch); absent: read here. */
  tips?: { results: string | null; artifacts: string | null };
}

export interface CommitRunResult {
  status: 'published' | 'updated' | 'already-published';
  /** The catalog line as written: its counts include rows the branch kept (keep-rows.ts). */
  catalog: CatalogRow;
  /** Rows of the run on the branch that the workspace lacked, kept. */
  keptRows: number;
  results: { before: string | null; after: string };
  artifacts: { before: string | null; after: string };
}

async function localTips(repo: Repo, resultsRef: string, artifactsRef: string): Promise<{ results: string | null; artifacts: string | null }> {
  const read = await readRefs(repo, [resultsRef, artifactsRef]);
  return { results: read.get(resultsRef) ?? null, artifacts: read.get(artifactsRef) ?? null };
}

export async function commitRun(input: CommitRunInput): Promise<CommitRunResult> {
  const { repo, location } = input;
  // Independent reads and writes run side by side: each is its own git process, and a publish is
  // mostly waiting for them (the two fast-imports use both cores of a small machine).
  const tips = input.tips ?? (await localTips(repo, input.resultsRef, input.artifactsRef));
  const resultsTip = tips.results;
  const artifactsTip = tips.artifacts;
  // One cat-file answers whether the run's directory exists on either branch and reads the day's
  // catalog; the directories are only listed (for idempotent republishing) when they exist.
  const catalogSpec = resultsTip ? `${resultsTip}:${location.catalogPath}` : null;
  const resultsDirSpec = resultsTip ? `${resultsTip}:${location.path}` : null;
  const artifactsDirSpec = artifactsTip ? `${artifactsTip}:${location.path}` : null;
  const attributesSpec = resultsTip ? `${resultsTip}:.gitattributes` : null;
  const artifactsAttributesSpec = artifactsTip ? `${artifactsTip}:.gitattributes` : null;
  const indexSpec = resultsTip ? `${resultsTip}:${location.path}/index.jsonl` : null;
  // A run AgentV wrote keeps its rows in its own manifest, beside AgentV's summary.json.
  const agentvSpecs =
    resultsTip && input.replaceRun ? [...AGENTV_MANIFESTS, 'summary.json'].map((rel) => [rel, `${resultsTip}:${location.path}/${rel}`] as const) : [];
  const found = await readObjects(
    repo,
    [catalogSpec, resultsDirSpec, artifactsDirSpec, attributesSpec, artifactsAttributesSpec, indexSpec, ...agentvSpecs.map(([, spec]) => spec)].filter(
      (x): x is string => x !== null,
    ),
  );
  const present = (spec: string | null): boolean => spec !== null && found.get(spec) != null;
  const blob = (spec: string | null): Buffer | null => {
    const o = spec ? found.get(spec) : null;
    return o?.type === 'blob' ? o.data : null;
  };
  const keep = !present(resultsDirSpec)
    ? null
    : input.replaceRun
      ? keepAgentvBranchRows(
          input.metadata,
          new Map(agentvSpecs.flatMap(([rel, spec]) => (blob(spec) ? [[rel, blob(spec)!] as const] : []))),
          location.path.slice(location.path.lastIndexOf('/') + 1),
        )
      : keepBranchRows(input.metadata, blob(indexSpec), location.runId);
  const counts = keep?.counts ?? (keep && keep.rows.length > 0 ? catalogCounts(keep.rows) : null);
  const catalog = counts ? { ...input.catalog, ...counts } : input.catalog;
  const [payloadChanges, metadataChanges] = await Promise.all([
    // Payloads are never deleted: a republished run may not have them locally (pulled without
    // --with-artifacts) and its index still points at them.
    runTreeChanges(repo, present(artifactsDirSpec) ? artifactsTip : null, location.path, input.payloads, false),
    runTreeChanges(repo, present(resultsDirSpec) ? resultsTip : null, location.path, keep?.metadata ?? input.metadata, true, keep?.keepPaths),
  ]);
  const catalogObject = catalogSpec ? found.get(catalogSpec) : null;
  if (catalogObject && catalogObject.type !== 'blob')
    throw new PublishError(`${location.catalogPath} on ${input.resultsRef} is a ${catalogObject.type}, not a file`);
  const currentCatalog = catalogObject ? catalogObject.data.toString('utf8') : '';
  const nextCatalog = updatedCatalog(currentCatalog, catalog);
  if (nextCatalog !== currentCatalog) metadataChanges.push({ path: location.catalogPath, data: nextCatalog });
  const attributesOf = (spec: string | null): string | null => {
    const o = spec ? found.get(spec) : null;
    return o && o.type === 'blob' ? o.data.toString('utf8') : null;
  };
  // Only with a change of our own: a republish that changes nothing stays a no-op.
  const attributes = gitattributesUpdate(attributesOf(attributesSpec));
  if (attributes !== null && metadataChanges.length > 0) metadataChanges.push({ path: '.gitattributes', data: attributes });
  const artifactsAttributes = gitattributesUpdate(attributesOf(artifactsAttributesSpec));
  if (artifactsAttributes !== null && payloadChanges.length > 0) payloadChanges.push({ path: '.gitattributes', data: artifactsAttributes });
  const wasThere = resultsTip !== null && currentCatalog.includes(`"run_id":${JSON.stringify(location.runId)}`);

  if (payloadChanges.length === 0 && metadataChanges.length === 0 && resultsTip && artifactsTip) {
    return {
      status: 'already-published',
      catalog,
      keptRows: keep?.kept ?? 0,
      results: { before: resultsTip, after: resultsTip },
      artifacts: { before: artifactsTip, after: artifactsTip },
    };
  }

  // The two commits are written concurrently: neither is reachable until the single ref
  // transaction below, so their order does not matter for what a crash can leave behind.
  // A branch that does not exist yet starts at AgentV's genesis, written in the same fast-import
  // as the first commit on it (a fresh repository: two git processes, not three). Both streams may
  // write it: their packs differ by the rest of what they hold, so they never collide.
  const onRoot = { message: GENESIS_MESSAGE, author: GENESIS_AUTHOR };
  // The results branch's files are unlike each other (grading, metrics, answers in turn): packed
  // without deltas, which fast-import only tries against the blob before (git/fast-import.ts).
  const write = async (
    tip: string | null,
    files: FileChange[],
    message: string,
    session: FastImportSession | undefined,
    deltas: boolean,
  ): Promise<string | null> => {
    if (files.length === 0) return tip;
    const opts = { parent: tip, files, message, author: input.author, ...(tip ? {} : { onRoot }) };
    return (session ? await session.commit(opts) : await writeCommit(repo, opts, { deltas })).commit;
  };
  const [artifactsWritten, resultsWritten] = await Promise.all([
    // AgentV's title for its sidecar commit, and its trailer (the run's directory name).
    write(
      artifactsTip,
      payloadChanges,
      `chore(results): publish artifact sidecars for ${location.path}\n\nAgentV-Run: ${location.path}\n`,
      input.sessions?.artifacts,
      true,
    ),
    write(resultsTip, metadataChanges, input.message, input.sessions?.results, false),
  ]);
  // A branch left at nothing (no tip, nothing to write on it) starts at the genesis alone.
  const genesis = artifactsWritten === null || resultsWritten === null ? await rootCommit(repo) : null;
  const artifactsAfter = artifactsWritten ?? genesis!;
  const resultsAfter = resultsWritten ?? genesis!;
  input.beforeRefUpdate?.();
  await updateRefs(
    repo,
    [
      { ref: input.artifactsRef, new: artifactsAfter, old: artifactsTip },
      { ref: input.resultsRef, new: resultsAfter, old: resultsTip },
    ].filter((u) => u.new !== u.old),
    { message: `agentv-results: publish ${location.runId}` },
  );
  return {
    status: wasThere ? 'updated' : 'published',
    catalog,
    keptRows: keep?.kept ?? 0,
    results: { before: resultsTip, after: resultsAfter },
    artifacts: { before: artifactsTip, after: artifactsAfter },
  };
}
