/**
 * Soak (issue 12, "Runs that many machines write stay consistent"): N clones of one remote, served
 * by a real `git daemon` on 127.0.0.1, do M rounds of seeded random work through the CLI, and after
 * every round the remote is checked against a model the test keeps of what must be there.
 *
 * The remote is configured like a protective host: `receive.denyNonFastForwards=true`, deletes
 * allowed (sync and WIP branches must go away) except of the two results branches, which a
 * `pre-receive` hook refuses to delete; every ref update is logged (`core.logAllRefUpdates`), so
 * "only moved forward" is checked for every push, not just between rounds.
 *
 * A round:
 *   A. each clone runs a few random operations, the clones in parallel: publish a new run, grow a
 *      run (same run id, more rows; also from a clone that did not start it), tag (+x/-y),
 *      feedback (reviewers of its own), WIP checkpoint / publish of a checkpointed run, `sync`,
 *      and a publish killed with SIGKILL after a random delay. Then every clone syncs.
 *   B. sometimes (always in round 1): the same reviewer notes the same test on two clones without
 *      pushing, and both sync at once — an injected genuine conflict: exactly one must land and
 *      the other must be set aside on an `agentv/results-sync/...` branch.
 *   C. every sync branch is resolved (`sync --resolve`) from a random clone; every clone syncs.
 * Then the invariants (each a recorded violation, so a round reports all it finds):
 *   - every row ever published is on the remote's results branch exactly once, and no other row:
 *     the model knows each run's rows (a row is (test_id, target), deterministic per run and
 *     index, so shards published from different clones agree). A publish killed -9 promises its
 *     rows exactly when they reached the clone's local branch (both refs move together or not at
 *     all; a later sync pushes what is local) — read right after the kill;
 *   - one catalog line per run, counting its rows; every artifact pointer resolves on the
 *     artifacts tip with its sha256 and size;
 *   - every run changed since it last validated is pulled and validates (`validateRun`);
 *   - tags and feedback are exactly what the clones wrote (each clone edits tags of its own
 *     namespace and notes of its own reviewers; an injected conflict keeps the note that landed);
 *   - WIP branches: a checkpointed run's branch is on the remote until a publish of it lands, then
 *     gone;
 *   - no sync branch unless a conflict was injected this round, and none after resolving;
 *   - `git fsck --strict --no-dangling` of the remote is clean; both branch tips only moved forward.
 *
 * Sizes: AGENTV_SOAK_ROUNDS (default 1: `npm test`), AGENTV_SOAK_CLONES (3), AGENTV_SOAK_OPS
 * (operations per clone per round, 4). `npm run test:soak` runs 20 rounds of 3. AGENTV_SOAK_SEED replays
 * a seed (printed on failure and in the summary line); the operations each clone draws are
 * deterministic per seed, their interleaving across clones is not (they run in parallel).
 * AGENTV_SOAK_REPORT=<file> also writes the summary as JSON there.
 *
 * The pieces are in test/helpers/soak/: remote.ts (the protective remote behind git daemon, the
 * clones), model.ts (seeded randomness, the rows and what must be on the remote), operations.ts
 * and deck.ts (the random operations and how they are dealt), round.ts (phases A-C), check.ts
 * (the invariants), end-checks.ts and summary.ts (after the last round), broken-remote.ts (for
 * the checker's own test, test/soak-checker.slow.test.ts: a file of its own, so it runs beside this one).
 */
import { performance } from 'node:perf_hooks';
import { expect, it } from 'vitest';
import { runGit } from '../src/git/index.js';
import { git, isolateGitForSuite } from './helpers/git-fixtures.js';
import type { CheckReport } from './helpers/soak/check.js';
import { CLONES, OPS, ROUNDS, SEED } from './helpers/soak/config.js';
import { shuffledDeck } from './helpers/soak/deck.js';
import { fsckClones, validateWithAgentV } from './helpers/soak/end-checks.js';
import { seeded } from './helpers/soak/model.js';
import { opNew } from './helpers/soak/operations.js';
import { makeWorld, RESULTS_REF, refOf } from './helpers/soak/remote.js';
import { finishRunsInProgress, playRound } from './helpers/soak/round.js';
import { Soak } from './helpers/soak/soak.js';
import { printRoundProgress, reportSummary } from './helpers/soak/summary.js';

isolateGitForSuite();

it(`stays consistent: ${CLONES} clones x ${ROUNDS} rounds x ${OPS} operations of seeded random work over git:// (seed ${SEED})`, async () => {
  const started = performance.now();
  const world = await makeWorld(CLONES);
  const soak = new Soak(world.clones, world.remote, world.reader);
  const reports: CheckReport[] = [];
  try {
    // The remote refuses what a protective host refuses (checked once, so the soak means something).
    const first = world.clones[0]!;
    await opNew(soak, first, seeded(SEED, 0));
    expect(soak.violations).toEqual([]);
    const genesis = await git(first.dir, ['rev-list', '--max-parents=0', RESULTS_REF]);
    const del = await runGit(['push', 'origin', `:${RESULTS_REF}`], { cwd: first.dir, okCodes: [0, 1] });
    expect(del.code, 'the remote let the results branch be deleted').toBe(1);
    const force = await runGit(['push', '--force', 'origin', `${genesis}:${RESULTS_REF}`], { cwd: first.dir, okCodes: [0, 1] });
    expect(force.code, 'the remote took a forced non-fast-forward push').toBe(1);
    await git(first.dir, ['push', '-q', 'origin', `${genesis}:refs/heads/agentv/wip/soak-probe/x`]);
    await git(first.dir, ['push', '-q', 'origin', ':refs/heads/agentv/wip/soak-probe/x']);
    expect(await refOf(world.remote, 'refs/heads/agentv/wip/soak-probe/x'), 'the remote refused to delete a WIP branch').toBeNull();
    reports.push(await soak.check(false));

    const deck = shuffledDeck(seeded(SEED, 1));
    soak.settle();
    for (let round = 1; round <= ROUNDS && soak.violations.length === 0; round++) {
      reports.push(await playRound(soak, round, deck, OPS));
      printRoundProgress(soak, round, started);
    }
    if (soak.violations.length === 0) reports.push(await finishRunsInProgress(soak, ROUNDS + 1));

    const agentv = await validateWithAgentV(soak, world.reader);
    await fsckClones(soak);
    await reportSummary(soak, reports, agentv, started);
    expect(soak.violations, `seed ${SEED} (replay: AGENTV_SOAK_SEED=${SEED})`).toEqual([]);
    // A whole deck was dealt: every kind of operation ran (a WIP run is published at the latest at the end).
    if (ROUNDS * CLONES * OPS >= deck.size) {
      for (const kind of ['publish-new', 'tag', 'feedback', 'wip-checkpoint', 'wip-publish', 'sync', 'kill-9'] as const)
        expect(soak.ops.get(kind) ?? 0, `no ${kind} ran`).toBeGreaterThan(0);
      expect((soak.ops.get('grow') ?? 0) + (soak.ops.get('grow-other-clone') ?? 0), 'no run was grown').toBeGreaterThan(0);
    }
    if (ROUNDS >= 1) expect(soak.ops.get('resolve') ?? 0, 'no sync branch was resolved').toBeGreaterThan(0);
  } finally {
    await world.daemon.stop();
  }
}, 1_800_000);
