/** The routes across a project's runs over time: `GET /trend` (score series) and `GET /flaky` (tests that flip). */
import { HttpError } from '../errors/serve-errors.js';
import type { TargetOptions } from '../repo/target.js';
import { flaky } from '../trend/flaky.js';
import { DEFAULT_SLOPE_THRESHOLD, trend, type TrendReport } from '../trend/index.js';
import type { ApiContext } from './api-context.js';
import type { Reply, Request } from './http.js';
import type { FlakyAnswer, TrendAnswer } from './api-types.js';

const flag = (v: string | null) => v !== null && v !== '' && v !== '0' && v !== 'false';

/**
 * `trend --published` of the server's repository: the library's trend, as the CLI calls it, with
 * the runs read through the server's run cache. `?by=target`, `?by=experiment` or
 * `?by=experiment,target` split the series (default: one series, every target pooled, as agentv
 * trend). Also `experiment`, `target`, `suite`, `last`, `slope_threshold`, `allow_missing_tests`,
 * `fail_on_degrading`. An empty branch answers no series (not an error); `experiments` and
 * `targets` are the filter choices over every run.
 */
export async function trendSeries(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const q = req.query;
  const str = (k: string) => q.get(k) || undefined;
  const num = (k: string) => {
    const v = str(k);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new HttpError(400, `${k}=${JSON.stringify(v)}: expected a number`);
    return n;
  };
  const by = new Set((str('by') ?? '').split(',').filter(Boolean));
  for (const b of by) if (b !== 'target' && b !== 'experiment') throw new HttpError(400, `by=${JSON.stringify(b)}: expected target and/or experiment`);
  const listed = await ctx.runs.listing({ ...opts });
  const experiments = [...new Set(listed.runs.map((r) => r.experiment))].sort();
  const targets = [...new Set(listed.runs.flatMap((r) => r.targets))].sort();
  const options = {
    experiment: str('experiment'),
    target: str('target'),
    suite: str('suite'),
    byTarget: by.has('target'),
    byExperiment: by.has('experiment'),
    last: num('last'),
    slopeThreshold: num('slope_threshold'),
    allowMissingTests: flag(q.get('allow_missing_tests')),
    failOnDegrading: flag(q.get('fail_on_degrading')),
  };
  const filtered = {
    ...listed,
    runs: listed.runs.filter(
      (r) => (options.experiment === undefined || r.experiment === options.experiment) && (options.target === undefined || r.targets.includes(options.target)),
    ),
  };
  let report: TrendReport;
  // An empty branch, or filters no run matches: no series (the page says so), not an error.
  if (filtered.runs.length === 0) {
    report = {
      series: [],
      skipped: [],
      filters: {
        experiment: options.experiment,
        target: options.target,
        suite: options.suite,
        allow_missing_tests: options.allowMissingTests,
        last: options.last,
        by_target: options.byTarget,
        by_experiment: options.byExperiment,
      },
      source: 'published',
      slope_threshold: options.slopeThreshold ?? DEFAULT_SLOPE_THRESHOLD,
      fail_on_degrading: options.failOnDegrading,
      triggered: false,
      warnings: [],
      read: listed.read.description,
    };
  } else {
    report = await trend({ ...options, cwd: opts.cwd, published: true, list: opts, listed: filtered, materialize: (id) => ctx.cache.workspace(opts, id) });
  }
  return { json: { ...report, experiments, targets } satisfies TrendAnswer };
}

/**
 * `flaky` of the server's repository: the library's answer, as the CLI gives it (`?experiment=`,
 * `last`, `target`): per (test, target) its attempts, flips, interval, class and attempt history
 * across runs. The test page marks a noisy test and shows its history from it; the site writes it
 * per experiment.
 */
export async function flakyTests(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const q = req.query;
  const lastText = q.get('last') || undefined;
  const last = lastText === undefined ? undefined : Number(lastText);
  if (last !== undefined && !Number.isInteger(last)) throw new HttpError(400, `last=${JSON.stringify(lastText)}: expected a whole number`);
  const report = await flaky({
    cwd: opts.cwd,
    list: opts,
    experiment: q.get('experiment') || undefined,
    target: q.get('target') || undefined,
    last,
    materialize: (id) => ctx.cache.workspace(opts, id),
  });
  return { json: report satisfies FlakyAnswer };
}
