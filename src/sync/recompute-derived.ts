/**
 * Derived files are never merged as text. In a merge, a run's summary.json, benchmark.json and
 * timing.json, and its line in the day's catalog, are functions of the run's rows: when the rows
 * of a run were merged (both sides changed its index.jsonl) or one of those files diverged, they
 * are recomputed from the merged index.jsonl in the same merge commit. Only rows (identity-keyed
 * union) and overlays (JSON union) are merged; a conflict is genuine only when the same row or
 * overlay key diverged.
 *
 * Used by mergeCommits in two steps: `resolver()` wraps the path resolver so that a derived file
 * (and a catalog line that differs only because the run's numbers moved) does not conflict but is
 * marked for recomputation; `recompute()` then writes the recomputed files over the placeholders.
 */
import { basename } from 'node:path';
import { readBlobs, type FileChange, type Repo } from '../git/index.js';
import { catalogRowIdentity, mergeJsonl, type ConflictedPathInput, type TreeResolution } from '../merge/index.js';
import { agentvCatalogCounts, catalogCounts } from '../layout/catalog-rows.js';
import type { CatalogRow } from '../model/artifacts.js';
import { agentvRunSummary } from '../runs/export/agentv-summary.js';
import { catalogPathFor, runLocation } from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import { json } from '../runs/export/row-files.js';
import { parseIndexRows, rederiveRunDocs } from '../runs/export/derived-docs.js';

export type PathResolver = (input: ConflictedPathInput) => TreeResolution;

const DERIVED = new Set(['summary.json', 'benchmark.json', 'timing.json']);

/** The run directory of a run-level file: `<run_id>/<name>` at the root, or the older `runs/<exp>/<day>/<ts>/<name>`. */
function runDirOf(path: string, names: ReadonlySet<string>): string | null {
  const parts = path.split('/');
  const name = parts[parts.length - 1]!;
  if (!names.has(name)) return null;
  if (parts.length === 2 && !parts[0]!.startsWith('.')) return parts[0]!;
  if (parts.length === 5 && parts[0] === 'runs') return parts.slice(0, 4).join('/');
  return null;
}

const isCatalogFile = (path: string): boolean => /^\.indexes\/agentv-results\.[^/]+\.jsonl$/.test(path) || /^catalog\/[^/]+\.jsonl$/.test(path);

const INDEX = new Set(['index.jsonl']);

/** The run directory of AgentV 5's own index, `<run_id>/.internal/index.jsonl` at the root. */
function agentvRunDirOf(path: string): string | null {
  const parts = path.split('/');
  return parts.length === 3 && parts[1] === '.internal' && parts[2] === 'index.jsonl' && !parts[0]!.startsWith('.') ? parts[0]! : null;
}

function lineIdentity(line: string): string | null {
  try {
    return catalogRowIdentity(JSON.parse(line), line);
  } catch {
    // unparsable: keyed by its bytes
    return null;
  }
}

export class Rederive {
  /** Run directories whose derived files are to be recomputed. */
  readonly runs = new Set<string>();
  /** Of those, the runs where a derived file or catalog line diverged: recomputing them is not optional. */
  private readonly diverged = new Set<string>();
  /** Derived files held by a placeholder -> why they conflicted (reported if they cannot be recomputed). */
  private readonly unresolved = new Map<string, string>();
  /** Run directory -> the catalog file that holds a placeholder for its line. */
  private readonly catalogOf = new Map<string, string>();

  /** Notes the runs whose rows a resolution merged. */
  noteResolved(path: string): void {
    const run = runDirOf(path, INDEX) ?? agentvRunDirOf(path);
    if (run) this.runs.add(run);
  }

  resolver(inner: PathResolver): PathResolver {
    return (input) => {
      const r = inner(input);
      const run = runDirOf(input.path, DERIVED);
      if (run && r.action === 'conflict') {
        // A placeholder for now; if the run has no rows to recompute from, this conflict stands.
        this.runs.add(run);
        this.diverged.add(run);
        this.unresolved.set(input.path, r.reason);
        return { action: 'write', data: input.ours ?? input.theirs ?? Buffer.alloc(0) };
      }
      if (r.action === 'conflict' && isCatalogFile(input.path)) return this.catalogPlaceholder(input) ?? r;
      return r;
    };
  }

  /**
   * Catalog lines of one run that differ on both sides (their counts moved with the rows): keep
   * ours for now and recompute it below. Null when anything else conflicts (a deleted line, a line
   * we cannot read): that stays a conflict.
   */
  private catalogPlaceholder(input: ConflictedPathInput): TreeResolution | null {
    const text = (b: Buffer | null) => b?.toString('utf8') ?? '';
    const first = mergeJsonl(text(input.base), text(input.ours), text(input.theirs), { identity: catalogRowIdentity });
    if (first.ok) return { action: 'write', data: Buffer.from(first.text) };
    if (!first.conflicts.every((c) => c.ours.length === 1 && c.theirs.length === 1)) return null;
    const oursLine = new Map(first.conflicts.map((c) => [c.identity, c.ours[0]!]));
    const theirs = text(input.theirs)
      .split('\n')
      .map((l) => {
        const id = l.trim() === '' ? null : lineIdentity(l);
        return id !== null && oursLine.has(id) ? oursLine.get(id)! : l;
      });
    const second = mergeJsonl(text(input.base), text(input.ours), theirs.join('\n'), { identity: catalogRowIdentity });
    if (!second.ok) return null;
    for (const c of first.conflicts) {
      const path = (JSON.parse(c.ours[0]!) as { path?: unknown }).path;
      if (typeof path !== 'string') return null;
      this.runs.add(path);
      this.diverged.add(path);
      this.catalogOf.set(path, input.path);
    }
    return { action: 'write', data: Buffer.from(second.text) };
  }

  /**
   * The recomputed files of every marked run, read from the merge as resolved so far (`changes`
   * over `tree`) and from `first` for what the previous documents carry. Returns the changes to
   * add, or the runs whose rows cannot be read (their derived files then stay a genuine conflict).
   */
  async recompute(
    repo: Repo,
    at: { tree: string; first: string; second: string },
    changes: FileChange[],
  ): Promise<{ changes: FileChange[]; conflicts: { path: string; reason: string }[] }> {
    const out: FileChange[] = [];
    const conflicts: { path: string; reason: string }[] = [];
    if (this.runs.size === 0) return { changes: out, conflicts };
    const written = new Map<string, Buffer | string | null>();
    for (const c of changes) written.set(c.path, 'delete' in c ? null : c.data);
    const specs: string[] = [];
    for (const run of this.runs) {
      specs.push(`${at.tree}:${run}/index.jsonl`, `${at.tree}:${run}/.internal/index.jsonl`);
      // The merged tree's own derived files too: one that merged cleanly (both sides wrote the same
      // bytes, e.g. two shards with equal counts) is not in `changes`, yet is stale once the rows
      // were unioned. Without it, `read` answered null and the stale file stayed.
      for (const name of DERIVED) specs.push(`${at.first}:${run}/${name}`, `${at.second}:${run}/${name}`, `${at.tree}:${run}/${name}`);
    }
    const catalogFiles = new Map<string, string>();
    for (const run of this.runs) {
      const file = this.catalogFileOf(run);
      if (file) catalogFiles.set(run, file);
    }
    for (const file of new Set(catalogFiles.values())) specs.push(`${at.tree}:${file}`);
    const blobs = await readBlobs(repo, specs);
    const read = (path: string): string | null => {
      if (written.has(path)) {
        const d = written.get(path);
        return d === null || d === undefined ? null : d.toString();
      }
      return blobs.get(`${at.tree}:${path}`)?.toString('utf8') ?? null;
    };
    const parse = (spec: string): Record<string, unknown> | null => {
      try {
        return JSON.parse(blobs.get(spec)?.toString('utf8') ?? 'null') as Record<string, unknown> | null;
      } catch {
        // unparsable: a document that does not parse is not re-derived
        return null;
      }
    };
    const catalogText = new Map<string, string>();
    const prev = (run: string, name: string) => [parse(`${at.first}:${run}/${name}`), parse(`${at.second}:${run}/${name}`)];
    for (const run of this.runs) {
      const index = read(`${run}/index.jsonl`);
      const agentvIndex = index === null ? read(`${run}/.internal/index.jsonl`) : null;
      if (agentvIndex !== null) {
        // A run in AgentV 5's layout: its summary.json is AgentV's, recomputed as AgentV does;
        // the run has no benchmark or timing of ours.
        const summary = agentvRunSummary(agentvIndex, prev(run, 'summary.json'), basename(run));
        const current = read(`${run}/summary.json`);
        const next = json(summary);
        if (current !== null && current !== next) out.push({ path: `${run}/summary.json`, data: next });
        const file = catalogFiles.get(run);
        if (file) {
          const before = catalogText.get(file) ?? read(file);
          if (before !== null) catalogText.set(file, withRecountedLine(before, basename(run), agentvCatalogCounts(summary)));
        }
        continue;
      }
      if (index === null) {
        // No rows to derive from (not a run of ours, or deleted on one side): a diverged file stays a conflict.
        for (const name of DERIVED) {
          const reason = this.unresolved.get(`${run}/${name}`);
          if (reason !== undefined) conflicts.push({ path: `${run}/${name}`, reason });
        }
        continue;
      }
      const rows = parseIndexRows(index);
      if (rows === null) {
        // Rows we cannot read: where nothing derived diverged, the merged files stand as they are.
        if (!this.diverged.has(run)) continue;
        conflicts.push({
          path: `${run}/summary.json`,
          reason: `${run}/index.jsonl has lines that are not rows; its summary, benchmark and timing cannot be recomputed — resolve it by hand`,
        });
        continue;
      }
      const prevDoc = (name: string) => prev(run, name).find((d) => d !== null) ?? null;
      const docs = rederiveRunDocs(rows, {
        summary: prevDoc('summary.json'),
        benchmark: prevDoc('benchmark.json'),
        timing: prevDoc('timing.json'),
        runId: basename(run),
      });
      const byName: Record<string, unknown> = { 'summary.json': docs.summary, 'benchmark.json': docs.benchmark, 'timing.json': docs.timing };
      for (const name of DERIVED) {
        // Only the documents the run has (a foreign writer's run may lack some).
        const current = read(`${run}/${name}`);
        const next = json(byName[name]);
        if (current !== null && current !== next) out.push({ path: `${run}/${name}`, data: next });
      }
      const file = catalogFiles.get(run);
      if (file) {
        const before = catalogText.get(file) ?? read(file);
        if (before !== null) catalogText.set(file, withRecountedLine(before, String(docs.summary.run_id), catalogCounts(rows)));
      }
    }
    for (const [file, text] of catalogText) if (text !== read(file)) out.push({ path: file, data: text });
    return { changes: out, conflicts };
  }

  private catalogFileOf(run: string): string | null {
    const placeholder = this.catalogOf.get(run);
    if (placeholder) return placeholder;
    try {
      return catalogPathFor(runLocation(basename(run)).day);
    } catch (err) {
      if (err instanceof LayoutError) return null;
      throw err;
    }
  }
}

/** The catalog with this run's line recounted; its other fields (experiment, path, archived, …) kept. */
function withRecountedLine(text: string, runId: string, counts: Pick<CatalogRow, 'targets' | 'total' | 'passed' | 'failed' | 'pass_rate'>): string {
  return text
    .split('\n')
    .map((l) => {
      if (l.trim() === '') return l;
      let row: Record<string, unknown>;
      try {
        row = JSON.parse(l) as Record<string, unknown>;
      } catch {
        // unparsable: the line is kept as it is
        return l;
      }
      return row.run_id === runId ? JSON.stringify({ ...row, ...counts }) : l;
    })
    .join('\n');
}
