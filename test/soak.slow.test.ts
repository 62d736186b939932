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
 * Sizes: AGENTV_SOAK_ROUNDS (default 2: `npm test`), AGENTV_SOAK_CLONES (3), AGENTV_SOAK_OPS
 * (operations per clone per round, 3). `npm run test:soak` runs 20 rounds. AGENTV_SOAK_SEED replays
 * a seed (printed on failure and in the summary line); the operations each clone draws are
 * deterministic per seed, their interleaving across clones is not (they run in parallel).
 * AGENTV_SOAK_REPORT=<file> also writes the summary as JSON there.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, chmod, cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { expect, it } from 'vitest';
import { rng, syntheticRow } from '../bench/synthetic.mjs';
import { exportRun } from '../src/derive/export.js';
import { openRepo, readBlobs, runGit } from '../src/git/index.js';
import { pull } from '../src/history/pull.js';
import { validateRun } from '../src/results/validate.js';
import { HAS_AGENTV, runAgentV } from './helpers/agentv-client.js';
import { CLI_PATH, type CliResult } from './helpers/cli.js';
import { git, gitEnvForTests, isolateGitForSuite, makeTempDir, startGitDaemon, type GitDaemon } from './helpers/git-fixtures.js';
import { cli } from './publish-helpers.js';
import { makeClone } from './sync-helpers.js';

isolateGitForSuite();

const intEnv = (name: string, fallback: number): number => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};
const ROUNDS = intEnv('AGENTV_SOAK_ROUNDS', 2);
const CLONES = intEnv('AGENTV_SOAK_CLONES', 3);
const OPS = intEnv('AGENTV_SOAK_OPS', 3);
const SEED = intEnv('AGENTV_SOAK_SEED', Date.now() % 1_000_000);

const RESULTS_REF = 'refs/heads/agentv/results/v1';
const ARTIFACTS_REF = 'refs/heads/agentv/artifacts/v1';
const PROTECTED = [RESULTS_REF, ARTIFACTS_REF];
const SYNC_PREFIXES = ['refs/heads/agentv/results-sync/', 'refs/heads/agentv/artifacts-sync/'];
const WIP_PREFIX = 'refs/heads/agentv/wip/';
const ZERO = /^0+$/;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

// ---------------------------------------------------------------------------------------------
// The model: what must be on the remote

interface SoakRun {
  id: string;
  experiment: string;
  timestamp: string;
  seed: number;
  /** Rows 0..allocated-1 exist somewhere (a workspace); row k is the same wherever it is generated. */
  allocated: number;
  /** Rows that must be on the remote's results branch, exactly once. */
  expected: Set<number>;
  creator: number;
  /** Clones that published rows of it. */
  publishers: Set<number>;
  /** Set for a run written as a run in progress (raw rows, WIP checkpoints). */
  wip?: WipRun;
}

interface WipRun {
  clone: number;
  dir: string;
  rows: number;
  branch: string | null;
  /** Rows the last checkpoint that reached the remote captured. */
  checkpointed: number;
  /** present: checkpointed and not yet published; gone: a publish of it landed; unknown: published but not pushed then. */
  onRemote: 'present' | 'gone' | 'unknown' | 'never';
}

interface Clone {
  index: number;
  dir: string;
  host: string;
  /** Rows of each run this clone's workspace has (what it republishes when it grows the run). */
  have: Map<string, Set<number>>;
  openWip: SoakRun | null;
}

/**
 * A random stream for one purpose, e.g. seeded(SEED, round, clone): the parts are hashed (murmur3's
 * finalizer) before they seed xorshift, whose first draws from neighbouring seeds are alike.
 */
function seeded(...parts: number[]): () => number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0) ^ Math.floor(p / 2 ** 32), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return rng(h >>> 0 || 1);
}

/** Row k of a run: a synthetic result whose (test_id, target) is (test-floor(k/2), model-a|b by k % 2). */
function rowOf(run: SoakRun, k: number): Record<string, unknown> {
  const row = syntheticRow(seeded(SEED, 5, run.seed, k), k, { turns: 1 });
  // One timestamp for the whole run: whichever rows a shard has, its run id is the same.
  row.timestamp = run.timestamp;
  return row;
}

/** The row index back from a row's test id and target (null: not a row this test wrote). */
function rowIndex(testId: unknown, target: unknown): number | null {
  const m = typeof testId === 'string' ? /^test-(\d+)$/.exec(testId) : null;
  const t = target === 'model-a' ? 0 : target === 'model-b' ? 1 : -1;
  return m && t >= 0 ? Number(m[1]) * 2 + t : null;
}

const testOf = (k: number) => `test-${Math.floor(k / 2)}`;

interface Model {
  runs: Map<string, SoakRun>;
  /** run -> clone -> tags that clone's edits leave (each clone edits only tags named c<i>-*). */
  tags: Map<string, Map<number, Set<string>>>;
  /** run -> test -> reviewer -> note text. */
  feedback: Map<string, Map<string, Map<string, string>>>;
}

function expectedTags(model: Model, runId: string): string[] {
  const out = new Set<string>();
  for (const set of model.tags.get(runId)?.values() ?? []) for (const t of set) out.add(t);
  return [...out].sort();
}

function setFeedback(model: Model, runId: string, test: string, reviewer: string, text: string): void {
  const byTest = model.feedback.get(runId) ?? new Map<string, Map<string, string>>();
  model.feedback.set(runId, byTest);
  const byReviewer = byTest.get(test) ?? new Map<string, string>();
  byTest.set(test, byReviewer);
  byReviewer.set(reviewer, text);
}

// ---------------------------------------------------------------------------------------------
// The remote: a bare repository behind git daemon, configured like a protective host

const PRE_RECEIVE = `#!/bin/sh
# Deletes of the results branches are refused; everything else (sync and WIP branches) may go.
status=0
while read old new ref; do
  case "$ref" in
    refs/heads/agentv/results/v1|refs/heads/agentv/artifacts/v1)
      case "$new" in
        *[!0]*) ;;
        *) echo "soak remote: refusing to delete $ref" >&2; status=1 ;;
      esac ;;
  esac
done
exit $status
`;

async function makeProtectedRemote(root: string): Promise<string> {
  const remote = join(root, 'remote.git');
  await runGit(['init', '-q', '--bare', '-b', 'main', remote]);
  await git(remote, ['config', 'receive.denyNonFastForwards', 'true']);
  await git(remote, ['config', 'receive.denyDeletes', 'false']);
  // Reflogs in a bare repository: every update a push makes is recorded, so each one can be checked.
  await git(remote, ['config', 'core.logAllRefUpdates', 'always']);
  await writeFile(join(remote, 'hooks', 'pre-receive'), PRE_RECEIVE);
  await chmod(join(remote, 'hooks', 'pre-receive'), 0o755);
  return remote;
}

async function refOf(dir: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '-q', '--verify', `${ref}^{commit}`], { cwd: dir, okCodes: [0, 1, 128] });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}

async function isAncestor(dir: string, a: string, b: string): Promise<boolean> {
  const r = await runGit(['merge-base', '--is-ancestor', a, b], { cwd: dir, okCodes: [0, 1, 128] });
  return r.code === 0;
}

async function refsUnder(dir: string, prefixes: string[]): Promise<Map<string, string>> {
  const out = await git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', ...prefixes]);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ') as [string, string]),
  );
}

/** (test_id, target) row indexes of an index.jsonl text, with how often each appears; lines that are no row of ours are listed. */
function rowsOfIndex(text: string): { counts: Map<number, number>; foreign: string[]; ids: string[] } {
  const counts = new Map<number, number>();
  const foreign: string[] = [];
  const ids: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let row: { test_id?: unknown; target?: unknown; projection_identity?: { id?: string } };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      foreign.push(line.slice(0, 80));
      continue;
    }
    const k = rowIndex(row.test_id, row.target);
    if (k === null) foreign.push(line.slice(0, 80));
    else counts.set(k, (counts.get(k) ?? 0) + 1);
    if (row.projection_identity?.id) ids.push(row.projection_identity.id);
  }
  return { counts, foreign, ids };
}

// ---------------------------------------------------------------------------------------------
// The invariants

interface CheckState {
  /** Tips of the protected branches at the last check. */
  tips: Map<string, string | null>;
  /** Reflog lines of each protected branch already checked. */
  reflogSeen: Map<string, number>;
  /** Run directory -> tree id that last validated. */
  validated: Map<string, string>;
}

const newCheckState = (): CheckState => ({ tips: new Map(), reflogSeen: new Map(), validated: new Map() });

interface CheckContext {
  remote: string;
  /** A repository that only reads: fetches the remote's branches and pulls runs to validate them. */
  reader: string;
  model: Model;
  state: CheckState;
  /** Whether a sync branch may exist right now. */
  syncBranchesAllowed: boolean;
}

interface CheckReport {
  violations: string[];
  runs: number;
  rows: number;
  validated: number;
  pointers: number;
}

async function checkRemote(ctx: CheckContext): Promise<CheckReport> {
  const { remote, model, state } = ctx;
  const violations: string[] = [];
  const v = (msg: string) => violations.push(msg);
  const repo = await openRepo(remote);

  // Integrity of the remote.
  const fsck = await runGit(['fsck', '--strict', '--no-dangling', '--no-progress'], { cwd: remote, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8] });
  const fsckOut = `${fsck.stdout.toString()}${fsck.stderr}`.trim();
  if (fsck.code !== 0 || fsckOut !== '') v(`git fsck of the remote: exit ${fsck.code}: ${fsckOut.slice(0, 400)}`);

  // The protected tips only moved forward: since the last check, and at every logged update.
  for (const ref of PROTECTED) {
    const now = await refOf(remote, ref);
    const before = state.tips.get(ref) ?? null;
    if (before !== null && now === null) v(`${ref} was deleted on the remote (was ${before})`);
    else if (before !== null && now !== null && !(await isAncestor(remote, before, now)))
      v(`${ref} moved backwards or sideways: ${before} is not an ancestor of ${now}`);
    state.tips.set(ref, now);
    const log = await readFile(join(remote, 'logs', ref), 'utf8').catch(() => null);
    if (now !== null && log === null) {
      v(`no reflog for ${ref} on the remote (core.logAllRefUpdates=always)`);
      continue;
    }
    const lines = (log ?? '').split('\n').filter(Boolean);
    const from = state.reflogSeen.get(ref) ?? 0;
    for (let i = from; i < lines.length; i++) {
      const [oldId, newId] = lines[i]!.split(' ') as [string, string];
      if (ZERO.test(newId)) v(`${ref}: reflog entry ${i} deletes the branch`);
      else if (ZERO.test(oldId)) {
        if (i !== 0) v(`${ref}: reflog entry ${i} creates the branch again (it was deleted)`);
      } else if (!(await isAncestor(remote, oldId, newId))) v(`${ref}: reflog entry ${i} is not a fast-forward (${oldId} -> ${newId})`);
    }
    state.reflogSeen.set(ref, lines.length);
  }

  // Sync branches.
  const syncRefs = await refsUnder(remote, SYNC_PREFIXES);
  if (!ctx.syncBranchesAllowed && syncRefs.size > 0) v(`sync branches on the remote: ${[...syncRefs.keys()].join(', ')}`);

  // WIP branches.
  const wipRefs = await refsUnder(remote, [WIP_PREFIX]);
  const wipExpected = new Map<string, SoakRun>();
  for (const run of model.runs.values()) if (run.wip?.branch && run.wip.onRemote === 'present') wipExpected.set(`refs/heads/${run.wip.branch}`, run);
  for (const [ref, run] of wipExpected) {
    const tip = wipRefs.get(ref);
    if (!tip) {
      v(`WIP branch ${ref} of run ${run.id} (checkpointed, not published) is not on the remote`);
      continue;
    }
    const meta = (await readBlobs(repo, [`${tip}:wip.json`])).get(`${tip}:wip.json`);
    const rows = meta ? (JSON.parse(meta.toString('utf8')) as { rows?: number }).rows : undefined;
    if (rows !== run.wip!.checkpointed) v(`WIP branch ${ref}: wip.json says ${rows} rows, the last pushed checkpoint captured ${run.wip!.checkpointed}`);
  }
  for (const ref of wipRefs.keys()) {
    if (wipExpected.has(ref)) continue;
    const run = [...model.runs.values()].find((r) => r.wip?.branch && `refs/heads/${r.wip.branch}` === ref);
    if (run?.wip?.onRemote === 'unknown') continue;
    v(`WIP branch ${ref} is on the remote${run ? ` although run ${run.id} was published and the publish landed` : ' and no clone checkpointed it'}`);
  }

  // Rows, catalog, overlays, pointers.
  const tip = await refOf(remote, RESULTS_REF);
  const artifactsTip = await refOf(remote, ARTIFACTS_REF);
  const report: CheckReport = { violations, runs: 0, rows: 0, validated: 0, pointers: 0 };
  const expectedRuns = [...model.runs.values()].filter((r) => r.expected.size > 0);
  if (tip === null) {
    if (expectedRuns.length > 0) v(`the remote has no ${RESULTS_REF}, but ${expectedRuns.length} runs were published`);
    return report;
  }
  const root = (await git(remote, ['ls-tree', tip]))
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [meta, name] = l.split('\t') as [string, string];
      const [, type, sha] = meta.split(' ') as [string, string, string];
      return { name, type, sha };
    });
  const runDirs = new Map(root.filter((e) => e.type === 'tree' && !e.name.startsWith('.')).map((e) => [e.name, e.sha]));
  for (const run of expectedRuns) if (!runDirs.has(run.id)) v(`run ${run.id} (${run.expected.size} rows published) is not on the remote`);
  const names = [...runDirs.keys()];
  const specs = names.flatMap((n) => [`${tip}:${n}/index.jsonl`, `${tip}:${n}/tags.json`, `${tip}:${n}/feedback.json`]);
  const blobs = await readBlobs(repo, specs);
  const pointers: { run: string; key: string; sha256: string; size: number }[] = [];
  for (const name of names) {
    const run = model.runs.get(name);
    if (!run) {
      v(`run ${name} is on the remote and no clone published it`);
      continue;
    }
    report.runs++;
    const index = blobs.get(`${tip}:${name}/index.jsonl`)?.toString('utf8');
    if (index === undefined) {
      v(`run ${name}: no index.jsonl on the remote`);
      continue;
    }
    const { counts, foreign, ids } = rowsOfIndex(index);
    if (foreign.length > 0) v(`run ${name}: ${foreign.length} rows that are no row of this run: ${foreign[0]}`);
    for (const [k, n] of counts) {
      report.rows += n;
      if (n > 1) v(`run ${name}: row ${k} (${testOf(k)}) is on the remote ${n} times`);
      if (!run.expected.has(k))
        v(`run ${name}: row ${k} (${testOf(k)}) is on the remote but was never published (or only by a publish that was killed before its refs moved)`);
    }
    for (const k of run.expected) if (!counts.has(k)) v(`run ${name}: row ${k} (${testOf(k)}) was published and is not on the remote`);
    if (new Set(ids).size !== ids.length) v(`run ${name}: projection ids are not unique (${ids.length} rows, ${new Set(ids).size} ids)`);
    for (const line of index.split('\n')) {
      if (!line.trim()) continue;
      const raw = (JSON.parse(line) as { artifact_pointers?: unknown }).artifact_pointers;
      const list = (Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? Object.values(raw) : []) as { key: string; sha256: string; size: number }[];
      for (const p of list) pointers.push({ run: name, ...p });
    }

    const tagsText = blobs.get(`${tip}:${name}/tags.json`)?.toString('utf8');
    const tags = tagsText ? ((JSON.parse(tagsText) as { tags?: string[] }).tags ?? []).slice().sort() : [];
    const wantTags = expectedTags(model, name);
    if (JSON.stringify(tags) !== JSON.stringify(wantTags)) v(`run ${name}: tags on the remote ${JSON.stringify(tags)}, expected ${JSON.stringify(wantTags)}`);

    const fbText = blobs.get(`${tip}:${name}/feedback.json`)?.toString('utf8');
    const entries = fbText ? ((JSON.parse(fbText) as { entries?: Record<string, Record<string, { feedback?: string }>> }).entries ?? {}) : {};
    const want = model.feedback.get(name) ?? new Map<string, Map<string, string>>();
    for (const [test, byReviewer] of want) {
      for (const [reviewer, text] of byReviewer) {
        const got = entries[test]?.[reviewer]?.feedback;
        if (got !== text) v(`run ${name}: feedback of ${reviewer} on ${test} is ${JSON.stringify(got)}, expected ${JSON.stringify(text)}`);
      }
    }
    for (const [test, byReviewer] of Object.entries(entries)) {
      for (const reviewer of Object.keys(byReviewer)) if (!want.get(test)?.has(reviewer)) v(`run ${name}: a note of ${reviewer} on ${test} that nobody wrote`);
    }
  }

  // One catalog line per run, counting its rows.
  const catalog = root.filter((e) => e.name === '.indexes').length
    ? (await git(remote, ['ls-tree', '--name-only', `${tip}:.indexes`])).split('\n').filter((n) => n.startsWith('agentv-results.'))
    : [];
  const catBlobs = await readBlobs(
    repo,
    catalog.map((n) => `${tip}:.indexes/${n}`),
  );
  const lines = new Map<string, { total: number }[]>();
  for (const n of catalog) {
    for (const l of (catBlobs.get(`${tip}:.indexes/${n}`)?.toString('utf8') ?? '').split('\n')) {
      if (!l.trim()) continue;
      const row = JSON.parse(l) as { run_id: string; total: number };
      lines.set(row.run_id, [...(lines.get(row.run_id) ?? []), row]);
    }
  }
  for (const run of expectedRuns) {
    const got = lines.get(run.id) ?? [];
    if (got.length !== 1) v(`run ${run.id}: ${got.length} catalog lines (expected 1)`);
    else if (got[0]!.total !== run.expected.size) v(`run ${run.id}: the catalog counts ${got[0]!.total} rows, ${run.expected.size} were published`);
  }
  for (const id of lines.keys()) if (!model.runs.get(id)?.expected.size) v(`a catalog line for run ${id}, which was never published`);

  // Every pointer resolves on the artifacts tip, with its hash and size.
  if (pointers.length > 0 && artifactsTip === null) v(`rows point at payloads but the remote has no ${ARTIFACTS_REF}`);
  else if (pointers.length > 0) {
    const payloads = await readBlobs(
      repo,
      pointers.map((p) => `${artifactsTip}:${p.key}`),
    );
    for (const p of pointers) {
      const data = payloads.get(`${artifactsTip}:${p.key}`);
      if (!data) v(`run ${p.run}: payload ${p.key} is not on the artifacts tip`);
      else if (data.length !== p.size || createHash('sha256').update(data).digest('hex') !== p.sha256)
        v(`run ${p.run}: payload ${p.key} does not match its pointer (size/sha256)`);
    }
    report.pointers = pointers.length;
  }

  // Every run whose tree changed since it last validated: pulled, validated.
  const changed = names.filter((n) => model.runs.has(n) && state.validated.get(n) !== runDirs.get(n));
  if (changed.length > 0) {
    await git(ctx.reader, ['fetch', '-q', '--prune', remote, '+refs/heads/agentv/*:refs/remotes/origin/agentv/*']);
    const scratch = await makeTempDir('soak-pulled');
    for (const name of changed) {
      const out = join(scratch, name);
      try {
        await pull({ cwd: ctx.reader, runId: name, out, force: true });
        const r = await validateRun({ run: out });
        if (!r.valid) v(`run ${name} does not validate: ${r.problems.map((p) => `${p.file}${p.line ? `:${p.line}` : ''}: ${p.message}`).join('; ')}`);
        else state.validated.set(name, runDirs.get(name)!);
        report.validated++;
      } catch (err) {
        v(`run ${name}: pull failed: ${(err as Error).message}`);
      }
    }
    await rm(scratch, { recursive: true, force: true });
  }
  return report;
}

// ---------------------------------------------------------------------------------------------
// The operations

type OpKind =
  | 'publish-new'
  | 'grow'
  | 'grow-other-clone'
  | 'tag'
  | 'feedback'
  | 'wip-checkpoint'
  | 'wip-publish'
  | 'sync'
  | 'kill-9'
  | 'sync-all'
  | 'conflict-injected'
  | 'resolve';

class Soak {
  readonly model: Model = { runs: new Map(), tags: new Map(), feedback: new Map() };
  readonly ops = new Map<OpKind, number>();
  readonly violations: string[] = [];
  readonly kills = { landedLocally: 0, notLanded: 0, finishedFirst: 0 };
  readonly publishMs: number[] = [];
  readonly state = newCheckState();
  /** Runs on the remote (and their rows) as of the last point every clone had synced. */
  settled: { run: SoakRun; rows: number[] }[] = [];
  round = 0;
  private runCount = 0;
  private opCount = 0;

  constructor(
    readonly clones: Clone[],
    readonly remote: string,
    readonly reader: string,
  ) {}

  violate(msg: string): void {
    this.violations.push(`round ${this.round}: ${msg}`);
  }

  count(kind: OpKind): void {
    this.ops.set(kind, (this.ops.get(kind) ?? 0) + 1);
  }

  env(c: Clone): Record<string, string> {
    return { AGENTV_RESULTS_HOST: c.host };
  }

  async cli(c: Clone, args: string[]): Promise<CliResult> {
    return cli(args, c.dir, { env: this.env(c), timeoutMs: 180_000 });
  }

  newRun(creator: number, opts: { wip?: boolean } = {}): SoakRun {
    const n = this.runCount++;
    // Distinct minutes, one run id each; WIP runs are named after their directory (AgentV's ids too).
    const at = new Date(Date.UTC(2026, 5, 1, 0, 0) + n * 60_000);
    const id = at.toISOString().replace(/[:.]/g, '-');
    const run: SoakRun = {
      id,
      experiment: opts.wip ? 'soak-wip' : `soak-e${n % 3}`,
      timestamp: at.toISOString(),
      seed: n,
      allocated: 0,
      expected: new Set(),
      creator,
      publishers: new Set(),
    };
    this.model.runs.set(id, run);
    return run;
  }

  /** A run workspace with these rows, exported outside every repository. */
  async workspace(run: SoakRun, rows: number[]): Promise<string> {
    const dir = await makeTempDir('soak-ws');
    const src = join(dir, 'results.jsonl');
    await writeFile(src, rows.map((k) => JSON.stringify(rowOf(run, k))).join('\n') + '\n');
    const res = await exportRun({ source: src, out: join(dir, 'run'), cwd: dir, experiment: run.experiment });
    if (res.runId !== run.id) this.violate(`export of run ${run.id} named it ${res.runId}`);
    return res.outDir ?? join(dir, 'run');
  }

  /** Rows of a run that reached the clone's own branches (the results branch, or a sync branch it set aside). */
  async rowsOnClone(c: Clone, run: SoakRun): Promise<Set<number>> {
    const refs = [RESULTS_REF, ...(await refsUnder(c.dir, ['refs/heads/agentv/results-sync/'])).keys()];
    const found = new Set<number>();
    const repo = await openRepo(c.dir);
    const specs = refs.map((r) => `${r}:${run.id}/index.jsonl`);
    const blobs = await readBlobs(repo, specs);
    for (const s of specs) for (const k of rowsOfIndex(blobs.get(s)?.toString('utf8') ?? '').counts.keys()) found.add(k);
    return found;
  }

  typicalPublishMs(): number {
    if (this.publishMs.length === 0) return 1_500;
    const s = [...this.publishMs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)]!;
  }

  /** `publish <workspace> --push` of these rows; on success every row is promised. */
  async publish(c: Clone, run: SoakRun, rows: number[], kind: OpKind): Promise<void> {
    this.count(kind);
    const dir = await this.workspace(run, rows);
    const t0 = performance.now();
    const r = await this.cli(c, ['publish', dir, '--push', '--json']);
    if (r.code === 0) {
      this.publishMs.push(performance.now() - t0);
      for (const k of rows) run.expected.add(k);
      run.publishers.add(c.index);
      const status = (JSON.parse(r.stdout) as { status?: string }).status;
      if (status !== 'published' && status !== 'updated' && status !== 'already-published')
        this.violate(`${kind} of ${run.id} on clone ${c.index}: status ${status}`);
      return;
    }
    this.violate(`${kind} of ${run.id} on clone ${c.index} exited ${r.code}: ${r.stderr.trim().slice(0, 300)}`);
    // Whatever reached the clone's branches is still owed to the remote.
    for (const k of await this.rowsOnClone(c, run)) if (rows.includes(k)) run.expected.add(k);
  }

  async opNew(c: Clone, r: () => number): Promise<void> {
    const run = this.newRun(c.index);
    run.allocated = 2 + Math.floor(r() * 5);
    const rows = range(0, run.allocated);
    c.have.set(run.id, new Set(rows));
    await this.publish(c, run, rows, 'publish-new');
  }

  /** Rows for growing `run` on clone c: what c's workspace has, plus new rows, plus sometimes rows other shards already published. */
  growRows(c: Clone, run: SoakRun, r: () => number): number[] {
    const have = c.have.get(run.id) ?? new Set<number>();
    const added = 1 + Math.floor(r() * 4);
    for (const k of range(run.allocated, run.allocated + added)) have.add(k);
    run.allocated += added;
    if (r() < 0.3) for (let k = 0; k < run.allocated; k++) if (r() < 0.4) have.add(k);
    c.have.set(run.id, have);
    return [...have].sort((a, b) => a - b);
  }

  pickGrowable(c: Clone, r: () => number, preferOther: boolean): SoakRun | null {
    const all = [...this.model.runs.values()].filter((x) => !x.wip && x.allocated > 0);
    const others = all.filter((x) => x.creator !== c.index);
    const pool = preferOther && others.length > 0 ? others : all;
    return pool.length === 0 ? null : pool[Math.floor(r() * pool.length)]!;
  }

  async opGrow(c: Clone, r: () => number, preferOther: boolean): Promise<void> {
    const run = this.pickGrowable(c, r, preferOther);
    if (!run) return this.opNew(c, r);
    const rows = this.growRows(c, run, r);
    await this.publish(c, run, rows, run.creator === c.index ? 'grow' : 'grow-other-clone');
  }

  async opTag(c: Clone, r: () => number): Promise<void> {
    if (this.settled.length === 0) return this.opNew(c, r);
    const { run } = this.settled[Math.floor(r() * this.settled.length)]!;
    const mine = this.model.tags.get(run.id)?.get(c.index) ?? new Set<string>();
    // At most 20 tags per run: each clone gets a namespace of its own within that.
    const pool = ['a', 'b', 'c', 'd'].slice(0, Math.max(1, Math.min(4, Math.floor(20 / this.clones.length)))).map((x) => `c${c.index}-${x}`);
    const add = pool.filter(() => r() < 0.4);
    const remove = [...mine].filter((t) => !add.includes(t) && r() < 0.5);
    if (add.length === 0 && remove.length === 0) add.push(pool[Math.floor(r() * pool.length)]!);
    this.count('tag');
    const res = await this.cli(c, ['tag', run.id, ...add.map((t) => `+${t}`), ...remove.map((t) => `-${t}`), '--json']);
    if (res.code !== 0) return this.violate(`tag ${run.id} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
    const next = new Set([...mine, ...add].filter((t) => !remove.includes(t)));
    const byClone = this.model.tags.get(run.id) ?? new Map<number, Set<string>>();
    byClone.set(c.index, next);
    this.model.tags.set(run.id, byClone);
  }

  async feedback(c: Clone, run: SoakRun, test: string, reviewer: string, text: string, push: boolean): Promise<CliResult> {
    return this.cli(c, ['feedback', run.id, test, text, '--reviewer', reviewer, ...(push ? [] : ['--no-push']), '--json']);
  }

  async opFeedback(c: Clone, r: () => number): Promise<void> {
    if (this.settled.length === 0) return this.opNew(c, r);
    const { run, rows } = this.settled[Math.floor(r() * this.settled.length)]!;
    const test = testOf(rows[Math.floor(r() * rows.length)]!);
    const reviewer = `soak-c${c.index}-${Math.floor(r() * 2)}`;
    const text = `${reviewer}: round ${this.round}, note ${++this.opCount}`;
    this.count('feedback');
    const res = await this.feedback(c, run, test, reviewer, text, true);
    if (res.code !== 0) return this.violate(`feedback on ${run.id}/${test} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
    setFeedback(this.model, run.id, test, reviewer, text);
  }

  /** A run in progress: raw result rows appended to index.jsonl (no summary.json), checkpointed, finally published. */
  async opWip(c: Clone, r: () => number): Promise<void> {
    let run = c.openWip;
    if (run && r() < 0.45) return this.finishWip(c, run, r);
    if (!run) {
      run = this.newRun(c.index, { wip: true });
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
    this.count('wip-checkpoint');
    const res = await this.cli(c, ['wip', 'checkpoint', wip.dir, '--push', '--json']);
    if (res.code !== 0) return this.violate(`wip checkpoint of ${run.id} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
    const events = JSON.parse(res.stdout) as { type: string; result: { branch?: string; rows?: number; classification?: string } }[];
    const cp = events.find((e) => e.type === 'checkpoint')?.result;
    const pushed = events.find((e) => e.type === 'push')?.result;
    if (!cp?.branch || cp.rows !== wip.rows) return this.violate(`wip checkpoint of ${run.id}: ${res.stdout.slice(0, 300)}`);
    wip.branch = cp.branch;
    if (pushed?.classification === 'ok') {
      wip.checkpointed = wip.rows;
      wip.onRemote = 'present';
    } else this.violate(`wip checkpoint of ${run.id} on clone ${c.index} did not push: ${JSON.stringify(pushed)}`);
  }

  async finishWip(c: Clone, run: SoakRun, r: () => number): Promise<void> {
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
    this.count('wip-publish');
    const res = await this.cli(c, ['publish', wip.dir, '--push', '--json']);
    if (res.code !== 0) {
      this.violate(`publish of the WIP run ${run.id} on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
      for (const k of await this.rowsOnClone(c, run)) run.expected.add(k);
      if (wip.onRemote === 'present') wip.onRemote = 'unknown';
      return;
    }
    const out = JSON.parse(res.stdout) as { runId: string; push?: { landed?: boolean }; wip?: { branch: string; status: string; note: string | null }[] };
    if (out.runId !== run.id) this.violate(`the WIP run ${run.id} was published as ${out.runId}`);
    for (const k of range(0, wip.rows)) run.expected.add(k);
    run.publishers.add(c.index);
    // The publish that lands ends the run's WIP on the remote; one that did not land keeps it.
    if (wip.onRemote === 'present') wip.onRemote = out.push?.landed ? 'gone' : 'unknown';
  }

  async opSync(c: Clone): Promise<void> {
    this.count('sync');
    const res = await this.cli(c, ['sync', '--json']);
    if (res.code !== 0) this.violate(`sync on clone ${c.index} exited ${res.code}: ${res.stdout.slice(0, 300)}${res.stderr.trim().slice(0, 300)}`);
  }

  /** A publish (of a new run or a grown one) killed with SIGKILL after a random delay. */
  async opKill(c: Clone, r: () => number): Promise<void> {
    let run: SoakRun;
    let rows: number[];
    const grow = r() < 0.5 ? this.pickGrowable(c, r, r() < 0.5) : null;
    if (grow) {
      run = grow;
      rows = this.growRows(c, run, r);
    } else {
      run = this.newRun(c.index);
      run.allocated = 2 + Math.floor(r() * 5);
      rows = range(0, run.allocated);
      c.have.set(run.id, new Set(rows));
    }
    const dir = await this.workspace(run, rows);
    // Rows that reach the clone's branches only if this publish moves its refs.
    const before = await this.rowsOnClone(c, run);
    const fresh = rows.filter((k) => !before.has(k));
    // Anywhere in a typical publish: before the refs move, while pushing, now and then after the end.
    const delay = Math.floor(r() * this.typicalPublishMs() * 1.2);
    this.count('kill-9');
    const child = spawn(process.execPath, [CLI_PATH, 'publish', dir, '--push'], {
      cwd: c.dir,
      env: { ...process.env, ...gitEnvForTests(), ...this.env(c), NO_COLOR: '1' },
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
      this.kills.finishedFirst++;
      if (code !== 0) this.violate(`publish of ${run.id} on clone ${c.index} (finished before the kill) exited ${code}`);
    }
    // The git processes it started finish on their own (their parent is gone): wait for the whole group.
    for (let i = 0; i < 400 && groupAlive(child.pid!); i++) await sleep(25);
    if (groupAlive(child.pid!)) this.violate(`processes of the killed publish (group ${child.pid}) still running after 10 s`);
    const local = await this.rowsOnClone(c, run);
    const landed = fresh.filter((k) => local.has(k));
    // Both refs move in one transaction with the whole workspace: a part of it cannot have landed.
    if (landed.length > 0 && landed.length < fresh.length)
      this.violate(`killed publish of ${run.id} on clone ${c.index}: ${landed.length} of its ${fresh.length} new rows reached the local branch`);
    for (const k of rows) if (local.has(k)) run.expected.add(k);
    if (landed.length > 0) run.publishers.add(c.index);
    if (landed.length === fresh.length) this.kills.landedLocally++;
    else this.kills.notLanded++;
  }

  async syncAll(what: string): Promise<void> {
    // One after the other: each lands (no contention), so afterwards the remote has everything.
    for (const c of this.clones) {
      this.count('sync-all');
      const res = await this.cli(c, ['sync', '--json']);
      if (res.code !== 0) {
        this.violate(`${what}: sync on clone ${c.index} exited ${res.code}: ${res.stdout.slice(0, 400)}${res.stderr.trim().slice(0, 300)}`);
        continue;
      }
      const push = (JSON.parse(res.stdout) as { push: { landed: boolean; classification: string } }).push;
      if (!push.landed) this.violate(`${what}: sync on clone ${c.index} did not land: ${JSON.stringify(push)}`);
    }
  }

  settle(): void {
    this.settled = [...this.model.runs.values()].filter((run) => run.expected.size > 0).map((run) => ({ run, rows: [...run.expected].sort((a, b) => a - b) }));
  }

  /** Phase B: the same reviewer notes the same test on two clones, offline, then both sync at once. */
  async injectConflict(r: () => number): Promise<boolean> {
    if (this.settled.length === 0 || this.clones.length < 2) return false;
    const x = this.clones[Math.floor(r() * this.clones.length)]!;
    const others = this.clones.filter((c) => c !== x);
    const y = others[Math.floor(r() * others.length)]!;
    const { run, rows } = this.settled[Math.floor(r() * this.settled.length)]!;
    const test = testOf(rows[Math.floor(r() * rows.length)]!);
    const reviewer = `soak-shared-${this.round}`;
    this.count('conflict-injected');
    // A pushed note first: each clone's branch catches up with the remote (the run is there).
    for (const c of [x, y]) {
      const text = `soak-c${c.index}-0: round ${this.round}, before the conflict`;
      const res = await this.feedback(c, run, test, `soak-c${c.index}-0`, text, true);
      if (res.code !== 0) {
        this.violate(`feedback before the conflict on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
        return true;
      }
      setFeedback(this.model, run.id, test, `soak-c${c.index}-0`, text);
    }
    const texts = new Map<Clone, string>();
    for (const c of [x, y]) {
      const text = `${reviewer} on clone ${c.index}: round ${this.round}`;
      texts.set(c, text);
      const res = await this.feedback(c, run, test, reviewer, text, false);
      if (res.code !== 0) {
        this.violate(`offline feedback on clone ${c.index} exited ${res.code}: ${res.stderr.trim().slice(0, 300)}`);
        return true;
      }
    }
    const [rx, ry] = await Promise.all([x, y].map((c) => this.cli(c, ['sync', '--json'])));
    const outcomes = [
      { c: x, res: rx! },
      { c: y, res: ry! },
    ];
    const landed = outcomes.filter((o) => o.res.code === 0);
    const aside = outcomes.filter((o) => o.res.code === 1);
    if (landed.length !== 1 || aside.length !== 1) {
      this.violate(
        `injected conflict (${reviewer} on ${run.id}/${test}, clones ${x.index} and ${y.index}): sync exit codes ${rx!.code} and ${ry!.code}, expected one 0 and one 1: ${rx!.stdout.slice(0, 200)} ${ry!.stdout.slice(0, 200)}`,
      );
      return true;
    }
    const branch = (JSON.parse(aside[0]!.res.stdout) as { push: { syncBranch?: { branch: string } } }).push.syncBranch?.branch;
    if (!branch?.startsWith('agentv/results-sync/')) this.violate(`injected conflict: no sync branch in ${aside[0]!.res.stdout.slice(0, 300)}`);
    // The results branch keeps the note that landed; `sync --resolve` keeps it (the other stays in history).
    setFeedback(this.model, run.id, test, reviewer, texts.get(landed[0]!.c)!);
    return true;
  }

  /** Phase C: every sync branch on the remote is resolved from a random clone. */
  async resolveAll(r: () => number, injected: boolean): Promise<void> {
    const all = [...(await refsUnder(this.remote, SYNC_PREFIXES)).keys()].map((ref) => ref.slice('refs/heads/'.length));
    const branches = all.filter((b) => b.startsWith('agentv/results-sync/'));
    // Exactly the injected conflict is set aside (its payloads merged cleanly: no artifacts-sync branch).
    if (all.length !== (injected ? 1 : 0) || branches.length !== all.length)
      this.violate(`${injected ? 'one conflict was injected' : 'no conflict was injected'} and the remote has sync branches [${all.join(', ')}]`);
    for (const branch of branches) {
      const c = this.clones[Math.floor(r() * this.clones.length)]!;
      this.count('resolve');
      const res = await this.cli(c, ['sync', '--resolve', branch, '--json']);
      if (res.code !== 0) {
        this.violate(`sync --resolve ${branch} on clone ${c.index} exited ${res.code}: ${res.stdout.slice(0, 300)}${res.stderr.trim().slice(0, 300)}`);
        continue;
      }
      const out = JSON.parse(res.stdout) as { status: string; deletedRemote: boolean };
      if (out.status !== 'merged' && out.status !== 'already-merged') this.violate(`sync --resolve ${branch}: status ${out.status}`);
    }
  }

  async check(syncBranchesAllowed: boolean): Promise<CheckReport> {
    const report = await checkRemote({ remote: this.remote, reader: this.reader, model: this.model, state: this.state, syncBranchesAllowed });
    for (const msg of report.violations) this.violate(msg);
    return report;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------
// Setup shared by the soak and the checker's own test

interface World {
  root: string;
  remote: string;
  daemon: GitDaemon;
  url: string;
  clones: Clone[];
  reader: string;
}

async function makeWorld(clones: number): Promise<World> {
  const root = await makeTempDir('soak');
  const remote = await makeProtectedRemote(root);
  const daemon = await startGitDaemon(root);
  const url = daemon.url('remote.git');
  const list: Clone[] = [];
  for (let i = 0; i < clones; i++) list.push({ index: i, dir: await makeClone(url, `soak-${i}`), host: `soak-c${i}`, have: new Map(), openWip: null });
  // The project's own branch, as on any real remote (and HEAD then names a branch that exists).
  await git(list[0]!.dir, ['push', '-q', 'origin', 'main']);
  const reader = await makeClone(url, 'soak-reader');
  return { root, remote, daemon, url, clones: list, reader };
}

it(`stays consistent: ${CLONES} clones x ${ROUNDS} rounds x ${OPS} operations of seeded random work over git:// (seed ${SEED})`, async () => {
  const started = performance.now();
  const world = await makeWorld(CLONES);
  const soak = new Soak(world.clones, world.remote, world.reader);
  const reports: CheckReport[] = [];
  try {
    // The remote refuses what a protective host refuses (checked once, so the soak means something).
    const first = world.clones[0]!;
    await soak.opNew(first, seeded(SEED, 0));
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

    type Op = (s: Soak, c: Clone, r: () => number) => Promise<void>;
    const kinds: Op[] = [];
    const weigh = (n: number, f: Op) => {
      for (let i = 0; i < n; i++) kinds.push(f);
    };
    weigh(3, (s, c, r) => s.opNew(c, r));
    weigh(2, (s, c, r) => s.opGrow(c, r, false));
    weigh(2, (s, c, r) => s.opGrow(c, r, true));
    weigh(2, (s, c, r) => s.opTag(c, r));
    weigh(2, (s, c, r) => s.opFeedback(c, r));
    weigh(2, (s, c, r) => s.opWip(c, r));
    weigh(1, (s, c) => s.opSync(c));
    weigh(2, (s, c, r) => s.opKill(c, r));
    // Operations are dealt from shuffled decks of the weighted kinds, so even the small CI size
    // draws every kind (16 cards: 3 clones x 3 operations x 2 rounds go through a whole deck).
    const deckRandom = seeded(SEED, 1);
    let deck: Op[] = [];
    const draw = (): Op => {
      if (deck.length === 0) {
        deck = [...kinds];
        for (let i = deck.length - 1; i > 0; i--) {
          const j = Math.floor(deckRandom() * (i + 1));
          [deck[i], deck[j]] = [deck[j]!, deck[i]!];
        }
      }
      return deck.pop()!;
    };
    soak.settle();

    for (let round = 1; round <= ROUNDS && soak.violations.length === 0; round++) {
      soak.round = round;
      // A. Each clone its own sequence (dealt in a fixed order, parameters from its own seeded
      // stream), the clones in parallel.
      const hands = world.clones.map(() => range(0, OPS).map(() => draw()));
      await Promise.all(
        world.clones.map(async (c) => {
          const r = seeded(SEED, 2, round, c.index);
          for (const op of hands[c.index]!) await op(soak, c, r);
        }),
      );
      await soak.syncAll('after the operations');
      soak.settle();
      // B. An injected genuine conflict: in round 1, and in about a third of the others.
      const r = seeded(SEED, 3, round);
      const injected = (round === 1 || r() < 0.35) && (await soak.injectConflict(r));
      // C. Resolve every sync branch, then every clone syncs once more.
      await soak.resolveAll(r, injected);
      await soak.syncAll('after resolving');
      reports.push(await soak.check(false));
      soak.settle();
      process.stderr.write(
        `soak round ${round}/${ROUNDS} (seed ${SEED}): ${[...soak.ops.values()].reduce((a, b) => a + b, 0)} operations so far, ${soak.settled.length} runs, ${soak.violations.length} violations, ${Math.round((performance.now() - started) / 1000)} s\n`,
      );
    }
    // Last: every run still in progress finishes and is published (its WIP branch must go).
    if (soak.violations.length === 0) {
      soak.round = ROUNDS + 1;
      for (const c of world.clones) if (c.openWip) await soak.finishWip(c, c.openWip, seeded(SEED, 4, c.index));
      await soak.syncAll('after the last runs in progress were published');
      reports.push(await soak.check(false));
      soak.settle();
    }

    // AgentV's own validator on a run or two, pulled with their payloads.
    let agentv: string = 'skipped: the AgentV client is not in ../shared';
    if (HAS_AGENTV && soak.violations.length === 0) {
      const runs = soak.settled
        .map((s) => s.run)
        .sort((a, b) => b.publishers.size - a.publishers.size || b.expected.size - a.expected.size)
        .slice(0, 2);
      const out = await makeTempDir('soak-agentv');
      const results: string[] = [];
      for (const run of runs) {
        const dir = join(out, run.id);
        const p = await cli(['pull', run.id, '--fetch', '--with-artifacts', '--out', dir], world.reader);
        expect(p.code, p.stderr).toBe(0);
        const res = await runAgentV(['results', 'validate', dir], { cwd: out });
        const errors = Number(/(\d+) error\(s\)/.exec(res.stdout)?.[1] ?? 0);
        if (res.code !== 0 || errors !== 0)
          soak.violate(`agentv results validate ${run.id}: exit ${res.code}, ${errors} errors: ${(res.stdout + res.stderr).slice(0, 400)}`);
        results.push(`${run.id} (${run.expected.size} rows, ${run.publishers.size} clones): ${errors} errors`);
      }
      agentv = results.join('; ');
    }

    // Every clone's repository is intact too (publishes were killed in some of them).
    for (const c of world.clones) {
      const f = await runGit(['fsck', '--no-dangling', '--no-progress'], { cwd: c.dir, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8] });
      const out = `${f.stdout.toString()}${f.stderr}`.trim();
      if (f.code !== 0 || out !== '') soak.violate(`git fsck of clone ${c.index}: exit ${f.code}: ${out.slice(0, 300)}`);
    }

    const last = reports[reports.length - 1]!;
    const summary = {
      seed: SEED,
      rounds: ROUNDS,
      clones: CLONES,
      opsPerClone: OPS,
      ops: Object.fromEntries([...soak.ops].sort()),
      totalOps: [...soak.ops.values()].reduce((a, b) => a + b, 0),
      kills: soak.kills,
      runs: last.runs,
      rows: last.rows,
      pointers: last.pointers,
      validations: reports.reduce((a, b) => a + b.validated, 0),
      remoteUpdates: Object.fromEntries(PROTECTED.map((ref) => [ref.split('/').slice(-2).join('/'), soak.state.reflogSeen.get(ref) ?? 0])),
      violations: soak.violations.length,
      agentv,
      wallSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    process.stderr.write(`soak summary: ${JSON.stringify(summary)}\n`);
    if (process.env.AGENTV_SOAK_REPORT) await writeFile(process.env.AGENTV_SOAK_REPORT, `${JSON.stringify(summary, null, 2)}\n`);
    expect(soak.violations, `seed ${SEED} (replay: AGENTV_SOAK_SEED=${SEED})`).toEqual([]);
    // A whole deck was dealt: every kind of operation ran (a WIP run is published at the latest at the end).
    if (ROUNDS * CLONES * OPS >= kinds.length) {
      for (const kind of ['publish-new', 'tag', 'feedback', 'wip-checkpoint', 'wip-publish', 'sync', 'kill-9'] as const)
        expect(soak.ops.get(kind) ?? 0, `no ${kind} ran`).toBeGreaterThan(0);
      expect((soak.ops.get('grow') ?? 0) + (soak.ops.get('grow-other-clone') ?? 0), 'no run was grown').toBeGreaterThan(0);
    }
    if (ROUNDS >= 1) expect(soak.ops.get('resolve') ?? 0, 'no sync branch was resolved').toBeGreaterThan(0);
  } finally {
    await world.daemon.stop();
  }
}, 1_800_000);

// ---------------------------------------------------------------------------------------------
// The checker catches what it is there to catch: each invariant fails on a remote broken that way.

it('the invariant checker reports each kind of inconsistency on a remote broken that way', async () => {
  const world = await makeWorld(1);
  const soak = new Soak(world.clones, world.remote, world.reader);
  const c = world.clones[0]!;
  try {
    await soak.opNew(c, seeded(5));
    const run = [...soak.model.runs.values()][0]!;
    expect((await soak.cli(c, ['tag', run.id, '+c0-a'])).code).toBe(0);
    soak.model.tags.set(run.id, new Map([[0, new Set(['c0-a'])]]));
    expect((await soak.feedback(c, run, 'test-0', 'soak-c0-0', 'first', true)).code).toBe(0);
    setFeedback(soak.model, run.id, 'test-0', 'soak-c0-0', 'first');
    const clean = await checkRemote({ remote: world.remote, reader: world.reader, model: soak.model, state: newCheckState(), syncBranchesAllowed: false });
    expect(clean.violations).toEqual([]);
    expect(clean.validated).toBe(1);

    /** A copy of the remote, broken by `brk` (on the server itself, no hooks), checked against the model and the tips seen on the intact remote. */
    const broken = async (brk: (copy: string) => Promise<unknown>, model: Model = soak.model): Promise<string[]> => {
      const copy = join(await makeTempDir('soak-broken'), 'remote.git');
      await cp(world.remote, copy, { recursive: true });
      await brk(copy);
      const state = newCheckState();
      for (const ref of PROTECTED) state.tips.set(ref, await refOf(world.remote, ref));
      return (await checkRemote({ remote: copy, reader: world.reader, model, state, syncBranchesAllowed: false })).violations;
    };
    /** Rewrites one file on the results branch with an ordinary fast-forward commit. */
    const editRun = (file: string, edit: (text: string) => string) => editFile(`${run.id}/${file}`, edit);
    const editFile = (path: string, edit: (text: string) => string) => async (copy: string) => {
      const text = await git(copy, ['show', `${RESULTS_REF}:${path}`]);
      const blob = (await runGit(['hash-object', '-w', '--stdin'], { cwd: copy, input: `${edit(`${text}\n`)}` })).stdout.toString().trim();
      const env = { GIT_INDEX_FILE: join(copy, 'soak-index') };
      await git(copy, ['read-tree', RESULTS_REF], { env });
      await git(copy, ['update-index', '--cacheinfo', `100644,${blob},${path}`], { env });
      const tree = await git(copy, ['write-tree'], { env });
      const commit = await git(copy, ['commit-tree', tree, '-p', RESULTS_REF, '-m', `break ${path}`]);
      await git(copy, ['update-ref', RESULTS_REF, commit]);
    };
    const lines = (t: string) => t.split('\n').filter(Boolean);

    expect(await broken(editRun('index.jsonl', (t) => `${t}${lines(t)[0]}\n`))).toEqual(
      expect.arrayContaining([expect.stringMatching(/row 0 \(test-0\) is on the remote 2 times/), expect.stringMatching(/does not validate/)]),
    );
    expect(await broken(editRun('index.jsonl', (t) => `${lines(t).slice(1).join('\n')}\n`))).toEqual(
      expect.arrayContaining([expect.stringMatching(/row 0 \(test-0\) was published and is not on the remote/), expect.stringMatching(/does not validate/)]),
    );
    const day = `.indexes/agentv-results.${run.timestamp.slice(0, 10)}.jsonl`;
    expect(await broken(editFile(day, (t) => t.replace(/"total":\d+/, '"total":99')))).toEqual([
      expect.stringMatching(/the catalog counts 99 rows, \d+ were published/),
    ]);
    expect(await broken(editFile(day, (t) => `${t}${lines(t)[0]}\n`))).toEqual([expect.stringMatching(/2 catalog lines \(expected 1\)/)]);
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
    // An object the branch needs is gone: every object made loose, then one of the run's deleted.
    expect(
      await broken(async (copy) => {
        const blob = await git(copy, ['rev-parse', `${RESULTS_REF}:${run.id}/summary.json`]);
        await git(copy, ['repack', '-a', '-d', '-q']);
        const packDir = join(copy, 'objects', 'pack');
        const aside = await makeTempDir('soak-pack');
        for (const f of await readdir(packDir)) await rename(join(packDir, f), join(aside, f));
        for (const f of (await readdir(aside)).filter((n) => n.endsWith('.pack')))
          await runGit(['unpack-objects', '-q'], { cwd: copy, input: await readFile(join(aside, f)) });
        await rm(join(copy, 'objects', blob.slice(0, 2), blob.slice(2)));
      }),
    ).toEqual(expect.arrayContaining([expect.stringMatching(/git fsck of the remote: exit [1-9]/)]));
  } finally {
    await world.daemon.stop();
  }
}, 600_000);
