/**
 * The soak's invariant checker (test/helpers/soak/check.ts, used by test/soak.slow.test.ts) catches
 * what it is there to catch: on copies of a remote broken one way each, behind the hooks' back (on
 * the server itself), each invariant reports the inconsistency it guards against.
 */
import { expect, it } from 'vitest';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import { editResultsFile, loseObject, violationsOfBrokenCopy, type Breaker } from './helpers/soak/broken-remote.js';
import { checkRemote, newCheckState } from './helpers/soak/check.js';
import { type Model, seeded, setFeedback } from './helpers/soak/model.js';
import { opNew } from './helpers/soak/operations.js';
import { ARTIFACTS_REF, makeWorld, RESULTS_REF } from './helpers/soak/remote.js';
import { Soak } from './helpers/soak/soak.js';

isolateGitForSuite();

// ---------------------------------------------------------------------------------------------
// The checker catches what it is there to catch: each invariant fails on a remote broken that way.

it('the invariant checker reports each kind of inconsistency on a remote broken that way', async () => {
  const world = await makeWorld(1);
  const soak = new Soak(world.clones, world.remote, world.reader, true);
  const c = world.clones[0]!;
  try {
    await opNew(soak, c, seeded(5));
    const run = [...soak.model.runs.values()][0]!;
    expect((await soak.cli(c, ['tag', run.id, '+c0-a'])).code).toBe(0);
    soak.model.tags.set(run.id, new Map([[0, new Set(['c0-a'])]]));
    expect((await soak.feedback(c, run, 'test-0', 'soak-c0-0', 'first', true)).code).toBe(0);
    setFeedback(soak.model, run.id, 'test-0', 'soak-c0-0', 'first');
    const clean = await checkRemote({ remote: world.remote, reader: world.reader, model: soak.model, state: newCheckState(), syncBranchesAllowed: false });
    expect(clean.violations).toEqual([]);
    expect(clean.validated).toBe(1);

    const broken = (brk: Breaker, model: Model = soak.model) => violationsOfBrokenCopy(world, model, brk);
    const editRun = (file: string, edit: (text: string) => string) => editResultsFile(`${run.id}/${file}`, edit);
    const lines = (t: string) => t.split('\n').filter(Boolean);

    expect(await broken(editRun('index.jsonl', (t) => `${t}${lines(t)[0]}\n`))).toEqual(
      expect.arrayContaining([expect.stringMatching(/row 0 \(test-0\) is on the remote 2 times/), expect.stringMatching(/does not validate/)]),
    );
    expect(await broken(editRun('index.jsonl', (t) => `${lines(t).slice(1).join('\n')}\n`))).toEqual(
      expect.arrayContaining([expect.stringMatching(/row 0 \(test-0\) was published and is not on the remote/), expect.stringMatching(/does not validate/)]),
    );
    const day = `.indexes/agentv-results.${run.timestamp.slice(0, 10)}.jsonl`;
    expect(await broken(editResultsFile(day, (t) => t.replace(/"total":\d+/, '"total":99')))).toEqual([
      expect.stringMatching(/the catalog counts 99 rows, \d+ were published/),
    ]);
    expect(await broken(editResultsFile(day, (t) => `${t}${lines(t)[0]}\n`))).toEqual([expect.stringMatching(/2 catalog lines \(expected 1\)/)]);
    // A row the model does not promise (as if a killed publish had landed behind the clone's back).
    const fewer: Model = { ...soak.model, runs: new Map([[run.id, { ...run, expected: new Set([...run.expected].slice(1)) }]]) };
    expect(await broken(async () => {}, fewer)).toEqual(
      expect.arrayContaining([expect.stringMatching(/row 0 \(test-0\) is on the remote but was never published/)]),
    );
    expect(await broken(editRun('tags.json', (t) => t.replace('c0-a', 'c0-z')))).toEqual([
      expect.stringMatching(/tags on the remote \["c0-z"\], expected \["c0-a"\]/),
    ]);
    expect(await broken(editRun('feedback.json', (t) => t.replace('"first"', '"edited"')))).toEqual([
      expect.stringMatching(/feedback of soak-c0-0 on test-0 is "edited"/),
    ]);
    expect(
      await broken(
        editRun('index.jsonl', (t) =>
          lines(t)
            .map((l) => l.replace(/"sha256":"[0-9a-f]{64}"/, `"sha256":"${'0'.repeat(64)}"`))
            .join('\n'),
        ),
      ),
    ).toEqual(expect.arrayContaining([expect.stringMatching(/does not match its pointer/)]));
    expect(await broken((copy) => git(copy, ['update-ref', 'refs/heads/agentv/results-sync/20260601T000000Z-x-abcdef', RESULTS_REF]))).toEqual([
      expect.stringMatching(/sync branches on the remote: refs\/heads\/agentv\/results-sync\//),
    ]);
    expect(await broken((copy) => git(copy, ['update-ref', 'refs/heads/agentv/wip/elsewhere/x', RESULTS_REF]))).toEqual([
      expect.stringMatching(/WIP branch refs\/heads\/agentv\/wip\/elsewhere\/x is on the remote and no clone checkpointed it/),
    ]);
    // Moved back behind the hooks' back (on the server itself): the tip and the logged update say so.
    expect(await broken((copy) => git(copy, ['update-ref', RESULTS_REF, `${RESULTS_REF}~1`]))).toEqual(
      expect.arrayContaining([expect.stringMatching(/moved backwards or sideways/), expect.stringMatching(/reflog entry \d+ is not a fast-forward/)]),
    );
    expect(await broken((copy) => git(copy, ['update-ref', '-d', ARTIFACTS_REF]))).toEqual(
      expect.arrayContaining([expect.stringMatching(/artifacts\/v1 was deleted on the remote/)]),
    );
    expect(await broken(loseObject(`${RESULTS_REF}:${run.id}/summary.json`))).toEqual(
      expect.arrayContaining([expect.stringMatching(/git fsck of the remote: exit [1-9]/)]),
    );
  } finally {
    await world.daemon.stop();
  }
}, 600_000);
