/**
 * `delete`: remove local run workspaces — and nothing else.
 *
 * A recursive delete of a mistyped path is unrecoverable, so a directory is deleted only when it
 * positively looks like a run workspace and nothing about it looks like something else:
 *
 * - it is a real directory given directly (not a symlink, not a file; `<run>/index.jsonl` names
 *   its directory);
 * - it is not `/`, the home directory or one of its ancestors, the current directory or one of
 *   its ancestors, and not a git repository root (no `.git` inside);
 * - it holds a valid manifest: index.jsonl whose every line parses as an index row (at least
 *   one), or a summary.json with `schema_version: agentv.summary.v1`;
 * - its top level holds only what a run holds: the run files, and the folders its rows' paths
 *   really lead into (suite folders, generated test bundles). Anything else (a README, `src/`,
 *   notes, dotfiles) means it is not (only) a run.
 *
 * All paths are checked before anything is deleted; one refusal deletes nothing. The checks run
 * again right before each deletion, because a confirmation prompt can sit for a while. A
 * directory is first renamed to a hidden staging name in its parent and then removed, so an
 * interruption never leaves a half-deleted run under the real name.
 */
import { randomBytes } from 'node:crypto';
import { lstat, readdir, realpath, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, parse, resolve, sep } from 'node:path';
import { SUMMARY_SCHEMA_VERSION } from '../model/artifacts.js';
import { sanitizeSegment } from '../model/path-segments.js';
import { safeRelativePath } from './read/run-files.js';
import { InputError } from '../errors/input-error.js';
import { loadRun, needsDerivation, type LoadedRun } from './read/run-reader.js';
import { readOptionalJson } from '../util/safe-open.js';
import { absentAs } from '../errors/errors.js';
import * as z from 'zod';
import { parseArgs, parseOptions, PathsCwdField } from '../options/verb-options.js';

/** The options of `planDelete` (the `delete` command's flags come from the same fields). */
export const DeleteOptionsSchema = z.strictObject({
  /** Run workspace directories (or their index.jsonl files). */
  paths: z.array(z.string()),
  /** Relative paths resolve from here (default: the process's working directory). */
  cwd: PathsCwdField,
  /** For tests: the home directory to protect (default: os.homedir()). */
  home: z.string().default(() => homedir()),
});
export type DeleteOptions = z.input<typeof DeleteOptionsSchema>;

export const DeleteTargetSchema = z.strictObject({
  /** As given on the command line. */
  path: z.string(),
  /** Absolute, symlink-free directory that will be removed. */
  dir: z.string(),
  run_id: z.string().nullable(),
  rows: z.number(),
});
export type DeleteTarget = z.output<typeof DeleteTargetSchema>;

/** What `planDelete` returns and `deleteRuns` takes: the checked targets and where they were checked from. */
export const DeletePlanSchema = z.strictObject({
  targets: z.array(DeleteTargetSchema),
  cwd: z.string(),
  home: z.string(),
});
export type DeletePlan = z.output<typeof DeletePlanSchema>;

/** Files a run workspace holds at its top level besides the attempt folders. */
const RUN_FILES = new Set([
  'index.jsonl',
  'summary.json',
  'benchmark.json',
  'timing.json',
  'tags.json',
  'feedback.json',
  'projection_bundle.json',
  'report.html',
]);
/** Litter file managers leave everywhere; not a sign of a non-run directory. */
const HARMLESS = new Set(['.DS_Store', 'Thumbs.db', 'desktop.ini']);
/** Our own interrupted staging folders (AtomicDir). */
const STAGING = /^\..+\.(tmp|old)-\d+-[0-9a-f]+$/;

const isWithin = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);

async function realOrSelf(path: string): Promise<string> {
  // absent: a path that does not exist compares as itself; anything else propagates
  return realpath(path).catch(absentAs(resolve(path)));
}

/**
 * The top-level names a run accounts for: the run files, and the first segment of every path its
 * rows carry that actually exists inside it (a row's `eval_path` may name the user's own eval
 * file elsewhere; it only vouches for a folder when the run really holds that file).
 */
async function expectedTopLevel(dir: string, run: LoadedRun | null, summary: Record<string, unknown> | null): Promise<Set<string>> {
  const names = new Set(RUN_FILES);
  const candidates = new Set<string>();
  const add = (value: unknown) => {
    const safe = typeof value === 'string' ? safeRelativePath(value) : null;
    if (safe !== null && !names.has(safe.split('/')[0]!)) candidates.add(safe);
  };
  for (const row of run?.rows ?? []) {
    for (const [key, value] of Object.entries(row)) if (key.endsWith('_path') || key.endsWith('_dir')) add(value);
    for (const p of row.artifact_pointers ?? []) add(p.path);
  }
  for (const rel of candidates) {
    const top = rel.split('/')[0]!;
    if (
      !names.has(top) &&
      // absent: not there; anything else propagates
      (await lstat(join(dir, rel)).then(() => true, absentAs(false)))
    )
      names.add(top);
  }
  // A summary-only run: its attempt folders are named after its (sanitized) suites.
  if (Array.isArray(summary?.suites)) for (const s of summary.suites) if (typeof s === 'string') names.add(sanitizeSegment(s));
  return names;
}

async function readSummary(dir: string): Promise<Record<string, unknown> | null> {
  // No summary, or not JSON: no facts to read from it. One that cannot be read is said, not taken for none.
  const value = await readOptionalJson(join(dir, 'summary.json'), { kind: 'run-file' });
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Why `given` must not be deleted, or the target it resolves to. */
async function inspect(given: string, cwd: string, home: string): Promise<{ target: DeleteTarget } | { refusal: string }> {
  let abs = resolve(cwd, given);
  // absent: reported as "does not exist" just below; anything else propagates
  let st = await lstat(abs).catch(absentAs(null));
  if (!st) return { refusal: 'does not exist' };
  if (st.isFile() && basename(abs) === 'index.jsonl') {
    abs = dirname(abs);
    st = await lstat(abs);
  }
  if (st.isSymbolicLink()) return { refusal: 'is a symbolic link — pass the run directory itself' };
  if (!st.isDirectory()) return { refusal: 'is not a directory (a run workspace is a directory holding index.jsonl)' };
  const dir = await realpath(abs);
  if (parse(dir).root === dir) return { refusal: 'is the filesystem root' };
  const realHome = await realOrSelf(home);
  if (isWithin(realHome, dir)) return { refusal: dir === realHome ? 'is your home directory' : 'contains your home directory' };
  const realCwd = await realOrSelf(cwd);
  if (isWithin(realCwd, dir)) return { refusal: dir === realCwd ? 'is the current directory' : 'contains the current directory' };
  const entries = await readdir(dir);
  if (entries.includes('.git')) return { refusal: 'is a git repository root (.git inside)' };

  let run: LoadedRun | null = null;
  // Only our own index rows vouch for a run. A manifest of plain result rows (or AgentV's
  // .internal/index.jsonl) is something loadRun reads through a derived copy, but deleting it
  // would trust rows that do not say they are a run: treat it as no manifest here.
  const foreign = await needsDerivation(dir);
  if (!foreign) {
    try {
      run = await loadRun(dir);
    } catch {
      run = null; // no index.jsonl: the summary may still prove it is a run
    }
  }
  const summary = run?.summary ?? (await readSummary(dir));
  const manifestOk = run !== null && run.layout === 'bundle' && run.rows.length > 0 && !run.issues.some((p) => p.file === 'index.jsonl');
  const summaryOk = summary?.schema_version === SUMMARY_SCHEMA_VERSION;
  if (!manifestOk && !summaryOk) {
    const why = foreign
      ? entries.includes('index.jsonl')
        ? 'index.jsonl rows are not run index rows'
        : "its manifest is AgentV's .internal/index.jsonl, not run index rows"
      : run === null
        ? 'no index.jsonl'
        : run.rows.length === 0 && run.issues.length === 0
          ? 'index.jsonl has no rows'
          : 'index.jsonl rows are not run index rows';
    return { refusal: `is not a run workspace (${why}, and no summary.json with schema_version ${SUMMARY_SCHEMA_VERSION})` };
  }
  const expected = await expectedTopLevel(dir, run, summary);
  const unexpected = entries.filter((e) => !expected.has(e) && !HARMLESS.has(e) && !STAGING.test(e)).sort();
  if (unexpected.length > 0) {
    const shown = unexpected.slice(0, 5).join(', ') + (unexpected.length > 5 ? `, … (${unexpected.length} in all)` : '');
    return { refusal: `holds entries a run workspace does not (${shown}) — if it really is a run, move those out first` };
  }
  const runId = typeof summary?.run_id === 'string' ? summary.run_id : (run?.rows[0]?.run_id ?? null);
  return { target: { path: given, dir, run_id: runId, rows: run?.rows.length ?? (typeof summary?.total === 'number' ? summary.total : 0) } };
}

/** Check every path; throws (deleting nothing) when any must not be deleted. */
export async function planDelete(options: DeleteOptions): Promise<DeletePlan> {
  const opts = parseOptions('planDelete', DeleteOptionsSchema, options);
  const { cwd, home } = opts;
  if (opts.paths.length === 0) throw new InputError('delete needs at least one run workspace path');
  const targets: DeleteTarget[] = [];
  const refusals: string[] = [];
  for (const given of opts.paths) {
    const r = await inspect(given, cwd, home);
    if ('refusal' in r) refusals.push(`${given}: ${r.refusal}`);
    else targets.push(r.target);
  }
  // The same run twice is harmless; one run inside another means one is not what it seems.
  const unique: DeleteTarget[] = [];
  for (const t of targets) {
    if (unique.some((u) => u.dir === t.dir)) continue;
    const nested = targets.find((o) => o.dir !== t.dir && isWithin(t.dir, o.dir));
    if (nested) refusals.push(`${t.path}: is inside ${nested.path}, another path given`);
    else unique.push(t);
  }
  if (refusals.length > 0) throw new InputError(`refusing to delete (nothing was deleted):\n  ${refusals.join('\n  ')}`);
  return { targets: unique, cwd, home };
}

/** Delete the planned runs, re-checking each right before it goes. */
export async function deleteRuns(plan: DeletePlan): Promise<DeleteTarget[]> {
  const checked = parseArgs('deleteRuns', { plan: DeletePlanSchema }, [plan]).plan;
  const deleted: DeleteTarget[] = [];
  for (const t of checked.targets) {
    const again = await inspect(t.dir, checked.cwd, checked.home);
    if ('refusal' in again)
      throw new InputError(
        `${t.path}: changed since it was checked and now ${again.refusal} — not deleted${deleted.length ? ` (already deleted: ${deleted.map((d) => d.path).join(', ')})` : ''}`,
      );
    const staging = join(dirname(t.dir), `.${basename(t.dir)}.old-${process.pid}-${randomBytes(4).toString('hex')}`);
    await rename(t.dir, staging);
    await rm(staging, { recursive: true, force: true });
    deleted.push(t);
  }
  return deleted;
}
