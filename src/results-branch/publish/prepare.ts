/**
 * Bring a run to a publishable state: a results file is exported first; a workspace whose runner
 * wrote only plain result rows (or no summary) is derived in place, keeping every file the runner
 * wrote. A fully derived workspace is read as it is.
 *
 * A run in AgentV 5's layout (`.internal/index.jsonl`, also today's pipeline bench) is never
 * rewritten in place — AgentV keeps reading that directory. `publish` puts its files on the
 * branches as AgentV wrote them (agentv-run.ts) and reads it only for its catalog line
 * (`prepareAgentvRun`, derived in memory); `prepareRun` still derives such a run into a scratch
 * copy for a caller that wants our bundle of it.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { exportRun, InputError } from '../../runs/export/export.js';
import { LayoutError, runLocation } from '../layout/branch-layout.js';
import { IndexRowSchema, type IndexRow } from '../../model/artifacts.js';
import { deriveScratchCopy, loadRun, workspaceDirOf, type LoadedRun } from '../../runs/read/run-reader.js';
import { runManifestOf } from '../../runs/export/source.js';
import { runSafetyLine, runSafetyProblems } from '../../util/run-safety.js';
import { readRegularText } from '../../util/safe-open.js';

async function isDerived(dir: string): Promise<boolean> {
  try {
    await access(join(dir, 'summary.json'));
    await access(join(dir, 'benchmark.json'));
  } catch {
    // absent: not a derived bundle
    return false;
  }
  // absent: no index, not a derived bundle
  const text = await readRegularText(join(dir, 'index.jsonl'), { kind: 'run-file' }).catch(() => '');
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.length === 0) return false;
  return lines.every((l) => {
    try {
      return IndexRowSchema.safeParse(JSON.parse(l)).success;
    } catch {
      // unparsable: not a derived bundle
      return false;
    }
  });
}

/**
 * The AgentV 5.x workspace `run` names (`.internal/index.jsonl`, no index of ours), or null: such
 * a run is published as AgentV wrote it (agentv-run.ts), not derived into a bundle of ours.
 */
export async function agentvWorkspaceOf(run: string, cwd = process.cwd()): Promise<string | null> {
  const dir = await workspaceDirOf(run, cwd);
  if (dir === null) return null;
  return (await runManifestOf(dir))?.layout === 'agentv' ? dir : null;
}

/** What a publish of an AgentV workspace needs besides its files (results-branch/publish/agentv-run.ts). */
export interface PreparedAgentvRun {
  dir: string;
  runId: string;
  experiment: string;
  /** The rows as we read them (one per test and attempt): the catalog line and commit title count them. */
  rows: IndexRow[];
  /** Our summary of the run (derived in memory; AgentV's own summary.json is published as it is). */
  summary: Record<string, unknown>;
  derived: false;
}

/**
 * Read an AgentV workspace for its catalog line: derived in memory (nothing written, neither in
 * the workspace nor in a scratch copy). The run id is the one the workspace recorded, which is
 * the directory AgentV's own publish uses; `experiment` only labels the catalog line and title.
 */
export async function prepareAgentvRun(dir: string, opts: { cwd?: string; experiment?: string } = {}): Promise<PreparedAgentvRun> {
  const derived = await exportRun({ source: dir, cwd: opts.cwd, dryRun: true, collectIndexRows: true });
  const rows = derived.indexRows ?? [];
  if (rows.length === 0) throw new InputError(`${dir}: the run has no rows; nothing to publish`);
  try {
    runLocation(derived.runId);
  } catch (err) {
    if (err instanceof LayoutError) throw new InputError(`${dir}: ${err.message} (taken from summary.json / .internal/index.jsonl) — fix the run id there`);
    throw err;
  }
  return { dir, runId: derived.runId, experiment: opts.experiment ?? derived.experiment, rows, summary: derived.summary, derived: false };
}

export async function prepareRun(run: string, opts: { cwd?: string; experiment?: string } = {}): Promise<LoadedRun & { dir: string; derived: boolean }> {
  const cwd = opts.cwd ?? process.cwd();
  let dir = await workspaceDirOf(run, cwd);
  let derived = false;
  if (dir === null) {
    const result = await exportRun({ source: run, cwd, experiment: opts.experiment });
    dir = result.outDir!;
    derived = true;
  } else if (((await runManifestOf(dir))?.layout ?? 'bundle') !== 'bundle') {
    dir = await deriveScratchCopy(dir, { cwd, experiment: opts.experiment, carryRunnerFiles: true });
    derived = true;
  } else if (!(await isDerived(dir))) {
    await exportRun({ source: dir, out: dir, cwd });
    derived = true;
  }
  const loaded = await loadRun(dir, { cwd });
  if (loaded.problems.length > 0) throw new InputError(`${dir}: the run manifest has problems (run \`agentv-results validate ${dir}\`): ${loaded.problems[0]}`);
  if (loaded.rows.length === 0) throw new InputError(`${dir}: the run has no rows; nothing to publish`);
  // Paths and ids come from data: the one check validate, report and show run (util/run-safety.ts),
  // before anything is split or written, with or without --allow-invalid.
  const unsafe = runSafetyProblems(dir, loaded.rows as unknown as Record<string, unknown>[], loaded.rowLines).map(runSafetyLine);
  if (unsafe.length > 0)
    throw new InputError(
      `${dir}: refusing to publish: ${unsafe.slice(0, 3).join('; ')}${unsafe.length > 3 ? ` (and ${unsafe.length - 3} more)` : ''} — run \`agentv-results validate ${dir}\``,
    );
  // The run id comes from the run's own files (data): one that could escape runs/ is an input
  // error (exit 2), reported before anything is split or written.
  try {
    runLocation(loaded.runId);
  } catch (err) {
    if (err instanceof LayoutError) throw new InputError(`${dir}: ${err.message} (taken from summary.json / index.jsonl) — fix the run id there`);
    throw err;
  }
  return { ...loaded, dir, derived };
}
