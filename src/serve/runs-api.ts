/**
 * The read side of the Dashboard: the run listing (the catalog through `listRuns`, never a walk of
 * the run trees), one run, and the overlays (tags, feedback) that ride along with it.
 *
 * Tags are per-run overlay files, not catalog fields. The listing reads them only for the page
 * it returns (one `cat-file --batch` for at most `limit` runs); filtering by tag needs every run's
 * tags, read once per branch tip and kept until the tip moves.
 */
import { readBlobs, type Repo } from '../git/index.js';
import { listRuns, type ListedRun, type ListResult } from '../history/list.js';
import { resolveTarget, type TargetOptions } from '../branch/target.js';
import { HttpError } from './http.js';

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

/** Which tip holds a listed run's files (the local branch unless only the remote has it). */
/** Where a listed run is read: the tip that lists it, the newest one when both do (history/remote-view.ts). */
function tipOf(run: ListedRun, tips: ListResult['tips'], newest: ListResult['read']['newest'] = 'local'): string | null {
  if (run.where === 'remote') return tips.remote;
  if (run.where === 'both' && newest === 'remote') return tips.remote ?? tips.local;
  return tips.local ?? tips.remote;
}

function tagsFrom(text: string | undefined): string[] {
  if (text === undefined) return [];
  try {
    const doc = JSON.parse(text) as { tags?: unknown };
    return Array.isArray(doc.tags) ? doc.tags.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

export class RunsData {
  /** Tags of every run, for the tips they were read at. */
  private allTags: { key: string; tags: Map<string, string[]> } | null = null;

  /** The repository per project: resolving a target spawns several git processes, and the
   * repository a server reads does not move while it runs (the listing itself re-reads the tips). */
  private repos = new Map<string, Promise<Repo>>();

  constructor(private readonly base: TargetOptions) {}

  private repoOf(opts: TargetOptions): Promise<Repo> {
    const key = opts.project ?? '';
    let p = this.repos.get(key);
    if (!p) {
      p = resolveTarget(opts).then((t) => t.repo);
      this.repos.set(key, p);
      p.catch(() => this.repos.delete(key));
    }
    return p;
  }

  private async tagsOf(
    opts: TargetOptions,
    runs: ListedRun[],
    tips: ListResult['tips'],
    newest?: ListResult['read']['newest'],
  ): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (runs.length === 0) return out;
    const repo = await this.repoOf(opts);
    const specs = new Map<string, string>();
    for (const r of runs) {
      const tip = tipOf(r, tips, newest);
      if (tip) specs.set(r.run_id, `${tip}:${r.path}/tags.json`);
    }
    const blobs = await readBlobs(repo, [...specs.values()]);
    for (const [id, spec] of specs) out.set(id, tagsFrom(blobs.get(spec)?.toString('utf8')));
    return out;
  }

  async list(opts: TargetOptions, q: RunsQuery): Promise<RunsPage> {
    const listed = await listRuns({ ...opts, since: q.since });
    const experiments = new Set<string>();
    const targets = new Set<string>();
    for (const r of listed.runs) {
      experiments.add(r.experiment);
      for (const t of r.targets) targets.add(t);
    }
    let rows = listed.runs.filter(
      (r) =>
        (q.experiment === undefined || r.experiment === q.experiment) &&
        (q.target === undefined || r.targets.includes(q.target)) &&
        (q.until === undefined || r.day <= q.until),
    );
    if (q.tag !== undefined) {
      const key = `${opts.project ?? ''}\0${listed.tips.local}\0${listed.tips.remote}`;
      if (this.allTags?.key !== key) this.allTags = { key, tags: await this.tagsOf(opts, listed.runs, listed.tips, listed.read.newest) };
      const all = this.allTags.tags;
      rows = rows.filter((r) => all.get(r.run_id)?.includes(q.tag!) ?? false);
    }
    const page = rows.slice(q.offset, q.offset + q.limit);
    const tags = await this.tagsOf(opts, page, listed.tips, listed.read.newest);
    return {
      branch: listed.branch,
      remote: listed.remote,
      tips: listed.tips,
      total: listed.runs.length,
      matched: rows.length,
      offset: q.offset,
      runs: page.map((r) => ({ ...r, tags: tags.get(r.run_id) ?? [] })),
      facets: { experiments: [...experiments].sort(), targets: [...targets].sort() },
      unreadable: listed.unreadable,
      read: listed.read,
    };
  }

  /** The listed run (404 when the catalog does not know it). */
  async find(opts: TargetOptions, runId: string): Promise<{ run: ListedRun; tips: ListResult['tips'] }> {
    const listed = await listRuns(opts);
    const run = listed.runs.find((r) => r.run_id === runId);
    if (!run) throw new HttpError(404, `run ${runId} is not on ${listed.branch}`);
    return { run, tips: listed.tips };
  }

  get defaults(): TargetOptions {
    return this.base;
  }
}
