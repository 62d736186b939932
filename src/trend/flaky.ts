/**
 * `flaky`: the tests whose verdicts do not hold across runs, named (issue 49 item 4). Over the last
 * N published runs of an experiment (or the runs given), per (test, target): every attempt counted
 * (AgentV's repeats; a row that ran once is one attempt), the verdict of each run, how often it
 * flipped from one run to the next, the attempt success rate with its 95% Wilson interval, and a
 * class:
 * - `newly failing`: the latest run did not pass, every attempt before it did (at least one earlier run);
 * - `flaky`: its attempts both pass and fail (across runs or within one);
 * - `stable fail`: no attempt passed;
 * - `stable pass`: every attempt passed.
 * Strongest evidence first: newly failing, then flaky (most flips, then the most attempts on the
 * rarer side), then stable fail, then stable pass. The CLI, `/api/flaky` (the Dashboard) and the
 * static site all call `flaky()`: one answer.
 *
 * Cost: the newest page of the listing (kept per tip in the process and on disk; the whole listing
 * only when the experiment's runs reach further back) and one `cat-file --batch` of the N runs'
 * light rows; no run is pulled unless its rows are not on the live branch.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScoreRows, manifestRows, passVerdict, type ScoreRow } from '../compare/score-rows.js';
import { wilsonInterval } from '../model/attempt-stats.js';
import { listRuns, readListedManifests, type ListOptions, type ListResult } from '../branch-read/list.js';
import { HEAD_ROWS } from '../branch-read/catalog-cache.js';
import { pull, pullWhere } from '../branch-read/pull.js';
import { InputError } from '../errors/input-error.js';
import * as z from 'zod';
import { flag, fnOf, objectOf, parseOptions } from '../options/verb-options.js';

export const DEFAULT_FLAKY_RUNS = 10;

export type { FlakyClass, FlakyReport, FlakyRunCell, FlakyTest } from './flaky-types.js';
import type { FlakyClass, FlakyReport, FlakyRunCell, FlakyTest } from './flaky-types.js';

/** A run as `flakyOfRuns` takes it: its light rows, oldest run first. */
export interface FlakyRun {
  run_id: string;
  timestamp?: string | null;
  rows: ScoreRow[];
}

const CLASS_ORDER: FlakyClass[] = ['newly failing', 'flaky', 'stable fail', 'stable pass'];

/** The verdict of a run for a test: the row's own, else AgentV's threshold on its score (a repeated row always states one). */
const verdictOf = (row: ScoreRow): FlakyRunCell['verdict'] => passVerdict(row);

/** Classify a test's history (oldest first). */
export function flakyClass(history: readonly FlakyRunCell[]): FlakyClass {
  const passed = history.reduce((n, c) => n + c.passed, 0);
  const total = history.reduce((n, c) => n + c.total, 0);
  const last = history[history.length - 1];
  const before = history.slice(0, -1);
  if (last && before.length > 0 && last.verdict !== 'pass' && before.every((c) => c.passed === c.total && c.verdict === 'pass')) return 'newly failing';
  if (passed === total && history.every((c) => c.verdict === 'pass')) return 'stable pass';
  if (passed === 0) return 'stable fail';
  return 'flaky';
}

/** Per (test, target) over the runs (oldest first): attempts, flips, interval and class, strongest evidence first. */
export function flakyOfRuns(runs: readonly FlakyRun[], opts: { experiment?: string | null; warnings?: string[] } = {}): FlakyReport {
  const byKey = new Map<string, { test_id: string; target: string | null; history: FlakyRunCell[] }>();
  for (const run of runs) {
    // The last row of a (test, target) in a run is the one counted (as compare and the gate read a run).
    const last = new Map<string, ScoreRow>();
    for (const r of run.rows) last.set(JSON.stringify([r.test_id, r.target ?? null]), r);
    for (const [key, r] of last) {
      const a = r.attempts ?? { passed: verdictOf(r) === 'pass' ? 1 : 0, total: 1 };
      const entry = byKey.get(key) ?? { test_id: r.test_id, target: r.target ?? null, history: [] };
      entry.history.push({ run_id: run.run_id, passed: a.passed, total: a.total, verdict: verdictOf(r) });
      byKey.set(key, entry);
    }
  }
  const tests: FlakyTest[] = [...byKey.values()].map(({ test_id, target, history }) => {
    const passed = history.reduce((n, c) => n + c.passed, 0);
    const total = history.reduce((n, c) => n + c.total, 0);
    let flips = 0;
    for (let i = 1; i < history.length; i++) if ((history[i]!.verdict === 'pass') !== (history[i - 1]!.verdict === 'pass')) flips++;
    const { low, high } = wilsonInterval(passed, total);
    return {
      test_id,
      target,
      class: flakyClass(history),
      passed,
      total,
      pass_rate: total > 0 ? passed / total : 0,
      interval: { low, high },
      runs: history.length,
      flips,
      history,
    };
  });
  const rarer = (t: FlakyTest) => Math.min(t.passed, t.total - t.passed);
  tests.sort(
    (a, b) =>
      CLASS_ORDER.indexOf(a.class) - CLASS_ORDER.indexOf(b.class) ||
      b.flips - a.flips ||
      rarer(b) - rarer(a) ||
      a.test_id.localeCompare(b.test_id) ||
      (a.target ?? '').localeCompare(b.target ?? ''),
  );
  const summary = { 'newly failing': 0, flaky: 0, 'stable fail': 0, 'stable pass': 0 } as Record<FlakyClass, number>;
  for (const t of tests) summary[t.class]++;
  return {
    experiment: opts.experiment ?? null,
    runs: runs.map((r) => ({ run_id: r.run_id, timestamp: r.timestamp ?? null })),
    tests,
    summary,
    warnings: opts.warnings ?? [],
  };
}

/** `flaky`'s options, parsed once at its door (the `flaky` command's flags come from the same fields). */
export const FlakyOptionsSchema = z.strictObject({
  /** Run directories or results files, oldest first (instead of published runs); `runId`: the name a run is shown by (a published run read from a copy: its id). */
  sources: z.array(z.strictObject({ path: z.string(), runId: z.string().nullable().optional() })).default([]),
  /** Published runs of this experiment (default: the newest run's). */
  experiment: z.string().optional().meta(flag('--experiment <name>', "Published runs of this experiment (default: the newest run's)")),
  /** Only rows of this target. */
  target: z.string().optional().meta(flag('--target <name>', 'Only this target')),
  /** The last n published runs. */
  last: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(DEFAULT_FLAKY_RUNS)
    .meta(flag('--last <n>', `The last n published runs (default ${DEFAULT_FLAKY_RUNS})`)),
  cwd: z
    .string()
    .default(() => process.cwd())
    .meta(flag('--dir <dir>', 'Working directory')),
  /** Listing options (remote, fetch, config file, project …) for published runs. */
  list: objectOf<Omit<ListOptions, 'experiment' | 'limit' | 'cwd'>>().optional(),
  /** Where a listed run's files are read from when its rows are not on the live branch (the Dashboard's run cache). */
  materialize: fnOf<(runId: string) => Promise<string>>().optional(),
});

export type FlakyOptions = z.input<typeof FlakyOptionsSchema>;

/** The flaky tests of the runs given, or of the last N published runs of an experiment. */
export async function flaky(options: FlakyOptions = {}): Promise<FlakyReport> {
  const opts = parseOptions('flaky', FlakyOptionsSchema, options);
  const { cwd, last } = opts;
  const narrow = (rows: ScoreRow[]) => (opts.target === undefined ? rows : rows.filter((r) => r.target === opts.target));
  if (opts.sources.length > 0) {
    const runs: FlakyRun[] = [];
    const warnings: string[] = [];
    for (const s of opts.sources) {
      const read = await loadScoreRows(s.path, { cwd, shownAs: s.runId ?? undefined });
      warnings.push(...read.warnings);
      runs.push({ run_id: s.runId ?? s.path, timestamp: read.rows[0]?.timestamp ?? null, rows: narrow(read.rows) });
    }
    return flakyOfRuns(runs, { experiment: opts.experiment ?? null, warnings });
  }
  // The newest page first (the catalog cache answers it from its head without parsing the rest);
  // the whole listing only when the experiment's last runs reach further back.
  const lineOf = (l: ListResult, experiment: string) =>
    l.runs.filter((r) => r.experiment === experiment && (opts.target === undefined || r.targets.includes(opts.target))).slice(0, last);
  let listed = await listRuns({ ...opts.list, cwd, limit: HEAD_ROWS });
  const experiment = opts.experiment ?? listed.runs[0]?.experiment;
  if (experiment === undefined) throw new InputError(`no published runs on ${listed.branch}`);
  if (listed.matched > listed.runs.length && lineOf(listed, experiment).length < last) listed = await listRuns({ ...opts.list, cwd });
  const line = lineOf(listed, experiment);
  if (line.length === 0)
    throw new InputError(`no published runs of experiment ${experiment}${opts.target ? ` for target ${opts.target}` : ''} on ${listed.branch}`);
  const manifests = await readListedManifests({ ...opts.list, cwd }, listed, line);
  const warnings: string[] = [];
  const runs: FlakyRun[] = [];
  let tmp: string | null = null;
  try {
    // Oldest first.
    for (const [i, run] of [...line].reverse().entries()) {
      const m = manifests.get(run.run_id);
      const parsed = m ? manifestRows(m.text, run.run_id) : null;
      if (parsed && parsed.rows.length > 0) {
        warnings.push(...parsed.warnings);
        runs.push({ run_id: run.run_id, timestamp: run.timestamp || null, rows: narrow(parsed.rows) });
        continue;
      }
      if (!opts.materialize) tmp ??= await mkdtemp(join(tmpdir(), 'agentv-flaky-'));
      const dir = opts.materialize
        ? await opts.materialize(run.run_id)
        : (await pull({ ...pullWhere(opts.list), fetch: false, cwd, runId: run.run_id, out: join(tmp!, String(i)) })).dir;
      const read = await loadScoreRows(dir, { cwd, shownAs: run.run_id });
      warnings.push(...read.warnings);
      runs.push({ run_id: run.run_id, timestamp: run.timestamp || null, rows: narrow(read.rows) });
    }
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
  return flakyOfRuns(runs, { experiment, warnings });
}
