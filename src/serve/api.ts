/**
 * The routes: the remote status/sync API of AgentV's results docs (unscoped and per project), and the
 * Dashboard's data — runs, one run, its report, compare, trend — plus tag and feedback edits.
 *
 * Every data route exists twice, like AgentV's: `/api/...` for the project the server was started
 * in, `/api/projects/:projectId/...` for a `projects[]` entry of `.agentv/config.yaml`.
 *
 * This file is the route table; each resource's handlers live in their own file (`*-api.ts`).
 */
import type { TargetOptions } from '../repo/target.js';
import { HttpError } from '../errors/serve-errors.js';
import type { ApiContext, ScopedHandler } from './api-context.js';
import type { ConfigAnswer } from './api-types.js';
import { compareTwo } from './compare-api.js';
import { asHttpError } from './http-status.js';
import type { Handler, Request, Router } from './http.js';
import { postFeedback, postTags } from './overlay-api.js';
import { listProjects } from './projects.js';
import { remoteStatus, remoteSync } from './remote-api.js';
import { runDetail, runReport, testDetail } from './run-detail-api.js';
import { parseRunsQuery, runsAnswer } from './runs-api.js';
import { flakyTests, trendSeries } from './trend-api.js';

function wrap(fn: Handler): Handler {
  return async (req) => {
    try {
      return await fn(req);
    } catch (err) {
      throw asHttpError(err);
    }
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
