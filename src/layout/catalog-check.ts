/**
 * Runs whose folders are on the results branch but that no catalog line lists (someone deleted or
 * hand-edited a catalog file). `list` reads only the catalog, so such runs would vanish silently;
 * it warns with their ids and the repair instead.
 *
 * Only the older layout (runs/<experiment>/<day>/<timestamp>/index.jsonl) needs this: runs at the
 * branch root that no catalog line lists are still listed, read from their own summary.json.
 */
import { lsTree, type Repo } from '../git/index.js';
import { LEGACY_RUNS_DIR as RUNS_DIR } from './branch-layout.js';

/** Run ids (`<experiment>/<timestamp>`) that have a folder with an index.jsonl on `tip`. */
export async function runFoldersOn(repo: Repo, tip: string): Promise<string[]> {
  const entries = await lsTree(repo, tip, { path: `${RUNS_DIR}/`, recursive: true });
  const ids: string[] = [];
  for (const e of entries) {
    const parts = e.path.split('/');
    if (parts.length === 5 && parts[4] === 'index.jsonl') ids.push(`${parts[1]}/${parts[3]}`);
  }
  return ids;
}

/** The runs on `tip` that the catalog does not list. */
export async function runsMissingFromCatalog(repo: Repo, tip: string, listed: ReadonlySet<string>): Promise<string[]> {
  return (await runFoldersOn(repo, tip)).filter((id) => !listed.has(id)).sort();
}

/** What to tell the user about them (list prints it as a warning). */
export function missingRunsWarning(branch: string, missing: readonly string[]): string {
  const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '');
  return `${missing.length} run${missing.length === 1 ? '' : 's'} on ${branch} ${missing.length === 1 ? 'is' : 'are'} missing from its catalog (a catalog file was deleted or edited): ${shown} — re-index each from its run folder with \`agentv-results pull <run_id> --out <dir> && agentv-results publish <dir>\``;
}

/**
 * Whether a day's catalog text (one JSON object per line) lists this run. Parsed line by line: a
 * substring test would also match the id inside another field, or miss it when spaced differently;
 * an unreadable line lists nothing.
 */
export function catalogListsRun(catalogText: string, runId: string): boolean {
  for (const line of catalogText.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const row = JSON.parse(line) as { run_id?: unknown } | null;
      if (row !== null && typeof row === 'object' && row.run_id === runId) return true;
    } catch {
      // a torn or foreign line: not evidence either way
    }
  }
  return false;
}
