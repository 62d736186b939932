/**
 * Publish runs the checks `validate` runs and refuses a run they reject: a row naming a missing
 * sidecar, a summary that disagrees with its rows, a path out of the run. Published, such a run
 * would fail `validate` (ours and AgentV's) on every machine that pulls it. `--allow-invalid`
 * publishes it anyway; nothing overrides the path checks (prepare.ts), which keep every file the
 * run names inside it.
 */
import { InputError } from '../errors/input-error.js';
import type { RunHandle } from '../runs/read/run-handle.js';
import type { LoadedRun } from '../runs/read/run-reader.js';
import { validateOpenedRun } from '../runs/validate.js';
import { runSafetyLine } from '../runs/read/run-safety.js';

/**
 * Refuses a run `validate` rejects. Returns the reading it judged (valid, so safe too: the run-safety
 * check is part of validation), which prepare then need not check again; null for a results file.
 */
export async function refuseInvalidRun(handle: RunHandle): Promise<LoadedRun | null> {
  // A results file is exported first (the export is valid by construction); a workspace is
  // judged as the user has it, through the handle publish opened (the same reading prepare uses).
  if (handle.dir === null) return null;
  const run = handle.named;
  const { report, unsafe } = await validateOpenedRun(handle, false);
  // The handle keeps its reading: this is the object prepare's load() returns.
  if (report.valid) return handle.load();
  // What the run-safety check refuses, --allow-invalid does not publish either (prepare.ts): say so.
  if (unsafe.length > 0)
    throw new InputError(
      `${run}: refusing to publish: ${unsafe.slice(0, 3).map(runSafetyLine).join('; ')}${unsafe.length > 3 ? ` (and ${unsafe.length - 3} more)` : ''} — run \`agentv-results validate ${run}\``,
    );
  const where = (p: { file: string; line?: number }) => `${p.file}${p.line === undefined ? '' : `:${p.line}`}`;
  const shown = report.problems.slice(0, 3).map((p) => `${where(p)}: ${p.message}`);
  const more = report.problems.length > 3 ? ` (and ${report.problems.length - 3} more)` : '';
  throw new InputError(
    `${run}: refusing to publish a run \`validate\` rejects: ${shown.join('; ')}${more} — run \`agentv-results validate ${run}\` to see every problem, fix them, or pass --allow-invalid to publish it as it is`,
  );
}
