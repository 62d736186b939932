// The random operations of phase A. Each draws its parameters from the clone's own seeded stream
// `r`, in a fixed order, so a seed replays the same choices; the model is updated only with what
// the CLI reported done (or, for a failed or killed publish, with what reached the clone's branches).
import { spawn } from 'node:child_process';
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI_PATH } from '../cli.js';
import { gitEnvForTests, makeTempDir } from '../git-fixtures.js';
import { type Clone, range, rowOf, type SoakRun, setFeedback, testOf } from './model.js';
import type { OpKind, Soak } from './soak.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `publish <workspace> --push` of these rows; on success every row is promised. */
async function publish(s: Soak, c: Clone, run: SoakRun, rows: number[], kind: OpKind): Promise<void> {
  s.count(kind);
  const dir = await s.workspace(run, rows);
  const t0 = performance.now();
  const r = await s.cli(c, ['publish', dir, '--push', '--json']);
  if (r.code === 0) {
    s.publishMs.push(performance.now() - t0);
    for (const k of rows) run.expected.add(k);
    run.publishers.add(c.index);
    const status = (JSON.parse(r.stdout) as { status?: string }).status;
    if (status !== 'published' && status !== 'updated' && status !== 'already-published')
      s.violate(`${kind} of ${run.id} on clone ${c.index}: status ${status}`);
    return;
  }
  s.violate(`${kind} of ${run.id} on clone ${c.index} exited ${r.code}: ${r.stderr.trim().slice(0, 300)}`);
  // Whatever reached the clone's branches is still owed to the remote.
  for (const k of await s.rowsOnClone(c, run)) if (rows.includes(k)) run.expected.add(k);
}

export async function opNew(s: Soak, c: Clone, r: () => number): Promise<void> {
  const run = s.newRun(c.index);
  run.allocated = 2 + Math.floor(r() * 5);
  const rows = range(0, run.allocated);
  c.have.set(run.id, new Set(rows));
  await publish(s, c, run, rows, 'publish-new');
}

/** Rows for growing `run` on clone c: what c's workspace has, plus new rows, plus sometimes rows other shards already published. */
function growRows(c: Clone, run: SoakRun, r: () => number): number[] {
  const have = c.have.get(run.id) ?? new Set<number>();
  const added = 1 + Math.floor(r() * 4);
  for (const k of range(run.allocated, run.allocated + added)) have.add(k);
  run.allocated += added;
  if (r() < 0.3) for (let k = 0; k < run.allocated; k++) if (r() < 0.4) have.add(k);
  c.have.set(run.id, have);
  return [...have].sort((a, b) => a - b);
}

function pickGrowable(s: Soak, c: Clone, r: () => number, preferOther: boolean): SoakRun | null {
  const all = [...s.model.runs.values()].filter((x) => !x.wip && x.allocated > 0);
  const others = all.filter((x) => x.creator !== c.index);
  const pool = preferOther && others.length > 0 ? others : all;
  return pool.length === 0 ? null : pool[Math.floor(r() * pool.length)]!;
}

/** Same run id, more rows; with preferOther, from a clone that did not start the run (a shard of it). */
export async function opGrow(s: Soak, c: Clone, r: () => number, preferOther: boolean): Promise<void> {
  const run = pickGrowable(s, c, r, preferOther);
  if (!run) return opNew(s, c, r);
  const rows = growRows(c, run, r);
  await publish(s, c, run, rows, run.creator === c.index ? 'grow' : 'grow-other-clone');
}

export async function opTag(s: Soak, c: Clone, r: () => number): Promise<void> {
  if (s.settled.length === 0) return opNew(s, c, r);
  const { run } = s.settled[Math.floor(r() * s.settled.length)]!;
  const mine = s.model.tags.get(run.id)?.get(c.index) ?? new Set<string>();
  // At most 20 tags per run: each clone gets a namespace of its own within that.
  const pool = ['a', 'b', 'c', 'd'].slice(0, Math.max(1, Math.min(4, Math.floor(20 / s.clones.length)))).map((x) => `c${c.index}-${x}`);
  const add = pool.filter(() => r() < 0.4);
  const remove = [...mine].filter((t) => !add.includes(t) && r() < 0.5);
  if (add.length === 0 && remove.length === 0) add.push(pool[Math.floor(r() * pool.length)]!);
  s.count('tag');
  const res = await s.cli(c, ['tag', run.id, ...add.map((t) => `+${t}`), ...remove.map((t) => `-${t}`), '--json']);
  if (res.code !== 0) return s.violate(`tag ${run.id} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
  const next = new Set([...mine, ...add].filter((t) => !remove.includes(t)));
  const byClone = s.model.tags.get(run.id) ?? new Map<number, Set<string>>();
  byClone.set(c.index, next);
  s.model.tags.set(run.id, byClone);
}

/** A note from one of the clone's own reviewers, so no two clones write the same note concurrently. */
export async function opFeedback(s: Soak, c: Clone, r: () => number): Promise<void> {
  if (s.settled.length === 0) return opNew(s, c, r);
  const { run, rows } = s.settled[Math.floor(r() * s.settled.length)]!;
  const test = testOf(rows[Math.floor(r() * rows.length)]!);
  const reviewer = `soak-c${c.index}-${Math.floor(r() * 2)}`;
  const text = `${reviewer}: round ${s.round}, note ${s.nextNoteNumber()}`;
  s.count('feedback');
  const res = await s.feedback(c, run, test, reviewer, text, true);
  if (res.code !== 0) return s.violate(`feedback on ${run.id}/${test} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
  setFeedback(s.model, run.id, test, reviewer, text);
}

/** A run in progress: raw result rows appended to index.jsonl (no summary.json), checkpointed, finally published. */
export async function opWip(s: Soak, c: Clone, r: () => number): Promise<void> {
  let run = c.openWip;
  if (run && r() < 0.45) return finishWip(s, c, run, r);
  if (!run) {
    run = s.newRun(c.index, { wip: true });
    const dir = join(await makeTempDir('soak-wip'), run.experiment, run.id);
    await mkdir(dir, { recursive: true });
    run.wip = { clone: c.index, dir, rows: 0, branch: null, checkpointed: 0, onRemote: 'never' };
    c.openWip = run;
  }
  const wip = run.wip!;
  const add = 1 + Math.floor(r() * 4);
  await appendFile(
    join(wip.dir, 'index.jsonl'),
    range(wip.rows, wip.rows + add)
      .map((k) => `${JSON.stringify(rowOf(run, k))}\n`)
      .join(''),
  );
  wip.rows += add;
  run.allocated = wip.rows;
  s.count('wip-checkpoint');
  const res = await s.cli(c, ['wip', 'checkpoint', wip.dir, '--push', '--json']);
  if (res.code !== 0) return s.violate(`wip checkpoint of ${run.id} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
  const events = JSON.parse(res.stdout) as { type: string; result: { branch?: string; rows?: number; classification?: string } }[];
  const cp = events.find((e) => e.type === 'checkpoint')?.result;
  const pushed = events.find((e) => e.type === 'push')?.result;
  if (!cp?.branch || cp.rows !== wip.rows) return s.violate(`wip checkpoint of ${run.id}: ${res.stdout.slice(0, 300)}`);
  wip.branch = cp.branch;
  if (pushed?.classification === 'ok') {
    wip.checkpointed = wip.rows;
    wip.onRemote = 'present';
  } else s.violate(`wip checkpoint of ${run.id} on clone ${c.index} did not push: ${JSON.stringify(pushed)}`);
}

export async function finishWip(s: Soak, c: Clone, run: SoakRun, r: () => number): Promise<void> {
  const wip = run.wip!;
  const add = Math.floor(r() * 3);
  await appendFile(
    join(wip.dir, 'index.jsonl'),
    range(wip.rows, wip.rows + add)
      .map((k) => `${JSON.stringify(rowOf(run, k))}\n`)
      .join(''),
  );
  wip.rows += add;
  run.allocated = wip.rows;
  c.openWip = null;
  s.count('wip-publish');
  const res = await s.cli(c, ['publish', wip.dir, '--push', '--json']);
  if (res.code !== 0) {
    s.violate(`publish of the WIP run ${run.id} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
    for (const k of await s.rowsOnClone(c, run)) run.expected.add(k);
    if (wip.onRemote === 'present') wip.onRemote = 'unknown';
    return;
  }
  const out = JSON.parse(res.stdout) as { run_id: string; push?: { landed?: boolean }; wip?: { branch: string; status: string; note: string | null }[] };
  if (out.run_id !== run.id) s.violate(`the WIP run ${run.id} was published as ${out.run_id}`);
  for (const k of range(0, wip.rows)) run.expected.add(k);
  run.publishers.add(c.index);
  // The publish that lands ends the run's WIP on the remote; one that did not land keeps it.
  if (wip.onRemote === 'present') wip.onRemote = out.push?.landed ? 'gone' : 'unknown';
}

export async function opSync(s: Soak, c: Clone): Promise<void> {
  s.count('sync');
  const res = await s.cli(c, ['sync', '--json']);
  if (res.code !== 0) s.violate(`sync on clone ${c.index} exited ${res.code}: ${res.stdout.slice(0, 300)}${res.stderr.trim().slice(0, 300)}`);
}

/** A publish (of a new run or a grown one) killed with SIGKILL after a random delay. */
export async function opKill(s: Soak, c: Clone, r: () => number): Promise<void> {
  let run: SoakRun;
  let rows: number[];
  const grow = r() < 0.5 ? pickGrowable(s, c, r, r() < 0.5) : null;
  if (grow) {
    run = grow;
    rows = growRows(c, run, r);
  } else {
    run = s.newRun(c.index);
    run.allocated = 2 + Math.floor(r() * 5);
    rows = range(0, run.allocated);
    c.have.set(run.id, new Set(rows));
  }
  const dir = await s.workspace(run, rows);
  // Rows that reach the clone's branches only if this publish moves its refs.
  const before = await s.rowsOnClone(c, run);
  const fresh = rows.filter((k) => !before.has(k));
  // Anywhere in a typical publish: before the refs move, while pushing, now and then after the end.
  const delay = Math.floor(r() * s.typicalPublishMs() * 1.2);
  s.count('kill-9');
  const child = spawn(process.execPath, [CLI_PATH, 'publish', dir, '--push'], {
    cwd: c.dir,
    env: { ...process.env, ...gitEnvForTests(), ...s.env(c), NO_COLOR: '1' },
    detached: true,
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
  await sleep(delay);
  let killed = true;
  try {
    process.kill(child.pid!, 'SIGKILL');
  } catch {
    killed = false; // it finished first: an end of the range of kill points
  }
  const code = await exited;
  if (!killed || code !== null) {
    s.kills.finishedFirst++;
    if (code !== 0) s.violate(`publish of ${run.id} on clone ${c.index} (finished before the kill) exited ${code}`);
  }
  // The git processes it started finish on their own (their parent is gone): wait for the whole group.
  for (let i = 0; i < 400 && groupAlive(child.pid!); i++) await sleep(25);
  if (groupAlive(child.pid!)) s.violate(`processes of the killed publish (group ${child.pid}) still running after 10 s`);
  const local = await s.rowsOnClone(c, run);
  const landed = fresh.filter((k) => local.has(k));
  // Both refs move in one transaction with the whole workspace: a part of it cannot have landed.
  if (landed.length > 0 && landed.length < fresh.length)
    s.violate(`killed publish of ${run.id} on clone ${c.index}: ${landed.length} of its ${fresh.length} new rows reached the local branch`);
  for (const k of rows) if (local.has(k)) run.expected.add(k);
  if (landed.length > 0) run.publishers.add(c.index);
  if (landed.length === fresh.length) s.kills.landedLocally++;
  else s.kills.notLanded++;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
