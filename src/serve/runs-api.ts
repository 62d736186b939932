/**
 * The read side of the Dashboard: the run listing (the catalog through `listRuns`, never a walk of
 * the run trees), one run (found where its id says it is: branch-read/find-run.ts), and the overlays (tags, feedback) that ride along with it.
 *
 * Tags are per-run overlay files, not catalog fields. The listing is `listRuns`, the function
 * `list` prints: it reads the overlays only for the page it returns (one `cat-file --batch` for at
 * most `limit` runs, wherever the run's writer keeps them — AgentV 4.42 under `metadata/runs/`);
 * filtering by tag reads every matching run's tags.
 */
import { listRuns, type ListedRun, type ListResult } from '../branch-read/list.js';
import { findListedRun } from '../branch-read/find-run.js';
import { runWhereabouts } from '../branch-read/run-whereabouts.js';
import { resolveTarget, type PublishTarget, type TargetOptions } from '../repo/target.js';
import { HttpError } from '../errors/serve-errors.js';
import type { RunsAnswer } from './api-types.js';
import { jsonKeys } from '../util/json-keys.js';

export interface RunsQuery {
  experiment?: string;
  target?: string;
  tag?: string;
  /** YYYY-MM-DD, inclusive. */
  since?: string;
  until?: string;
  limit: number;
  offset: number;
}

export interface RunRow extends ListedRun {
  tags: string[];
}

export interface RunsPage {
  branch: string;
  remote: string | null;
  tips: ListResult['tips'];
  /** Runs on the branch (before filters). */
  total: number;
  /** Runs matching the filters. */
  matched: number;
  offset: number;
  runs: RunRow[];
  /** Filter choices over every run. */
  facets: { experiments: string[]; targets: string[] };
  unreadable: number;
  /** Which tip was read (the newest of local and remote-tracking) and how fresh the remote side is. */
  read: ListResult['read'];
}

/** The page as `GET /api/runs` answers it: its keys in snake_case (jsonKeys), checked against the answer type the page reads. */
export function runsAnswer(page: RunsPage): RunsAnswer {
  // Checked here: the page carries every field of the answer under the answer's name (jsonKeys
  // renames only camelCase keys, which RunsAnswer does not name).
  const checked: RunsAnswer = page;
  return jsonKeys(checked) as RunsAnswer;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
export const MAX_PAGE = 500;

export function parseRunsQuery(q: URLSearchParams): RunsQuery {
  const str = (k: string) => {
    const v = q.get(k);
    return v === null || v === '' ? undefined : v;
  };
  const int = (k: string, dflt: number, max: number) => {
    const v = str(k);
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v)) throw new HttpError(400, `${k}=${JSON.stringify(v)}: expected a whole number`);
    return Math.min(Number(v), max);
  };
  const since = str('since');
  const until = str('until');
  for (const [k, v] of [
    ['since', since],
    ['until', until],
  ] as const)
    if (v !== undefined && !DAY.test(v)) throw new HttpError(400, `${k}=${JSON.stringify(v)}: expected a day as YYYY-MM-DD`);
  return {
    experiment: str('experiment'),
    target: str('target'),
    tag: str('tag'),
    since,
    until,
    limit: Math.max(1, int('limit', 100, MAX_PAGE)),
    offset: int('offset', 0, Number.MAX_SAFE_INTEGER),
  };
}

export class RunsData {
  /** The repository and branches per project: resolving a target spawns several git processes,
   * and the repository a server reads does not move while it runs. */
  private targets = new Map<string, Promise<PublishTarget>>();

  /**
   * `listed`: a listing read once and kept (the static site reads the branch once and asks about
   * every run of it); a server, whose branch moves, lists again for each run it is asked about.
   */
  constructor(
    private readonly base: TargetOptions,
    private readonly listed?: ListResult,
  ) {}

  /** Keeps a target the caller already resolved for `opts` (the server resolves its own at start: not twice). */
  keepTarget(opts: TargetOptions, resolved: PublishTarget): void {
    this.targets.set(opts.project ?? '', Promise.resolve(resolved));
  }

  /** The project's repository and branches, resolved once. */
  target(opts: TargetOptions): Promise<PublishTarget> {
    const key = opts.project ?? '';
    let p = this.targets.get(key);
    if (!p) {
      p = resolveTarget(opts);
      this.targets.set(key, p);
      // observed: the caller awaits p and gets the error; this only forgets the cached failure
      p.catch(() => this.targets.delete(key));
    }
    return p;
  }

  /** The listing `list --json` prints (listRuns: the same filters, page and overlays), shaped as the page reads it. */
  async list(opts: TargetOptions, q: RunsQuery): Promise<RunsPage> {
    const listed = await listRuns({
      ...opts,
      // Resolved once for the server's life (a resolve is several git processes a request).
      resolved: await this.target(opts),
      experiment: q.experiment,
      target: q.target,
      since: q.since,
      until: q.until,
      tag: q.tag === undefined ? undefined : [q.tag],
      offset: q.offset,
      limit: q.limit,
      withOverlays: true,
    });
    return {
      branch: listed.branch,
      remote: listed.remote,
      tips: listed.tips,
      total: listed.total,
      matched: listed.matched,
      offset: q.offset,
      runs: listed.runs.map((r) => ({ ...r, tags: r.tags ?? [] })),
      facets: listed.facets,
      unreadable: listed.unreadable,
      read: listed.read,
    };
  }

  /** True when answers come from one kept listing (the static site): the branch is not read again. */
  get fixed(): boolean {
    return this.listed !== undefined;
  }

  /** The kept listing's runs by id (built once: the site looks up each of thousands of runs). */
  private byId: Map<string, ListedRun> | null = null;

  /** Every run of the branch (the kept listing, or the branch read now). */
  async listing(opts: TargetOptions): Promise<ListResult> {
    return this.listed ?? listRuns({ ...opts, resolved: await this.target(opts) });
  }

  /**
   * The listed run. When the catalog does not know it: a 404 whose `run_state` says why, from the
   * branch and the archive (runWhereabouts) — `archived` (with `archive_branch`), `expired` (with
   * `expired_at` and `policy`) or `unknown` (a typo, or never published here).
   */
  async find(opts: TargetOptions, runId: string): Promise<{ run: ListedRun; tips: ListResult['tips'] }> {
    // A server reads the run where its id says it is (find-run.ts): not the listing, nor the sync
    // branches (those are the listing's and the status's). Only when that read cannot be sure of
    // the row the listing would show — or finds no run — is the listing asked, as before.
    if (this.listed === undefined) {
      const direct = await findListedRun({ ...opts, resolved: await this.target(opts), runId });
      if (direct) return direct;
    }
    const listed = await this.listing(opts);
    if (this.listed !== undefined && this.byId === null) this.byId = new Map(this.listed.runs.map((r) => [r.run_id, r]));
    const run = this.listed !== undefined ? this.byId?.get(runId) : listed.runs.find((r) => r.run_id === runId);
    if (run) return { run, tips: listed.tips };
    const where = await runWhereabouts({ ...opts, runId });
    if (where.state === 'archived')
      throw new HttpError(404, `run ${runId} was archived: it is on ${where.branch}, no longer on ${listed.branch}`, {
        run_state: 'archived',
        archive_branch: where.branch,
      });
    if (where.state === 'expired')
      throw new HttpError(404, `run ${runId} was removed by retention on ${where.at} (${where.policy})`, {
        run_state: 'expired',
        expired_at: where.at,
        policy: where.policy,
      });
    if (where.state === 'live')
      throw new HttpError(404, `run ${runId} is on ${listed.branch} but not in its catalog (not a run this listing shows)`, { run_state: 'uncatalogued' });
    throw new HttpError(404, `no run ${runId} on ${listed.branch}${where.state === 'unknown' && where.reason === 'not-a-run-id' ? ' (not a run id)' : ''}`, {
      run_state: 'unknown',
    });
  }

  get defaults(): TargetOptions {
    return this.base;
  }
}
