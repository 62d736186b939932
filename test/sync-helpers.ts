/**
 * Fixtures shared by the sync-*.test.ts suites: a bare "results remote" configured like a
 * protective host (receive.denyNonFastForwards=true, receive.denyDeletes=false), clones of it
 * standing in for CI machines, and small synthetic runs exported OUTSIDE every repository (so a
 * publish never adds files to a checkout).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rng, syntheticRow } from '../bench/synthetic.mjs';
import { exportRun } from '../src/runs/export/export.js';
import { openRepo, readBlobs, runGit } from '../src/git/index.js';
import { publish } from '../src/publish/publish.js';
import type { PublishResult } from '../src/publish/publish-job.js';
import { git, initRepo, makeTempDir } from './helpers/git-fixtures.js';

export const RESULTS_REF = 'refs/heads/agentv/results/v1';
export const ARTIFACTS_REF = 'refs/heads/agentv/artifacts/v1';

/** A bare repository that refuses non-fast-forward pushes (nothing may be forced) but allows deletes. */
export async function makeRemote(): Promise<string> {
  const dir = await initRepo({ bare: true });
  await git(dir, ['config', 'receive.denyNonFastForwards', 'true']);
  await git(dir, ['config', 'receive.denyDeletes', 'false']);
  return dir;
}

/** A non-bare clone of `url` (a path or git:// URL) with one commit on main, like a CI checkout. */
export async function makeClone(url: string, name = 'ci'): Promise<string> {
  const dir = await initRepo();
  await git(dir, ['remote', 'add', 'origin', url]);
  await writeFile(join(dir, 'README.md'), `# ${name}\n`);
  await git(dir, ['add', 'README.md']);
  await git(dir, ['commit', '-q', '--no-gpg-sign', '-m', 'init']);
  return dir;
}

export interface RunSpec {
  experiment: string;
  /** Rows (2 targets each test). */
  rows?: number;
  seed?: number;
  /** Minutes added to the synthetic timestamps: distinct runs of one experiment. */
  minute?: number;
  /** Override test ids (to make a shard of an existing run). */
  firstRow?: number;
}

/** Exports a synthetic run into a temp dir outside any repository; returns the run workspace. */
export async function makeRun(spec: RunSpec): Promise<string> {
  const dir = await makeTempDir('agentv-run');
  const r = rng(spec.seed ?? 7);
  const n = spec.rows ?? 4;
  const first = spec.firstRow ?? 0;
  const base = Date.UTC(2026, 2, 14, 10, spec.minute ?? 0);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const row = syntheticRow(r, first + i, { turns: 1 });
    // Same start time for every row of a run: shards of one run share its run id.
    row.timestamp = new Date(base + i * 10).toISOString();
    lines.push(JSON.stringify(row));
  }
  const src = join(dir, 'results.jsonl');
  await writeFile(src, lines.join('\n') + '\n');
  const out = join(dir, 'run');
  await exportRun({ source: src, out, cwd: dir, experiment: spec.experiment });
  return out;
}

export async function publishRun(clone: string, spec: RunSpec, opts: { push?: boolean } = {}): Promise<PublishResult> {
  return publish({ run: await makeRun(spec), cwd: clone, push: opts.push ?? true });
}

export async function refOf(dir: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '-q', '--verify', ref], { cwd: dir, okCodes: [0, 1] });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}

export async function showFile(dir: string, rev: string, path: string): Promise<string | null> {
  const repo = await openRepo(dir);
  const spec = `${rev}:${path}`;
  return (await readBlobs(repo, [spec])).get(spec)?.toString('utf8') ?? null;
}

export async function lsFiles(dir: string, rev: string): Promise<string[]> {
  return (await git(dir, ['ls-tree', '-r', '--name-only', rev])).split('\n').filter(Boolean);
}

export async function parents(dir: string, rev: string): Promise<string[]> {
  return (await git(dir, ['rev-list', '--parents', '-n', '1', rev])).split(' ').slice(1);
}

/** Every catalog row on `rev` (all days). */
export async function catalogRows(dir: string, rev: string): Promise<{ run_id: string }[]> {
  // Our catalog: .indexes/agentv-results.<day>.jsonl (and catalog/<day>.jsonl of the older layout).
  const files = (await lsFiles(dir, rev)).filter((p) => p.startsWith('catalog/') || p.startsWith('.indexes/agentv-results.'));
  const rows: { run_id: string }[] = [];
  for (const f of files) {
    const text = (await showFile(dir, rev, f)) ?? '';
    for (const l of text.split('\n')) if (l.trim()) rows.push(JSON.parse(l) as { run_id: string });
  }
  return rows;
}

/** The artifact pointers of every index row on the results tip, checked against the artifacts tip. */
export async function danglingPointers(dir: string, resultsRev: string, artifactsRev: string): Promise<string[]> {
  const index = (await lsFiles(dir, resultsRev)).filter((p) => p.endsWith('/index.jsonl'));
  const missing: string[] = [];
  const have = new Set(await lsFiles(dir, artifactsRev).catch(() => [] as string[]));
  for (const f of index) {
    for (const l of ((await showFile(dir, resultsRev, f)) ?? '').split('\n')) {
      if (!l.trim()) continue;
      const raw = (JSON.parse(l) as { artifact_pointers?: unknown }).artifact_pointers;
      // AgentV's object shape ({transcript, <path>: ...}) or the older list.
      const list = (Array.isArray(raw) ? raw : raw && typeof raw === 'object' ? Object.values(raw) : []) as { key: string }[];
      for (const p of list) if (!have.has(p.key)) missing.push(p.key);
    }
  }
  return missing;
}
