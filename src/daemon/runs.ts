/**
 * Finding run workspaces under a results root and telling what state each is in.
 *
 * A run workspace is a directory holding a manifest: `index.jsonl` (ours, AgentV's results docs' runners,
 * `<root>/<experiment>/<timestamp>/` or `<root>/<name>/`) or AgentV 5's `.internal/index.jsonl`
 * (`<root>/<run_id>/`).
 *
 * When is a run finished? Our runners write summary.json last, so a summary.json that parses
 * means finished. AgentV 5 is different: `agentv eval` writes a stub summary.json before the
 * first test (no tests, `metadata.planned_test_count`), streams rows into
 * `.internal/index.jsonl`, and at the end rewrites summary.json and then the whole index. Its run
 * is finished once summary.json lists its tests and the index holds a complete line for each.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface RunDirState {
  dir: string;
  /** `agentv`: AgentV 5's `.internal/index.jsonl` layout. */
  layout: 'bundle' | 'agentv';
  /** index.jsonl exists. */
  hasIndex: boolean;
  hasSummary: boolean;
  /** summary.json parses as JSON (a runner may still be writing it). */
  summaryComplete: boolean;
  summaryMtimeMs: number | null;
  /** Last modification of index.jsonl (null when absent). */
  indexMtimeMs: number | null;
}

const hidden = (name: string): boolean => name.startsWith('.');

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && !hidden(e.name)).map((e) => join(dir, e.name));
}

const AGENTV_INDEX = join('.internal', 'index.jsonl');

async function hasManifest(dir: string): Promise<boolean> {
  return (await isFile(join(dir, 'index.jsonl'))) || (await isFile(join(dir, AGENTV_INDEX)));
}

/** Run workspaces one or two levels below `root` (sorted). Missing root: none. */
export async function findRunDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const first of await subdirs(root)) {
    if (await hasManifest(first)) {
      out.push(first);
      continue;
    }
    for (const second of await subdirs(first)) if (await hasManifest(second)) out.push(second);
  }
  return out.sort();
}

/** AgentV 5: the final summary lists every test and the index has a complete line per listed test. */
async function agentvFinished(dir: string, summary: unknown): Promise<boolean> {
  if (!summary || typeof summary !== 'object') return false;
  const tests = (summary as { tests?: unknown }).tests;
  if (!Array.isArray(tests) || tests.length === 0) return false;
  const text = await readFile(join(dir, AGENTV_INDEX), 'utf8').catch(() => '');
  const lines = text.split('\n');
  // A line is complete once its newline is written; the last element is the unterminated rest.
  let complete = 0;
  for (const line of lines.slice(0, -1)) {
    if (!line.trim()) continue;
    try {
      JSON.parse(line);
      complete++;
    } catch {
      return false;
    }
  }
  return complete >= tests.length;
}

/** null when the directory is gone. */
export async function inspectRun(dir: string): Promise<RunDirState | null> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) return null;
  let index = await stat(join(dir, 'index.jsonl')).catch(() => null);
  let layout: RunDirState['layout'] = 'bundle';
  if (!index?.isFile()) {
    const internal = await stat(join(dir, AGENTV_INDEX)).catch(() => null);
    if (internal?.isFile()) {
      index = internal;
      layout = 'agentv';
    }
  }
  const hasIndex = index?.isFile() === true;
  const summary = await stat(join(dir, 'summary.json')).catch(() => null);
  let hasSummary = Boolean(summary?.isFile());
  let summaryComplete = false;
  if (summary?.isFile()) {
    try {
      const parsed: unknown = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      summaryComplete = true;
      // AgentV's stub summary (written before the first test) is not the end of the run.
      if (layout === 'agentv' && !(await agentvFinished(dir, parsed))) hasSummary = summaryComplete = false;
    } catch {
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
