/**
 * The Dashboard's autoresearch routes: which experiments of the project the server was started in
 * have an autoresearch log, and one experiment's trajectory — the same `trajectoryData` numbers the
 * standalone `trajectory.html` shows, plus that page itself.
 *
 * Where the logs live: where `autoresearch record` writes them by default,
 * `<project>/.agentv/results/runs/<experiment>/_autoresearch/iterations.jsonl`. The log is a local,
 * per-machine file (it is not published to the results branch), so these routes read the server's
 * own directory only — not the `projects[]` of the config, whose checkouts may be elsewhere.
 * A loop recorded with `--experiment-dir` somewhere else is not listed.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { autoresearchPaths } from '../autoresearch/record.js';
import { readIterations } from '../autoresearch/iterations.js';
import { trajectoryData } from '../autoresearch/trajectory-data.js';
import { renderTrajectoryHtml, TRAJECTORY_CSP } from '../autoresearch/trajectory-html.js';
import { asHttpError } from './http-status.js';
import type { Handler, Router } from './http.js';
import { HttpError } from '../errors/serve-errors.js';
import { absentAs } from '../errors/errors.js';
import type { AutoresearchAnswer, AutoresearchEntry, AutoresearchListAnswer } from './api-types.js';

export type { AutoresearchEntry } from './api-types.js';

const NAME = /^[A-Za-z0-9._-]+$/;

/**
 * The log of one experiment, refusing a symlinked log or `_autoresearch` directory: the server
 * must not be talked into reading a file outside the project through a planted link.
 */
async function logOf(cwd: string, experiment: string) {
  if (!NAME.test(experiment) || experiment === '.' || experiment === '..')
    throw new HttpError(400, `experiment ${JSON.stringify(experiment)}: use only letters, digits, ".", "_" and "-"`);
  const paths = autoresearchPaths({ experiment, cwd });
  for (const p of [paths.experimentDir, paths.dir, paths.iterations]) {
    // absent: answered as 404 just below; anything else propagates
    const st = await lstat(p).catch(absentAs(null));
    if (!st)
      throw new HttpError(
        404,
        `no autoresearch log for experiment ${JSON.stringify(experiment)} (expected ${join('.agentv', 'results', 'runs', experiment, '_autoresearch', 'iterations.jsonl')}; record one with \`agentv-results autoresearch record\`)`,
      );
    if (st.isSymbolicLink()) throw new HttpError(400, `${p} is a symbolic link: refused`);
  }
  const file = await readIterations(paths.iterations);
  return { paths, ...file };
}

export async function listAutoresearch(cwd: string): Promise<AutoresearchEntry[]> {
  const root = resolve(cwd, '.agentv', 'results', 'runs');
  // absent: no autoresearch directory, no experiments; anything else propagates
  const names = await readdir(root).catch(absentAs([] as string[]));
  const out: AutoresearchEntry[] = [];
  for (const name of names.sort()) {
    if (!NAME.test(name) || name === '.' || name === '..') continue;
    let log: Awaited<ReturnType<typeof logOf>>;
    try {
      log = await logOf(cwd, name);
    } catch {
      // skipped: an experiment whose log cannot be read is not listed
      continue;
    }
    const s = trajectoryData(log.iterations);
    out.push({
      experiment: name,
      cycles: s.summary.cycles,
      best_score: s.summary.best_score,
      original_score: s.summary.original_score,
      last_timestamp: s.points.at(-1)?.timestamp || null,
    });
  }
  return out;
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

export function registerAutoresearchApi(router: Router, cwd: string): void {
  router.add(
    'GET',
    '/api/autoresearch',
    wrap(async () => ({ json: { experiments: await listAutoresearch(cwd) } satisfies AutoresearchListAnswer })),
  );
  router.add(
    'GET',
    '/api/autoresearch/:experiment',
    wrap(async (req) => {
      const experiment = req.params.experiment!;
      const log = await logOf(cwd, experiment);
      const answer = {
        experiment,
        trajectory: trajectoryData(log.iterations),
        iterations: log.iterations,
        warnings: log.warnings,
      } satisfies AutoresearchAnswer;
      return { json: answer };
    }),
  );
  // The standalone page, as `autoresearch trajectory` writes it (static: the Dashboard refreshes itself).
  router.add(
    'GET',
    '/api/autoresearch/:experiment/trajectory.html',
    wrap(async (req) => {
      const experiment = req.params.experiment!;
      const log = await logOf(cwd, experiment);
      return { html: renderTrajectoryHtml(log.iterations, { experiment, live: false }), csp: TRAJECTORY_CSP };
    }),
  );
}
