/** The route `GET /compare`: two published runs compared as the CLI compares them. */
import { compareRuns } from '../compare/compare.js';
import { HttpError } from '../errors/serve-errors.js';
import type { TargetOptions } from '../repo/target.js';
import type { ApiContext } from './api-context.js';
import type { Reply, Request } from './http.js';
import type { CompareAnswer } from './api-types.js';

/**
 * `compare` of two published runs: compareRuns, as the CLI calls it. `?runs=a,b` (or `?a=&b=`):
 * the older run is the baseline whatever the order; `?baseline=&candidate=`: as given (the page's
 * swap). `?target=<t>` narrows both sides; without one, rows are matched per (test id, target)
 * when a side holds several targets (`?all_targets=0` keeps agentv compare's test-id matching).
 */
export async function compareTwo(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const q = req.query;
  const unordered = q.get('runs')?.split(',') ?? (q.get('a') && q.get('b') ? [q.get('a')!, q.get('b')!] : null);
  const [first, second] = unordered ?? [q.get('baseline'), q.get('candidate')];
  if (!first || !second || (unordered && unordered.length !== 2))
    throw new HttpError(400, 'compare needs ?runs=<run id>,<run id> (the older is the baseline) or ?baseline=<run id>&candidate=<run id>');
  // Runs this server has already read are known; others must be listed (404 when not).
  await Promise.all([first, second].map((id) => (ctx.cache.has(opts, id) ? null : ctx.runs.find(opts, id))));
  const [a, b] = await Promise.all([ctx.cache.workspace(opts, first), ctx.cache.workspace(opts, second)]);
  const target = q.get('target');
  const threshold = q.get('threshold');
  const allTargets = q.get('all_targets');
  // Published runs do not change: the same question gets the same answer, computed once.
  const key = JSON.stringify(['compare', opts.project ?? '', first, second, target, threshold, allTargets, Boolean(unordered)]);
  const report = await ctx.cache.memo(key, () =>
    compareRuns({
      baseline: a,
      candidate: b,
      ...(target ? { targets: [target] } : {}),
      ...(threshold ? { threshold: Number(threshold) } : {}),
      allTargets: allTargets === null || allTargets === '' ? 'auto' : allTargets !== '0' && allTargets !== 'false',
      order: unordered ? 'older-first' : 'given',
      // The cache paths mean nothing to a client: every message, warning and source names the sides by run id.
      shownAs: { baseline: first, candidate: second },
    }),
  );
  // A side's path is its run id too (where in the cache its rows were read is no business of the page).
  const [baseline, candidate] = report.order.swapped ? [second, first] : [first, second];
  const sources = {
    baseline: { ...report.sources.baseline, path: baseline },
    candidate: { ...report.sources.candidate, path: candidate },
  };
  return { json: { ...report, sources } satisfies CompareAnswer };
}
