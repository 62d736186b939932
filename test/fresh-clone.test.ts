/**
 * Issue 37, a fresh clone gets the team's truth: machines publish, tag and review runs on a remote
 * served by a real `git daemon` on 127.0.0.1; a fresh `git clone` (no local results branch, only
 * the remote-tracking one) and a depth-1 clone like actions/checkout (no results branch at all)
 * then run each verb, and each answers what it answers on the machine that wrote the data.
 * repo/team-tip.ts is the one module every verb asks which tip to read.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, isolateGitForSuite, makeTempDir, startGitDaemon, type GitDaemon } from './helpers/git-fixtures.js';
import { startServer } from '../src/serve/index.js';
import { cli, cliProcess } from './publish-helpers.js';
import { makeClone, makeRun, refOf, RESULTS_REF, showFile } from './sync-helpers.js';

isolateGitForSuite();
let daemon: GitDaemon | null = null;
afterEach(async () => {
  await daemon?.stop();
  daemon = null;
});

/** A verb's --json answer; gate and compare exit 1 on a regression, which is an answer too. */
async function json<T = Record<string, unknown>>(args: string[], dir: string): Promise<T> {
  const r = await cli([...args, '--json'], dir);
  expect(r.code === 0 || (r.code === 1 && /^(gate|compare)$/.test(args[0]!)), `${args.join(' ')}: exit ${r.code}: ${r.stderr}`).toBe(true);
  return JSON.parse(r.stdout) as T;
}

async function served(): Promise<{ url: string; bare: string }> {
  const base = await makeTempDir('agentv-daemon');
  await git(base, ['init', '-q', '--bare', '-b', 'main', 'team.git']);
  const bare = join(base, 'team.git');
  await git(bare, ['config', 'receive.denyNonFastForwards', 'true']);
  daemon = await startGitDaemon(base);
  return { url: daemon.url('team.git'), bare };
}

async function publishPushed(dir: string, spec: Parameters<typeof makeRun>[0], extra: string[] = []): Promise<string> {
  const r = await json<{ run_id: string }>(['publish', await makeRun(spec), '--push', ...extra], dir);
  return r.run_id;
}

/** A fresh full clone and a depth-1 clone of the default branch, as a new teammate and a CI job make them. */
async function freshClones(url: string): Promise<{ full: string; shallow: string }> {
  const root = await makeTempDir('agentv-fresh');
  await git(root, ['clone', '-q', url, 'full']);
  await git(root, ['clone', '-q', '--depth', '1', url, 'shallow']);
  return { full: join(root, 'full'), shallow: join(root, 'shallow') };
}

/** An answer without the scratch directories a read materializes a published run into. */
const sameAnswer = (d: unknown): unknown => JSON.parse(JSON.stringify(d).replace(/\/tmp\/agentv-[\w-]+?-[A-Za-z0-9]{6}\//g, '<scratch>/'));

/** What a listing says about runs, without which tip it came from (that differs by design). */
const runsOf = (l: { runs: { run_id: string; total: number; passed: number; tags?: string[] }[] }) =>
  l.runs.map((r) => ({ run_id: r.run_id, total: r.total, passed: r.passed, tags: r.tags ?? [] }));

describe('a fresh clone reads the team branch as the machines that wrote it', () => {
  it('every verb answers on a fresh clone (and, with --fetch, a depth-1 clone) what it answers on the writer', async () => {
    const { url } = await served();
    const a = await makeClone(url, 'a');
    await git(a, ['push', '-q', 'origin', 'main']);
    const b = await makeClone(url, 'b');
    const first = await publishPushed(a, { experiment: 'nightly', rows: 4, minute: 1 });
    const second = await publishPushed(b, { experiment: 'nightly', rows: 4, minute: 2, seed: 3 });
    const third = await publishPushed(a, { experiment: 'other', rows: 3, minute: 3, seed: 5 });
    expect((await cli(['tag', first, '+baseline'], b)).code).toBe(0);
    expect((await cli(['tag', second, '+candidate'], a)).code).toBe(0);
    const testId = (JSON.parse((await showFile(a, 'refs/remotes/origin/agentv/results/v1', `${first}/index.jsonl`))!.split('\n')[0]!) as { test_id: string })
      .test_id;
    expect((await cli(['feedback', first, testId, 'grader too lenient', '--reviewer', 'ana'], b)).code).toBe(0);
    // The writer takes in the others' work: its answers are the reference.
    expect((await cli(['sync'], a)).code).toBe(0);

    const { full, shallow } = await freshClones(url);
    expect(await refOf(full, RESULTS_REF)).toBeNull();
    expect(await refOf(shallow, 'refs/remotes/origin/agentv/results/v1')).toBeNull();

    const verbs: { name: string; args: string[]; pick: (out: any) => unknown; fetch?: string[] }[] = [
      // tag and feedback first: on the depth-1 clone their --fetch is the first fetch there is.
      { name: 'tag', args: ['tag', first], pick: sameAnswer, fetch: ['--fetch'] },
      { name: 'feedback', args: ['feedback', first], pick: sameAnswer, fetch: ['--fetch'] },
      { name: 'list', args: ['list'], pick: runsOf, fetch: ['--fetch'] },
      { name: 'summary', args: ['summary', second], pick: sameAnswer, fetch: ['--fetch'] },
      { name: 'gate @baseline', args: ['gate', '@baseline', second, '--target', 'model-a'], pick: sameAnswer, fetch: ['--fetch'] },
      { name: 'compare @baseline', args: ['compare', '@baseline', third, '--target', 'model-a'], pick: sameAnswer, fetch: ['--fetch'] },
      { name: 'status layout', args: ['status'], pick: (s) => s.layout, fetch: ['--fetch'] },
      {
        name: 'archive --dry-run',
        args: ['archive', '--keep-runs', '1', '--keep-days', '0', '--max-listing-bytes', '0', '--dry-run'],
        pick: (r) => ({ archived: r.archived, live: r.live }),
      },
      {
        name: 'expire --dry-run',
        args: ['expire', '--keep-runs', '1', '--dry-run'],
        pick: (r) => ({ expired: r.expired, kept_by_tag: r.kept_by_tag, kept: r.kept }),
      },
    ];
    for (const v of verbs) {
      const writer = v.pick(await json(v.args, a));
      expect(writer, v.name).toBeTruthy();
      expect(v.pick(await json(v.args, full)), `${v.name} on a fresh clone`).toEqual(writer);
      if (v.fetch) expect(v.pick(await json([...v.args, ...v.fetch], shallow)), `${v.name} --fetch on a depth-1 clone`).toEqual(writer);
    }
    // serve: the Dashboard's run list and a run's detail (tags, review notes) on the fresh clone are the writer's.
    const dashboard = async (dir: string) => {
      const server = await startServer({ cwd: dir, readOnly: true });
      try {
        const get = async (path: string) => {
          const res = await fetch(`${server.url}${path}`);
          expect(res.status, path).toBe(200);
          return (await res.json()) as any;
        };
        const runs = (await get('/api/runs')).runs.map((r: any) => [r.run_id, r.tags ?? []]);
        const detail = await get(`/api/runs/${encodeURIComponent(first)}`);
        return { runs, tags: detail.tags, feedback: detail.feedback };
      } finally {
        await server.close();
      }
    };
    const writerView = await dashboard(a);
    expect(writerView.runs).toHaveLength(3);
    expect(writerView.tags.tags).toEqual(['baseline']);
    expect(await dashboard(full), 'serve on a fresh clone').toEqual(writerView);
    // The answers are not empty ones that agree by accident.
    const tags = await json<{ tags: string[] }>(['tag', first], full);
    expect(tags.tags).toEqual(['baseline']);
    const fb = await json<{ notes: { test_id: string; reviewer: string; feedback: string }[] }>(['feedback', first], full);
    expect(fb.notes).toMatchObject([{ test_id: testId, reviewer: 'ana', feedback: 'grader too lenient' }]);
    const dry = await json<{ archived: unknown[] }>(['archive', '--keep-runs', '1', '--keep-days', '0', '--max-listing-bytes', '0', '--dry-run'], full);
    expect(dry.archived).toHaveLength(3);
    const exp = await json<{ expired: unknown[]; kept_by_tag: unknown[] }>(['expire', '--keep-runs', '1', '--dry-run'], full);
    expect(exp.expired.length).toBeGreaterThan(0);
    // A dry run moved nothing; the fresh clone still has no local results branch.
    expect(await refOf(full, RESULTS_REF)).toBeNull();

    // A tag written on the fresh clone goes onto the team's tip and lands (no conflict, no force).
    const tagged = await json<{ changed: boolean; push: { landed: boolean } }>(['tag', third, '+reviewed'], full);
    expect(tagged).toMatchObject({ changed: true, push: { landed: true } });
    expect((await json<{ tags: string[] }>(['tag', first], full)).tags).toEqual(['baseline']);
    expect((await cli(['sync'], a)).code).toBe(0);
    expect((await json<{ tags: string[] }>(['tag', third], a)).tags).toEqual(['reviewed']);
    // So does a review note written on the depth-1 clone (it merges onto the tip it fetched, never forced).
    const noted = await json<{ push: { landed: boolean } }>(['feedback', third, testId, 'ok from CI', '--reviewer', 'ci'], shallow);
    expect(noted.push.landed).toBe(true);
    expect((await cli(['sync'], a)).code).toBe(0);
    const seen = await json<{ notes: { reviewer: string; feedback: string }[] }>(['feedback', third], a);
    expect(seen.notes).toMatchObject([{ reviewer: 'ci', feedback: 'ok from CI' }]);
  }, 240_000);

  it("a 4.42 team's publish from a fresh clone and from a depth-1 CI clone writes AgentV 4.42's layout", async () => {
    const { url, bare } = await served();
    const writer = await makeClone(url, 'stable-writer');
    await git(writer, ['push', '-q', 'origin', 'main']);
    // The team's AgentV 4.42 publishes runs/<experiment>/<timestamp>/; its config stays outside the repository.
    const config = join(await makeTempDir('agentv-config'), 'config.yaml');
    await writeFile(config, 'results:\n  layout: stable\n');
    const old = await publishPushed(writer, { experiment: 'nightly', rows: 3, minute: 1 }, ['--config', config]);
    expect(old).toMatch(/::/);

    const { full, shallow } = await freshClones(url);
    const status = await json<{ layout: { layout: string; runs: { next: number; stable: number } } }>(['status'], full);
    expect(status.layout).toMatchObject({ layout: 'stable', runs: { next: 0, stable: 1 } });
    for (const [dir, minute] of [
      [full, 7],
      [shallow, 9],
    ] as const) {
      const r = await json<{ layout: { layout: string; reason: string }; location: { path: string }; push: { landed: boolean } }>(
        ['publish', await makeRun({ experiment: 'ci', rows: 2, minute, seed: minute }), '--push'],
        dir,
      );
      expect(r.layout.layout, r.layout.reason).toBe('stable');
      expect(r.location.path).toMatch(/^runs\/ci\//);
      expect(r.push.landed).toBe(true);
    }
    const onRemote = (await git(bare, ['ls-tree', '-d', '--name-only', 'agentv/results/v1', 'runs/ci/'])).split('\n').filter(Boolean);
    expect(onRemote).toHaveLength(2);
    // Nothing at the branch root a 4.42 Dashboard would not list.
    const root = (await git(bare, ['ls-tree', '-d', '--name-only', 'agentv/results/v1'])).split('\n').filter((p) => !p.startsWith('.'));
    expect(root.sort()).toEqual(['metadata', 'runs'].filter((p) => root.includes(p)).sort());
    expect(root).toContain('runs');
  }, 180_000);
  it('six depth-1 CI clones publish at once: each fetches the tip only, and every run lands on the remote (never forced)', async () => {
    const { url, bare } = await served();
    const writer = await makeClone(url, 'writer');
    await git(writer, ['push', '-q', 'origin', 'main']);
    const first = await publishPushed(writer, { experiment: 'nightly', rows: 3, minute: 1 });
    const second = await publishPushed(writer, { experiment: 'nightly', rows: 3, minute: 2, seed: 2 });
    const before = await git(bare, ['rev-parse', 'agentv/results/v1']);
    const root = await makeTempDir('agentv-ci');
    const clones = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(async (i) => {
        await git(root, ['clone', '-q', '--depth', '1', url, `ci-${i}`]);
        return { dir: join(root, `ci-${i}`), run: await makeRun({ experiment: 'ci', rows: 2, minute: 10 + i, seed: 20 + i }) };
      }),
    );
    const results = await Promise.all(clones.map((c) => cliProcess(['publish', c.run, '--push', '--json'], c.dir, { timeoutMs: 200_000 })));
    const ids: string[] = [];
    for (const r of results) {
      expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
      const out = JSON.parse(r.stdout) as { run_id: string; push: { landed: boolean } };
      expect(out.push.landed).toBe(true);
      ids.push(out.run_id);
    }
    expect(new Set(ids).size).toBe(6);
    // The remote's branch moved forward only, and holds every run.
    const after = await git(bare, ['rev-parse', 'agentv/results/v1']);
    expect(await git(bare, ['merge-base', '--is-ancestor', before, after]).then(() => true)).toBe(true);
    const listed = await json<{ runs: { run_id: string }[] }>(['list', '--fetch'], writer);
    expect(listed.runs.map((r) => r.run_id).sort()).toEqual([first, second, ...ids].sort());
    // Each CI clone took the tip of the results branch, not its history: the writer's first publish is beyond its shallow boundary.
    for (const c of clones) {
      expect(await git(c.dir, ['rev-parse', '--is-shallow-repository'])).toBe('true');
      const shallow = (await git(c.dir, ['rev-list', 'refs/remotes/origin/agentv/results/v1'])).split('\n');
      expect(shallow.length).toBeLessThan(Number(await git(bare, ['rev-list', '--count', 'agentv/results/v1'])));
    }
  }, 240_000);
});
