/**
 * Many published runs materialized at once, for readers that open runs by the hundred (the static
 * site): one `ls-tree -r` per tip for a chunk of run directories, one `cat-file --batch` for all
 * their files, one per artifacts tip for their payloads — where `pull` spends a handful of git
 * processes on each run. The same checks as `pull` (regular files only, every path inside the run,
 * each payload against its pointer), the same writer (`writeRunDir`).
 *
 * A fast path only: a run it cannot settle this way (archived, not on the tip that lists it, a file
 * or pointer refused) is left out of the answer, and the caller pulls it alone, which says why. A
 * payload the local artifacts branch and its tracking ref do not hold is left out of the workspace
 * (the on-demand reader, `pullPayloads`, looks further: the archive, a fetch, the object store).
 */
import { lsTree, readBlobs, type TreeEntry } from '../git/index.js';
import { OBJECT_STORE_REF } from '../store/object-store.js';
import { overlayDirOf, runLocationCandidates, type RunLocation } from '../layout/branch-layout.js';
import { resolveTarget, type TargetOptions } from '../repo/target.js';
import { tipOfListed, type ListedRun, type ListResult } from './list.js';
import { runFileEntries, runFilesFrom, writeRunDir, type RunFileEntry } from './pull.js';
import { checkContent, payloadPointers, type RunFile } from './pull-payloads.js';
import { branchRefs, branchTips } from '../repo/remote-view.js';

export interface BatchPullOptions extends TargetOptions {
  /** Listed runs (listRuns), each read from the tip that lists it. */
  runs: ListedRun[];
  listed: Pick<ListResult, 'tips' | 'read'>;
  /** Where each run's workspace goes (a directory that does not exist yet). */
  destOf: (runId: string) => string;
  /** Also write the payloads the artifacts branch holds (pull --with-artifacts, without failing on a missing one). */
  withArtifacts?: boolean;
}

export interface BatchPulled {
  dir: string;
  /** The run's tags.json and feedback.json as the same tip holds them (null: none); absent for a layout that keeps them elsewhere. */
  overlays?: { tags: string | null; feedback: string | null };
}

/** Run directories per `ls-tree` (its argv stays far below any system's limit). */
const PATHS_PER_LISTING = 200;

interface Planned {
  run: ListedRun;
  loc: RunLocation;
  wanted: RunFileEntry[];
}

export async function pullRunsBatch(opts: BatchPullOptions): Promise<Map<string, BatchPulled>> {
  const out = new Map<string, BatchPulled>();
  const target = await resolveTarget(opts);
  const byTip = new Map<string, ListedRun[]>();
  for (const r of opts.runs) {
    const tip = tipOfListed(r, opts.listed);
    if (tip === null || r.archived !== undefined) continue;
    byTip.set(tip, [...(byTip.get(tip) ?? []), r]);
  }
  const planned: Planned[] = [];
  for (const [tip, runs] of byTip) {
    for (let i = 0; i < runs.length; i += PATHS_PER_LISTING) {
      const chunk = runs.slice(i, i + PATHS_PER_LISTING);
      const byPath = new Map(chunk.map((r) => [r.path, r]));
      const entries = new Map<string, TreeEntry[]>();
      for (const e of await lsTree(target.repo, tip, { paths: chunk.map((r) => `${r.path}/`), recursive: true })) {
        // The run whose directory holds the entry: the longest listed path that prefixes it.
        let owner: string | null = null;
        for (let at = e.path.indexOf('/'); at >= 0; at = e.path.indexOf('/', at + 1)) if (byPath.has(e.path.slice(0, at))) owner = e.path.slice(0, at);
        if (owner !== null) entries.set(owner, [...(entries.get(owner) ?? []), e]);
      }
      for (const r of chunk) {
        const list = entries.get(r.path);
        const loc = safe(() => runLocationCandidates(r.run_id).find((c) => c.path === r.path));
        if (!list || !loc) continue;
        const wanted = safe(() => runFileEntries(loc, list, r.path));
        if (wanted) planned.push({ run: r, loc, wanted });
      }
    }
  }
  const blobs = await readBlobs(target.repo, [...new Set(planned.flatMap((p) => p.wanted.map((w) => w.sha)))]);
  const ready: { p: Planned; files: RunFile[]; payloads: { key: string; path: string; size: number | undefined; sha256: string }[] }[] = [];
  for (const p of planned) {
    const files = safe(() => runFilesFrom(p.loc, target.repo, p.wanted, blobs));
    const pointers = files && (opts.withArtifacts ? safe(() => payloadPointers(p.loc, files)) : []);
    if (!files || !pointers) continue;
    ready.push({ p, files, payloads: pointers.filter((x) => x.ref !== OBJECT_STORE_REF) });
  }
  const art = branchRefs(target, 'artifacts');
  const got = new Map<string, Buffer>();
  const keys = [...new Set(ready.flatMap((r) => r.payloads.map((x) => x.key)))];
  if (keys.length > 0) {
    const tips = await branchTips(target, art);
    for (const tip of [tips.local, tips.remote]) {
      const missing = keys.filter((k) => !got.has(k));
      if (tip === null || missing.length === 0) continue;
      const read = await readBlobs(
        target.repo,
        missing.map((k) => `${tip}:${k}`),
      );
      for (const k of missing) {
        const data = read.get(`${tip}:${k}`);
        if (data) got.set(k, data);
      }
    }
  }
  for (const { p, files, payloads } of ready) {
    const payloadFiles: RunFile[] = [];
    let refused = false;
    for (const x of payloads) {
      const data = got.get(x.key);
      if (!data) continue;
      // A payload that does not match its pointer: the run is left to `pull`, which refuses it by name.
      const checked = safe(() => {
        checkContent(p.loc, x.path, data, x.size, x.sha256, art.name);
        return true;
      });
      if (checked === null) refused = true;
      payloadFiles.push({ path: x.path, data, executable: false });
    }
    if (refused) continue;
    const byPath = new Map<string, RunFile>();
    for (const f of [...files, ...payloadFiles]) byPath.set(f.path, f);
    const dir = opts.destOf(p.run.run_id);
    await writeRunDir(dir, byPath.values());
    const text = (name: string) => files.find((f) => f.path === name)?.data.toString('utf8') ?? null;
    out.set(p.run.run_id, overlayDirOf(p.run.path) === p.run.path ? { dir, overlays: { tags: text('tags.json'), feedback: text('feedback.json') } } : { dir });
  }
  return out;
}

/** The value, or null when computing it refused (the run is then left to the caller's own pull). */
function safe<T>(fn: () => T): T | null {
  try {
    return fn() ?? null;
  } catch {
    // best effort: a refused run is pulled alone by the caller, whose error names the problem
    return null;
  }
}
