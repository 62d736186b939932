/**
 * The live window's listing budget (issue 16): AgentV's Dashboard reads the whole live branch's
 * `git ls-tree -r --name-only` into 1 MiB, so the rollover archives the oldest runs until that
 * listing fits the budget, whatever their age or count. Measured against git's own output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollover } from '../src/archive/rollover.js';
import { publish } from '../src/publish/publish.js';
import { cleanupTempDirs, git, useIsolatedGitEnv, type UserRepoFixture } from './helpers/git-fixtures.js';
import { RESULTS_REF, makeRunWorkspace, makeUserRepo, type RunWorkspace } from './publish-helpers.js';

let restore: () => void;
let user: UserRepoFixture;
const runs: RunWorkspace[] = [];
const NOW = new Date('2026-03-20T12:00:00Z');
// Age and count keep everything: only the budget decides.
const WIDE = { keepDays: 100_000, keepRuns: 100_000, now: NOW };

/** Bytes of `git ls-tree -r --name-only` (what AgentV's Dashboard reads); the helper trims the last newline. */
async function nameOnlyBytes(...path: string[]): Promise<number> {
  const out = await git(user.work, ['ls-tree', '-r', '--name-only', RESULTS_REF, ...(path.length ? ['--', ...path] : [])]);
  return out === '' ? 0 : Buffer.byteLength(out) + 1;
}

const listingBytes = (): Promise<number> => nameOnlyBytes();
const runBytes = (dir: string): Promise<number> => nameOnlyBytes(`${dir}/`);

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  user = await makeUserRepo();
  for (let i = 0; i < 4; i++) runs.push(await makeRunWorkspace({ experiment: 'nightly', day: i, minute: i, rows: 2 + i, seed: i + 1 }));
  for (const r of runs) await publish({ run: r.dir, cwd: user.work, push: false });
});

afterAll(async () => {
  restore();
  await cleanupTempDirs();
});

describe('the live listing budget', () => {
  it('counts the listing as git prints it, and 0 means no limit', async () => {
    const total = await listingBytes();
    const r = await rollover({ cwd: user.work, ...WIDE, maxListingBytes: 0, dryRun: true });
    expect(r.listing).toEqual({ before: total, after: total, max: 0 });
    expect(r.archived).toEqual([]);
  });

  it('archives the oldest runs until the listing fits, and says what it will be', async () => {
    const total = await listingBytes();
    const oldest = await runBytes(runs[0]!.runId);
    // One byte too many: exactly the oldest run has to go.
    const dry = await rollover({ cwd: user.work, ...WIDE, maxListingBytes: total - 1, dryRun: true });
    expect(dry.archived.map((a) => a.run_id)).toEqual([runs[0]!.runId]);
    expect(dry.listing).toEqual({ before: total, after: total - oldest, max: total - 1 });

    // A budget the two oldest must leave for.
    const budget = total - oldest - 1;
    const r = await rollover({ cwd: user.work, ...WIDE, maxListingBytes: budget });
    expect(r.archived.map((a) => a.run_id)).toEqual([runs[0]!.runId, runs[1]!.runId]);
    const after = await listingBytes();
    expect(r.listing.after).toBe(after);
    expect(after).toBeLessThanOrEqual(budget);
  });

  it('keeps the newest run live however small the budget', async () => {
    const r = await rollover({ cwd: user.work, ...WIDE, maxListingBytes: 1 });
    expect(r.archived.map((a) => a.run_id)).toEqual([runs[2]!.runId]);
    const live = (await git(user.work, ['ls-tree', '--name-only', RESULTS_REF])).split('\n');
    expect(live).toContain(runs[3]!.runId);
    expect(r.live).toBe(1);
  });
});
