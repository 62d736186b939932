/**
 * Runs by name: what every command that reads a run (`compare`, `gate`, `summary`, `trend`)
 * accepts in place of a path, resolved to a directory the run reader can open.
 *
 *   <path>                         a run directory, an index.jsonl or a results .jsonl on disk
 *   <run_id>                       a run published on the results branch (as `list` shows it)
 *   <experiment>::<id>             a published run by experiment and id, whichever AgentV layout
 *   <experiment>/<timestamp>         holds it (4.42's own id, and our older two-segment id)
 *   @<tag>                         the newest published run carrying the tag (`@baseline`)
 *   @latest                        the newest published run
 *   …:experiment=<e>,tag=<t>       narrows either form (`@latest:experiment=nightly`)
 *
 * A path that exists always wins, so a local directory is never shadowed by a run id. Published
 * runs are found with `list` and materialized with `pull` (their public functions: nothing here
 * reads the branch itself) into a scratch directory that `dispose()` removes — the user's checkout
 * is never touched. When the run is not found on this machine's refs and a remote is configured,
 * the results branch is fetched and the lookup retried; `fetch` fetches first. Either way one call
 * fetches at most once: `gate @baseline <run> --fetch` asks the remote once, not once per name and
 * once more per pull (each fetch is a round of negotiation with the remote).
 *
 * This sits in front of the run reader (src/runs/read/run-reader.ts), which only ever sees paths.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { runDirName, runIdentityKey } from '../layout/branch-layout.js';
import { LayoutError } from '../errors/read-errors.js';
import { loadRun } from '../runs/read/run-reader.js';
import { exportRun } from '../runs/export/export.js';
import { ReadError } from '../errors/read-errors.js';
import { resolveTarget, targetRemoteUrl, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { treeUrl } from '../sync/compare-link.js';
import { EXIT, exitCodeFor } from '../errors/errors.js';
import { redactUrl } from '../errors/redact.js';
import { listRuns, type ListedRun } from './list.js';
import { pull } from './pull.js';
import { flag, objectOf, parseArgs, parseOptions, TargetFields } from '../options/verb-options.js';
import * as z from 'zod';

/**
 * The options of `resolveRunNames` (and `publishedRunId`): where published runs are read from. The
 * flagged fields are the flags every command that takes a run name has (cli/run-names.ts).
 */
export const RunNameOptionsSchema = z.strictObject({
  /** Fetch the results branch before looking a published run up (else only when it is missing). */
  fetch: z
    .boolean()
    .default(false)
    .meta(flag('--fetch', 'Fetch the results branch before reading published runs (without it, only when a run is not found locally)')),
  remote: z.string().optional().meta(flag('--remote <name>', 'Remote of published runs (default: results.remote, else origin)')),
  configFile: TargetFields.configFile,
  project: TargetFields.project,
  cwd: TargetFields.cwd,
  env: TargetFields.env,
  overrides: TargetFields.overrides,
  timeoutMs: z.number().optional(),
  /**
   * The fetch state of a command that resolves its names in several calls (gate: the candidate,
   * then the baseline): shared, so the command fetches at most once in all. Default: per call.
   */
  fetchOnce: objectOf<FetchOnce>().optional(),
  /**
   * A results .jsonl (not a run workspace) is exported into a scratch run first, for readers that
   * need a workspace (show, failures, report, validate, summary, combine). Off by default: compare,
   * gate and trend read a results file themselves (and name it as given), and `export` takes the
   * file itself, its own options shaping the export.
   */
  deriveResultsFiles: z.boolean().default(false),
  /** @internal A target resolved once by a reader that asks many questions (repo/target.ts `resolved`). */
  resolved: objectOf<PublishTarget>().optional(),
});

/** What a caller passes (a target resolved once is the package's own: internal). */
export interface RunNameOptions extends Omit<z.input<typeof RunNameOptionsSchema>, 'resolved'> {
  /** @internal */
  resolved?: PublishTarget;
}

/** Where the published runs are read: the target fields of the parsed options, what `listRuns` and `pull` take. */
type Where = Pick<z.output<typeof RunNameOptionsSchema>, 'remote' | 'configFile' | 'project' | 'cwd' | 'env' | 'overrides' | 'timeoutMs' | 'resolved'>;

function whereOf(o: z.output<typeof RunNameOptionsSchema>): Where {
  const { remote, configFile, project, cwd, env, overrides, timeoutMs, resolved } = o;
  return { remote, configFile, project, cwd, env, overrides, timeoutMs, resolved };
}

export interface ResolvedRun {
  /** The name as given. */
  name: string;
  /** What to read: the path as given for a local run, the scratch directory for a published one. */
  path: string;
  /**
   * The published run id; null for a local path. A reader of a published run's `path` is given this
   * beside it (the readers' `shownAs` option), so its messages name the run by its id, never by the scratch directory.
   */
  runId: string | null;
  experiment?: string;
  /** The run on the results branch's web page, when the remote is a GitHub or GitLab repository. */
  url?: string;
}

export interface ResolvedRuns {
  runs: ResolvedRun[];
  /** Remove the scratch copies of published runs. */
  dispose(): Promise<void>;
}

export interface RunSelector {
  /** `latest`, or the tag the run must carry. */
  pick: { latest: true } | { tag: string };
  experiment?: string;
  tags: string[];
}

/** Parse `@latest`, `@<tag>` and their `:key=value,…` filters; null when `name` is not a selector. */
export function parseRunSelector(name: string): RunSelector | null {
  if (!name.startsWith('@')) return null;
  const [head, query] = splitOnce(name.slice(1), ':');
  if (!/^[A-Za-z0-9][A-Za-z0-9._\-+=]*$/.test(head))
    throw new ReadError(`${JSON.stringify(name)}: expected @latest or @<tag>, optionally followed by :experiment=<name>`, 'input');
  const sel: RunSelector = { pick: head === 'latest' ? { latest: true } : { tag: head }, tags: [] };
  for (const part of query === undefined ? [] : query.split(',')) {
    const [key, value] = splitOnce(part, '=');
    if (value === undefined || value === '') throw new ReadError(`${JSON.stringify(name)}: ${JSON.stringify(part)} is not key=value`, 'input');
    if (key === 'experiment') sel.experiment = value;
    else if (key === 'tag') sel.tags.push(value);
    else if (key === 'branch')
      throw new ReadError(
        `${JSON.stringify(name)}: a run does not record the git branch it was made on; tag the runs of a branch when publishing them (\`tag <run_id> +main\`) and select them with :tag=main`,
        'input',
      );
    else throw new ReadError(`${JSON.stringify(name)}: unknown filter ${JSON.stringify(key)} (known: experiment, tag)`, 'input');
  }
  return sel;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** Resolve each name (in order); the scratch directory is removed on failure too. */
export async function resolveRunNames(names: string[], options: RunNameOptions = {}): Promise<ResolvedRuns> {
  parseArgs('resolveRunNames', { names: z.array(z.string()) }, [names]);
  const opts = parseOptions('resolveRunNames', RunNameOptionsSchema, options);
  const cwd = opts.cwd;
  // The repository is opened once for all the names (their pulls, listings and links), and only
  // when a published name asks for it (a run directory needs no repository).
  let target: Promise<PublishTarget> | null = null;
  const withTarget = async (): Promise<Where> => {
    target ??= opts.resolved ? Promise.resolve(opts.resolved) : resolveTarget(whereOf(opts));
    return { ...whereOf(opts), resolved: await target };
  };
  let scratch: string | null = null;
  const dispose = async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
    scratch = null;
  };
  let pulls = 0;
  const once: FetchOnce = opts.fetchOnce ?? { wanted: opts.fetch, done: false };
  let link: ((run: ListedRun | { path: string }) => string | undefined) | null = null;
  const published = async (runId: string, listed?: ListedRun): Promise<ResolvedRun & { runId: string }> => {
    scratch ??= await mkdtemp(join(tmpdir(), 'agentv-run-names-'));
    let dirName: string;
    try {
      dirName = runDirName(runId);
    } catch (err) {
      if (err instanceof LayoutError) throw new ReadError(err.message, 'input');
      throw err;
    }
    const out = join(scratch, String(pulls++), dirName);
    const pulled = await pullFetchingWhenMissing({ ...(await withTarget()), runId, out }, once);
    link ??= await linker(await withTarget());
    const url = link(listed ?? { path: dirName });
    return { name: runId, path: pulled.dir, runId: pulled.runId, ...(listed ? { experiment: listed.experiment } : {}), ...(url ? { url } : {}) };
  };
  try {
    const runs: ResolvedRun[] = [];
    for (const name of names) {
      const sel = parseRunSelector(name);
      if (sel) {
        const run = await newest(sel, name, await withTarget(), once);
        runs.push({ ...(await published(run.run_id, run)), name });
        continue;
      }
      if (existsSync(resolve(cwd, name))) {
        if (opts.deriveResultsFiles && isResultsFile(resolve(cwd, name))) {
          scratch ??= await mkdtemp(join(tmpdir(), 'agentv-run-names-'));
          const out = join(scratch, String(pulls++), 'run');
          const exported = await exportRun({ source: name, cwd, out });
          runs.push({ name, path: exported.outDir ?? out, runId: null });
        } else runs.push({ name, path: name, runId: null });
        continue;
      }
      try {
        const id = await publishedIdOf(name, await withTarget(), once);
        runs.push({ ...(await published(id.runId, id.listed)), name });
      } catch (err) {
        // Most likely a path with a typo: say that first. A git or remote failure keeps its exit code.
        if (exitCodeFor(err) === EXIT.git) throw err;
        throw new ReadError(`${name}: no such file or directory, and not a published run (${(err as Error).message})`, 'not-found');
      }
    }
    return { runs, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** The fetch of a command's run names: asked for (`--fetch`) or not, and whether it happened already. */
export interface FetchOnce {
  wanted: boolean;
  done: boolean;
}

/** Whether this read fetches first: when asked to and no read of this call has fetched yet. */
function fetchFirst(once: FetchOnce): boolean {
  const now = once.wanted && !once.done;
  if (now) once.done = true;
  return now;
}

/** Whether a read that found nothing may fetch and look again: only when no read of this call has fetched. */
function fetchOnMiss(once: FetchOnce): boolean {
  if (once.done) return false;
  once.done = true;
  return true;
}

/** The newest run the selector matches: this machine's view first, then (if that has none) the remote's after a fetch. */
async function newest(sel: RunSelector, name: string, opts: Where, once: FetchOnce): Promise<ListedRun> {
  const tags = 'tag' in sel.pick ? [sel.pick.tag, ...sel.tags] : sel.tags;
  const query = { ...opts, experiment: sel.experiment, tag: tags.length > 0 ? tags : undefined, limit: 1 };
  let listed = await listRuns({ ...query, fetch: fetchFirst(once) });
  if (listed.runs.length === 0 && listed.remote !== null && fetchOnMiss(once)) listed = await listRuns({ ...query, fetch: true });
  const run = listed.runs[0];
  if (!run) {
    const what = [tags.length > 0 ? `tagged ${tags.join(' and ')}` : null, sel.experiment ? `of experiment ${sel.experiment}` : null].filter(Boolean).join(' ');
    throw new ReadError(`${name}: no published run ${what || 'at all'} on ${listed.branch}${listed.remote ? ` (local or ${listed.remote})` : ''}`, 'not-found');
  }
  return run;
}

async function pullFetchingWhenMissing(opts: Parameters<typeof pull>[0], once: FetchOnce): ReturnType<typeof pull> {
  try {
    return await pull({ ...opts, fetch: fetchFirst(once) });
  } catch (err) {
    if (!(err instanceof ReadError) || (err.kind !== 'input' && err.kind !== 'not-found') || !fetchOnMiss(once)) throw err;
    // Swallowed on purpose: the retry with a fetch is a second chance; its failure leaves the first error to report.
    const again = await pull({ ...opts, fetch: true }).catch(() => null);
    if (again) return again;
    throw err;
  }
}

/** A function giving a published run's web page, when the remote is a known host. */
async function linker(opts: TargetOptions): Promise<(run: { path: string }) => string | undefined> {
  const target = await resolveTarget(opts);
  const url = await targetRemoteUrl(target);
  const branch = target.resultsRef.replace(/^refs\/heads\//, '');
  return (run) => (url ? (treeUrl(redactUrl(url), branch, run.path) ?? undefined) : undefined);
}

/** A results .jsonl on disk (a file ending in .jsonl that is not a run's index.jsonl): a run once exported. */
function isResultsFile(path: string): boolean {
  try {
    return path.endsWith('.jsonl') && basename(path) !== 'index.jsonl' && statSync(path).isFile();
  } catch {
    // unreadable: not one, and the reader says why
    return false;
  }
}

/** `<experiment>::<id>` or `<experiment>/<id>`: the parts, else null (a bare run id). */
function experimentAndId(name: string): { experiment: string; id: string } | null {
  const sep = name.lastIndexOf('::');
  if (sep > 0) return { experiment: name.slice(0, sep), id: name.slice(sep + 2) };
  const parts = name.split('/');
  return parts.length === 2 && parts[0] !== '' && parts[1] !== '' ? { experiment: parts[0]!, id: parts[1]! } : null;
}

/**
 * The published run a non-path, non-selector name means: a bare run id as it is (no listing);
 * `<experiment>::<id>` and `<experiment>/<id>` the listed run with that identity, whichever layout
 * holds it (a 5.x run at the root named by its experiment, a 4.42 run by `exp/ts`); a name no
 * listed run has stays as it is, for `pull` to say where it went.
 */
async function publishedIdOf(name: string, opts: Where, once: FetchOnce): Promise<{ runId: string; listed?: ListedRun }> {
  const parts = experimentAndId(name);
  if (parts === null) return { runId: name };
  const key = runIdentityKey(parts.experiment, name);
  const find = async (fetch: boolean) =>
    (await listRuns({ ...opts, experiment: parts.experiment, fetch })).runs.find((r) => runIdentityKey(r.experiment, r.run_id) === key);
  let run = await find(fetchFirst(once));
  // best effort: a second chance after a fetch; when it fails the name stays as given and the pull says why
  if (!run && fetchOnMiss(once)) run = await find(true).catch(() => undefined);
  return run ? { runId: run.run_id, listed: run } : { runId: name };
}

/**
 * The published run id a run name means, for the commands that act on a published run (`tag`,
 * `pull`, `feedback`): every form `resolveRunNames` takes. A run directory, index.jsonl or results
 * .jsonl on disk names the published run with its identity (its experiment and run id); one not
 * published is an error saying so.
 */
export async function publishedRunId(name: string, options: RunNameOptions = {}): Promise<string> {
  const opts = parseOptions('publishedRunId', RunNameOptionsSchema, options);
  const cwd = opts.cwd;
  // A run on disk: a results file, or a directory holding a run's index (a name like `nightly/..`
  // that happens to exist is not one: it stays a run id, refused as such).
  const abs = resolve(cwd, name);
  const onDisk =
    isResultsFile(abs) ||
    existsSync(join(abs, 'index.jsonl')) ||
    existsSync(join(abs, '.internal', 'index.jsonl')) ||
    (basename(abs) === 'index.jsonl' && existsSync(abs));
  // A bare run id is what it says: no repository read here (the command reads it).
  if (!onDisk && !name.startsWith('@') && experimentAndId(name) === null) return name;
  const target = opts.resolved ?? (await resolveTarget(whereOf(opts)));
  const withTarget: Where = { ...whereOf(opts), resolved: target };
  const once: FetchOnce = opts.fetchOnce ?? { wanted: opts.fetch, done: false };
  const sel = parseRunSelector(name);
  if (sel) return (await newest(sel, name, withTarget, once)).run_id;
  if (onDisk) {
    // A results file is a run once exported: its identity is what the export would give it.
    const run = isResultsFile(resolve(cwd, name)) ? await exportRun({ source: name, cwd, dryRun: true }) : await loadRun(name, { cwd });
    const key = runIdentityKey(run.experiment, run.runId);
    const find = async (fetch: boolean) => (await listRuns({ ...withTarget, fetch })).runs.find((r) => runIdentityKey(r.experiment, r.run_id) === key);
    let listed = await find(fetchFirst(once));
    if (!listed && fetchOnMiss(once) && target.remote !== null) listed = await find(true);
    if (!listed) throw new ReadError(`${name}: the run on disk (${run.experiment}, ${run.runId}) is not published on ${target.config.branch}`, 'not-found');
    return listed.run_id;
  }
  return (await publishedIdOf(name, withTarget, once)).runId;
}
