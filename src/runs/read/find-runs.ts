/**
 * Finding run workspaces under a results root: a directory holding a manifest — `index.jsonl`
 * (ours, AgentV's results docs' runners, `<root>/<experiment>/<timestamp>/` or `<root>/<name>/`),
 * AgentV 5's `.internal/index.jsonl` (`<root>/<run_id>/`) or AgentV 4.42's root index.jsonl
 * (`<root>/runs/<experiment>/<timestamp>/`). The daemon watches what this finds; `combine` takes a
 * folder that holds runs (a CI shard as it was uploaded, of either AgentV line) as the runs in it.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { absentAs } from '../../errors/errors.js';
import { AGENTV_INDEX } from '../export/source.js';

const hidden = (name: string): boolean => name.startsWith('.');

async function isFile(path: string): Promise<boolean> {
  // absent: not a file; anything else propagates
  return stat(path).then((s) => s.isFile(), absentAs(false));
}

async function subdirs(dir: string): Promise<string[]> {
  // absent: no results directory yet, no runs; anything else propagates
  const entries = await readdir(dir, { withFileTypes: true }).catch(absentAs([]));
  return entries.filter((e) => e.isDirectory() && !hidden(e.name)).map((e) => join(dir, e.name));
}

/** True when the directory holds a run manifest (a root index.jsonl or AgentV 5's `.internal/index.jsonl`). */
export async function hasRunManifest(dir: string): Promise<boolean> {
  return (await isFile(join(dir, 'index.jsonl'))) || (await isFile(join(dir, AGENTV_INDEX)));
}

/** A run, or AgentV 5's run whose `.internal/` was dropped (summary.json, no manifest): reading it says what is missing. */
export async function looksLikeRun(dir: string): Promise<boolean> {
  return (await hasRunManifest(dir)) || (await isFile(join(dir, 'summary.json')));
}

/** AgentV 4.42 keeps its runs in `<root>/runs/<experiment>/<timestamp>/`. */
const STABLE_RUNS = 'runs';

/** Run workspaces one or two levels below `root`, and AgentV 4.42's under `runs/` (sorted). Missing root: none. */
export async function findRunDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const first of await subdirs(root)) {
    if (await hasRunManifest(first)) {
      out.push(first);
      continue;
    }
    const stableRoot = first === join(root, STABLE_RUNS);
    for (const second of await subdirs(first)) {
      if (await hasRunManifest(second)) out.push(second);
      else if (stableRoot) for (const third of await subdirs(second)) if (await hasRunManifest(third)) out.push(third);
    }
  }
  return out.sort();
}

/**
 * The runs inside a folder that is not one, as a CI artifact holds them (`shards/` of downloaded
 * shards: `<shard>/<run_id>/` of AgentV 5, `<shard>/runs/<experiment>/<timestamp>/` of AgentV
 * 4.42), at most `depth` levels down, hidden folders skipped (sorted). A folder holding
 * summary.json but no manifest (AgentV 5's run whose `.internal/` an upload dropped) is returned
 * as a run too, so that reading it says what is missing.
 */
export async function runDirsWithin(root: string, depth = 4): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, left: number): Promise<void> => {
    for (const child of await subdirs(dir)) {
      if (await looksLikeRun(child)) out.push(child);
      else if (left > 1) await walk(child, left - 1);
    }
  };
  await walk(root, depth);
  return out.sort();
}
