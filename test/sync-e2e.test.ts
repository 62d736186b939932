/**
 * Sync end to end over real transports: a `git daemon` on 127.0.0.1 serving bare repositories with
 * receive.denyNonFastForwards=true / receive.denyDeletes=false, and plain file-path remotes.
 * Every push we make must be accepted by such a remote (nothing is ever forced), checkouts stay
 * untouched, and results never reach the remote without their payloads.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepo, readBlobs, resolveRef, runGit, updateRefs, writeCommit } from '../src/git/index.js';
import { computeTagRevision } from '../src/merge/index.js';
import { fetchBranches, integrateRemote } from '../src/sync/integrate.js';
import { editTags, setFeedback } from '../src/overlay-write/write.js';
import { pushBranches } from '../src/sync/push-branches.js';
import { sync } from '../src/sync/sync.js';
import { openSyncBranches } from '../src/sync/sync-branch-log.js';
import { syncStatusSection } from '../src/sync/sync-branch-status.js';
import { resolveTarget } from '../src/repo/target.js';
import { runCli } from './helpers/cli.js';
import {
  cleanupTempDirs,
  git,
  makeTempDir,
  makeUserRepoWithRemote,
  snapshotCheckout,
  startGitDaemon,
  useIsolatedGitEnv,
  type GitDaemon,
} from './helpers/git-fixtures.js';
import {
  ARTIFACTS_REF,
  catalogRows,
  danglingPointers,
  lsFiles,
  makeClone,
  makeRemote,
  parents,
  publishRun,
  refOf,
  RESULTS_REF,
  showFile,
} from './sync-helpers.js';

let restore: () => void;
let daemonBase: string;
let daemon: GitDaemon;

beforeAll(async () => {
  restore = useIsolatedGitEnv();
  daemonBase = await makeTempDir('agentv-daemon');
  daemon = await startGitDaemon(daemonBase);
});
afterAll(async () => {
  await daemon.stop();
  restore();
  await cleanupTempDirs();
});

let served = 0;
/** A fresh bare repository served by the daemon; returns its git:// URL and path. */
async function servedRemote(): Promise<{ url: string; path: string }> {
  const name = `results-${++served}.git`;
  const path = join(daemonBase, name);
  await runGit(['init', '-q', '--bare', '-b', 'main', path]);
  await git(path, ['config', 'receive.denyNonFastForwards', 'true']);
  await git(path, ['config', 'receive.denyDeletes', 'false']);
  return { url: daemon.url(name), path };
}

const RUN_X = { experiment: 'shared', rows: 4 };
/**
 * A run's directory on the branches: export writes AgentV's bare run id (the timestamp; the
 * experiment is in summary.json), so two experiments' runs are distinct only by their minute.
 */
const runPath = (minute = 0) => `2026-03-14T10-${String(minute).padStart(2, '0')}-00-000Z`;

/** Bring a clone's local branches up to the remote (what `tag`/`feedback` do before editing). */
async function catchUp(clone: string): Promise<void> {
  const target = await resolveTarget({ cwd: clone });
  const r = await integrateRemote(target, await fetchBranches(target));
  expect(r.kind).toBe('ready');
}

/** A CI shard appending rows to a published run's index.jsonl: one commit on the local results branch (CAS). */
async function appendRows(clone: string, path: string, ids: string[]): Promise<void> {
  const repo = await openRepo(clone);
  const tip = (await resolveRef(repo, RESULTS_REF))!;
  const spec = `${tip}:${path}/index.jsonl`;
  const current = (await readBlobs(repo, [spec])).get(spec)!.toString('utf8');
  const rows = ids.map((id) => JSON.stringify({ projection_identity: { id }, test_id: id, run_id: path, score: 1 }) + '\n').join('');
  const { commit } = await writeCommit(repo, {
    parent: tip,
    files: [{ path: `${path}/index.jsonl`, data: current + rows }],
    message: 'shard rows',
    author: { name: 'S', email: 's@x.invalid', date: new Date() },
  });
  await updateRefs(repo, [{ ref: RESULTS_REF, new: commit, old: tip }]);
}

function identities(index: string): string[] {
  return index
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { projection_identity: { id: string } }).projection_identity.id);
}

describe('over git daemon (denyNonFastForwards)', () => {
  it('two publishers diverge and auto-merge; checkouts untouched; remote tip is the first parent', async () => {
    const { url, path: remote } = await servedRemote();
    const a = await makeClone(url, 'a');
    const b = await makeClone(url, 'b');
    const before = [await snapshotCheckout(a), await snapshotCheckout(b)];
    // B has heard from the remote (empty then): its publish does not fetch first (a clone that never
    // did fetches the team's tip before deciding, fresh-clone.test.ts), so the two diverge.
    await sync({ cwd: b });

    const ra = await publishRun(a, { experiment: 'alpha' });
    expect(ra.push).toMatchObject({ landed: true, classification: 'ok', attempts: 1 });
    const rb = await publishRun(b, { experiment: 'beta', minute: 1 });
    expect(rb.push).toMatchObject({ landed: true, classification: 'ok', attempts: 2 });
    expect(rb.push!.merges).toBe(2); // results and artifacts

    const tip = (await refOf(remote, RESULTS_REF))!;
    expect(await parents(remote, tip)).toEqual([ra.commits.results, rb.commits.results]);
    const artifactsTip = (await refOf(remote, ARTIFACTS_REF))!;
    expect(await parents(remote, artifactsTip)).toEqual([ra.commits.artifacts, rb.commits.artifacts]);
    expect([ra.runId, rb.runId]).toEqual([runPath(0), runPath(1)]);
    expect((await catalogRows(remote, tip)).map((r) => r.run_id).sort()).toEqual([ra.runId, rb.runId]);
    expect(await danglingPointers(remote, tip, artifactsTip)).toEqual([]);
    expect(await showFile(remote, tip, '.gitattributes')).toContain('merge=agentv-jsonl');

    // A has nothing new: no push at all.
    expect((await sync({ cwd: a })).push).toMatchObject({ landed: true, classification: 'nothing-to-push', attempts: 0 });
    expect([await snapshotCheckout(a), await snapshotCheckout(b)]).toEqual(before);
  });

  it("two CI shards appending to one run's index.jsonl merge: every row once", async () => {
    const { url, path: remote } = await servedRemote();
    const a = await makeClone(url);
    const b = await makeClone(url);
    await publishRun(a, RUN_X);
    await catchUp(b);
    await appendRows(a, runPath(), ['shard-a-1', 'shard-a-2', 'both']);
    await appendRows(b, runPath(), ['both', 'shard-b-1']);
    expect((await sync({ cwd: a })).push.landed).toBe(true);
    const out = await sync({ cwd: b });
    expect(out.push).toMatchObject({ landed: true, classification: 'ok' });
    const ids = identities((await showFile(remote, RESULTS_REF, `${runPath()}/index.jsonl`))!);
    expect(ids.slice(-4)).toEqual(['shard-a-1', 'shard-a-2', 'both', 'shard-b-1']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(4 + 4);
  });

  it('concurrent tags and feedback from two machines merge', async () => {
    const { url, path: remote } = await servedRemote();
    const a = await makeClone(url);
    const b = await makeClone(url);
    const run = await publishRun(a, RUN_X);
    await catchUp(b);
    const tests = identities((await showFile(remote, RESULTS_REF, `${runPath()}/index.jsonl`))!).length;
    expect(tests).toBe(4);
    const index = (await showFile(remote, RESULTS_REF, `${runPath()}/index.jsonl`))!;
    const [t0, t1] = [
      ...new Set(
        index
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { test_id: string }).test_id),
      ),
    ];

    await editTags({ cwd: a, runId: run.runId, add: ['baseline'], push: false });
    await setFeedback({ cwd: a, runId: run.runId, testId: t0!, text: 'grader too lenient', reviewer: 'ana', push: false });
    await editTags({ cwd: b, runId: run.runId, add: ['release-2.1'], push: false });
    await setFeedback({ cwd: b, runId: run.runId, testId: t1!, text: 'flaky tool call', reviewer: 'bo', push: false });
    const [sa, sb] = await Promise.all([sync({ cwd: a }), sync({ cwd: b })]);
    expect([sa.push.landed, sb.push.landed]).toEqual([true, true]);

    const tags = JSON.parse((await showFile(remote, RESULTS_REF, `${runPath()}/tags.json`))!);
    expect([...tags.tags].sort()).toEqual(['baseline', 'release-2.1']);
    const { tag_revision: rev, ...rest } = tags;
    expect(rev).toBe(computeTagRevision(rest));
    const feedback = JSON.parse((await showFile(remote, RESULTS_REF, `${runPath()}/feedback.json`))!);
    expect(feedback.entries[t0!].ana).toMatchObject({ feedback: 'grader too lenient', reviewer: 'ana' });
    expect(feedback.entries[t1!].bo).toMatchObject({ feedback: 'flaky tool call', reviewer: 'bo' });
    expect(await git(remote, ['for-each-ref', 'refs/heads/agentv/results-sync'])).toBe('');
  });

  it('a divergent edit of the same feedback goes to a sync branch with name and link; both versions survive; --resolve merges it', async () => {
    const { url, path: remote } = await servedRemote();
    const a = await makeClone(url);
    const b = await makeClone(url);
    // B's remote looks like GitHub; git rewrites it to the local daemon (insteadOf).
    await git(b, ['remote', 'set-url', 'origin', 'https://github.com/acme/evals.git']);
    await git(b, ['config', `url.${url}.insteadOf`, 'https://github.com/acme/evals.git']);
    const run = await publishRun(a, RUN_X);
    await catchUp(b);
    const index = (await showFile(remote, RESULTS_REF, `${runPath()}/index.jsonl`))!;
    const testId = (JSON.parse(index.split('\n')[0]!) as { test_id: string }).test_id;
    const [otherTest] = index
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { test_id: string }).test_id)
      .filter((t) => t !== testId);

    expect((await setFeedback({ cwd: a, runId: run.runId, testId, text: 'version A', reviewer: 'ana' })).push?.landed).toBe(true);
    // Feedback is keyed by (test, reviewer): only one reviewer's own edits can diverge.
    await setFeedback({ cwd: b, runId: run.runId, testId, text: 'version B', reviewer: 'ana', push: false });
    await setFeedback({ cwd: b, runId: run.runId, testId: otherTest!, text: 'unrelated note', reviewer: 'bo', push: false });
    const bLocal = await refOf(b, RESULTS_REF);
    const mainBefore = await refOf(remote, RESULTS_REF);

    const cli = await runCli(['sync'], { cwd: b });
    expect(cli.code, cli.stderr).toBe(1);
    const branch = /agentv\/results-sync\/\d{8}T\d{6}Z-[a-z0-9-]+-[a-z0-9]{6}/.exec(cli.stdout)?.[0];
    expect(branch).toBeDefined();
    expect(cli.stdout).toContain(`https://github.com/acme/evals/compare/agentv/results/v1...${branch}?expand=1`);
    expect(cli.stdout).toContain('feedback.json');

    // Both versions survive: A's on the results branch (unchanged), B's on the sync branch.
    expect(await refOf(remote, RESULTS_REF)).toBe(mainBefore);
    expect(await refOf(remote, `refs/heads/${branch}`)).toBe(bLocal);
    const fb = (rev: string) => showFile(remote, rev, `${runPath()}/feedback.json`).then((t) => JSON.parse(t!).entries);
    expect((await fb(RESULTS_REF))[testId].ana.feedback).toBe('version A');
    expect((await fb(`refs/heads/${branch}`))[testId].ana.feedback).toBe('version B');
    // Locally: results back on the remote tip, the diverted commits kept on the sync branch.
    expect(await refOf(b, RESULTS_REF)).toBe(mainBefore);
    expect(await refOf(b, `refs/heads/${branch}`)).toBe(bLocal);
    const target = await resolveTarget({ cwd: b });
    const open = await openSyncBranches(target.repo.commonDir);
    expect(open.map((r) => r.branch)).toEqual([branch]);
    expect(open[0]!.compare_url).toContain('github.com/acme/evals/compare/');
    expect((await syncStatusSection(target))?.open[0]).toMatchObject({ branch, on_remote: true, resolve_command: `agentv-results sync --resolve ${branch}` });

    // A later publish from B lands normally: contention/conflicts do not stick.
    expect((await publishRun(b, { experiment: 'later', minute: 1 })).push).toMatchObject({ landed: true });

    // A human decides on the results branch, then --resolve re-merges the sync branch.
    await setFeedback({ cwd: a, runId: run.runId, testId, text: 'agreed: version B', reviewer: 'ana' });
    const resolved = await runCli(['sync', '--resolve', branch!, '--json'], { cwd: b });
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ status: 'merged', deleted_remote: true });
    expect(await refOf(remote, `refs/heads/${branch}`)).toBeNull();
    const final = await fb(RESULTS_REF);
    expect(final[testId].ana.feedback).toBe('agreed: version B');
    expect(final[otherTest!].bo.feedback).toBe('unrelated note');
    const tip = (await refOf(remote, RESULTS_REF))!;
    expect((await runGit(['merge-base', '--is-ancestor', bLocal!, tip], { cwd: remote, okCodes: [0, 1] })).code).toBe(0);
    expect(await syncStatusSection(target)).toBeUndefined();
  });

  it('an artifacts commit and its results commit never land half', async () => {
    const { url, path: remote } = await servedRemote();
    // The remote refuses any update of the results branch: with --atomic, the artifacts must not land either.
    const hook = join(remote, 'hooks', 'update');
    await writeFile(hook, '#!/bin/sh\n[ "$1" = "refs/heads/agentv/results/v1" ] && { echo "results branch frozen" >&2; exit 1; }\nexit 0\n');
    await chmod(hook, 0o755);
    const a = await makeClone(url);
    const r = await publishRun(a, { experiment: 'half' });
    expect(r.push).toMatchObject({ landed: false });
    expect(await refOf(remote, ARTIFACTS_REF)).toBeNull();
    expect(await refOf(remote, RESULTS_REF)).toBeNull();

    // Log every accepted push (the refs it moved together), then race four publishers.
    await writeFile(hook, '#!/bin/sh\nexit 0\n');
    const log = join(remote, 'pushes.log');
    await writeFile(join(remote, 'hooks', 'post-receive'), `#!/bin/sh\ncat >> ${log}\necho --- >> ${log}\n`);
    await chmod(join(remote, 'hooks', 'post-receive'), 0o755);
    expect((await sync({ cwd: a })).push.landed).toBe(true);
    const clones = [a, ...(await Promise.all([1, 2, 3].map(() => makeClone(url))))];
    await Promise.all(
      clones.map(async (c, i) => {
        for (let k = 0; k < 2; k++) await publishRun(c, { experiment: `p${i}`, minute: 10 + 2 * i + k });
      }),
    );
    for (const c of clones) expect((await sync({ cwd: c })).push.landed).toBe(true);

    // After every accepted push, the results tip's pointers resolve on the artifacts tip.
    let artifacts: string | null = null;
    const blocks = (await readFile(log, 'utf8')).split('---\n').filter((b) => b.trim());
    expect(blocks.length).toBeGreaterThan(4);
    for (const block of blocks) {
      const moved = new Map(
        block
          .trim()
          .split('\n')
          .map((l) => [l.split(' ')[2]!, l.split(' ')[1]!]),
      );
      artifacts = moved.get(ARTIFACTS_REF) ?? artifacts;
      const results = moved.get(RESULTS_REF);
      if (results) expect(await danglingPointers(remote, results, artifacts!)).toEqual([]);
    }
    expect(await catalogRows(remote, RESULTS_REF)).toHaveLength(1 + 4 * 2);
  });
});

describe('over a plain file-path remote', () => {
  it("a user's dirty checkout publishes, loses a race, merges and pushes; nothing of theirs changes", async () => {
    const { work, remote } = await makeUserRepoWithRemote();
    const other = await makeClone(remote);
    const before = await snapshotCheckout(work);
    const first = await publishRun(work, { experiment: 'mine' });
    expect(first.push?.landed).toBe(true);
    await publishRun(other, { experiment: 'theirs', minute: 1 });
    // Contention alone never makes a sync branch: with one attempt allowed the run just stays pending.
    await publishRun(work, { experiment: 'mine', minute: 5 }, { push: false });
    const pending = await refOf(work, RESULTS_REF);
    const target = await resolveTarget({ cwd: work });
    const once = await pushBranches(target, { maxAttempts: 1 });
    expect(once).toMatchObject({ landed: false, classification: 'non-fast-forward', attempts: 1 });
    expect(await git(remote, ['for-each-ref', 'refs/heads/agentv/results-sync'])).toBe('');
    // The merge was made locally (remote tip first), so the next sync is a single push.
    const [p1, p2] = await parents(work, RESULTS_REF);
    expect(p2).toBe(pending);
    expect(p1).toBe(await refOf(remote, RESULTS_REF));
    expect((await sync({ cwd: work })).push).toMatchObject({ landed: true, attempts: 1 });
    expect((await catalogRows(remote, RESULTS_REF)).length).toBe(3);
    expect(await snapshotCheckout(work)).toEqual(before);
  });

  it('coalesces: runs committed while nothing was pushed go in one push; concurrent calls share one loop', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote);
    for (let k = 0; k < 3; k++) await publishRun(a, { experiment: 'batch', minute: k }, { push: false });
    const target = await resolveTarget({ cwd: a });
    const outcomes = await Promise.all([pushBranches(target), pushBranches(target), pushBranches(target)]);
    expect(outcomes.map((o) => o.joined)).toEqual([false, true, true]);
    expect(outcomes.every((o) => o.landed && o.attempts === 1)).toBe(true);
    expect((await catalogRows(remote, RESULTS_REF)).length).toBe(3);
    expect(await lsFiles(remote, ARTIFACTS_REF)).not.toHaveLength(0);
  });

  it("after a landed push the tracking refs show the remote, whether or not git's fetch refspec maps our branches", async () => {
    const remote = await makeRemote();
    const tracking = (b: string) => `refs/remotes/origin/${b.slice('refs/heads/'.length)}`;
    // With the usual refs/heads/*:refs/remotes/origin/* git moves them itself; without one, we do.
    for (const [i, refspec] of (['default', 'none'] as const).entries()) {
      const a = await makeClone(remote, `ci-${refspec}`);
      if (refspec === 'none') await git(a, ['config', '--unset-all', 'remote.origin.fetch']);
      await publishRun(a, { experiment: `track-${refspec}`, minute: i }, { push: false });
      const outcome = await pushBranches(await resolveTarget({ cwd: a }));
      expect(outcome.landed).toBe(true);
      for (const ref of [RESULTS_REF, ARTIFACTS_REF]) {
        expect(await refOf(a, tracking(ref))).toBe(await refOf(a, ref));
        expect(await refOf(remote, ref)).toBe(await refOf(a, ref));
      }
      // Nothing is pending, so another loop has nothing to push.
      expect((await pushBranches(await resolveTarget({ cwd: a }))).classification).toBe('nothing-to-push');
    }
  });

  it('`git merge` by hand with the installed drivers gives the same tree as the tool', async () => {
    const remote = await makeRemote();
    const a = await makeClone(remote);
    const b = await makeClone(remote);
    const run = await publishRun(a, RUN_X);
    await catchUp(b);
    const index = (await showFile(remote, RESULTS_REF, `${runPath()}/index.jsonl`))!;
    const [t0, t1] = [
      ...new Set(
        index
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { test_id: string }).test_id),
      ),
    ];
    await editTags({ cwd: a, runId: run.runId, add: ['baseline'], push: false });
    await setFeedback({ cwd: a, runId: run.runId, testId: t0!, text: 'from a', reviewer: 'ana', push: false });
    await appendRows(a, runPath(), ['late-a']);
    await publishRun(a, { experiment: 'only-a', minute: 1 }, { push: false });
    expect((await sync({ cwd: a })).push.landed).toBe(true);
    await editTags({ cwd: b, runId: run.runId, add: ['release-2.1'], push: false });
    await setFeedback({ cwd: b, runId: run.runId, testId: t1!, text: 'from b', reviewer: 'bo', push: false });
    await appendRows(b, runPath(), ['late-b']);
    await publishRun(b, { experiment: 'only-b', minute: 2 }, { push: false });
    const out = await sync({ cwd: b });
    // sync takes in the remote's work first (one merge per branch), then pushes the merges.
    expect(out.fetch).toMatchObject({ merges: 2 });
    expect(out.push).toMatchObject({ landed: true });
    const tool = (await refOf(b, RESULTS_REF))!;

    // A person: a checkout of the branch at the remote's tip, drivers installed, `git merge` ours.
    const human = await makeTempDir('agentv-human');
    await git(human, ['clone', '-q', remote, '.']);
    await git(human, ['fetch', '-q', b, `${RESULTS_REF}:refs/remotes/b/results`]);
    await git(human, ['checkout', '-q', '-b', 'review', `${tool}^1`]);
    const installed = await runCli(['drivers', 'install'], { cwd: human });
    expect(installed.code, installed.stderr).toBe(0);
    const merged = await runGit(['merge', '--no-edit', '-q', `${tool}^2`], { cwd: human, okCodes: [0, 1] });
    expect(merged.stderr).not.toMatch(/CONFLICT/);
    expect(merged.code, merged.stderr).toBe(0);
    expect(await git(human, ['rev-parse', 'HEAD^{tree}'])).toBe(await git(b, ['rev-parse', `${tool}^{tree}`]));
    // And without the drivers git could not have done it.
    await runCli(['drivers', 'uninstall'], { cwd: human });
    await git(human, ['reset', '-q', '--hard', `${tool}^1`]);
    const plain = await runGit(['merge', '--no-edit', '-q', `${tool}^2`], { cwd: human, okCodes: [0, 1] });
    expect(plain.code, plain.stderr).toBe(1);
    await git(human, ['merge', '--abort']);
  });
});
