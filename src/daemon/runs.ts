/**
 * Finding run workspaces under a results root and telling what state each is in.
 *
 * A run workspace is a directory holding index.jsonl, either `<root>/<experiment>/<timestamp>/`
 * (AgentV's layout) or `<root>/<name>/` (an explicit `--output`). It is in progress while
 * index.jsonl exists and summary.json does not; the runner writes summary.json last, so a
 * summary.json that parses means the run is finished.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface RunDirState {
  dir: string;
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

/** Run workspaces one or two levels below `root` (sorted). Missing root: none. */
export async function findRunDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const first of await subdirs(root)) {
    if (await isFile(join(first, 'index.jsonl'))) {
      out.push(first);
      continue;
    }
    for (const second of await subdirs(first)) if (await isFile(join(second, 'index.jsonl'))) out.push(second);
  }
  return out.sort();
}

/** null when the directory is gone. */
export async function inspectRun(dir: string): Promise<RunDirState | null> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) return null;
  const index = await stat(join(dir, 'index.jsonl')).catch(() => null);
  const hasIndex = index?.isFile() === true;
  const summary = await stat(join(dir, 'summary.json')).catch(() => null);
  let summaryComplete = false;
  if (summary?.isFile()) {
    try {
      JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      summaryComplete = true;
    } catch {
      summaryComplete = false;
    }
  }
  return { dir, hasIndex, hasSummary: Boolean(summary?.isFile()), summaryComplete, summaryMtimeMs: summary?.mtimeMs ?? null, indexMtimeMs: hasIndex ? (index?.mtimeMs ?? null) : null };
}
