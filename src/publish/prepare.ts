/**
 * Bring a run to a publishable state: a results file is exported first; a workspace whose runner
 * wrote only plain result rows (or no summary) is derived in place, keeping every file the runner
 * wrote. A fully derived workspace is read as it is.
 *
 * A run in AgentV 5's layout (`.internal/index.jsonl`, also today's pipeline bench) is never
 * rewritten in place — AgentV keeps reading that directory. `publish` puts its files on the
 * branches as AgentV wrote them (agentv-run.ts) and reads it only for its catalog line
 * (`prepareAgentvRun`). Both read the run through its handle (runs/read/run-handle.ts): a run of
 * another layout is derived once, into a scratch copy the handle owns and removes.
 */
import { exportRun } from '../runs/export/export.js';
import { InputError } from '../errors/input-error.js';
import { runLocation, type RunLocation } from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import type { IndexRow } from '../model/artifacts.js';
import { readExportedBundle, type LoadedRun } from '../runs/read/run-reader.js';
import type { DeriveChoice, RunHandle } from '../runs/read/run-handle.js';
import { runSafetyLine, runSafetyProblems } from '../runs/read/run-safety.js';

/**
 * How publish derives a run of another layout, by its layout: the runner's files are carried into
 * the copy (they are published too); an AgentV 5 run keeps the run id it recorded, so `--experiment`
 * only labels its catalog line (prepareAgentvRun).
 */
export function publishDerivation(experiment: string | undefined): (layout: string) => DeriveChoice {
  return (layout) => (layout === 'agentv' ? { carryRunnerFiles: true } : { experiment, carryRunnerFiles: true });
}

/**
 * True for the AgentV 5.x workspace (`.internal/index.jsonl`, no index of ours): such a run is
 * published as AgentV wrote it (agentv-run.ts), not derived into a bundle of ours.
 */
export function isAgentvWorkspace(run: RunHandle): boolean {
  return run.dir !== null && run.layout === 'agentv';
}

/** What a publish of an AgentV workspace needs besides its files (publish/agentv-run.ts). */
export interface PreparedAgentvRun {
  dir: string;
  runId: string;
  experiment: string;
  /** The rows as we read them (one per test and attempt): the catalog line and commit title count them. */
  rows: IndexRow[];
  /** Our summary of the run (derived in memory; AgentV's own summary.json is published as it is). */
  summary: Record<string, unknown>;
  derived: false;
  /** Where the run goes on the results branch (runLocation), decided once here. */
  location: RunLocation;
}

/**
 * Paths and ids come from data: the one check validate, report and show run (runs/read/run-safety.ts),
 * before anything is split or written, with or without --allow-invalid. The rows are checked where
 * they were read (a derived copy for another layout), the folder walked is the user's (`source`):
 * its links, pipes and devices, and the pointers inside its result files (AgentV 5.x's too).
 */
function refuseUnsafeToPublish(run: RunHandle, loaded: LoadedRun, source: string): void {
  const dir = loaded.dir ?? source;
  const walkRoot = loaded.sourceDir ?? dir;
  const tree = run.tree && (run.tree.root === walkRoot || run.tree.root === dir) ? run.tree : undefined;
  const unsafe = runSafetyProblems(dir, loaded.rows as unknown as Record<string, unknown>[], loaded.rowLines, { walkRoot, tree }).map(runSafetyLine);
  if (unsafe.length > 0)
    throw new InputError(
      `${source}: refusing to publish: ${unsafe.slice(0, 3).join('; ')}${unsafe.length > 3 ? ` (and ${unsafe.length - 3} more)` : ''} — run \`agentv-results validate ${source}\``,
    );
}

/** How a run is prepared: the experiment to label it with, and the reading validation already judged safe (not checked twice). */
export interface PrepareChoice {
  experiment?: string;
  /** The reading `validate` passed (publish/validate-gate.ts): the same reading is not run through the safety check again; any other (a re-export, a results file's export) is. */
  judgedSafe?: LoadedRun | null;
}

/**
 * Read an AgentV workspace for its catalog line, from the run handle's one derivation (the copy
 * validation read). The run id is the one the workspace recorded, which is the directory AgentV's
 * own publish uses; `experiment` only labels the catalog line and title.
 */
export async function prepareAgentvRun(run: RunHandle, opts: PrepareChoice = {}): Promise<PreparedAgentvRun> {
  const dir = run.dir!;
  // The reading validation made (derived once, with the run id the workspace recorded).
  const derived = await run.load();
  const rows = derived.rows;
  if (rows.length === 0) throw new InputError(`${dir}: the run has no rows; nothing to publish`);
  if (derived.problems.length > 0)
    throw new InputError(`${dir}: the run manifest has problems (run \`agentv-results validate ${dir}\`): ${derived.problems[0]}`);
  const experiment = opts.experiment ?? derived.experiment;
  const summary = derived.summary ?? {};
  const location = admit(run, derived, dir, opts.judgedSafe, experiment, 'summary.json / .internal/index.jsonl');
  return { dir, runId: derived.runId, experiment, rows, summary, derived: false, location };
}

/**
 * A run admitted to the branch, and where it goes there. Refused when unsafe (unless this is the
 * reading validation already judged safe: not checked twice); placed by its id, experiment and the
 * timestamp its summary records (`metadata.timestamp`, else `timestamp`). The run id comes from the
 * run's own files (data): one that could escape runs/ is an input error (exit 2), reported before
 * anything is split or written.
 */
function admit(run: RunHandle, loaded: LoadedRun, dir: string, judgedSafe: LoadedRun | null | undefined, experiment: string, from: string): RunLocation {
  if (loaded !== judgedSafe) refuseUnsafeToPublish(run, loaded, dir);
  const summary = loaded.summary;
  const meta = summary?.metadata as Record<string, unknown> | undefined;
  const t = meta?.timestamp ?? summary?.timestamp;
  try {
    return runLocation(loaded.runId, { experiment, timestamp: typeof t === 'string' ? t : undefined });
  } catch (err) {
    if (err instanceof LayoutError) throw new InputError(`${dir}: ${err.message} (taken from ${from}) — fix the run id there`);
    throw err;
  }
}

export async function prepareRun(run: RunHandle, opts: PrepareChoice = {}): Promise<LoadedRun & { dir: string; derived: boolean; location: RunLocation }> {
  let loaded: LoadedRun;
  let derived = false;
  if (run.dir === null) {
    // A results file: exported first (where export puts it), then read from there.
    const result = await exportRun({ source: run.named, cwd: run.cwd, experiment: opts.experiment });
    loaded = readExportedBundle(result.outDir!);
    derived = true;
  } else if ((run.layout ?? 'bundle') !== 'bundle') {
    // Derived once, into the scratch copy the handle owns (the one validation read).
    loaded = await run.load(run.layout === 'agentv' && opts.experiment !== undefined ? { experiment: opts.experiment, carryRunnerFiles: true } : undefined);
    derived = true;
  } else {
    loaded = await run.load();
    // Derived already: a bundle of ours whose every index line is a row of ours, with its summary and benchmark beside it.
    const tree = run.tree;
    const derivedAlready =
      loaded.layout === 'bundle' &&
      tree !== null &&
      tree.files.has('summary.json') &&
      tree.files.has('benchmark.json') &&
      loaded.rows.length > 0 &&
      !loaded.issues.some((p) => p.file === 'index.jsonl');
    if (!derivedAlready) {
      // Our own bundle missing what export writes: derived in place, then read again.
      await exportRun({ source: run.dir, out: run.dir, cwd: run.cwd });
      run.reopen();
      loaded = await run.load();
      derived = true;
    }
  }
  const dir = loaded.dir!;
  if (loaded.problems.length > 0) throw new InputError(`${dir}: the run manifest has problems (run \`agentv-results validate ${dir}\`): ${loaded.problems[0]}`);
  if (loaded.rows.length === 0) throw new InputError(`${dir}: the run has no rows; nothing to publish`);
  return { ...loaded, dir, derived, location: admit(run, loaded, dir, opts.judgedSafe, loaded.experiment, 'summary.json / index.jsonl') };
}
