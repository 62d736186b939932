/**
 * The routes: the remote status/sync API of AgentV's results docs (unscoped and per project), and the
 * Dashboard's data — runs, one run, its report, compare, trend — plus tag and feedback edits.
 *
 * Every data route exists twice, like AgentV's: `/api/...` for the project the server was started
 * in, `/api/projects/:projectId/...` for a `projects[]` entry of `.agentv/config.yaml`.
 */
import { editTags, overlaysOfText, setFeedback } from '../overlay-write/write.js';
import type { TargetOptions } from '../repo/target.js';
import { teamTip } from '../repo/team-tip.js';
import { overlayDirOf, runLocation, STABLE_RUNS_DIR, stableRunParts } from '../layout/branch-layout.js';
import { lsTree, readBlobs, type TreeEntry } from '../git/index.js';
import { CONTENT_SECURITY_POLICY } from '../report/template.js';
import { compareRuns } from '../compare/compare.js';
import { projectTest } from '../report/projection.js';
import { asHttpError } from './http-status.js';
import type { Handler, Reply, Request, Router } from './http.js';
import { HttpError } from '../errors/serve-errors.js';
import { listProjects } from './projects.js';
import { remoteStatus, remoteSync, RemoteState } from './remote-api.js';
import { RunCache } from './run-cache.js';
import { parseRunsQuery, RunsData, runsAnswer } from './runs-api.js';
import { runAttemptStats } from '../model/attempt-stats.js';
import type {
  CompareAnswer,
  ConfigAnswer,
  FlakyAnswer,
  TrendAnswer,
  FeedbackWriteAnswer,
  RunDetailAnswer,
  TagsWriteAnswer,
  TestDetailAnswer,
} from './api-types.js';
import type { ListResult } from '../branch-read/list.js';
import { DEFAULT_SLOPE_THRESHOLD, trend, type TrendReport } from '../trend/index.js';
import { flaky } from '../trend/flaky.js';
import { readRegularText } from '../util/safe-open.js';
import { jsonKeys } from '../util/json-keys.js';

export interface ApiContext {
  base: TargetOptions;
  readOnly: boolean;
  remote: RemoteState;
  runs: RunsData;
  cache: RunCache;
}

/**
 * `listed`: answer from this listing of the branch (RunsData), for a reader of a fixed branch such as
 * the static site. `maxCachedRuns`: the run cache's bound (the Dashboard's default; the site, whose
 * context lives for one batch of prefetched runs, holds the whole batch).
 */
export function newApiContext(base: TargetOptions, readOnly: boolean, listed?: ListResult, maxCachedRuns?: number): ApiContext {
  return { base, readOnly, remote: new RemoteState(), runs: new RunsData(base, listed), cache: new RunCache(maxCachedRuns) };
}

function stringList(v: unknown, name: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new HttpError(400, `${name}: expected a list of strings`);
  return v as string[];
}

function wrap(fn: Handler): Handler {
  return async (req) => {
    try {
      return await fn(req);
    } catch (err) {
      throw asHttpError(err);
    }
  };
}

/** A route's handler, given the project it is scoped to (the server's own, or /api/projects/:projectId). */
type ScopedHandler = (ctx: ApiContext, opts: TargetOptions, req: Request) => Promise<Reply>;

async function runDetail(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const id = req.params.runId!;
  // The repository and branches are resolved alongside (cached for the server's life): opening one
  // of the run's tests then reads its payloads without resolving them again (three git processes).
  const [{ run }] = await Promise.all([ctx.runs.find(opts, id), ctx.runs.target(opts)]);
  // The run's figures come from the function `summary` prints (summary.json when valid, else
  // recomputed), under the id the run is listed by.
  const { loaded, summary } = await ctx.cache.load(opts, run);
  // A kept listing (the static site) read the overlays with the run, from the tip that lists it.
  const pre = ctx.runs.fixed ? ctx.cache.prefetchedOverlays(opts, id) : undefined;
  const fromPre = pre && safeOverlays(pre);
  const [tags, fb] = fromPre ? [fromPre.tags, fromPre.feedback] : await branchOverlays(ctx, opts, id);
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

/**
 * The run's tags and feedback as the branch has them now: what readTags and readFeedback answer
 * (the run located on each team tip in turn, its overlay files read from the first that holds it),
 * found with one ls-tree and read with one cat-file, and kept per team tip — a commit id names the
 * exact files, and an edit moves the tip — so a run opened again costs one ref read, where each
 * file cost resolving the target and two lookups through the branch's root tree (100,000 entries
 * on a big branch).
 */
async function branchOverlays(ctx: ApiContext, opts: TargetOptions, runId: string) {
  // optional: a run without overlays (or unreadable ones) shows none, as readTags/readFeedback's callers did
  const texts = await overlayTexts(ctx, opts, runId).catch(() => null);
  if (texts === null) return [null, null] as const;
  return [parsedOr(() => overlaysOfText(texts.tags, null).tags), parsedOr(() => overlaysOfText(null, texts.feedback).feedback)] as const;
}

/** `parse()`, or null when the text does not parse (readTags/readFeedback reject then, and the run shows none). */
function parsedOr<T>(parse: () => T): T | null {
  try {
    return parse();
  } catch {
    // unparsable overlay: shown as none, as before
    return null;
  }
}

async function overlayTexts(ctx: ApiContext, opts: TargetOptions, runId: string): Promise<{ tags: string | null; feedback: string | null }> {
  const target = await ctx.runs.target(opts);
  const { tips } = await teamTip(target);
  return ctx.cache.memo(JSON.stringify(['overlays', opts.project ?? '', tips, runId]), async () => {
    // Where readTags/readFeedback look (layout/branch-layout.ts locateRun): the run's root
    // directory, else AgentV 4.42's runs/<exp>/<ts> with its overlays under metadata/.
    let root: string | null = null;
    try {
      root = runLocation(runId).path;
    } catch {
      root = null; // an `<experiment>::<timestamp>` id: only 4.42's layout can hold it
    }
    const parts = stableRunParts(runId);
    const stable = parts ? `${STABLE_RUNS_DIR}/${parts.experiment}/${parts.timestamp}` : null;
    const places = [root, stable].filter((p): p is string => p !== null);
    const files = (dir: string) => ['tags.json', 'feedback.json'].map((f) => `${overlayDirOf(dir)}/${f}`) as [string, string];
    for (const tip of tips) {
      // One ls-tree names the run's places and its overlay files: the root tree is read once.
      const listed = await lsTree(target.repo, tip, { paths: places.flatMap((p) => [p, ...files(p)]) });
      const entries = new Map(listed.map((e) => [e.path, e]));
      // A directory named with a path inside it is listed by its children (ls-tree descends), not itself.
      const dir = places.find((p) => entries.get(p)?.type === 'tree' || listed.some((e) => e.path.startsWith(`${p}/`)));
      if (dir === undefined) continue;
      const [tags, feedback] = files(dir).map((f) => entries.get(f)) as [TreeEntry | undefined, TreeEntry | undefined];
      const blobs = [tags, feedback].filter((e): e is TreeEntry => e?.type === 'blob').map((e) => e.sha);
      const texts = blobs.length > 0 ? await readBlobs(target.repo, blobs) : new Map<string, Buffer | null>();
      const text = (e: TreeEntry | undefined) => (e?.type === 'blob' ? (texts.get(e.sha)?.toString('utf8') ?? null) : null);
      return { tags: text(tags), feedback: text(feedback) };
    }
    return { tags: null, feedback: null };
  });
}

/** Overlays from their texts, or null when one does not parse (the branch is then read, as without them). */
function safeOverlays(pre: { tags: string | null; feedback: string | null }): ReturnType<typeof overlaysOfText> | null {
  try {
    return overlaysOfText(pre.tags, pre.feedback);
  } catch {
    // unparsable: branchOverlays reads it again and answers as readTags/readFeedback do (no overlays shown)
    return null;
  }
}

async function runReport(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
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
async function testDetail(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
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

/**
 * `compare` of two published runs: compareRuns, as the CLI calls it. `?runs=a,b` (or `?a=&b=`):
 * the older run is the baseline whatever the order; `?baseline=&candidate=`: as given (the page's
 * swap). `?target=<t>` narrows both sides; without one, rows are matched per (test id, target)
 * when a side holds several targets (`?all_targets=0` keeps agentv compare's test-id matching).
 */
async function compareTwo(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
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

const flag = (v: string | null) => v !== null && v !== '' && v !== '0' && v !== 'false';

/**
 * `trend --published` of the server's repository: the library's trend, as the CLI calls it, with
 * the runs read through the server's run cache. `?by=target`, `?by=experiment` or
 * `?by=experiment,target` split the series (default: one series, every target pooled, as agentv
 * trend). Also `experiment`, `target`, `suite`, `last`, `slope_threshold`, `allow_missing_tests`,
 * `fail_on_degrading`. An empty branch answers no series (not an error); `experiments` and
 * `targets` are the filter choices over every run.
 */
async function trendSeries(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
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
async function flakyTests(ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
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

async function postTags(_ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const body = await req.body();
  const expect = body.expect_revision;
  if (typeof expect !== 'string' || expect === '')
    throw new HttpError(428, 'expect_revision is required: send the tag_revision you read (GET the run first), so a concurrent edit is not overwritten');
  const res = await editTags({
    ...opts,
    runId: req.params.runId!,
    add: stringList(body.add, 'add'),
    remove: stringList(body.remove, 'remove'),
    expectRevision: expect,
  });
  return { json: { changed: res.changed, tags: res.document, commit: res.commit, push: jsonKeys(res.push) } satisfies TagsWriteAnswer };
}

async function postFeedback(_ctx: ApiContext, opts: TargetOptions, req: Request): Promise<Reply> {
  const body = await req.body();
  if (typeof body.expect_revision !== 'string') {
    throw new HttpError(
      428,
      'expect_revision is required: send the revision of this reviewer\'s current note on the test ("" when there is none), so a concurrent edit is not overwritten',
    );
  }
  if (typeof body.test_id !== 'string' || typeof body.text !== 'string') throw new HttpError(400, 'feedback needs test_id and text (strings)');
  if (body.reviewer !== undefined && typeof body.reviewer !== 'string') throw new HttpError(400, 'reviewer: expected a string');
  const res = await setFeedback({
    ...opts,
    runId: req.params.runId!,
    testId: body.test_id,
    text: body.text,
    reviewer: body.reviewer as string | undefined,
    expectRevision: body.expect_revision,
  });
  return {
    json: {
      changed: res.changed,
      reviewer: res.reviewer,
      entry: res.entry,
      feedback: res.document,
      commit: res.commit,
      push: jsonKeys(res.push),
    } satisfies FeedbackWriteAnswer,
  };
}

export function registerApi(router: Router, ctx: ApiContext): void {
  const scoped = (req: Request): TargetOptions => (req.params.projectId === undefined ? ctx.base : { ...ctx.base, project: req.params.projectId });
  /** Each data route twice, like AgentV's; `writes` ones refuse on a read-only server. */
  const both = (method: string, path: string, fn: ScopedHandler, writes = false) => {
    const handler = wrap(async (req) => {
      if (writes && ctx.readOnly) throw new HttpError(403, 'the Dashboard is running read-only (started with --read-only)');
      return fn(ctx, scoped(req), req);
    });
    router.add(method, `/api${path}`, handler);
    router.add(method, `/api/projects/:projectId${path}`, handler);
  };

  router.add(
    'GET',
    '/api/projects',
    wrap(async () => ({ json: await listProjects(ctx.base) })),
  );
  router.add(
    'GET',
    '/api/config',
    wrap(async () => ({ json: { read_only: ctx.readOnly, projects: (await listProjects(ctx.base)).projects } satisfies ConfigAnswer })),
  );

  both('GET', '/remote/status', async (c, opts) => ({ json: await remoteStatus(opts, c.remote) }));
  both('POST', '/remote/sync', async (c, opts) => ({ json: await remoteSync(opts, c.remote) }), true);
  both('GET', '/runs', async (c, opts, req) => ({ json: runsAnswer(await c.runs.list(opts, parseRunsQuery(req.query))) }));
  both('GET', '/runs/:runId', runDetail);
  both('GET', '/runs/:runId/report', runReport);
  both('GET', '/runs/:runId/tests/:testId', testDetail);
  both('GET', '/compare', compareTwo);
  both('GET', '/trend', trendSeries);
  both('GET', '/flaky', flakyTests);
  both('POST', '/runs/:runId/tags', postTags, true);
  both('POST', '/runs/:runId/feedback', postFeedback, true);
}
