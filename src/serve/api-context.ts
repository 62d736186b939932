/**
 * What every API route is given: the target the server was started for, whether it may write, the
 * remote's state, the listing of runs and the run cache; and a route's handler, scoped to a project.
 */
import type { ListResult } from '../branch-read/list.js';
import type { TargetOptions } from '../repo/target.js';
import type { Reply, Request } from './http.js';
import { RemoteState } from './remote-api.js';
import { RunCache } from './run-cache.js';
import { RunsData } from './runs-api.js';

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

/** A route's handler, given the project it is scoped to (the server's own, or /api/projects/:projectId). */
export type ScopedHandler = (ctx: ApiContext, opts: TargetOptions, req: Request) => Promise<Reply>;
