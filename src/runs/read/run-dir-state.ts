/**
 * Telling what state a run workspace is in (finding them under a results root: runs/read/find-runs.ts).
 *
 * A run workspace is a directory holding a manifest (runs/export/source.ts `runManifestOf` says which
 * layout): `index.jsonl` (ours, AgentV's results docs' runners, `<root>/<experiment>/<timestamp>/`
 * or `<root>/<name>/`), AgentV 5's `.internal/index.jsonl` (`<root>/<run_id>/`) or AgentV 4.42's
 * root index.jsonl (`<root>/runs/<experiment>/<timestamp>/`).
 *
 * When is a run finished? Our runners write summary.json last, so a summary.json that parses
 * means finished. AgentV 5 is different: `agentv eval` writes a stub summary.json before the
 * first test (no tests, `metadata.planned_test_count`), streams rows into
 * `.internal/index.jsonl`, and at the end rewrites summary.json and then the whole index. Its run
 * is finished once summary.json lists its tests and the index holds a complete line for each.
 * AgentV 4.42 writes no summary.json: a stub benchmark.json (`planned_test_count`, no
 * `tests_run`) comes first, and at the end the final benchmark.json and then the whole index; its
 * run is finished once benchmark.json lists the tests it ran and the index holds a complete line
 * per planned test. Its benchmark.json plays the summary's part below.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runManifestOf, type RunDirLayout } from '../export/source.js';
import { readRegularText, unreadableFile } from '../../util/safe-open.js';
import { absentAs } from '../../errors/errors.js';

export { findRunDirs } from './find-runs.js';

export interface RunDirState {
  dir: string;
  /** `agentv`: AgentV 5's `.internal/index.jsonl` layout; `agentv-stable`: AgentV 4.42's. */
  layout: RunDirLayout;
  /** index.jsonl exists. */
  hasIndex: boolean;
  hasSummary: boolean;
  /** summary.json parses as JSON (a runner may still be writing it). */
  summaryComplete: boolean;
  summaryMtimeMs: number | null;
  /** Last modification of index.jsonl (null when absent). */
  indexMtimeMs: number | null;
}

const AGENTV_INDEX = join('.internal', 'index.jsonl');

/** AgentV 5: the final summary lists every test and the index has a complete line per listed test. */
async function agentvFinished(dir: string, summary: unknown): Promise<boolean> {
  if (!summary || typeof summary !== 'object') return false;
  const tests = (summary as { tests?: unknown }).tests;
  if (!Array.isArray(tests) || tests.length === 0) return false;
  return (await completeIndexLines(join(dir, AGENTV_INDEX))) >= tests.length;
}

/** AgentV 4.42: the final benchmark.json lists the tests run and the index has a complete line per planned test. */
async function stableFinished(dir: string, benchmark: unknown): Promise<boolean> {
  const meta = benchmark && typeof benchmark === 'object' ? (benchmark as { metadata?: unknown }).metadata : undefined;
  if (!meta || typeof meta !== 'object') return false;
  const { tests_run: tests, planned_test_count: planned } = meta as { tests_run?: unknown; planned_test_count?: unknown };
  if (!Array.isArray(tests) || tests.length === 0) return false;
  return (await completeIndexLines(join(dir, 'index.jsonl'))) >= (typeof planned === 'number' ? planned : tests.length);
}

/**
 * Complete lines of an index: a line is complete once its newline is written (the last element
 * of the split is the unterminated rest); -1 when a complete one does not parse.
 */
async function completeIndexLines(file: string): Promise<number> {
  // absent: no index yet, zero rows; anything else propagates
  const text = await readRegularText(file, { kind: 'run-file' }).catch(absentAs(''));
  let complete = 0;
  for (const line of text.split('\n').slice(0, -1)) {
    if (!line.trim()) continue;
    try {
      JSON.parse(line);
      complete++;
    } catch {
      // torn: a partial line means the run is still being written
      return -1;
    }
  }
  return complete;
}

/** null when the directory is gone. */
export async function inspectRun(dir: string): Promise<RunDirState | null> {
  // absent: a run directory removed meanwhile is no run; anything else propagates
  const st = await stat(dir).catch(absentAs(null));
  if (!st?.isDirectory()) return null;
  const manifest = await runManifestOf(dir);
  const layout: RunDirState['layout'] = manifest?.layout ?? 'bundle';
  // absent: no manifest yet; anything else propagates
  const index = manifest ? await stat(manifest.file).catch(absentAs(null)) : null;
  const hasIndex = index?.isFile() === true;
  const summaryName = layout === 'agentv-stable' ? 'benchmark.json' : 'summary.json';
  // absent: no summary yet; anything else propagates
  const summary = await stat(join(dir, summaryName)).catch(absentAs(null));
  let hasSummary = Boolean(summary?.isFile());
  let summaryComplete = false;
  if (summary?.isFile()) {
    // A summary that cannot be read (a pipe, EACCES) is said; only one that does not parse is "not finished" below.
    const at = join(dir, summaryName);
    const text = await readRegularText(at, { kind: 'run-file' }).catch((err: unknown) => {
      throw unreadableFile(at, {}, err);
    });
    try {
      const parsed: unknown = JSON.parse(text);
      summaryComplete = true;
      // AgentV's stub summary (written before the first test) is not the end of the run.
      if (layout === 'agentv' && !(await agentvFinished(dir, parsed))) hasSummary = summaryComplete = false;
      if (layout === 'agentv-stable' && !(await stableFinished(dir, parsed))) hasSummary = summaryComplete = false;
    } catch {
      // incomplete: a summary that does not parse is not a finished run
      summaryComplete = false;
    }
  }
  return {
    dir,
    layout,
    hasIndex,
    hasSummary,
    summaryComplete,
    summaryMtimeMs: summary?.mtimeMs ?? null,
    indexMtimeMs: hasIndex ? (index?.mtimeMs ?? null) : null,
  };
}
