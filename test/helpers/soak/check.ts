// The invariants, checked on the remote against the model. Every finding is a recorded violation
// rather than a thrown assertion, so one check reports everything wrong with a round at once (and
// the checker's own test can show each invariant failing on a remote broken that way).
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openRepo, type Repo, readBlobs, runGit } from '../../../src/git/index.js';
import { pull } from '../../../src/branch-read/pull.js';
import { validateRun } from '../../../src/runs/validate.js';
import { git, makeTempDir } from '../git-fixtures.js';
import { expectedTags, type Model, rowsOfIndex, type SoakRun, testOf } from './model.js';
import { ARTIFACTS_REF, isAncestor, PROTECTED, RESULTS_REF, refOf, refsUnder, SYNC_PREFIXES, WIP_PREFIX } from './remote.js';

const ZERO = /^0+$/;

/** What one check leaves for the next, so each round checks only what changed since. */
export interface CheckState {
  /** Tips of the protected branches at the last check. */
  tips: Map<string, string | null>;
  /** Reflog lines of each protected branch already checked. */
  reflogSeen: Map<string, number>;
  /** Run directory -> tree id that last validated. */
  validated: Map<string, string>;
}

export const newCheckState = (): CheckState => ({ tips: new Map(), reflogSeen: new Map(), validated: new Map() });

export interface CheckContext {
  remote: string;
  /** A repository that only reads: fetches the remote's branches and pulls runs to validate them. */
  reader: string;
  model: Model;
  state: CheckState;
  /** Whether a sync branch may exist right now. */
  syncBranchesAllowed: boolean;
}

export interface CheckReport {
  violations: string[];
  runs: number;
  rows: number;
  validated: number;
  pointers: number;
}

type Violate = (msg: string) => void;
type Pointer = { run: string; key: string; sha256: string; size: number };

export async function checkRemote(ctx: CheckContext): Promise<CheckReport> {
  const { remote, model } = ctx;
  const violations: string[] = [];
  const v = (msg: string) => violations.push(msg);
  const repo = await openRepo(remote);

  await checkIntegrity(remote, v);
  await checkProtectedTips(ctx, v);
  const syncRefs = await refsUnder(remote, SYNC_PREFIXES);
  if (!ctx.syncBranchesAllowed && syncRefs.size > 0) v(`sync branches on the remote: ${[...syncRefs.keys()].join(', ')}`);
  await checkWipBranches(ctx, repo, v);

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
  const pointers = await checkRunDirs(ctx, repo, tip, [...runDirs.keys()], report, v);
  await checkCatalog(
    ctx,
    repo,
    tip,
    root.some((e) => e.name === '.indexes'),
    expectedRuns,
    v,
  );
  await checkPointers(repo, artifactsTip, pointers, report, v);
  await validateChangedRuns(ctx, runDirs, report, v);
  return report;
}

async function checkIntegrity(remote: string, v: Violate): Promise<void> {
  const fsck = await runGit(['fsck', '--strict', '--no-dangling', '--no-progress'], { cwd: remote, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8] });
  const fsckOut = `${fsck.stdout.toString()}${fsck.stderr}`.trim();
  if (fsck.code !== 0 || fsckOut !== '') v(`git fsck of the remote: exit ${fsck.code}: ${fsckOut.slice(0, 400)}`);
}

/** The protected tips only moved forward: since the last check, and at every logged update. */
async function checkProtectedTips({ remote, state }: CheckContext, v: Violate): Promise<void> {
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
}

/** A checkpointed, unpublished run's branch is on the remote with its last pushed checkpoint; no other WIP branch is. */
async function checkWipBranches({ remote, model }: CheckContext, repo: Repo, v: Violate): Promise<void> {
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
}

/** Each run directory: its rows exactly once, unique projection ids, its tags and notes. Returns the artifact pointers its rows hold. */
async function checkRunDirs({ model }: CheckContext, repo: Repo, tip: string, names: string[], report: CheckReport, v: Violate): Promise<Pointer[]> {
  const specs = names.flatMap((n) => [`${tip}:${n}/index.jsonl`, `${tip}:${n}/tags.json`, `${tip}:${n}/feedback.json`]);
  const blobs = await readBlobs(repo, specs);
  const pointers: Pointer[] = [];
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
      const list = (Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? Object.values(raw) : []) as Omit<Pointer, 'run'>[];
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
  return pointers;
}

/** One catalog line per run, counting its rows. */
async function checkCatalog({ remote, model }: CheckContext, repo: Repo, tip: string, hasIndexes: boolean, expectedRuns: SoakRun[], v: Violate): Promise<void> {
  const catalog = hasIndexes
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
}

/** Every pointer resolves on the artifacts tip, with its hash and size. */
async function checkPointers(repo: Repo, artifactsTip: string | null, pointers: Pointer[], report: CheckReport, v: Violate): Promise<void> {
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
}

/** Every run whose tree changed since it last validated: pulled, validated (unchanged trees are not pulled again, to keep rounds short). */
async function validateChangedRuns(ctx: CheckContext, runDirs: Map<string, string>, report: CheckReport, v: Violate): Promise<void> {
  const { remote, model, state } = ctx;
  const changed = [...runDirs.keys()].filter((n) => model.runs.has(n) && state.validated.get(n) !== runDirs.get(n));
  if (changed.length === 0) return;
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
