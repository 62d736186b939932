/** The routes of one run: `GET /runs/:runId` (its figures, tests, tags and feedback), its report, one of its tests. */
import type { TargetOptions } from '../repo/target.js';
import { HttpError } from '../errors/serve-errors.js';
import { runAttemptStats } from '../model/attempt-stats.js';
import { projectTest } from '../report/projection.js';
import { CONTENT_SECURITY_POLICY } from '../report/template.js';
import { readRegularText } from '../util/safe-open.js';
import type { ApiContext } from './api-context.js';
import type { Reply, Request } from './http.js';
import type { RunDetailAnswer, TestDetailAnswer } from './api-types.js';
import { runOverlays } from './run-overlays.js';

export async function runDetail(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const id = req.params.runId!;
  // The repository and branches are resolved alongside (cached for the server's life): opening one
  // of the run's tests then reads its payloads without resolving them again (three git processes).
  const [{ run }] = await Promise.all([ctx.runs.find(opts, id), ctx.runs.target(opts)]);
  // The run's figures come from the function `summary` prints (summary.json when valid, else
  // recomputed), under the id the run is listed by.
  const { loaded, summary } = await ctx.cache.load(opts, run);
  // Its tags and feedback: prefetched with a kept listing, else read from the branch (run-overlays.ts).
  const [tags, fb] = await runOverlays(ctx, opts, id);
  // A run with repeated attempts (model/attempt-stats.ts): the run's and each target's attempt totals.
  const stats = runAttemptStats(loaded.rows as unknown as Record<string, unknown>[]);
  return {
    json: {
      run,
      summary,
      tests: loaded.rows.map((r, i) => {
        const t = stats?.tests[i];
        return {
          test_id: r.test_id,
          suite: r.suite,
          target: r.target,
          attempt: r.attempt,
          verdict: r.verdict,
          score: r.score,
          duration_ms: r.duration_ms,
          cost_usd: r.cost_usd,
          error: r.error ?? null,
          ...(t && t.strategy !== null ? { attempts: [t.passed_samples, t.total_samples] as [number, number] } : {}),
        };
      }),
      ...(stats
        ? {
            attempts: {
              passed_samples: stats.passed_samples,
              total_samples: stats.total_samples,
              mean_pass_rate: stats.mean_pass_rate,
              targets: stats.targets,
            },
          }
        : {}),
      problems: loaded.problems,
      tags,
      /** entries: test_id -> reviewer -> {feedback, reviewer, updated_at, revision}. */
      feedback: fb?.document ?? null,
      notes: fb?.notes ?? [],
    } satisfies RunDetailAnswer,
  };
}

export async function runReport(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  await ctx.runs.find(opts, req.params.runId!);
  const { file } = await ctx.cache.report(opts, req.params.runId!);
  return { html: await readRegularText(file, { kind: 'run-file' }), csp: CONTENT_SECURITY_POLICY };
}

/**
 * One test of a run, for the Dashboard's drill-down: its row, and its grading (assertions with
 * pass/fail and evidence, graders with reasons), answer and transcript, clipped like the report's.
 * Its payloads are read from the artifacts branch on first open (fetched when not local); the ones
 * no branch holds are listed in `missing`.
 */
export async function testDetail(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const id = req.params.runId!;
  const testId = req.params.testId!;
  const target = req.query.get('target');
  const attemptText = req.query.get('attempt');
  const attempt = attemptText === null || attemptText === '' ? null : Number(attemptText);
  if (attempt !== null && !Number.isInteger(attempt)) throw new HttpError(400, `attempt=${JSON.stringify(attemptText)}: expected a whole number`);
  // The transcript is paged by the size cap: `from` is the index of the first message to show.
  const fromText = req.query.get('from');
  const from = fromText === null || fromText === '' ? 0 : Number(fromText);
  if (!Number.isInteger(from) || from < 0) throw new HttpError(400, `from=${JSON.stringify(fromText)}: expected a whole number, 0 or more`);
  // A run already read by this server is known; otherwise check it is listed (404 when not).
  if (!ctx.cache.has(opts, id)) await ctx.runs.find(opts, id);
  const pick = (r: { test_id?: unknown; target?: unknown; attempt?: unknown }) =>
    r.test_id === testId && (target === null || r.target === target) && (attempt === null || (r.attempt ?? 1) === attempt);
  const first = (await ctx.cache.run(opts, id)).rows.find(pick);
  if (!first) throw new HttpError(404, `test ${testId}${target === null ? '' : ` (target ${target})`} is not in run ${id}`);
  // One read of the test's payloads however many requests open it at once (a reload, two tabs).
  const payloads = await ctx.cache.payloads(
    opts,
    id,
    (r) => r.test_id === testId && (target === null || r.target === target),
    await ctx.runs.target(opts),
    JSON.stringify([testId, target]),
  );
  const { row, detail, truncated, nextMessage, messageCount } = await ctx.cache.withRun(opts, id, async (loaded) => {
    const row = loaded.rows.find(pick) ?? first;
    return { row, ...(await projectTest(loaded, row, { messagesFrom: from, answerInline: true })) };
  });
  return {
    json: {
      run_id: id,
      experiment: typeof row.experiment === 'string' ? row.experiment : null,
      test: {
        test_id: row.test_id,
        suite: row.suite,
        target: row.target,
        attempt: row.attempt,
        verdict: row.verdict,
        score: row.score,
        duration_ms: row.duration_ms,
        cost_usd: row.cost_usd,
      },
      detail,
      truncated,
      /** The transcript's page: its first message's index, the next page's (null: the last page), how many there are. */
      messages_from: from,
      next_message: nextMessage,
      message_count: messageCount,
      missing: payloads.missing,
      fetched: payloads.fetched,
    } satisfies TestDetailAnswer,
  };
}
