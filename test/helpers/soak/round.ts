// One round of the soak: A. random operations, every clone in parallel, then a full sync;
// B. sometimes an injected genuine conflict; C. every sync branch resolved, a full sync, the check.
import { SEED } from './config.js';
import type { CheckReport } from './check.js';
import type { Deck } from './deck.js';
import { type Clone, range, seeded, setFeedback, testOf } from './model.js';
import { finishWip } from './operations.js';
import { refsUnder, SYNC_PREFIXES } from './remote.js';
import type { Soak } from './soak.js';

export async function playRound(soak: Soak, round: number, deck: Deck, opsPerClone: number): Promise<CheckReport> {
  soak.round = round;
  // A. Each clone its own sequence (dealt in a fixed order, parameters from its own seeded
  // stream), the clones in parallel.
  const hands = soak.clones.map(() => range(0, opsPerClone).map(() => deck.draw()));
  await Promise.all(
    soak.clones.map(async (c) => {
      const r = seeded(SEED, 2, round, c.index);
      for (const op of hands[c.index]!) await op(soak, c, r);
    }),
  );
  await syncAll(soak, 'after the operations');
  soak.settle();
  // B. An injected genuine conflict: in round 1, and in about a third of the others.
  const r = seeded(SEED, 3, round);
  const injected = (round === 1 || r() < 0.35) && (await injectConflict(soak, r));
  // C. Resolve every sync branch, then every clone syncs once more.
  await resolveAll(soak, r, injected);
  await syncAll(soak, 'after resolving');
  const report = await soak.check(false);
  soak.settle();
  return report;
}

/** Last: every run still in progress finishes and is published (its WIP branch must go). */
export async function finishRunsInProgress(soak: Soak, round: number): Promise<CheckReport> {
  soak.round = round;
  for (const c of soak.clones) if (c.openWip) await finishWip(soak, c, c.openWip, seeded(SEED, 4, c.index));
  await syncAll(soak, 'after the last runs in progress were published');
  const report = await soak.check(false);
  soak.settle();
  return report;
}

async function syncAll(soak: Soak, what: string): Promise<void> {
  // One after the other: each lands (no contention), so afterwards the remote has everything.
  for (const c of soak.clones) {
    soak.count('sync-all');
    const res = await soak.cli(c, ['sync', '--json']);
    if (res.code !== 0) {
      soak.violate(`${what}: sync on clone ${c.index} exited ${res.code}: ${res.stdout.slice(0, 400)}${res.stderr.trim().slice(0, 300)}`);
      continue;
    }
    const push = (JSON.parse(res.stdout) as { push: { landed: boolean; classification: string } }).push;
    if (!push.landed) soak.violate(`${what}: sync on clone ${c.index} did not land: ${JSON.stringify(push)}`);
  }
}

/** Phase B: the same reviewer notes the same test on two clones, offline, then both sync at once. */
async function injectConflict(soak: Soak, r: () => number): Promise<boolean> {
  if (soak.settled.length === 0 || soak.clones.length < 2) return false;
  const x = soak.clones[Math.floor(r() * soak.clones.length)]!;
  const others = soak.clones.filter((c) => c !== x);
  const y = others[Math.floor(r() * others.length)]!;
  const { run, rows } = soak.settled[Math.floor(r() * soak.settled.length)]!;
  const test = testOf(rows[Math.floor(r() * rows.length)]!);
  const reviewer = `soak-shared-${soak.round}`;
  soak.count('conflict-injected');
  // A pushed note first: each clone's branch catches up with the remote (the run is there).
  for (const c of [x, y]) {
    const text = `soak-c${c.index}-0: round ${soak.round}, before the conflict`;
    const res = await soak.feedback(c, run, test, `soak-c${c.index}-0`, text, true);
    if (res.code !== 0) {
      soak.violate(`feedback before the conflict on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
      return true;
    }
    setFeedback(soak.model, run.id, test, `soak-c${c.index}-0`, text);
  }
  const texts = new Map<Clone, string>();
  for (const c of [x, y]) {
    const text = `${reviewer} on clone ${c.index}: round ${soak.round}`;
    texts.set(c, text);
    const res = await soak.feedback(c, run, test, reviewer, text, false);
    if (res.code !== 0) {
      soak.violate(`offline feedback on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
      return true;
    }
  }
  const [rx, ry] = await Promise.all([x, y].map((c) => soak.cli(c, ['sync', '--json'])));
  const outcomes = [
    { c: x, res: rx! },
    { c: y, res: ry! },
  ];
  const landed = outcomes.filter((o) => o.res.code === 0);
  const aside = outcomes.filter((o) => o.res.code === 1);
  if (landed.length !== 1 || aside.length !== 1) {
    soak.violate(
      `injected conflict (${reviewer} on ${run.id}/${test}, clones ${x.index} and ${y.index}): sync exit codes ${rx!.code} and ${ry!.code}, expected one 0 and one 1: ${rx!.stdout.slice(0, 200)} ${ry!.stdout.slice(0, 200)}`,
    );
    return true;
  }
  const branch = (JSON.parse(aside[0]!.res.stdout) as { push: { sync_branch?: { branch: string } } }).push.sync_branch?.branch;
  if (!branch?.startsWith('agentv/results-sync/')) soak.violate(`injected conflict: no sync branch in ${aside[0]!.res.stdout.slice(0, 300)}`);
  // The results branch keeps the note that landed; `sync --resolve` keeps it (the other stays in history).
  setFeedback(soak.model, run.id, test, reviewer, texts.get(landed[0]!.c)!);
  return true;
}

/** Phase C: every sync branch on the remote is resolved from a random clone. */
async function resolveAll(soak: Soak, r: () => number, injected: boolean): Promise<void> {
  const all = [...(await refsUnder(soak.remote, SYNC_PREFIXES)).keys()].map((ref) => ref.slice('refs/heads/'.length));
  const branches = all.filter((b) => b.startsWith('agentv/results-sync/'));
  // Exactly the injected conflict is set aside (its payloads merged cleanly: no artifacts-sync branch).
  if (all.length !== (injected ? 1 : 0) || branches.length !== all.length)
    soak.violate(`${injected ? 'one conflict was injected' : 'no conflict was injected'} and the remote has sync branches [${all.join(', ')}]`);
  for (const branch of branches) {
    const c = soak.clones[Math.floor(r() * soak.clones.length)]!;
    soak.count('resolve');
    const res = await soak.cli(c, ['sync', '--resolve', branch, '--json']);
    if (res.code !== 0) {
      soak.violate(`sync --resolve ${branch} on clone ${c.index} exited ${res.code}: ${res.stdout.slice(0, 300)}${res.stderr.trim().slice(0, 300)}`);
      continue;
    }
    const out = JSON.parse(res.stdout) as { status: string; deleted_remote: boolean };
    if (out.status !== 'merged' && out.status !== 'already-merged') soak.violate(`sync --resolve ${branch}: status ${out.status}`);
  }
}
