/**
 * The static site fits where it is hosted: full detail (each test's grading, answer and transcript,
 * the run's report) for the newest `detailLast` runs, the summary and test table for older ones; the
 * build reports its size against GitHub Pages' limits (1 GB a site, 100 MB a file); a run that
 * falls out of (or back into) the newest is rebuilt, and the files it no longer has are removed.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { siteFile } from '../src/model/site-paths.js';
import { publish } from '../src/publish/publish.js';
import { PAGES_FILE_LIMIT, PAGES_SITE_LIMIT, site } from '../src/site/build.js';
import { cleanupTempDirs, makeTempDir, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { makeRunWorkspace, makeUserRepo } from './publish-helpers.js';

useIsolatedGitEnv();
afterAll(() => cleanupTempDirs());

async function files(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await files(dir, p)));
    else out.push(p);
  }
  return out;
}

describe('site: a size budget', () => {
  let user: UserRepoFixture;
  const ids: string[] = [];

  beforeAll(async () => {
    user = await makeUserRepo();
    for (const minute of [1, 2, 3]) {
      const run = await makeRunWorkspace({ experiment: 'nightly', minute, rows: 3, seed: minute });
      await publish({ run: run.dir, cwd: user.work });
      ids.push(run.runId);
    }
  }, 120_000);

  it('keeps full detail for the newest runs only, reports its size against Pages’ limits, and gives the detail back when asked', async () => {
    const out = join(await makeTempDir('agentv-site-budget'), 'public');
    const small = await site({ cwd: user.work, out, detailLast: 1 });
    expect(small.warnings).toEqual([]);
    expect(small.runs).toBe(3);
    expect(small.runsDetailed).toBe(1);
    expect(small.budget).toEqual({ site_limit: PAGES_SITE_LIMIT, file_limit: PAGES_FILE_LIMIT, largest_file: expect.any(Number), over: false });
    expect(small.budget.largest_file).toBeGreaterThan(0);
    expect(small.budget.largest_file).toBeLessThanOrEqual(small.bytes);
    const newest = ids.at(-1)!;
    const all = await files(out);
    const under = (id: string, list = all) => list.filter((f) => f.startsWith(`${siteFile(`/runs/${encodeURIComponent(id)}`).replace(/\/_\.json$/, '')}/`));
    // The newest run: its report and its tests' files; an older one: its detail only, marked a summary.
    expect(under(newest).some((f) => f.includes('/report/'))).toBe(true);
    expect(under(newest).some((f) => f.includes('/tests/'))).toBe(true);
    for (const old of ids.slice(0, -1)) {
      expect(under(old).filter((f) => f.includes('/tests/') || f.includes('/report/'))).toEqual([]);
      const detail = JSON.parse(await readFile(join(out, siteFile(`/runs/${encodeURIComponent(old)}`)), 'utf8')) as {
        summary_only?: boolean;
        tests: unknown[];
      };
      expect(detail.summary_only).toBe(true);
      expect(detail.tests.length).toBeGreaterThan(0);
    }
    // Every run in full: the two older runs are built again with their detail, and the site grows.
    const full = await site({ cwd: user.work, out, detailLast: 3 });
    expect(full.runsDetailed).toBe(3);
    expect(full.runsBuilt).toBe(2);
    expect(full.bytes).toBeGreaterThan(small.bytes);
    const fuller = await files(out);
    for (const old of ids.slice(0, -1)) {
      expect(under(old, fuller).some((f) => f.includes('/tests/'))).toBe(true);
      expect(under(old, fuller).some((f) => f.includes('/report/'))).toBe(true);
    }
    // And back: the older runs' test files are removed, not left behind.
    const again = await site({ cwd: user.work, out, detailLast: 1 });
    expect(again.filesRemoved).toBeGreaterThan(0);
    expect(again.bytes).toBe(small.bytes);
    expect(await files(out)).toEqual(all);
  }, 120_000);
});
