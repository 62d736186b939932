/**
 * What the user pointed us at: a results JSONL file, a run workspace, or a workspace's index.jsonl.
 *
 * A workspace's index.jsonl may hold plain result rows (a runner that wrote nothing else) or
 * index rows that point at sidecars; the latter are hydrated back into result rows from their
 * sidecars (hydrate-row.ts) so that derivation has one input shape either way.
 */
import { checkRunPath, specialInputMessage, missingManifestHint } from '../read/run-files.js';
import { stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { sanitizeSegment } from '../../model/path-segments.js';
import { absentAs } from '../../errors/errors.js';
import { openRegularFile, readOptionalJson } from '../../util/safe-open.js';
import { SourceError } from '../../errors/read-errors.js';
import { runShown } from '../../util/run-shown.js';
import { isJsonObject } from '../../model/json-object.js';

export interface ResolvedSource {
  kind: 'results-file' | 'workspace';
  /**
   * Which run layout a workspace is (see RunDirLayout; `agentv` also covers today's pipeline
   * bench). null for a results file.
   */
  layout: RunDirLayout | null;
  /** The JSONL file to stream. */
  file: string;
  /** The workspace directory, for `workspace` sources. */
  dir: string | null;
  /** The name used for the experiment when none is given. */
  defaultExperiment: string;
  /** run_id recorded by the workspace itself, when it has one. */
  recordedRunId: string | null;
  recordedExperiment: string | null;
  /** benchmark.json's (or AgentV's summary.json's) metadata.eval_file, kept when a workspace is re-derived. */
  recordedEvalFile: string | null;
  /**
   * A results file: the run directory its rows' relative paths (`answer_path`, `transcript_path`,
   * as AgentV's index rows write them) are read against — the directory named like the file
   * without `.jsonl` beside it when there is one, else the file's own directory.
   */
  pathBase?: string;
}

async function statOrNull(path: string) {
  try {
    return await stat(path);
  } catch (err) {
    // absent: null is the answer; anything else propagates
    return absentAs(null)(err);
  }
}

/** A JSON object the run holds at `rel`, or null (missing, not JSON, or not inside the run: never read through a link out); a file there that cannot be read is an error. */
async function readRunJsonOrNull(dir: string, rel: string): Promise<Record<string, unknown> | null> {
  const at = await checkRunPath(dir, rel);
  if (at.kind !== 'ok' || at.isDir) return null;
  // Not JSON: no manifest object. A file that cannot be read (a pipe, EACCES) is said, not taken for none.
  const value = await readOptionalJson(at.abs, { kind: 'run-file' });
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** AgentV 5 keeps its manifest in `<run>/.internal/index.jsonl` (a path relative to the run). */
export const AGENTV_INDEX = '.internal/index.jsonl';

/**
 * The run layouts we read from a directory: `bundle` (a root index.jsonl: ours, the attempt-N
 * layout, an older pipeline bench), `agentv` (AgentV 5: `.internal/index.jsonl`) and
 * `agentv-stable` (AgentV 4.42, `.agentv/results/runs/<experiment>/<timestamp>/`: a root
 * index.jsonl of its result rows, each naming its `<suite>/<test>/` folder as `artifact_dir`,
 * beside benchmark.json and timing.json, no summary.json).
 */
export type RunDirLayout = 'bundle' | 'agentv' | 'agentv-stable';

/** The first line of a file (at most 1 MiB of it, read 64 KiB at a time), or null when unreadable. */
async function firstLine(path: string): Promise<string | null> {
  let handle: FileHandle | null = null;
  try {
    handle = (await openRegularFile(path, { kind: 'run-file', limit: Number.MAX_SAFE_INTEGER })).handle;
    const chunks: Buffer[] = [];
    let size = 0;
    while (size < 1 << 20) {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, size);
      if (bytesRead === 0) break;
      const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
      chunks.push(buf.subarray(0, nl === -1 ? bytesRead : nl));
      size += bytesRead;
      if (nl !== -1) break;
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch {
    // unreadable: no first line to sniff
    return null;
  } finally {
    await handle?.close();
  }
}

/** True when a root index.jsonl's first row is an AgentV 4.42 result row (it names its per-test folder; ours never do). */
async function isStableIndex(file: string): Promise<boolean> {
  const line = await firstLine(file);
  if (!line?.trim()) return false;
  try {
    const row: unknown = JSON.parse(line);
    return isJsonObject(row) && typeof row.artifact_dir === 'string' && typeof row.test_id === 'string' && row.result_dir === undefined;
  } catch {
    // unparsable: not this layout's row
    return false;
  }
}

/**
 * The manifest of a run directory and which layout it is, or null when the directory holds none.
 * A root index.jsonl wins: that is what every tool reading both (AgentV included) prefers after
 * its own `.internal/` one, and a directory holding ours is ours.
 */
export async function runManifestOf(dir: string): Promise<{ file: string; layout: RunDirLayout } | null> {
  for (const [rel, layout] of [
    ['index.jsonl', 'bundle'],
    [AGENTV_INDEX, 'agentv'],
  ] as const) {
    // The manifest is a file the run holds like any other: a link out of the run, a pipe or a
    // device is refused here, before anything opens it (its bytes never reach a message).
    const at = await checkRunPath(dir, rel);
    if (at.kind === 'bad') throw new SourceError(`${dir}: refusing to read ${rel}: ${at.message}`);
    if (at.kind === 'ok' && !at.isDir) {
      const file = join(dir, rel);
      return { file, layout: layout === 'bundle' && (await isStableIndex(file)) ? 'agentv-stable' : layout };
    }
  }
  return null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** `shownAs`: the name the source is known by when it is a copy (a published run's id); its errors name it so. */
export async function resolveSource(source: string, cwd = process.cwd(), shownAs?: string): Promise<ResolvedSource> {
  const abs = resolve(cwd, source);
  const name = runShown(source, shownAs);
  const st = await statOrNull(abs);
  if (!st)
    throw new SourceError(
      `${name}: no such file or directory — pass a results .jsonl file, a run directory (ours or AgentV's .agentv/results/<run_id>), or its index.jsonl`,
      { data: { path: name } },
    );
  const special = specialInputMessage(st);
  if (special) throw new SourceError(`${name}: ${special}`, { data: { path: name } });
  let dir: string | null = null;
  let file = abs;
  let layout: RunDirLayout | null = null;
  if (st.isDirectory()) {
    dir = abs;
    const manifest = await runManifestOf(abs);
    if (!manifest) {
      throw new SourceError(
        `${name}: not a run workspace (neither index.jsonl nor .internal/index.jsonl inside${missingManifestHint(abs)}) — pass a results .jsonl file or a run directory such as .agentv/results/<run_id>`,
        { data: { path: name } },
      );
    }
    file = manifest.file;
    layout = manifest.layout;
  } else if (basename(abs) === 'index.jsonl') {
    const parent = dirname(abs);
    if (basename(parent) === '.internal') {
      dir = dirname(parent);
      layout = 'agentv';
    } else {
      dir = parent;
      // Checked before isStableIndex opens it: never read through a link out of the run.
      const at = await checkRunPath(dir, 'index.jsonl');
      if (at.kind === 'bad') throw new SourceError(`${name}: refusing to read index.jsonl: ${at.message}`, { data: { path: name } });
      layout = (await isStableIndex(abs)) ? 'agentv-stable' : 'bundle';
    }
    if (layout === 'agentv') {
      const at = await checkRunPath(dir, AGENTV_INDEX);
      if (at.kind === 'bad') throw new SourceError(`${name}: refusing to read .internal/index.jsonl: ${at.message}`, { data: { path: name } });
    }
  }
  if (dir === null) {
    const name = basename(abs).replace(/\.jsonl?$/i, '') || 'results';
    const beside = abs.replace(/\.jsonl?$/i, '');
    const besideDir = beside !== abs ? await statOrNull(beside) : null;
    return {
      pathBase: besideDir?.isDirectory() ? beside : dirname(abs),
      kind: 'results-file',
      layout: null,
      file,
      dir: null,
      defaultExperiment: sanitizeSegment(name),
      recordedRunId: null,
      recordedExperiment: null,
      recordedEvalFile: null,
    };
  }
  const summary = await readRunJsonOrNull(dir, 'summary.json');
  const summaryMeta = isJsonObject(summary?.metadata) ? summary.metadata : undefined;
  const benchmark = await readRunJsonOrNull(dir, 'benchmark.json');
  const metadata = isJsonObject(benchmark?.metadata) ? benchmark.metadata : undefined;
  // AgentV keeps runs as direct children of .agentv/results/ and the experiment in the summary;
  // a run it made without --experiment belongs to its "default" experiment.
  const parentName = basename(dirname(dir));
  return {
    recordedEvalFile: str(metadata?.eval_file) ?? str(summaryMeta?.eval_file),
    kind: 'workspace',
    layout,
    file,
    dir,
    defaultExperiment: parentName === 'results' ? 'default' : sanitizeSegment(parentName || 'results'),
    recordedRunId: str(summary?.run_id),
    recordedExperiment: str(summary?.experiment) ?? str(summaryMeta?.experiment) ?? str(metadata?.experiment),
  };
}
